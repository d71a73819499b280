"""A replicated log made finite by reduction (tlaplus/Examples ``specifications/FiniteMonotonic``).

A port of ``specifications/FiniteMonotonic/ReplicatedLog.tla`` (Andrew Helwer, Stephan
Merz, Markus Kuppe) checked with ``MCReplicatedLog.tla``/``MCReplicatedLog.cfg``:
nodes ``{n1, n2, n3}`` append transactions ``{tx1, tx2}`` to a shared log when they
have executed all of it (``WriteTx``), and catch up one entry at a time
(``ExecuteTx``). The log and the counters only grow; the model keeps them finite with
the *finite monotonic* technique: ``Next <- ReductionNext``, which also offers each
step composed (TLC's ``\\cdot``) with ``Reduction``: drop the prefix of the log that
every node has executed and shift the counters down by its length. ``CONSTRAINT
Constraint`` bounds the rest (``Len(log) < 5``, no node 5 or more entries behind).

The manifest gives 1,363 distinct states, 17,425 generated (with the initial state)
and depth 13 (TLC counts states, we count steps); this port finds 1,363 states and
depth 12. Its 11,616 generated successors are TLC's count without the intermediate
states of the composed steps: TLC counts the state between ``A`` and ``Reduction`` as
generated too (5,808 composed steps: 11,616 + 5,808 + 1 = 17,425; the same holds for
``crdt.py``).

Translation choices:

* ``Node`` and ``Transaction`` are ``Ids(1, 3)`` and ``Ids(1, 2)``; ``log`` is a
  ``Seq`` of capacity 5 (a successor may reach length 5 before the constraint cuts
  it), ``executed`` counts ``0..5``.
* The action composition ``A \\cdot Reduction`` is ``A``'s next values, computed as
  expressions, then reduced: ``Reduction`` is a function of the state, so the
  composition has exactly one successor per ``A`` successor. ``WriteTxAndReduction``
  and ``ExecuteTxAndReduction`` are actions of their own, as in ``ReductionNext``
  (when every node has executed nothing new, the reduced successor is the plain one
  and counts once among the distinct states, twice among the generated ones, as in TLC).
* ``TypeOK`` holds by construction.

Temporal property (``PROPERTIES Convergence`` under ``SPECIFICATION WriteFairSpec``),
not checked here: ``Convergence == []<>(\\A n \\in Node: executed[n] = Len(log))`` under
``\\A n, tx: WF_vars(WriteTx(n, tx))`` and ``\\A n, tx: <>[][WriteTx(n, tx)]_vars``. The
cfg checks it with ``CONSTRAINT Constraint``, which our liveness checker refuses, and
the second conjunct (eventually only ``WriteTx(n, tx)`` steps, a property of the
behaviour rather than a fairness condition) is not expressible as modelcheck fairness.

    modelcheck check examples/tla/replicated_log.py:MCReplicatedLog   # 1,363 states
    modelcheck check examples/tla/replicated_log.py:MCReplicatedLogBugAhead  # violates Safety
"""

from __future__ import annotations

from modelcheck import (
    Array,
    Const,
    Ids,
    Int,
    Seq,
    Spec,
    action,
    all_of,
    constraint,
    invariant,
    min_of,
)

__all__ = ["ReplicatedLog", "MCReplicatedLog", "MCReplicatedLogBugAhead"]


class ReplicatedLog(Spec):
    """ReplicatedLog.tla: ``Next == \\E n: \\E tx: WriteTx(n, tx) \\/ ExecuteTx(n)``.

    Unbounded in TLA+; here the log holds at most ``Cap`` entries."""

    Cap = Const(5, min=1, doc="capacity of the log (unbounded in TLA+)")
    Node = Ids(1, 3, doc="{n1, n2, n3}")
    Transaction = Ids(1, 2, doc="{tx1, tx2}")

    log = Seq(Transaction, Cap)
    executed = Array(Node, Int(0, Cap))

    def write(self, s, n, tx):
        """``WriteTx(n, tx)``'s next values (the guard is :meth:`can_write`)."""
        ex = {o: s.executed[o] + (1 if o == n else 0) for o in self.Node}
        return s.log.append(tx), ex

    def can_write(self, s, n):
        return s.executed[n] == s.log.len()

    def execute(self, s, n):
        """``ExecuteTx(n)``'s next values."""
        ex = {o: s.executed[o] + (1 if o == n else 0) for o in self.Node}
        return s.log, ex

    def can_execute(self, s, n):
        return s.executed[n] < s.log.len()

    @action(n=Node, tx=Transaction)
    def WriteTx(self, s, t, n, tx):
        t.log, t.executed = self.write(s, n, tx)
        return self.can_write(s, n)

    @action(n=Node)
    def ExecuteTx(self, s, t, n):
        t.executed[n] = s.executed[n] + 1
        return self.can_execute(s, n)

    @invariant
    def Safety(self, s):
        return all_of(self.Node, lambda n: s.executed[n] <= s.log.len())


class MCReplicatedLog(ReplicatedLog):
    """MCReplicatedLog.tla/.cfg: ``Next <- ReductionNext``, ``CONSTRAINT Constraint``."""

    def reduce(self, t, log, ex):
        """``A \\cdot Reduction``: with ``m == Min(Range(executed))`` of A's next state,
        ``executed' = [n |-> executed[n] - m]`` and ``log' = SubSeq(log, m + 1, Len(log))``."""
        m = min_of(self.Node, lambda o: ex[o])
        t.executed = lambda o: ex[o] - m
        t.log = log.drop(m)

    @action(n=ReplicatedLog.Node, tx=ReplicatedLog.Transaction)
    def WriteTxAndReduction(self, s, t, n, tx):
        self.reduce(t, *self.write(s, n, tx))
        return self.can_write(s, n)

    @action(n=ReplicatedLog.Node)
    def ExecuteTxAndReduction(self, s, t, n):
        self.reduce(t, *self.execute(s, n))
        return self.can_execute(s, n)

    @constraint
    def Constraint(self, s):
        """The bounds are educated guesses (the source's comment)."""
        return (s.log.len() < 5) & all_of(self.Node, lambda n: s.log.len() - s.executed[n] < 5)


class MCReplicatedLogBugAhead(MCReplicatedLog):
    """``ExecuteTx`` without its guard: a node executes past the end of the log
    (``Safety`` fails after one step)."""

    def can_execute(self, s, n):
        return True
