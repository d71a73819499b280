"""Merz's simple resource allocator (SimpleAllocator), with its fairness as TLA+ writes it.

Source: tlaplus/Examples ``specifications/allocator/SimpleAllocator.tla`` (Stephan
Merz), with three clients and two resources (``Clients = {c1, c2, c3}``,
``Resources = {r1, r2}``), ``INVARIANT TypeInvariant ResourceMutex`` and each of
``ClientsWillReturn``, ``ClientsWillObtain``, ``InfOftenSatisfied`` as a ``PROPERTY``.
TLC 2.20 on that model: 400 distinct states; under ``SimpleAllocator`` the three
properties hold; under ``SimpleAllocator2`` (weaker fairness for returning)
``ClientsWillReturn`` holds and the other two are violated (as the module's comments
say).

A client requests a set of resources when it has no outstanding request and holds
none (``Request(c, S)``); the allocator gives it some of the available ones it asked for
(``Allocate(c, S)``); it returns any set it holds (``Return(c, S)``). ``S`` ranges over
``SUBSET Resources`` (``SetOf(Resources)`` as a parameter type: one instance per set).

The fairness is the module's, with no action split or relabelled::

    SimpleAllocator ==
      /\\ Init /\\ [][Next]_vars
      /\\ \\A c \\in Clients: WF_vars(Return(c, alloc[c]))
      /\\ \\A c \\in Clients: SF_vars(\\E S \\in SUBSET Resources: Allocate(c,S))

``{"Return(S=held(c))": "weak"}`` is the first conjunct: per client the instance of
``Return`` whose ``S`` is the selector ``held(c)`` (``alloc[c]``) in the step's first
state; ``{"Allocate(S=*)": "strong"}`` is the second: per client, ``Allocate`` with
``S`` taken inside the condition. ``SimpleAllocator2``'s ``WF_vars(unsat[c] = {} /\\
Return(c, alloc[c]))`` selects ``Return(c, {})`` (never enabled: ``S # {}``) where a
request is outstanding, the same action. The properties quantified over clients
(and resources) are one property per client (and resource): ``ClientsWillReturn_1``
is ``unsat[c1] = {} ~> alloc[c1] = {}``.
"""

from __future__ import annotations

from modelcheck import (
    Array,
    Const,
    Ids,
    SetOf,
    Spec,
    action,
    all_of,
    always_eventually,
    invariant,
    leads_to,
    where,
)

__all__ = ["SimpleAllocator", "SimpleAllocator2"]


class SimpleAllocator(Spec):
    """SimpleAllocator.tla's ``SimpleAllocator`` for three clients and two resources."""

    NC = Const(3, min=1, max=3, doc="clients")
    NR = Const(2, min=1, doc="resources")
    Clients = Ids(1, NC)
    Resources = Ids(1, NR)

    unsat = Array(Clients, SetOf(Resources))
    alloc = Array(Clients, SetOf(Resources))

    fairness = {"Return(S=held(c))": "weak", "Allocate(S=*)": "strong"}

    def held(self, s, c):
        """``alloc[c]``: the set client ``c`` holds (selects ``Return(c, alloc[c])``)."""
        return s.alloc[c]

    def allocated(self, s):
        """``UNION {alloc[c] : c \\in Clients}``."""
        out = s.alloc[1]
        for c in self.Clients:
            out = out | s.alloc[c]
        return out

    @action(c=Clients, S=SetOf(Resources))
    def Request(self, s, t, c, S):
        t.unsat[c] = S
        return s.unsat[c].is_empty() & s.alloc[c].is_empty() & ~S.is_empty()

    @action(c=Clients, S=SetOf(Resources))
    def Allocate(self, s, t, c, S):
        t.alloc[c] = s.alloc[c] | S
        t.unsat[c] = s.unsat[c] - S
        return ~S.is_empty() & (S <= s.unsat[c]) & (S & self.allocated(s)).is_empty()

    @action(c=Clients, S=SetOf(Resources))
    def Return(self, s, t, c, S):
        t.alloc[c] = s.alloc[c] - S
        return ~S.is_empty() & (S <= s.alloc[c])

    @invariant
    def ResourceMutex(self, s):
        """``\\A c1, c2 \\in Clients: c1 # c2 => alloc[c1] \\cap alloc[c2] = {}``."""
        return all_of(self.Clients, lambda a: all_of(
            self.Clients, lambda b: (a == b) | (s.alloc[a] & s.alloc[b]).is_empty()))

    # ClientsWillReturn == \A c \in Clients: unsat[c] = {} ~> alloc[c] = {}
    ClientsWillReturn_1 = leads_to(lambda self, s: (s.unsat[1].is_empty(),
                                                    s.alloc[1].is_empty()))
    ClientsWillReturn_2 = leads_to(lambda self, s: (s.unsat[2].is_empty(),
                                                    s.alloc[2].is_empty()))
    ClientsWillReturn_3 = leads_to(lambda self, s: (s.unsat[3].is_empty(),
                                                    s.alloc[3].is_empty()))
    # ClientsWillObtain == \A c \in Clients, r \in Resources: r \in unsat[c] ~> r \in alloc[c]
    ClientsWillObtain_1_1 = leads_to(lambda self, s: (s.unsat[1].has(1), s.alloc[1].has(1)))
    ClientsWillObtain_1_2 = leads_to(lambda self, s: (s.unsat[1].has(2), s.alloc[1].has(2)))
    ClientsWillObtain_2_1 = leads_to(lambda self, s: (s.unsat[2].has(1), s.alloc[2].has(1)))
    ClientsWillObtain_2_2 = leads_to(lambda self, s: (s.unsat[2].has(2), s.alloc[2].has(2)))
    ClientsWillObtain_3_1 = leads_to(lambda self, s: (s.unsat[3].has(1), s.alloc[3].has(1)))
    ClientsWillObtain_3_2 = leads_to(lambda self, s: (s.unsat[3].has(2), s.alloc[3].has(2)))
    # InfOftenSatisfied == \A c \in Clients: []<>(unsat[c] = {})
    InfOftenSatisfied_1 = always_eventually(lambda self, s: s.unsat[1].is_empty())
    InfOftenSatisfied_2 = always_eventually(lambda self, s: s.unsat[2].is_empty())
    InfOftenSatisfied_3 = always_eventually(lambda self, s: s.unsat[3].is_empty())


class SimpleAllocator2(SimpleAllocator):
    """``SimpleAllocator2``: ``\\A c: WF_vars(unsat[c] = {} /\\ Return(c, alloc[c]))``."""

    fairness = {"Return(S=held_when_satisfied(c))": "weak", "Allocate(S=*)": "strong"}

    def held_when_satisfied(self, s, c):
        """``alloc[c]`` where ``unsat[c] = {}``, else ``{}`` (``Return(c, {})`` is never
        enabled: the conjunct ``unsat[c] = {}`` is false there)."""
        return where(s.unsat[c].is_empty(), s.alloc[c], s.alloc[c] - s.alloc[c])
