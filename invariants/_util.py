"""Helpers for library predicates: find index sets and enum values by name in a bound spec."""

from __future__ import annotations

from typing import Any

from modelcheck.errors import SpecEvaluationError

__all__ = ["ids_of", "enum_value", "has_enum_value"]


def ids_of(spec: Any, var: str) -> range:
    """The (outermost) index set of array variable ``var``."""
    info = spec.layout.vars.get(var)
    if info is None or not info.dims:
        raise SpecEvaluationError(
            f"spec {spec.name} has no array variable {var!r}, which this predicate reads; "
            "pass the right variable name to the predicate's factory"
        )
    return info.dims[0]


def enum_value(spec: Any, var: str, label: str) -> int:
    """The integer value of enum member ``label`` of variable ``var``."""
    info = spec.layout.vars.get(var)
    if info is None:
        raise SpecEvaluationError(f"spec {spec.name} has no variable {var!r}")
    cell = spec.layout.cells[info.first_cell]
    if cell.labels is None or label not in cell.labels:
        raise SpecEvaluationError(
            f"variable {var!r} of spec {spec.name} has no enum member {label!r}"
        )
    return cell.labels.index(label)


def has_enum_value(spec: Any, var: str, label: str) -> bool:
    """Whether variable ``var`` is an enum with member ``label``."""
    info = spec.layout.vars.get(var)
    if info is None:
        return False
    cell = spec.layout.cells[info.first_cell]
    return cell.labels is not None and label in cell.labels
