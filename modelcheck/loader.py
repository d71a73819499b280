"""Finding a spec from the command line: a file path or module path, optionally ``:Name``.

``specs/kraft_broker.py``, ``specs.kraft_broker`` and
``specs/kraft_broker.py:KRaftBrokerBugEpochReuse`` all work. Without ``:Name``
the module's ``DEFAULT_SPEC`` is used if it sets one, else the first spec class
defined in it.
"""

from __future__ import annotations

import enum
import importlib
import importlib.util
import inspect
import os
import sys
import traceback
from types import ModuleType
from typing import Any

from .errors import SpecDefinitionError, SpecLoadError, UsageError
from .spec import Spec

__all__ = ["load_spec_class", "parse_const", "parse_consts", "spec_classes", "bind_spec"]


def _import_file(path: str) -> ModuleType:
    path = os.path.abspath(path)
    root = os.getcwd()
    # Import as a package module when the file lives under the working directory,
    # so specs can import their siblings (``from specs.x import ...``).
    rel = os.path.relpath(path, root)
    if not rel.startswith("..") and rel.endswith(".py"):
        modname = rel[:-3].replace(os.sep, ".")
        if all(part.isidentifier() for part in modname.split(".")):
            if root not in sys.path:
                sys.path.insert(0, root)
            return _import_module(modname, shown=rel)
    name = "_modelcheck_spec_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SpecLoadError(f"{path}: cannot be imported as a Python module.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SpecDefinitionError:
        raise
    except Exception as e:
        raise SpecLoadError(_import_failure(path, e)) from None
    return module


def _import_module(modname: str, shown: str | None = None) -> ModuleType:
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(modname)
    except ModuleNotFoundError as e:
        if e.name and modname.startswith(e.name):
            raise SpecLoadError(
                f"spec module {modname!r} not found (looked on the Python path from "
                f"{os.getcwd()}); give a file path such as specs/kraft_broker.py or a module "
                "path such as specs.kraft_broker."
            ) from None
        raise SpecLoadError(_import_failure(shown or modname, e)) from None
    except SpecDefinitionError:
        raise
    except Exception as e:
        raise SpecLoadError(_import_failure(shown or modname, e)) from None


def _import_failure(where: str, e: BaseException) -> str:
    if isinstance(e, SyntaxError) and e.filename:
        return (f"{os.path.relpath(e.filename)}:{e.lineno}: spec {where} has a syntax error: "
                f"{e.msg}.")
    frames = traceback.extract_tb(e.__traceback__)
    loc = ""
    for fr in reversed(frames):
        if "importlib" not in fr.filename:
            loc = f"{os.path.relpath(fr.filename)}:{fr.lineno}: "
            break
    return f"{loc}importing spec {where} failed with {type(e).__name__}: {e}"


def spec_classes(module: ModuleType) -> list[type[Spec]]:
    """Spec classes defined in ``module``, in definition order."""
    out = []
    for _, obj in vars(module).items():
        if (inspect.isclass(obj) and issubclass(obj, Spec) and obj is not Spec
                and obj.__module__ == module.__name__):
            out.append(obj)
    return out


def load_spec_class(target: str) -> type[Spec]:
    """Resolve ``path/to/spec.py[:Name]`` or ``pkg.module[:Name]`` to a Spec class."""
    name: str | None = None
    base = target
    if ":" in target and not (len(target) > 1 and target[1] == ":" and os.name == "nt"):
        base, name = target.rsplit(":", 1)
    if base.endswith(".py") or os.sep in base or os.path.exists(base):
        if not os.path.exists(base):
            raise SpecLoadError(f"spec file {base!r} does not exist.")
        module = _import_file(base)
    else:
        module = _import_module(base)
    classes = spec_classes(module)
    if name is not None:
        obj: Any = getattr(module, name, None)
        if not (inspect.isclass(obj) and issubclass(obj, Spec)):
            avail = ", ".join(c.__name__ for c in classes) or "none"
            raise SpecLoadError(
                f"{base}: no spec named {name!r}; the module defines: {avail}."
            )
        return obj
    if not classes:
        raise SpecLoadError(f"{base}: defines no Spec subclass.")
    default = getattr(module, "DEFAULT_SPEC", None)
    if default is not None:
        chosen = default if inspect.isclass(default) else getattr(module, str(default), None)
        if not (inspect.isclass(chosen) and issubclass(chosen, Spec)):
            raise SpecLoadError(f"{base}: DEFAULT_SPEC = {default!r} is not a spec class.")
        return chosen
    return classes[0]


def parse_const(text: str, known: dict[str, Any]) -> tuple[str, Any]:
    """Parse ``K=V`` against the spec's constants (``known``: name -> default)."""
    if "=" not in text:
        raise SpecLoadError(f"--const {text!r}: expected NAME=VALUE, e.g. --const N=3.")
    key, raw = (p.strip() for p in text.split("=", 1))
    if key not in known:
        have = ", ".join(f"{k}={getattr(v, 'name', v)}" for k, v in known.items()) or "none"
        raise SpecLoadError(f"--const {text!r}: unknown constant {key!r}; the spec's "
                            f"constants are: {have}.")
    default = known[key]
    if isinstance(default, enum.Enum):
        members = type(default).__members__
        for n, m in members.items():
            if n.lower() == raw.lower():
                return key, m
        raise SpecLoadError(f"--const {text!r}: {key} is one of {', '.join(members)}.")
    if isinstance(default, bool):
        low = raw.lower()
        if low in ("true", "1", "yes"):
            return key, True
        if low in ("false", "0", "no"):
            return key, False
        raise SpecLoadError(f"--const {text!r}: {key} is a boolean; use true or false.")
    try:
        return key, int(raw, 0)
    except ValueError:
        raise SpecLoadError(f"--const {text!r}: {key} is an integer; got {raw!r}.") from None


def parse_consts(texts: tuple[str, ...] | list[str], known: dict[str, Any]
                 ) -> dict[str, int | bool]:
    """Parse every ``K=V`` (see :func:`parse_const`); a constant given twice is a
    :class:`~modelcheck.errors.UsageError` naming it, never silently the last value."""
    out: dict[str, int | bool] = {}
    given: dict[str, str] = {}
    for text in texts:
        key, value = parse_const(text, known)
        if key in out:
            raise UsageError(f"--const {key} is given twice ({given[key]!r} and {text!r}); "
                             "give each constant once.")
        out[key] = value
        given[key] = text
    return out


def bind_spec(target: str, consts: tuple[str, ...]) -> Spec:
    """Load ``target`` and bind it with ``K=V`` constant overrides."""
    cls = load_spec_class(target)
    known = {name: c.default for name, c in cls._consts.items()}
    return cls(**parse_consts(consts, known))
