"""modelcheck: an explicit-state, TLA+-style model checker for specs written in Python.

A spec is a :class:`Spec` subclass with typed, finite state variables and guarded
actions written once as expressions; :func:`check` explores every reachable state
breadth-first with exact fingerprints, as a :class:`CheckConfig` says, and returns
a :class:`Result`, with the shortest counterexample when an invariant, an action
property or deadlock freedom fails, and a lasso when a temporal property fails
under the spec's fairness (what ``modelcheck check`` reports). Traces (:class:`Trace`) are read with
:func:`load_trace` (ITF, JSON or a run folder).

This module is the public API: what spec authors and tool builders use. The engine
itself (:mod:`modelcheck.kernel`, :mod:`modelcheck.level`, :mod:`modelcheck.layout`)
is importable for tools that extend it, but is not promised to stay the same.

For example::

    >>> from modelcheck import Spec, Const, Int, action, check
    >>> class Counter(Spec):
    ...     Max = Const(3)
    ...     x = Int(0, Max)
    ...     check_deadlock = False
    ...     @action
    ...     def Inc(self, s, t):
    ...         t.x = s.x + 1
    ...         return s.x < self.Max
    >>> check(Counter()).distinct_states
    4
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .checker import check
    from .config import CheckConfig
    from .errors import (
        ConstantError,
        ModelcheckError,
        SpecDefinitionError,
        SpecEvaluationError,
        SpecLoadError,
        UsageError,
    )
    from .explorer import Explorer, Progress, explore
    from .expr import (
        BOOLEAN,
        all_of,
        any_of,
        choose,
        count,
        count_of,
        excluding,
        functions,
        has,
        implies,
        init_product,
        max_of,
        min_of,
        not_,
        subsets,
        sum_of,
        where,
        with_,
        without,
    )
    from .liveness import check_liveness
    from .result import (
        EXIT_CODES,
        ActionCoverage,
        LevelStats,
        Result,
        Status,
        TraceStep,
        Violation,
        ViolationKind,
    )
    from .spec import (
        MemberOf,
        Spec,
        action,
        action_constraint,
        action_property,
        constraint,
        initially,
        invariant,
    )
    from .temporal import always_eventually, angle, changed, eventually, eventually_always, leads_to
    from .trace import (
        Trace,
        TraceFileError,
        TraceMismatchError,
        dumps_trace_json,
        load_trace,
        loads_trace,
        trace_to_itf,
        trace_to_json,
    )
    from .types import Array, Bag, Bool, Const, Enum, Ids, Int, Record, Ref, Seq, SetOf, Union

#: Where each public name is defined. The names are imported on first use (PEP 562), so
#: that ``import modelcheck`` and the command line's ``--help`` load no numpy: a spec's
#: ``from modelcheck import Spec, ...`` loads what those names need, and no more.
_SOURCES: dict[str, str] = {
    "check": ".checker",
    "CheckConfig": ".config",
    "Array": ".types",
    "Bag": ".types",
    "Bool": ".types",
    "Const": ".types",
    "Enum": ".types",
    "Ids": ".types",
    "Int": ".types",
    "Record": ".types",
    "Ref": ".types",
    "Seq": ".types",
    "SetOf": ".types",
    "Union": ".types",
    "ConstantError": ".errors",
    "ModelcheckError": ".errors",
    "SpecDefinitionError": ".errors",
    "SpecEvaluationError": ".errors",
    "SpecLoadError": ".errors",
    "UsageError": ".errors",
    "Explorer": ".explorer",
    "Progress": ".explorer",
    "explore": ".explorer",
    "BOOLEAN": ".expr",
    "all_of": ".expr",
    "any_of": ".expr",
    "choose": ".expr",
    "count": ".expr",
    "count_of": ".expr",
    "excluding": ".expr",
    "functions": ".expr",
    "has": ".expr",
    "implies": ".expr",
    "init_product": ".expr",
    "subsets": ".expr",
    "max_of": ".expr",
    "min_of": ".expr",
    "not_": ".expr",
    "sum_of": ".expr",
    "where": ".expr",
    "with_": ".expr",
    "without": ".expr",
    "check_liveness": ".liveness",
    "EXIT_CODES": ".result",
    "ActionCoverage": ".result",
    "LevelStats": ".result",
    "Result": ".result",
    "TraceStep": ".result",
    "Violation": ".result",
    "Status": ".result",
    "ViolationKind": ".result",
    "MemberOf": ".spec",
    "Spec": ".spec",
    "action": ".spec",
    "action_constraint": ".spec",
    "action_property": ".spec",
    "constraint": ".spec",
    "invariant": ".spec",
    "initially": ".spec",
    "always_eventually": ".temporal",
    "angle": ".temporal",
    "changed": ".temporal",
    "eventually": ".temporal",
    "eventually_always": ".temporal",
    "leads_to": ".temporal",
    "Trace": ".trace",
    "TraceFileError": ".trace",
    "TraceMismatchError": ".trace",
    "dumps_trace_json": ".trace",
    "load_trace": ".trace",
    "loads_trace": ".trace",
    "trace_to_itf": ".trace",
    "trace_to_json": ".trace",
}


def __getattr__(name: str) -> Any:
    module = _SOURCES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SOURCES))


__version__ = "0.1.0"

__all__ = [
    "Spec", "Const", "Ids", "Bool", "Int", "Enum", "Array", "SetOf", "Ref",
    "Record", "Seq", "Bag", "Union", "MemberOf",
    "action", "invariant", "initially", "action_property", "constraint", "action_constraint",
    "eventually", "always_eventually", "eventually_always", "leads_to", "angle", "changed",
    "where", "any_of", "all_of", "implies", "has", "with_", "without", "count",
    "not_", "choose", "sum_of", "max_of", "min_of", "count_of", "excluding", "BOOLEAN",
    "functions", "init_product", "subsets",
    "check", "check_liveness", "CheckConfig", "Explorer", "Progress", "explore",
    "Result", "Status", "TraceStep", "Violation", "ViolationKind", "ActionCoverage", "LevelStats",
    "EXIT_CODES",
    "Trace", "load_trace", "loads_trace", "dumps_trace_json", "trace_to_itf", "trace_to_json",
    "TraceFileError", "TraceMismatchError",
    "ModelcheckError", "SpecDefinitionError", "SpecEvaluationError", "SpecLoadError",
    "ConstantError", "UsageError", "__version__",
]
