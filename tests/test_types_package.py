"""The types package and the aliases kept for specs that import the old modules.

``modelcheck.domains`` and ``modelcheck.values`` re-export what they defined before
the types moved to one module per family (``modelcheck.types``): a spec importing
``from modelcheck.values import SeqValue`` keeps working and gets the same class.
"""

from __future__ import annotations

import importlib

import pytest

import modelcheck
import modelcheck.types

FAMILIES = ["base", "scalars", "arrays", "sets", "records", "sequences", "bags"]


@pytest.mark.parametrize("alias", ["modelcheck.domains", "modelcheck.values"])
def test_alias_modules_reexport_the_same_objects(alias: str) -> None:
    mod = importlib.import_module(alias)
    assert mod.__all__
    for name in mod.__all__:
        assert getattr(mod, name) is getattr(modelcheck.types, name), name


def test_each_public_name_is_defined_in_exactly_one_family() -> None:
    homes: dict[str, list[str]] = {}
    for fam in FAMILIES:
        mod = importlib.import_module(f"modelcheck.types.{fam}")
        for name in mod.__all__:
            obj = getattr(mod, name)
            if getattr(obj, "__module__", mod.__name__) == mod.__name__:
                homes.setdefault(name, []).append(fam)
    assert sorted(homes) == sorted(modelcheck.types.__all__)
    assert all(len(v) == 1 for v in homes.values()), homes


def test_public_declarations_come_from_the_types_package() -> None:
    for name in ["Array", "Bag", "Bool", "Const", "Enum", "Ids", "Int", "Record", "Ref",
                 "Seq", "SetOf", "Union"]:
        obj = getattr(modelcheck, name)
        assert obj is getattr(modelcheck.types, name)
        assert obj.__module__.startswith("modelcheck.types."), (name, obj.__module__)
