"""modelcheck: an explicit-state, TLA+-style model checker for specs written in Python.

A spec is a :class:`Spec` subclass with typed, finite state variables and guarded
actions written once as expressions; :class:`Explorer` explores every reachable
state breadth-first with exact fingerprints and returns a :class:`Result`, with the
shortest counterexample when an invariant, an action property or deadlock freedom
fails.

For example::

    >>> from modelcheck import Spec, Const, Int, action, invariant, explore
    >>> class Counter(Spec):
    ...     Max = Const(3)
    ...     x = Int(0, Max)
    ...     check_deadlock = False
    ...     @action
    ...     def Inc(self, s, t):
    ...         t.x = s.x + 1
    ...         return s.x < self.Max
    >>> explore(Counter()).distinct_states
    4
"""

from .domains import Array, Bool, Const, Enum, Ids, Int, Ref, SetOf
from .errors import (
    ConstantError,
    ModelcheckError,
    SpecDefinitionError,
    SpecEvaluationError,
    SpecLoadError,
    UsageError,
)
from .explorer import Explorer, Progress, explore, rebuild_trace
from .expr import all_of, any_of, count, has, implies, where, with_, without
from .kernel import Expansion, Kernel
from .layout import Layout, fingerprint64
from .result import EXIT_CODES, Result, TraceStep, Violation
from .spec import Spec, action, action_property, constraint, invariant

__version__ = "0.1.0"

__all__ = [
    "Spec", "Const", "Ids", "Bool", "Int", "Enum", "Array", "SetOf", "Ref",
    "action", "invariant", "action_property", "constraint",
    "where", "any_of", "all_of", "implies", "has", "with_", "without", "count",
    "Kernel", "Expansion", "Layout", "fingerprint64",
    "Explorer", "Progress", "explore", "rebuild_trace",
    "Result", "TraceStep", "Violation", "EXIT_CODES",
    "ModelcheckError", "SpecDefinitionError", "SpecEvaluationError", "SpecLoadError",
    "ConstantError", "UsageError", "__version__",
]
