"""Expression helpers that mean the same on one state and on a batch of states.

Spec code is evaluated two ways: on one state, where every variable is a numpy
scalar, and on a batch, where every variable is a numpy column. Operators
``& | ~ == != < <= > >= + - *`` already agree on both; these helpers cover the
rest. Do not use Python's ``and``/``or``/``not``/``if`` on state values: they
cannot work on a batch, and modelcheck reports such a use as a spec error.

Booleans: a comparison of action parameters or constants (``p != q``) is a
*Python* bool, on which ``~`` is integer negation (``~True == -2``). The helpers
here accept Python bools, numpy bools and boolean columns alike, and refuse
anything else with a message naming that mistake; :func:`not_` negates all three.

Domains: the quantifiers (:func:`any_of`, :func:`all_of`), :func:`choose` and the
folds (:func:`sum_of`, :func:`max_of`, :func:`min_of`, :func:`count_of`) range over
a finite domain, which is either an iterable of values (``self.Procs``, a
``range``, a list) or a *set-valued expression*: a ``SetOf`` value such as
``s.msgs`` or ``s.S | s.T`` (:class:`~modelcheck.types.sets.SetValue`), whose members
are element values of its element type (ids, ints, enum members, records...).
A set-valued expression implements one method, ``members()``, returning
``(element, in_set)`` pairs, ``in_set`` being a boolean (a numpy bool for one state,
a column for a batch), for every element that is a member in some state, in the
element type's order (a pair whose ``in_set`` is false everywhere changes nothing). A
set value lists only the members present (the union over a batch's states), so a
quantifier or fold over ``s.msgs`` costs per member held, not per value of the
element type: the function is evaluated at members only, as in TLA+.

For example::

    eligible = (s.regEpoch[c] != 0) & ~s.fenced[c]
    t.leader[p] = where(any_of(self.Brokers, lambda c: eligible_fn(c)), c, 0)
    t.top = max_of(s.msgs, lambda m: s.ballot[m], default=0)
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Generic, Protocol, TypeVar, overload, runtime_checkable

import numpy as np

from .errors import SpecEvaluationError, _short
from .types import SetValue, SparseSetValue, Value
from .undefined import (
    _bool,
    _narrow_since,
    _sink,
    _Undefined,
    bool_hint,
    collect_undefined,
    pin_undefined,
    undefined_mark,
)

__all__ = [
    "BOOLEAN", "SetLike",
    "where", "any_of", "all_of", "implies", "not_", "choose",
    "sum_of", "max_of", "min_of", "count_of", "excluding",
    "has", "with_", "without", "count", "functions", "subsets", "init_product",
    "Functions", "InitProduct",
    "collect_undefined", "undefined_mark", "pin_undefined", "bool_hint",
]

#: the ``members`` of the set values whose folds may go by :func:`_member_values`
_SET_MEMBERS = (SetValue.members, SparseSetValue.members)

#: TLA+'s ``BOOLEAN``, for initial states and parameter domains
BOOLEAN: tuple[bool, bool] = (False, True)


@runtime_checkable
class SetLike(Protocol):
    """A set-valued expression: every element that may be a member, with its membership."""

    def members(self) -> Iterable[tuple[Any, Any]]:
        ...


# ------------------------------------------------------------------ booleans
def not_(x: Any) -> Any:
    """``~x`` for Python bools, numpy bools and boolean columns alike."""
    return ~_bool(x, "the operand of not_")


def implies(a: Any, b: Any) -> Any:
    """``a => b``. ``b`` may be a function of no arguments (``lambda: choose(...) > 0``):
    it is called all the same, but an undefined value met inside it (a CHOOSE that
    found nothing) counts only where ``a`` holds, as TLC evaluates ``b`` only there."""
    a = _bool(a, "the left side of implies")
    if callable(b):
        sink = _sink.get()
        lo = len(sink) if sink is not None else 0
        b = b()
        if sink is not None:
            for u in sink[lo:]:
                u.narrow(a, u.value)
    return ~a | _bool(b, "the right side of implies")


def where(cond: Any, a: Any, b: Any) -> Any:
    """``IF cond THEN a ELSE b``, element-wise on batches (also for set, record, sequence
    and bag values, each of which selects its own cells).

    Lazy as TLA+'s IF: an arm that has no value in some rows (a :func:`choose`, or a
    :func:`max_of`/:func:`min_of` without default, that found nothing; or a ``where`` of
    such), written as the arm itself, is an error only in the rows where ``cond``
    selects it. Python computes both arms before the call, so the rows of the arm not
    selected are discharged here; a result first stored in a name, or transformed
    (``choose(...) + 1``), is an error wherever it is computed in an enabled state.
    An arm may also be a function of no arguments (``lambda: s.f[choose(...)] + 1``):
    it is called on every state all the same, but any undefined value met inside it
    counts only where the arm is selected.

    Never a wrong successor: a write to the next state (``t.y = ...``, ``t.f[i] = ...``,
    a branch) pins every undefined value met before it
    (:func:`~modelcheck.expr.pin_undefined`), as the written value may have been
    computed from it, so an arm (or a function arm) that
    wrote to ``t`` stays an error in all its rows: ``t.x = where(c, a, choose(...))``
    is discharged before its write, and stays lazy. An arm is told to be a temporary by
    its reference count, calibrated at import on several shapes (a temporary argument,
    a value returned by a helper; a name, a list or tuple element, an attribute, a
    closure must count more); checked on CPython 3.11. Where the count is ambiguous
    (another interpreter, or no ``sys.getrefcount``), arms written directly are never
    discharged: every undefined value is an error where computed, as before, never a
    wrong state; function arms stay lazy. A value computed from a CHOOSE and kept
    elsewhere than the next state or the result (a helper storing ``v + 1`` in a list
    it was given, or on ``self``, then returning ``v``) is not seen: a helper should
    hand back what it computes, or write it to ``t``."""
    sink = _sink.get()
    n0 = len(sink) if sink is not None else 0
    ra = rb = 0
    if n0 and _TEMP_REFS is not None:
        # references to a temporary arm (the call's argument, getrefcount's, the
        # records' own): one more means a name holds it, so it may be used elsewhere
        ra, rb = sys.getrefcount(a), sys.getrefcount(b)
    cond = _bool(cond, "the condition of where")
    lazy_a, lazy_b = callable(a), callable(b)
    # a temporary arm's rows not selected are discharged before an arm given as a
    # function runs (its writes to the next state pin what is collected so far)
    discharged = (_discharge(sink[:n0], cond, _LAZY if lazy_a else a, ra,
                             _LAZY if lazy_b else b, rb)
                  if sink is not None and n0 and a is not b else [])
    if lazy_a or lazy_b:
        lo = len(sink) if sink is not None else 0
        a = a() if lazy_a else a
        mid = len(sink) if sink is not None else 0
        b = b() if lazy_b else b
        hi = len(sink) if sink is not None else 0
    r: Any
    if isinstance(a, Value):
        r = a._select(cond, b)
    elif isinstance(b, Value):
        r = b._select(cond, a, swap=True)
    elif isinstance(cond, np.ndarray) or isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        r = np.where(cond, a, b)
    else:
        r = a if cond else b
        # never a Python bool: ~ on it would be integer negation (np.where gives numpy too)
        r = np.bool_(r) if isinstance(r, bool) else r
    if sink is not None and (lazy_a or lazy_b):
        # what calling an arm met counts only where the arm is selected, and only
        # through its value, which is now the result's
        for u in sink[lo:mid]:
            u.narrow(cond, r)
        for u in sink[mid:hi]:
            u.narrow(~cond, r)
    for u in discharged:
        if u.value is not None:
            u.value = r  # the undefined value now reaches the result (where selected)
    return r


_LAZY = object()  # an arm given as a function: its undefined values are narrowed above


def _discharge(sink: list[_Undefined], cond: Any, a: Any, ra: int, b: Any, rb: int
               ) -> list[_Undefined]:
    """Narrow the undefined values of ``where``'s arms to the rows that select them when
    an arm is a temporary (only the records hold it); returns the records narrowed,
    whose value the caller then sets to the result. Nothing without a calibrated
    reference count (:func:`_temp_refs`), nor for a pinned record."""
    if _TEMP_REFS is None:
        return []
    held_a = [u for u in sink if u.value is a]
    held_b = [u for u in sink if u.value is b]
    done: list[_Undefined] = []
    if held_a and ra <= _TEMP_REFS + len(held_a) - 1:
        for u in held_a:
            u.narrow(cond, u.value)
        done += held_a
    if held_b and rb <= _TEMP_REFS + len(held_b) - 1:
        for u in held_b:
            u.narrow(~cond, u.value)
        done += held_b
    return [u for u in done if not u.pinned]


# ---------------------------------------------------------- domains and sets
# domains that are plain iterables of elements (index sets, literals): the common case
_PLAIN = frozenset({range, tuple, list, frozenset, set})


def _pairs(domain: Any) -> list[tuple[Any, Any]]:
    """``(element, in_set)`` pairs of a domain; ``in_set`` is None for plain iterables."""
    if type(domain) in _PLAIN:
        return [(x, None) for x in domain]
    if isinstance(domain, Value) and not isinstance(domain, SetValue):
        raise SpecEvaluationError(
            f"a quantifier or fold ranges over a {domain._type.describe()} value, which is no "
            "set; range over a set value (s.msgs, s.S | s.T), an index set or a range.")
    members = getattr(type(domain), "members", None)
    if callable(members):
        return [(x, inside if isinstance(inside, np.ndarray) else np.bool_(inside))
                for x, inside in domain.members()]
    if isinstance(domain, (np.ndarray, np.generic)):
        raise SpecEvaluationError(
            "a quantifier or fold ranges over a state value that is not a set; range over "
            "an index set (self.Procs), a range or a set-valued variable (s.msgs)."
        )
    return [(x, None) for x in domain]


def _guarded(inside: Any, ok: Any) -> Any:
    return ok if inside is None else inside & ok


def _members(domain: Any) -> Iterable[tuple[Any, Any]]:
    """``_pairs(domain)``, and after each pair is used, the undefined values met while
    evaluating the function at an element of a set value narrowed to the rows whose set
    holds it: TLA+ never evaluates it at a non-member."""
    sink = _sink.get()
    for x, inside in _pairs(domain):
        mark = len(sink) if sink is not None else 0
        yield x, inside
        if inside is not None and sink is not None and len(sink) > mark:
            for u in sink[mark:]:
                u.narrow(inside, u.value)


def _member_values(domain: Any, fn: Callable[[Any], Any], ints: bool
                   ) -> list[tuple[int, Any]] | None:
    """For a set value: ``fn`` at each member held in some state, by element position,
    when every value is the same in all the batch's states (a constant: an int if
    ``ints``, else a bool), so that the fold needs only which positions each state holds
    (:meth:`~modelcheck.types.sets.SetValue._any_in`, ``_count_in``: one mask per chunk
    or value, not one test per member). None otherwise: then nothing is kept of the
    calls made (the undefined values they met are dropped), and the fold visits the
    members one by one. A value met with an undefined value stops at once."""
    if not isinstance(domain, SetValue) or type(domain).members not in _SET_MEMBERS:
        return None
    present, plain = domain._held()
    if not present or not plain:
        return None
    sink = _sink.get()
    start = len(sink) if sink is not None else 0
    pins = sink.pinned if sink is not None else 0
    values = domain._type.member_value
    out: list[tuple[int, Any]] = []
    for i in present:
        v = fn(values(i))
        const = (isinstance(v, (int, np.integer)) and not isinstance(v, bool)) if ints \
            else isinstance(v, (bool, np.bool_))
        if not const or (sink is not None and len(sink) > start):
            if sink is not None and len(sink) > start:
                if sink.pinned == pins:
                    del sink[start:]  # the members are visited again, one by one
                else:  # (pinned: a write to the next state; narrowed as a visit would)
                    _narrow_since(start, domain._held_in(i))
            return None
        out.append((i, v))
    return out


def any_of(domain: Any, fn: Callable[[Any], Any]) -> Any:
    """``\\E x \\in domain: fn(x)``."""
    vals = _member_values(domain, fn, False)
    if vals is not None:
        return domain._any_in([i for i, v in vals if v])
    acc: Any = np.False_
    for x, inside in _members(domain):
        acc = acc | _guarded(inside, _bool(fn(x), "the predicate of any_of"))
    return acc


def all_of(domain: Any, fn: Callable[[Any], Any]) -> Any:
    """``\\A x \\in domain: fn(x)``."""
    vals = _member_values(domain, fn, False)
    if vals is not None:
        return ~domain._any_in([i for i, v in vals if not v])
    acc: Any = np.True_
    for x, inside in _members(domain):
        ok = _bool(fn(x), "the predicate of all_of")
        acc = acc & (ok if inside is None else ~inside | ok)
    return acc


def count_of(domain: Any, pred: Callable[[Any], Any]) -> Any:
    """``Cardinality({x \\in domain: pred(x)})``."""
    vals = _member_values(domain, pred, False)
    if vals is not None:
        return domain._count_in([i for i, v in vals if v])
    acc: Any = np.int64(0)
    for x, inside in _members(domain):
        acc = acc + _guarded(inside, _bool(pred(x), "the predicate of count_of")).astype(np.int64)
    return acc


def sum_of(domain: Any, fn: Callable[[Any], Any]) -> Any:
    """The sum of ``fn(x)`` over ``domain`` (a RECURSIVE sum in TLA+); 0 when empty."""
    vals = _member_values(domain, fn, True)
    if vals is not None:
        total: Any = np.int64(0)
        for v, (_, idxs) in _by_value(vals).items():
            if v:
                total = total + v * domain._count_in(idxs)
        return total + domain._count_in([])
    acc: Any = np.int64(0)
    for x, inside in _members(domain):
        v = fn(x)
        acc = acc + (v if inside is None else where(inside, v, 0))
    return acc


def _by_value(vals: list[tuple[int, Any]]) -> dict[int, tuple[Any, list[int]]]:
    """The positions of ``vals`` grouped by their (int) value: per value, the first
    of them as ``fn`` gave it and the positions (the ints of a fold's function fit
    int64, as the folds' numpy arithmetic needs)."""
    groups: dict[int, tuple[Any, list[int]]] = {}
    for i, v in vals:
        g = groups.get(int(v))
        if g is None:
            groups[int(v)] = (v, [i])
        else:
            g[1].append(i)
    return groups


def _extremum(domain: Any, fn: Callable[[Any], Any], default: Any, pick: Any,
              name: str) -> Any:
    acc: Any = None
    found: Any = np.False_
    vals = _member_values(domain, fn, True)
    if vals is not None:
        # as the visit below: the first member's value where none is held, else the
        # extreme of the values held (groups from the least extreme to the most)
        groups = _by_value(vals)
        acc = np.int64(vals[0][1])  # numpy ints, as np.maximum makes them
        for key in sorted(groups, reverse=pick is np.minimum):
            v, idxs = groups[key]
            acc = where(domain._any_in(idxs), np.int64(v), acc)
        found = domain._any_in([i for i, _ in vals])
        if default is not None:
            return where(found, acc, default)
        return _undefined(~found, f"{name} found no value: its set is empty (give default=)",
                          acc)
    for x, inside in _members(domain):
        v = fn(x)
        if inside is None:
            acc = v if acc is None else pick(acc, v)
            found = np.True_
        else:
            acc = v if acc is None else where(inside & ~found, v,
                                              where(inside, pick(acc, v), acc))
            found = found | inside
    if acc is None:
        if default is None:
            raise SpecEvaluationError(f"{name} over an empty domain needs a default=")
        return default
    if default is not None:
        return where(found, acc, default)
    return _undefined(~found, f"{name} found no value: its set is empty (give default=)", acc)


def max_of(domain: Any, fn: Callable[[Any], Any] = lambda x: x, *,
           default: Any = None) -> Any:
    """The largest ``fn(x)`` for ``x`` in ``domain``; ``default`` if the set is empty
    (without a default, an empty set in an enabled state is a spec error)."""
    return _extremum(domain, fn, default, np.maximum, "max_of")


def min_of(domain: Any, fn: Callable[[Any], Any] = lambda x: x, *,
           default: Any = None) -> Any:
    """The smallest ``fn(x)`` for ``x`` in ``domain``; see :func:`max_of`."""
    return _extremum(domain, fn, default, np.minimum, "min_of")


def choose(domain: Any, pred: Callable[[Any], Any] = lambda x: True) -> Any:
    """``CHOOSE x \\in domain: pred(x)``: the first ``x`` in the domain's order (for ids
    and ranges, the smallest) that satisfies ``pred``.

    Deterministic, as in TLC: the same arguments give the same value. When no element
    satisfies ``pred`` in a state where the action is enabled (or in any state, for an
    invariant), the spec is in error, as TLC's "CHOOSE found no value".
    """
    pairs = _pairs(domain)
    if not pairs:
        raise SpecEvaluationError("choose over an empty domain found no value")
    acc: Any = pairs[0][0]
    found: Any = np.False_
    sink = _sink.get()
    for x, inside in reversed(pairs):
        mark = len(sink) if sink is not None else 0
        ok = _guarded(inside, _bool(pred(x), "the predicate of choose"))
        if inside is not None and sink is not None and len(sink) > mark:
            for u in sink[mark:]:  # the predicate is evaluated at members only
                u.narrow(inside, u.value)
        acc = where(ok, x, acc)
        found = found | ok
    return _undefined(~found, "CHOOSE found no value: no element of its domain satisfies "
                              "its predicate", acc)


def excluding(domain: Iterable[Any], *values: Any) -> list[Any]:
    """The domain without some values, in order: TLA+'s ``S \\ {p}`` for parameter
    domains, e.g. ``@action(p=Procs, q=lambda self, p: excluding(self.Procs, p))``."""
    return [x for x in domain if x not in values]


# -------------------------------------------------- undefined values (CHOOSE)
def _fresh(x: Any) -> Any:
    """A new object equal to ``x`` that no other expression holds (an undefined value's
    stand-in, recognised by identity), or None when there is none: booleans are
    singletons on one state, and are left untracked on a batch too, for the same
    verdict on both."""
    if isinstance(x, Value):
        return x._type.view(list(x._columns()))
    if isinstance(x, (np.ndarray, np.generic)):
        if x.dtype.kind not in "iuf":
            return None
        return x.copy() if isinstance(x, np.ndarray) else x.dtype.type(x)
    if isinstance(x, int) and not isinstance(x, bool):
        return np.int64(x)
    return None


def _temp_refs() -> int | None:
    """How many references :func:`where` sees to an arm that is a temporary recorded
    once (calibrated on this interpreter); None when that count is not the same for
    every kind of temporary, or a value a name (or a list, tuple, closure or
    attribute) holds is not seen with more: arms are then never discharged (every
    undefined value is an error, as where it is computed). Checked on CPython 3.11;
    the shapes are run repeatedly, so the specialised forms of the calls count too."""
    getrefcount = getattr(sys, "getrefcount", None)
    if getrefcount is None:
        return None  # not CPython: no reference counts
    held: list[Any] = []  # the undefined value's record

    def make() -> Any:
        v = np.arange(2)
        held.append(v)
        return v

    def returned() -> Any:
        v = make()  # a helper's named CHOOSE, returned
        return v

    def returned_twice() -> Any:
        return returned()

    def probe(cond: Any, a: Any, b: Any) -> tuple[int, int]:
        # as where: the arms' counts taken first thing
        return getrefcount(a), getrefcount(b)

    class Box:
        v: Any = None

    def temps() -> list[int]:
        return [*probe(True, make(), make()), *probe(True, returned(), returned_twice()),
                *probe(True, returned_twice(), returned())]

    def named() -> list[int]:
        v = make()
        return [*probe(True, v, 0), *probe(True, 0, v)][::3]

    def in_containers() -> list[int]:
        lst, tup, box = [make()], (make(),), Box()
        box.v = make()
        return [probe(True, lst[0], 0)[0], probe(True, 0, tup[0])[1],
                probe(True, box.v, 0)[0]]

    def closed_over() -> list[int]:
        v = make()

        def inner() -> list[int]:
            return [*probe(True, v, 0), *probe(True, 0, v)][::3]

        return [*inner(), *probe(True, v, 0)[:1]]

    try:
        temp: set[int] = set()
        kept: list[int] = []
        for _ in range(200):  # past the interpreter's specialisation of these calls
            temp.update(temps())
            kept += named() + in_containers() + closed_over()
            held.clear()
    except Exception:
        return None
    if len(temp) != 1:
        return None
    (t,) = temp
    return t if min(kept) > t else None


_TEMP_REFS = _temp_refs()


def _caller() -> str:
    """``file:line`` of the innermost frame outside this module (the spec's line)."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename == __file__:
        f = f.f_back  # type: ignore[assignment]
    return f"{_short(f.f_code.co_filename)}:{f.f_lineno}" if f is not None else "<unknown>"


def _undefined(mask: Any, message: str, value: Any = None) -> Any:
    """Report the rows (``mask``) where an expression, whose value is ``value``, has no
    value; returns the value to use for it (a fresh copy when some row is undefined).
    Inside an action or a predicate the kernel decides (an error only in enabled states,
    and only where a ``where`` selects it); elsewhere it is an error."""
    sink = _sink.get()
    if sink is not None:
        if np.any(mask):
            fresh = _fresh(value)
            if fresh is not None:
                value = fresh
            sink.append(_Undefined(mask, _caller(), message, fresh))
    elif np.any(mask):
        raise SpecEvaluationError(f"{_caller()}: {message}")
    return value


# ------------------------------------------------------------------ set values
def _set(S: Any, fn: str) -> SetValue:
    if isinstance(S, SetValue):
        return S
    raise SpecEvaluationError(
        f"{fn}() takes a set value (a SetOf variable or an expression of sets), got "
        f"{type(S).__name__}; SetOf sets hold element values, not bit positions")


def has(S: Any, x: Any) -> Any:
    """``x \\in S`` for a set value ``S`` (``S.has(x)``)."""
    return _set(S, "has").has(x)


def with_(S: Any, x: Any) -> Any:
    """``S \\cup {x}`` (``S.with_(x)``)."""
    return _set(S, "with_").with_(x)


def without(S: Any, x: Any) -> Any:
    """``S \\ {x}`` (``S.without(x)``)."""
    return _set(S, "without").without(x)


def count(S: Any) -> Any:
    """``Cardinality(S)`` (``S.size()``)."""
    return _set(S, "count").size()


# ------------------------------------------------------------ initial states
_K = TypeVar("_K")


class _LazyProduct(Sequence[dict[_K, Any]], Generic[_K]):
    """A lazy sequence of the dicts of a product of axes (``(key, values)`` pairs,
    :meth:`_axes`), in the order of ``itertools.product`` (the last axis varies
    fastest): each dict is built when asked."""

    #: how an index error names the sequence
    _what = "product"

    def _axes(self) -> list[tuple[_K, Sequence[Any]]]:
        raise NotImplementedError

    def __len__(self) -> int:
        n = 1
        for _, v in self._axes():
            n *= len(v)
        return n

    def __iter__(self) -> Iterator[dict[_K, Any]]:
        axes = self._axes()
        keys = [k for k, _ in axes]
        for combo in itertools.product(*(v for _, v in axes)):
            yield dict(zip(keys, combo))

    @overload
    def __getitem__(self, i: int) -> dict[_K, Any]: ...

    @overload
    def __getitem__(self, i: slice) -> list[dict[_K, Any]]: ...

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"{self._what} index {i} out of range 0..{n - 1}")
        i %= n
        axes = self._axes()
        out: dict[_K, Any] = {}
        for k, v in reversed(axes):
            i, r = divmod(i, len(v))
            out[k] = v[r]
        return {k: out[k] for k, _ in axes}


class Functions(_LazyProduct[Any]):
    """Every function from ``domain`` to ``values`` (TLA+'s ``[D -> V]``), as dicts in
    the order of ``itertools.product(values, repeat=len(domain))`` (the first domain
    element varies slowest). Lazy: a sequence that builds each dict when asked, so
    that :class:`~modelcheck.expr.InitProduct` can enumerate it per element without
    building them."""

    _what = "functions"

    def __init__(self, domain: Iterable[Any], values: Iterable[Any]) -> None:
        self.domain: list[Any] = list(domain)
        self.values: list[Any] = list(values)

    def _axes(self) -> list[tuple[Any, Sequence[Any]]]:
        return [(d, self.values) for d in self.domain]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Functions):
            return self.domain == other.domain and self.values == other.values
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"functions({self.domain!r}, {self.values!r})"


def functions(domain: Iterable[Any], values: Iterable[Any]) -> Functions:
    """Every function from ``domain`` to ``values`` as a dict: TLA+'s ``[D -> V]``,
    e.g. ``functions(self.Nodes, BOOLEAN)`` for an array of booleans (a lazy
    sequence of dicts, :class:`~modelcheck.expr.Functions`)."""
    return Functions(domain, values)


def subsets(elements: Iterable[Any]) -> list[frozenset[Any]]:
    """Every subset of ``elements`` as a frozenset: TLA+'s ``SUBSET S``, by size, then
    in the order of ``itertools.combinations``."""
    xs = list(elements)
    return [frozenset(c) for r in range(len(xs) + 1) for c in itertools.combinations(xs, r)]


class InitProduct(_LazyProduct[str]):
    """Initial states given per variable as a set of values, and optionally filtered:
    TLA+'s ``x \\in S /\\ y \\in T /\\ P(x, y)``. Made by
    :func:`~modelcheck.init_product`; see there.

    As a sequence it is the combinations as ``{var: value}`` dicts, in the order of
    ``itertools.product`` over the variables as named (the last varies fastest),
    *before* :meth:`such_that`'s filter, which only the checker evaluates (on a
    state view, as an invariant). The checker enumerates the product in packed
    batches, without one dict per state, in that same order."""

    def __init__(self, choices: Mapping[str, Iterable[Any]],
                 pred: Any = None) -> None:
        #: per variable, its values (a :class:`~modelcheck.expr.Functions` stays lazy)
        self.choices: dict[str, Sequence[Any]] = {
            k: v if isinstance(v, Functions) else list(v) for k, v in choices.items()}
        #: the filter (None: every combination): a declared predicate (``self.Inv``), a
        #: callable of the state, or two of them (:meth:`such_that` called twice)
        self.pred = pred

    def such_that(self, pred: Any) -> InitProduct:
        """Only the combinations where ``pred`` holds: ``pred`` is a declared predicate
        (``self.Inv``, an ``@invariant``) or a callable of one state view, written as an
        invariant is (``lambda s: s.x < s.y``; ``& | ~`` and :func:`~modelcheck.where`,
        since the checker evaluates it on a batch of states). A second call keeps both."""
        if self.pred is None:
            return InitProduct(self.choices, pred)
        first = self.pred
        return InitProduct(self.choices, _Both(first, pred))

    _what = "init_product"

    def _axes(self) -> list[tuple[str, Sequence[Any]]]:
        return list(self.choices.items())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, InitProduct):
            return self.choices == other.choices and self.pred is other.pred
        return self.pred is None and isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.choices.items())
        return f"init_product({args})" + ("" if self.pred is None else
                                          f".such_that({self.pred!r})")


class _Both:
    """Two :meth:`~modelcheck.expr.InitProduct.such_that` filters, both to hold."""

    def __init__(self, first: Any, second: Any) -> None:
        self.first, self.second = first, second

    def __repr__(self) -> str:
        return f"{self.first!r} & {self.second!r}"


def init_product(**choices: Iterable[Any]) -> InitProduct:
    """Initial states given per variable as a set of values: every combination.

    ``init_product(x=BOOLEAN, up=functions(self.Nodes, BOOLEAN))`` is TLA+'s
    ``x \\in BOOLEAN /\\ up \\in [Nodes -> BOOLEAN]``; variables not named keep their
    declared initial values. ``.such_that(pred)`` keeps the combinations where a state
    predicate holds (``Init == TypeOK /\\ Inv``: ``.such_that(self.Inv)``). Return it
    from ``init_states``: the checker then builds the initial states as packed batches
    (a ``functions(...)`` choice element by element), in the order of
    ``itertools.product`` over the variables as named, without a dict per state.
    """
    return InitProduct(choices)
