"""Broker-epoch predicates: monotonicity and uniqueness of registration epochs.

In KRaft a broker's epoch is the offset of its registration record in the
metadata log (KIP-631), so epochs only grow and no two brokers share one. These
predicates read an array variable ``[Brokers -> Nat]`` where 0 means "never
registered".
"""

from __future__ import annotations

from typing import Any

from modelcheck import all_of, implies
from modelcheck.spec import PredicateDecl

from ._util import ids_of

__all__ = ["epoch_monotonic", "unique_epochs"]


def epoch_monotonic(var: str = "regEpoch", *, name: str = "EpochMonotonic") -> PredicateDecl:
    """Action property: every epoch only grows, and a changed epoch exceeds all current ones.

    ``[][\\A b: e'[b] >= e[b] /\\ (e'[b] # e[b] => \\A o: e'[b] > e[o])]_vars``
    """

    def prop(spec: Any, s: Any, t: Any) -> Any:
        ids = ids_of(spec, var)
        e, e2 = getattr(s, var), getattr(t, var)
        return all_of(ids, lambda b: (e2[b] >= e[b]) & implies(
            e2[b] != e[b], all_of(ids, lambda o: e2[b] > e[o])))

    return PredicateDecl(prop, "action", name,
                         doc="Broker epochs only grow; a new epoch exceeds every current one.")


def unique_epochs(var: str = "regEpoch", *, name: str = "UniqueEpochs") -> PredicateDecl:
    """Invariant: no two brokers hold the same (non-zero) epoch."""

    def inv(spec: Any, s: Any) -> Any:
        ids = ids_of(spec, var)
        e = getattr(s, var)
        return all_of(ids, lambda b1: all_of(
            (b2 for b2 in ids if b2 != b1), lambda b2: implies(e[b1] != 0, e[b1] != e[b2])))

    return PredicateDecl(inv, "invariant", name, doc="No two brokers share a broker epoch.")
