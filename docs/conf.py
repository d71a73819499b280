"""Sphinx configuration: MyST pages, the command reference generated from the CLI
(sphinx-click) and the API reference from the docstrings (autodoc). ``nitpicky`` and
``-W`` make any reference that does not resolve fail the build."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

project = "modelcheck"
author = "modelcheck"
copyright = "modelcheck authors"

extensions = [
    "myst_parser",
    "sphinx_click",
    "sphinx.ext.autodoc",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]
html_theme = "alabaster"

nitpicky = True
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_typehints_format = "short"

#: References that cannot resolve here because their targets are documented elsewhere
#: (no intersphinx: the build must not need the network): the standard library,
#: numpy, click and pyspark types that appear in signatures and docstrings.
nitpick_ignore_regex = [
    ("py:class", r"(numpy|np|numpy\.typing|npt|click|pyspark)\..*"),
    ("py:class", r"(collections\.abc|typing|pathlib|os|io|re|enum|types|dataclasses)\..*"),
    ("py:class", r"(Path|Any|Callable|Iterable|Iterator|Sequence|Mapping|NDArray|"
                 r"ArrayLike|ndarray|TextIO|IO|Enum|dtype|SparkSession|DataFrame)"),
    ("py:(class|exc|func|data|obj)", r"(int|str|bool|float|bytes|list|dict|tuple|set|"
                                     r"frozenset|None|object|type|Exception|ValueError|"
                                     r"KeyError|TypeError|KeyboardInterrupt|"
                                     r"hash|range|len|slice)"),
]


def _load_every_command() -> None:
    """The CLI loads ``trace``, ``graph``, ``explore`` and plugin commands (``spark``)
    only when invoked (``LAZY_COMMANDS``, ``_LazyCommand``); sphinx-click walks the
    group's commands, so replace each placeholder by the real command first."""
    from modelcheck import cli as cli_module

    cli_module._load_plugins()
    group = cli_module.cli
    for name, cmd in list(group.commands.items()):
        if isinstance(cmd, cli_module._LazyCommand):
            group.commands[name] = cmd.load()


_load_every_command()


def _escape_help(app: object, ctx: object, lines: list[str]) -> None:
    """Click help is plain text, not reStructuredText: a ``*`` (``ITF (*.itf.json)``)
    is a literal star, not the start of emphasis."""
    lines[:] = [line.replace("*", "\\*") for line in lines]


def setup(app: object) -> None:
    for event in ("description", "options", "arguments", "epilog"):
        app.connect(f"sphinx-click-process-{event}", _escape_help)  # type: ignore[attr-defined]
