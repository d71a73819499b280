"""Cars in both directions over a single-lane bridge (SingleLaneBridge, model MC).

Source: tlaplus/Examples ``specifications/SingleLaneBridge/SingleLaneBridge.tla``
(Younes Akhouayri) with ``MC.tla``/``MC.cfg``: ``CarsRight = {"r1", "r2"}``,
``CarsLeft = {"l1", "l2"}``, ``Bridge = {4, 5}``, ``Positions = 1..8``, ``SPECIFICATION
Spec``, ``INVARIANT Invariants``, ``PROPERTY CarsInBridgeExitBridge CarsEnterBridge``.
The manifest gives 3,605 distinct states, TLC depth 29 (our depth 28).

Cars drive round a ring of positions, right-going cars downwards (``RMove``: 8, 7,
..., 1, 8, ...), left-going ones upwards (``LMove``); positions 4..5 are the bridge.
A car that reaches the position just before the bridge joins the queue
``WaitingBeforeBridge``; the head of the queue enters (``EnterBridge``) when the
bridge is empty, or when it holds only cars of its direction and the next position
is free. ``Invariants``: at most one car per bridge position, at most ``|Bridge|``
cars on it, never two directions at once.

Translation:

* cars are ids ``Cars = 1..4``: 1, 2 are ``r1``, ``r2`` (``CarsRight``) and 3, 4 are
  ``l1``, ``l2`` (``CarsLeft``); ``Location`` is an array of positions and
  ``WaitingBeforeBridge`` a ``Seq`` of car ids with room for every car (each car waits
  at most once, so ``TypeOK``'s ``Len <= Cardinality(Cars)`` is the capacity).
  ``StartPos``/``EndPos``/``StartBridge``/``EndBridge`` (CHOOSE of the least and
  greatest) are constants 1, 8, 4, 5; the bridge is the interval between the last two.
  ``Init``'s ``SeqFromSet(CarsBeforeBridge)`` is the empty sequence in this model
  (no car starts next to the bridge).
* ``ChangeLocation``'s ``IF`` (join the queue or not) is two branches, ``wait`` and
  ``drive``, of ``MoveOutsideBridge(car)`` and ``MoveInsideBridge(car)``; the two
  disjuncts of ``EnterBridge`` are its branches ``empty`` and ``same``. ``Next`` quantifies
  ``EnterBridge`` under ``\\E car`` although it does not use ``car``; here it is one
  action without a parameter (TLC's 20,181 total states count its successors once per
  car; the distinct states are the same).
* ``Fairness``: ``WF_vars`` of each ``MoveOutsideBridge(car)``, ``MoveInsideBridge(car)``
  and of ``EnterBridge`` (as a whole): the class's ``fairness``. The properties are ``\\A car:
  P(car) ~> Q(car)``, a conjunction over cars; ``@leads_to`` takes one ``P ~> Q``, so
  each is one property per car (``CarsEnterBridge_r1``, ...), written for MC's four
  cars (other ``NCars`` need them rewritten). All eight hold.

``SingleLaneBridgeBugNoDirection`` lets the head of the queue enter whatever the
direction of the cars on the bridge: ``Invariants`` fails after 7 states.

Run: ``modelcheck check examples/tla/single_lane_bridge.py`` (3,605 states, depth 28,
the eight properties hold; TLC's 20,181 total states are our 14,072 generated, the
initial state, and ``EnterBridge``'s 2,036 successors counted three more times).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from modelcheck import (
    Array,
    Const,
    Ids,
    Int,
    Seq,
    Spec,
    action,
    all_of,
    any_of,
    count_of,
    implies,
    invariant,
    leads_to,
    not_,
    where,
)

__all__ = ["SingleLaneBridge", "SingleLaneBridgeBugNoDirection"]

def _in_bridge(spec: Any, pos: Any) -> Any:
    return (pos >= spec.StartBridge) & (pos <= spec.EndBridge)


def _enters(car: int) -> Callable[..., Any]:
    def prop(self, s):
        return not_(_in_bridge(self, s.Location[car])), _in_bridge(self, s.Location[car])
    return prop


def _exits(car: int) -> Callable[..., Any]:
    def prop(self, s):
        return _in_bridge(self, s.Location[car]), not_(_in_bridge(self, s.Location[car]))
    return prop


class SingleLaneBridge(Spec):
    """SingleLaneBridge.tla's ``Spec`` for MC's two cars each way, bridge 4..5 of 1..8."""

    NRight = Const(2, min=0, doc="cars 1..NRight drive right (downwards)")
    NCars = Const(4, min=1, doc="cars NRight+1..NCars drive left (upwards)")
    EndPos = Const(8, min=3, doc="Positions = 1..EndPos")
    StartBridge = Const(4, min=2)
    EndBridge = Const(5, min=2)
    Cars = Ids(1, NCars)

    Location = Array(Cars, Int(1, EndPos))
    WaitingBeforeBridge = Seq(Cars, NCars)

    StartPos = 1

    #: ``Fairness``: WF_vars of each MoveOutsideBridge(car), MoveInsideBridge(car), and
    #: of EnterBridge (a whole action: both its branches)
    fairness = {"MoveOutsideBridge": "weak", "MoveInsideBridge": "weak", "EnterBridge": "weak"}

    def init_states(self):
        yield {"Location": {c: self.EndPos if self.right(c) else self.StartPos
                            for c in self.Cars}}

    # ------------------------------------------------------------ helpers
    def right(self, car: int) -> bool:
        return car <= self.NRight

    def next_location(self, pos: Any, right: Any) -> Any:
        """``NextLocation``: ``RMove`` for a right-going car, ``LMove`` for a left-going one."""
        return where(right, where(pos > self.StartPos, pos - 1, self.EndPos),
                     where(pos < self.EndPos, pos + 1, self.StartPos))

    def in_bridge(self, s, car: Any) -> Any:
        return _in_bridge(self, s.Location[car])

    def before_bridge(self, car: int) -> int:
        """The position just before the bridge in ``car``'s direction (where it waits)."""
        return self.EndBridge + 1 if self.right(car) else self.StartBridge - 1

    # ------------------------------------------------------------ actions
    @action(car=Cars)
    def MoveOutsideBridge(self, s, t, car):
        nxt = self.next_location(s.Location[car], self.right(car))
        t.Location[car] = nxt  # ChangeLocation(car), with its IF as two branches
        with t.branch("wait", nxt == self.before_bridge(car)):
            t.WaitingBeforeBridge = s.WaitingBeforeBridge.append(car)
        with t.branch("drive", nxt != self.before_bridge(car)):
            pass
        return not_(_in_bridge(self, nxt))

    @action(car=Cars)
    def MoveInsideBridge(self, s, t, car):
        nxt = self.next_location(s.Location[car], self.right(car))
        t.Location[car] = nxt
        with t.branch("wait", nxt == self.before_bridge(car)):
            t.WaitingBeforeBridge = s.WaitingBeforeBridge.append(car)
        with t.branch("drive", nxt != self.before_bridge(car)):
            pass
        return self.in_bridge(s, car) & all_of(self.Cars, lambda c: s.Location[c] != nxt)

    @action
    def EnterBridge(self, s, t):
        w = s.WaitingBeforeBridge
        head = w.head()
        nxt = self.next_location(s.Location[head], head <= self.NRight)
        t.Location[head] = nxt
        t.WaitingBeforeBridge = w.tail()
        with t.branch("empty", all_of(self.Cars, lambda c: not_(self.in_bridge(s, c)))):
            pass
        with t.branch("same", not_(self.in_bridge(s, head)) & self.same_direction(s, head)
                      & all_of(self.Cars, lambda c: s.Location[c] != nxt)):
            pass
        return ~w.is_empty()

    def same_direction(self, s, car: Any) -> Any:
        """``HaveSameDirection(car)``: every car on the bridge goes ``car``'s way."""
        return all_of(self.Cars, lambda c: implies(
            self.in_bridge(s, c), (c <= self.NRight) == (car <= self.NRight)))

    # ------------------------------------------------------------ properties
    @invariant
    def Invariants(self, s):
        one_per_place = all_of(self.Cars, lambda a: all_of(self.Cars, lambda b: implies(
            self.in_bridge(s, a) & (s.Location[a] == s.Location[b]), a == b)))
        capacity = count_of(self.Cars, lambda c: self.in_bridge(s, c)) \
            < (self.EndBridge - self.StartBridge + 1) + 1
        one_way = not_(any_of(self.Cars, lambda r: self.right(r) & self.in_bridge(s, r))
                    & any_of(self.Cars, lambda c: (not self.right(c)) & self.in_bridge(s, c)))
        return one_per_place & capacity & one_way

    # \A car \in Cars: Location[car] \in Bridge ~> Location[car] \notin Bridge
    CarsInBridgeExitBridge_r1 = leads_to(_exits(1))
    CarsInBridgeExitBridge_r2 = leads_to(_exits(2))
    CarsInBridgeExitBridge_l1 = leads_to(_exits(3))
    CarsInBridgeExitBridge_l2 = leads_to(_exits(4))
    # \A car \in Cars: Location[car] \notin Bridge ~> Location[car] \in Bridge
    CarsEnterBridge_r1 = leads_to(_enters(1))
    CarsEnterBridge_r2 = leads_to(_enters(2))
    CarsEnterBridge_l1 = leads_to(_enters(3))
    CarsEnterBridge_l2 = leads_to(_enters(4))


class SingleLaneBridgeBugNoDirection(SingleLaneBridge):
    """``EnterBridge``'s second disjunct without ``HaveSameDirection``."""

    @action
    def EnterBridge(self, s, t):
        w = s.WaitingBeforeBridge
        head = w.head()
        nxt = self.next_location(s.Location[head], head <= self.NRight)
        t.Location[head] = nxt
        t.WaitingBeforeBridge = w.tail()
        with t.branch("empty", all_of(self.Cars, lambda c: not_(self.in_bridge(s, c)))):
            pass
        with t.branch("same", not_(self.in_bridge(s, head))
                      & all_of(self.Cars, lambda c: s.Location[c] != nxt)):
            pass
        return ~w.is_empty()
