"""Purpose-made specs for the kernel's wide paths: four counters of ``bits`` bits and a
small one (:func:`scatter_spec`), the levels a kernel reaches (:func:`kernel_levels`), and
the check that such a spec explores as the brute-force oracle
(:func:`assert_explores_as_the_oracle`).

``Bump(i, d)`` adds ``d`` to counter ``i`` (a family writing a cell chosen by its
parameter: per-row cells on the grid), ``Add(d)`` adds ``d`` to counter 0 (a family
writing fixed cells), ``Carry`` moves counter 3 into counter 0 (cells in two words
change when the counters span words), ``Rare`` fires in few states (the narrowed batch).
With 31-bit counters a state takes two words (exact keys); with 41-bit ones four
(hashed keys).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from modelcheck import Array, Ids, Int, Spec, action, explore, invariant, where
from modelcheck.kernel import Kernel
from tests.bruteforce import brute_force_check


def scatter_spec(big: int) -> type[Spec]:
    """The spec class whose four counters range over ``0..big``."""

    class Scatter(Spec):
        """Four counters up to ``big`` and a small one (see the module)."""

        check_deadlock = False
        Slots = Ids(0, 3)
        c = Array(Slots, Int(0, big))
        small = Int(0, 3)

        @action(i=Slots, d=range(1, 4))
        def Bump(self, s: Any, t: Any, i: int, d: int) -> Any:
            t.c[i] = where(s.c[i] + d <= 5, s.c[i] + d, 0)
            t.small = (s.small + 1) % 4
            return s.small < 3

        @action(d=range(1, 9))
        def Add(self, s: Any, t: Any, d: int) -> Any:
            t.c[0] = where(s.c[0] + d <= 5, s.c[0] + d, 0)
            t.small = 0
            return s.small == 3

        @action
        def Carry(self, s: Any, t: Any) -> Any:
            t.c[0] = s.c[3]
            t.c[3] = 0
            t.small = 0
            return s.c[3] > 0

        @action
        def Rare(self, s: Any, t: Any) -> Any:
            if t.none_enabled(s.c[1] == 5):
                return False
            t.c[2] = s.c[1]
            return s.c[1] == 5

        @invariant
        def Bounded(self, s: Any) -> Any:
            return s.c[0] <= 5

    return Scatter


def kernel_levels(kernel: Kernel, depth: int) -> list[np.ndarray]:
    """The first ``depth`` levels ``kernel`` reaches from its initial states (packed,
    de-duplicated by words; fewer when a level is empty)."""
    words = kernel.initial_packed()
    out = [words]
    for _ in range(depth):
        words = np.unique(kernel.expand(words).child_words, axis=0)
        if not len(words):
            break
        out.append(words)
    return out


def assert_explores_as_the_oracle(spec: Spec, fingerprint: str) -> None:
    """``spec`` explores with fingerprints of kind ``fingerprint`` to the brute-force
    oracle's distinct and generated states and depth."""
    r, o = explore(spec), brute_force_check(spec)
    assert r.fingerprint == fingerprint
    assert (r.distinct_states, r.generated_states, r.depth) == \
        (o.distinct, o.generated, o.depth)
