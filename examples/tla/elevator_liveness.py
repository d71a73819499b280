"""MultiCarElevator (tlaplus/Examples ``specifications/MultiCarElevator/Elevator.tla``),
with the liveness of ``ElevatorLivenessMedium.cfg``: Person = {p1, p2}, Elevator =
{e1, e2}, FloorCount = 2; ``Spec`` with its ``TemporalAssumptions``; PROPERTY
``TemporalInvariant``; INVARIANTS ``TypeInvariant``, ``SafetyInvariant``. The
manifest says TLC finds 4,122 distinct states, depth 36, and that everything holds.

Encoding (one cell per TLA+ field): a person's ``location`` (``Floor \\cup
Elevator``) is ``loc[p]`` in ``1..FloorCount + |Elevator|`` (``FloorCount + e`` is
elevator ``e``); ``ActiveElevatorCalls`` is a set of call codes ``2 * (floor - 1) +
d`` (``d`` = 0 for "Up", 1 for "Down"); ``ElevatorState[e]`` is ``efloor``, ``edir``,
``doors`` and ``buttons`` per elevator. ``TypeInvariant`` holds by typing (every
value has its declared finite type). ``PickNewDestination(p)``'s ``\\E f`` is the
parameter ``f``; ``DispatchElevator(c)``'s ``CHOOSE`` picks the nearest eligible
elevator with the smallest id (TLC's order of the model values e1, e2).

``TemporalInvariant`` is a conjunction over calls and persons of leads-to
properties; each conjunct is one property here: ``CallServiced<floor><Up|Down>``
(``c \\in ActiveElevatorCalls ~> \\E e: CanServiceCall[e, c]``) and ``Arrives<p>``
(``PersonState[p].waiting ~> location = destination``), for the default constants.
Fairness: ``\\A p: WF(CallElevator(p))``, ``\\A e: WF`` of Open/Enter/Exit/Stop and ``SF``
of Close/Move, ``\\A c: SF(DispatchElevator(c))``.

:class:`ElevatorLivenessBugWeakMove` weakens ``SF(MoveElevator(e))`` to ``WF``: a
person waiting in a moving elevator whose move is disabled every time a call at
its floor reopens the doors may then wait forever.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from modelcheck import (
    Array,
    Bool,
    Const,
    Enum,
    Ids,
    Int,
    SetOf,
    Spec,
    action,
    all_of,
    any_of,
    functions,
    implies,
    init_product,
    invariant,
    leads_to,
    not_,
    where,
)


class Dir(IntEnum):
    Up = 0
    Down = 1
    Stationary = 2


UP, DOWN, STAT = Dir.Up, Dir.Down, Dir.Stationary
FLOORS, PERSONS, ELEVATORS = 2, 2, 2  # the cfg's constants (properties are per instance)


def _call_services(floor: int, d: int) -> Any:
    def prop(self: Any, s: Any) -> Any:
        c = 2 * (floor - 1) + d
        return s.calls.has(c), any_of(self.Elevators, lambda e: self.can_service(s, e, c))

    prop.__name__ = f"CallServiced{floor}{Dir(d).name}"
    return leads_to(prop)


def _arrives(p: int) -> Any:
    def prop(self: Any, s: Any) -> Any:
        return s.waiting[p], s.loc[p] == s.dest[p]

    prop.__name__ = f"Arrives{p}"
    return leads_to(prop)


class ElevatorLiveness(Spec):
    """A multi-car elevator system: people call, elevators are dispatched, move, open."""

    check_deadlock = False
    FloorCount = Const(FLOORS, min=1)
    NPersons = Const(PERSONS, min=1)
    NElevators = Const(ELEVATORS, min=1)
    Persons = Ids(1, NPersons)
    Elevators = Ids(1, NElevators)

    loc = Array(Persons, Int(1, FloorCount + NElevators))
    dest = Array(Persons, Int(1, FloorCount))
    waiting = Array(Persons, Bool())
    calls = SetOf(Int(0, 2 * FloorCount - 1))
    efloor = Array(Elevators, Int(1, FloorCount))
    edir = Array(Elevators, Enum(Dir))
    doors = Array(Elevators, Bool())
    buttons = Array(Elevators, SetOf(Int(1, FloorCount)))

    fairness = {"CallElevator": "weak", "OpenElevatorDoors": "weak", "EnterElevator": "weak",
                "ExitElevator": "weak", "CloseElevatorDoors": "strong",
                "MoveElevator": "strong", "StopElevator": "weak",
                "DispatchElevator": "strong"}

    def init_states(self) -> Any:
        floors = range(1, self.FloorCount + 1)
        return init_product(loc=functions(self.Persons, floors),
                            dest=functions(self.Persons, floors),
                            efloor=functions(self.Elevators, floors),
                            edir=functions(self.Elevators, [int(STAT)]))

    # -- definitions -----------------------------------------------------------------
    def calls_all(self) -> range:
        return range(2 * self.FloorCount)

    def code(self, floor: Any, d: Any) -> Any:
        return 2 * (floor - 1) + d

    def direction(self, cur: Any, dst: Any) -> Any:
        """GetDirection[current, destination]."""
        return where(dst > cur, int(UP), int(DOWN))

    def can_service(self, s: Any, e: int, c: int) -> Any:
        """CanServiceCall[e, c]."""
        return (s.efloor[e] == c // 2 + 1) & (s.edir[e] == c % 2)

    def getting_on(self, s: Any, e: int, p: int) -> Any:
        """p \\in PeopleWaiting[floor(e), direction(e)]."""
        return ((s.loc[p] == s.efloor[e]) & s.waiting[p]
                & (self.direction(s.loc[p], s.dest[p]) == s.edir[e]))

    def getting_off(self, s: Any, e: int, p: int) -> Any:
        return (s.loc[p] == self.FloorCount + e) & (s.dest[p] == s.efloor[e])

    def enter_enabled(self, s: Any, e: int) -> Any:
        return (s.doors[e] & (s.edir[e] != STAT)
                & any_of(self.Persons, lambda p: self.getting_on(s, e, p)))

    def exit_enabled(self, s: Any, e: int) -> Any:
        return s.doors[e] & any_of(self.Persons, lambda p: self.getting_off(s, e, p))

    def open_enabled(self, s: Any, e: int) -> Any:
        return not_(s.doors[e]) & (any_of(self.calls_all(), lambda c: s.calls.has(c)
                                          & self.can_service(s, e, c))
                                   | s.buttons[e].has(s.efloor[e]))

    def next_floor(self, s: Any, e: int) -> Any:
        return where(s.edir[e] == UP, s.efloor[e] + 1, s.efloor[e] - 1)

    # -- actions ----------------------------------------------------------------------
    @action(p=Persons, f=lambda self, p: range(1, self.FloorCount + 1))
    def PickNewDestination(self, s, t, p, f):
        t.dest[p] = f
        return not_(s.waiting[p]) & (s.loc[p] <= self.FloorCount) & (s.loc[p] != f)

    @action(p=Persons)
    def CallElevator(self, s, t, p):
        call = self.code(s.loc[p], self.direction(s.loc[p], s.dest[p]))
        served = any_of(self.Elevators, lambda e: any_of(
            self.calls_all(), lambda c: (call == c) & self.can_service(s, e, c)) & s.doors[e])
        t.calls = where(served, s.calls, s.calls.with_(call))
        t.waiting[p] = True
        return not_(s.waiting[p]) & (s.loc[p] != s.dest[p])

    @action(e=Elevators)
    def OpenElevatorDoors(self, s, t, e):
        t.doors[e] = True
        t.buttons[e] = s.buttons[e].without(s.efloor[e])
        here = self.code(s.efloor[e], s.edir[e])
        t.calls = where(s.edir[e] != STAT, s.calls.without(where(s.edir[e] != STAT, here, 0)),
                        s.calls)
        return self.open_enabled(s, e)

    @action(e=Elevators)
    def EnterElevator(self, s, t, e):
        buttons = s.buttons[e]
        for p in self.Persons:
            on = self.getting_on(s, e, p)
            t.loc[p] = where(on, self.FloorCount + e, s.loc[p])
            buttons = where(on, buttons.with_(s.dest[p]), buttons)
        t.buttons[e] = buttons
        return self.enter_enabled(s, e)

    @action(e=Elevators)
    def ExitElevator(self, s, t, e):
        for p in self.Persons:
            off = self.getting_off(s, e, p)
            t.loc[p] = where(off, s.efloor[e], s.loc[p])
            t.waiting[p] = where(off, False, s.waiting[p])
        return self.exit_enabled(s, e)

    @action(e=Elevators)
    def CloseElevatorDoors(self, s, t, e):
        t.doors[e] = False
        return not_(self.enter_enabled(s, e)) & not_(self.exit_enabled(s, e)) & s.doors[e]

    @action(e=Elevators)
    def MoveElevator(self, s, t, e):
        nxt = self.next_floor(s, e)
        t.efloor[e] = where((nxt >= 1) & (nxt <= self.FloorCount), nxt, s.efloor[e])
        others = [o for o in self.Elevators if o != e]
        return ((s.edir[e] != STAT) & not_(s.doors[e]) & not_(s.buttons[e].has(s.efloor[e]))
                & all_of(self.calls_all(), lambda c: implies(
                    s.calls.has(c) & self.can_service(s, e, c),
                    any_of(others, lambda o: self.can_service(s, o, c))))
                & (nxt >= 1) & (nxt <= self.FloorCount))

    @action(e=Elevators)
    def StopElevator(self, s, t, e):
        nxt = self.next_floor(s, e)
        t.edir[e] = STAT
        return (not_(self.open_enabled(s, e)) & not_(s.doors[e])
                & ((nxt < 1) | (nxt > self.FloorCount)))

    @action(c=lambda self: range(2 * self.FloorCount))
    def DispatchElevator(self, s, t, c):
        floor, d = c // 2 + 1, c % 2

        def eligible(e: int) -> Any:
            stationary = s.edir[e] == STAT
            approaching = (s.edir[e] == d) & ((s.efloor[e] == floor)
                                              | (self.direction(s.efloor[e], floor) == d))
            return stationary | approaching

        def dist(e: int) -> Any:
            return abs(s.efloor[e] - floor)

        closest: Any = 0
        for e in reversed(list(self.Elevators)):
            best = eligible(e) & all_of(self.Elevators, lambda e2, e=e: implies(
                eligible(e2), dist(e) <= dist(e2)))
            closest = where(best, e, closest)
        for e in self.Elevators:
            move = (closest == e) & (s.edir[e] == STAT)
            t.efloor[e] = where(move, floor, s.efloor[e])
            t.edir[e] = where(move, d, s.edir[e])
        return s.calls.has(c) & any_of(self.Elevators, eligible)

    # -- properties -------------------------------------------------------------------
    @invariant
    def SafetyInvariant(self, s):
        F = self.FloorCount
        buttons_ok = all_of(self.Elevators, lambda e: all_of(
            range(1, F + 1), lambda f: implies(s.buttons[e].has(f), any_of(
                self.Persons, lambda p: (s.loc[p] == F + e) & (s.dest[p] == f)))))
        riding_ok = all_of(self.Persons, lambda p: all_of(self.Elevators, lambda e: implies(
            (s.loc[p] == F + e) & (s.efloor[e] != s.dest[p]),
            s.edir[e] == self.direction(s.efloor[e], s.dest[p]))))
        no_ghost = all_of(self.calls_all(), lambda c: implies(s.calls.has(c), any_of(
            self.Persons, lambda p: (s.loc[p] == c // 2 + 1) & s.waiting[p]
            & (self.direction(s.loc[p], s.dest[p]) == c % 2))))
        return buttons_ok & riding_ok & no_ghost

    locals().update({f"CallServiced{fl}{Dir(d).name}": _call_services(fl, d)
                     for fl in range(1, FLOORS + 1) for d in (0, 1)})
    locals().update({f"Arrives{p}": _arrives(p) for p in range(1, PERSONS + 1)})


class ElevatorLivenessBugWeakMove(ElevatorLiveness):
    """``SF(MoveElevator(e))`` weakened to ``WF``."""

    fairness = {**ElevatorLiveness.fairness, "MoveElevator": "weak"}
