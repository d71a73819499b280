"""Where a spec class is defined (``file:line`` in messages) is found with one parse of
its module for all its classes; the oracle is :func:`inspect.getsourcelines`, which
parses the module again for every class."""

from __future__ import annotations

import importlib.util
import inspect
import sys
import textwrap
from pathlib import Path

import pytest

from modelcheck.errors import _short
from modelcheck.loader import load_spec_class
from modelcheck.spec import Spec, _class_lines, source_location_of_class

ROOT = Path(__file__).resolve().parent.parent


def _inspect_location(cls: type) -> str:
    file = inspect.getsourcefile(cls) or "<unknown>"
    return f"{_short(file)}:{inspect.getsourcelines(cls)[1]}"


def _all_subclasses(cls: type) -> list[type]:
    out, todo = [], [cls]
    while todo:
        for sub in todo.pop().__subclasses__():
            out.append(sub)
            todo.append(sub)
    return out


def test_every_bundled_spec_class_as_inspect_finds_it() -> None:
    for path in sorted([*ROOT.glob("specs/*.py"), *ROOT.glob("examples/**/*.py")]):
        if path.name.startswith("_"):
            continue
        try:
            load_spec_class(str(path.relative_to(ROOT)))
        except Exception:  # noqa: BLE001 - modules with several or no specs: loaded anyway
            pass
    classes = [c for c in _all_subclasses(Spec) if inspect.getsourcefile(c)]
    assert len(classes) > 40
    for cls in classes:
        try:
            want = _inspect_location(cls)
        except OSError:
            continue
        assert source_location_of_class(cls) == want, cls.__qualname__


SOURCE = '''
# classes of every shape inspect has a rule for


def deco(cls):
    return cls


class A:
    class Inner:
        pass


@deco
@deco
class B:
    def method(self):
        class Local:
            pass
        return Local


def factory():
    class Made:
        pass

    async def later():
        class Later:
            pass
        return Later

    return Made


class A:  # a second A: the first is found, as inspect finds it
    pass
'''


def test_nested_decorated_and_local_classes(tmp_path: Path) -> None:
    """Nested, decorated, function-local and redefined classes: the same line as
    inspect's for every one."""
    path = tmp_path / "shapes.py"
    path.write_text(textwrap.dedent(SOURCE))
    spec = importlib.util.spec_from_file_location("shapes_for_lines", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["shapes_for_lines"] = mod
    try:
        spec.loader.exec_module(mod)
        lines = _class_lines(str(path), 0, 0)
        for cls in (mod.A, mod.B, mod.B().method(), mod.factory()):
            assert lines[cls.__qualname__] == inspect.getsourcelines(cls)[1], cls.__qualname__
        assert lines["A.Inner"] == 10 and lines["factory.<locals>.later.<locals>.Later"] == 28
    finally:
        del sys.modules["shapes_for_lines"]


def test_an_edited_file_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "edited.py"
    path.write_text("class X:\n    pass\n")
    st = path.stat()
    assert _class_lines(str(path), st.st_mtime_ns, st.st_size) == {"X": 1}
    path.write_text("\n\n\nclass X:\n    pass\n")
    import linecache

    linecache.checkcache(str(path))
    st = path.stat()
    assert _class_lines(str(path), st.st_mtime_ns, st.st_size) == {"X": 4}


@pytest.mark.parametrize("target", ["tests/expr_specs.py", "specs/kraft_metadata.py"])
def test_branch_names_still_read(target: str) -> None:
    """Actions whose code names ``branch`` still have their branches read from the
    source; the others are not read at all."""
    path = ROOT / target
    name = f"_lines_{path.stem}"
    s = importlib.util.spec_from_file_location(name, path)
    assert s is not None and s.loader is not None
    mod = importlib.util.module_from_spec(s)
    sys.modules[name] = mod
    try:
        s.loader.exec_module(mod)
        spec_classes = [v for v in vars(mod).values()
                        if isinstance(v, type) and issubclass(v, Spec) and v is not Spec]
        found = False
        for cls in spec_classes:
            for decl in cls._actions.values():
                uses = "branch(" in inspect.getsource(decl.fn)
                assert bool(decl.branches) == uses, decl.name
                found |= uses
        assert found
    finally:
        del sys.modules[name]
