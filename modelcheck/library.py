"""Predicate libraries: reusable invariants and action properties checkable by name.

A library is a module exposing ``lookup(name) -> PredicateDecl | None`` and
``catalog() -> list[str]``, registered under the ``modelcheck.predicates`` entry
point group (modelcheck registers its own ``invariants`` package there). The
engine finds libraries through the registry, never by importing them, so any
installed package can add predicates that ``--invariant NAME`` and
``check(..., invariants=[NAME])`` find.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from .spec import PredicateDecl

__all__ = ["Library", "registered", "lookup", "catalog"]

GROUP = "modelcheck.predicates"

#: looks a predicate up by name (``None`` when the library has none of that name)
Library = Callable[[str], PredicateDecl | None]


@lru_cache(maxsize=1)
def registered() -> tuple[Any, ...]:
    """The registered library modules, by entry-point name."""
    # imported here: importlib.metadata (with email.*, zipfile, csv) costs ~20 ms at
    # start-up, and a check whose invariants are its spec's never looks the library up
    from importlib.metadata import entry_points

    mods = []
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        try:
            mods.append(importlib.import_module(ep.value.split(":")[0]))
        except ImportError:  # pragma: no cover - a broken third-party registration
            continue
    return tuple(mods)


def lookup(name: str) -> PredicateDecl | None:
    """The first registered library predicate called ``name``."""
    for mod in registered():
        p = mod.lookup(name)
        if p is not None:
            return p  # type: ignore[no-any-return]
    return None


def catalog() -> list[str]:
    """Every registered library predicate name."""
    return sorted({n for mod in registered() for n in mod.catalog()})
