"""A key-value store's request/response interface (tlaplus/Examples ``specifications/btree``).

A port of ``specifications/btree/kvstore.tla`` (Lorin Hochstein), the abstract store
that the B-tree spec ``btree.tla`` of the same directory refines, checked with
``kvstore.cfg``: ``Keys = {"A", "B", "C"}``, ``Vals = {X, Y, Z}`` (model values),
``MISSING = "missing"``, ``NIL`` a model value. A client issues one request at a time
(get, insert, update, delete of a key, with a value for insert and update); the store
answers it, updating ``dict``. The manifest gives 2,641 distinct states, 28,585
generated (with the initial state) and depth 11; this port finds 2,641 states and
28,584 successors, as does an independent breadth-first search written directly from
the TLA+ (``tests/test_tla_models_3.py``), but depth 8 (9 in TLC's numbering, which
counts states): every state is within 8 steps of the initial one (insert, answer and
so on), and both searches agree. The manifest's depth is most likely from a run with
several TLC workers, whose search is not strictly breadth-first (tlaplus/Examples
pull request 204 models this "degraded BFS"), so that a state's recorded depth may
exceed its distance.

Translation choices:

* ``Keys`` and ``Vals`` are ``Ids(1, 3)`` (A, B, C and X, Y, Z); ``dict[k]`` is a
  ``Ref(Vals)`` whose ``none`` value 0 is ``MISSING``.
* ``args`` is ``NIL``, ``<<k>>`` (get, delete) or ``<<k, v>>`` (insert, update): a
  record ``[key, val]`` with ``key = 0`` for ``NIL`` and ``val = 0`` for the one-element
  tuple. The encoding is one-to-one, so it adds and merges no states.
* ``ret \\in Vals \\cup {"ok", "error", MISSING, NIL}`` is the enum ``Ret``, whose
  members ``X, Y, Z`` follow ``MISSING``: ``ret' = dict[key]`` is ``Ret.MISSING +
  dict[key]``.
* The responses ``GetResp``, ``UpdateResp`` and ``DeleteResp`` are guarded by ``op``
  alone, as in the source: once answered, each stays enabled and steps back into the
  same state (these steps count among TLC's generated states, and among ours).
* ``TypeOK`` (the cfg's only invariant) holds by construction but for the shape of
  ``args`` and ``ret`` given ``op``, which the invariant ``TypeOK`` checks.

Fairness: ``Spec`` has ``WF_op(\\E k \\in Keys: DeleteReq(k))``, but the cfg checks no
temporal property; the fairness is left out (``WF_op`` is fairness on the subscript
``op`` alone, not on all variables, which modelcheck does not express).

    modelcheck check examples/tla/kvstore.py     # 2,641 states
    modelcheck check examples/tla/kvstore.py:KVStoreBugInsertOverwrites  # violates InsertKeepsValue
"""

from __future__ import annotations

from enum import IntEnum

from modelcheck import (
    Array,
    Enum,
    Ids,
    Record,
    Ref,
    Spec,
    action,
    action_property,
    implies,
    invariant,
    where,
)

__all__ = ["Op", "Ret", "Phase", "KVStore", "KVStoreBugInsertOverwrites"]


class Op(IntEnum):
    """``Ops \\cup {NIL}``."""

    NIL = 0
    get = 1
    insert = 2
    delete = 3
    update = 4


class Ret(IntEnum):
    """``Vals \\cup {"ok", "error", MISSING, NIL}``; X, Y, Z follow MISSING."""

    NIL = 0
    ok = 1
    error = 2
    MISSING = 3
    X = 4
    Y = 5
    Z = 6


class Phase(IntEnum):
    ready = 0
    working = 1


Keys = Ids(1, 3, doc='{"A", "B", "C"}')
Vals = Ids(1, 3, doc="{X, Y, Z}")


class KVStore(Spec):
    """kvstore.tla with kvstore.cfg."""

    Keys = Keys
    Vals = Vals

    op = Enum(Op)
    args = Record(key=Ref(Keys), val=Ref(Vals))  # key 0: NIL; val 0: <<key>>
    ret = Enum(Ret)
    state = Enum(Phase)
    dict = Array(Keys, Ref(Vals))  # 0: MISSING

    def _request(self, s, t, op, key, val=0):
        t.op = op
        t.args = {"key": key, "val": val}
        t.ret = Ret.NIL
        t.state = Phase.working
        return s.state == Phase.ready

    def present(self, s, key):
        return s.dict[key] != 0

    @action(k=Keys)
    def GetReq(self, s, t, k):
        return self._request(s, t, Op.get, k)

    @action
    def GetResp(self, s, t):
        t.ret = Ret.MISSING + s.dict[s.args.key]
        t.state = Phase.ready
        return s.op == Op.get

    @action(k=Keys, v=Vals)
    def InsertReq(self, s, t, k, v):
        return self._request(s, t, Op.insert, k, v)

    @action
    def InsertResp(self, s, t):
        key, absent = s.args.key, ~self.present(s, s.args.key)
        t.dict[key] = where(absent, s.args.val, s.dict[key])
        t.ret = where(absent, Ret.ok, Ret.error)
        t.state = Phase.ready
        return (s.op == Op.insert) & (s.state == Phase.working)

    @action(k=Keys, v=Vals)
    def UpdateReq(self, s, t, k, v):
        return self._request(s, t, Op.update, k, v)

    @action
    def UpdateResp(self, s, t):
        key, present = s.args.key, self.present(s, s.args.key)
        t.ret = where(present, Ret.ok, Ret.error)
        t.dict[key] = where(present, s.args.val, s.dict[key])
        t.state = Phase.ready
        return s.op == Op.update

    @action(k=Keys)
    def DeleteReq(self, s, t, k):
        return self._request(s, t, Op.delete, k)

    @action
    def DeleteResp(self, s, t):
        """Deleting a key that is not there is fine."""
        t.ret = Ret.ok
        t.state = Phase.ready
        t.dict[s.args.key] = 0
        return s.op == Op.delete

    @invariant
    def TypeOK(self, s):
        """``args`` has the shape of ``op``'s request; ``ret`` is never a value but after
        a get."""
        two = (s.op == Op.insert) | (s.op == Op.update)
        return (((s.op == Op.NIL) == (s.args.key == 0))
                & implies(s.op != Op.NIL, (s.args.val != 0) == two)
                & implies(s.ret > Ret.MISSING, s.op == Op.get))


class KVStoreBugInsertOverwrites(KVStore):
    """Insert overwrites a present key (and says ``ok``): a get then returns the new
    value although the insert of an existing key must fail. ``InsertKeepsValue`` (an
    action property: an insert never changes a present key) catches it."""

    @action
    def InsertResp(self, s, t):
        t.dict[s.args.key] = s.args.val
        t.ret = Ret.ok
        t.state = Phase.ready
        return (s.op == Op.insert) & (s.state == Phase.working)

    @action_property
    def InsertKeepsValue(self, s, t):
        """Answering an insert never changes the value of a present key."""
        answering = (s.op == Op.insert) & (s.state == Phase.working) & (t.state == Phase.ready)
        key = s.args.key
        return implies(answering & self.present(s, key), t.dict[key] == s.dict[key])
