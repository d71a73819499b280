"""Predicates of KRaft metadata propagation (``specs/kraft_metadata.py``).

They follow the seed on Kafka 4.4 metadata propagation (``kraft/seeds/004``): a
metadata log of data records and KIP-866 transaction markers, a loader per broker
that folds committed records into an image, and a cache that publishes images.

* the *committed images* of a log: ``fold_log`` folds ``log[1..i]`` for every
  ``i``, skipping the data records of transactions that are aborted or still open
  at ``i`` (what a reader should see after offset ``i``);
* the published cache is the committed image of a committed, transaction-free
  offset; no value of an aborted transaction is visible; two caches at one offset
  agree; the loader never faults; images never go back; a loader publishes first at
  or above the high-water mark it started with; a reader holds one image.

Each factory takes the variable names (defaults follow the spec). Per broker:
arrays indexed ``[Brokers]`` or ``[Brokers][Keys]``; the log is a ``Seq`` of records
with fields ``kind`` (a :class:`RecKind`), ``key`` (0 = no key) and ``val``.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

import numpy as np

from modelcheck import all_of, any_of, implies, not_, where
from modelcheck.spec import PredicateDecl

from ._util import ids_of

__all__ = [
    "RecKind",
    "fold_log",
    "pick",
    "published_is_committed_prefix",
    "aborted_never_visible",
    "catch_up_before_publish",
    "image_monotonic",
    "agreement",
    "loader_never_faults",
    "reader_sees_one_image",
]


class RecKind(IntEnum):
    """The kind of a metadata log record: a data record or a KIP-866 marker."""

    DATA = 0
    BEGIN = 1
    END = 2
    ABORT = 3


class Folds:
    """The committed images of a log: ``images[i][k]`` the value of key ``k`` after
    ``log[1..i]``, ``open[i]`` whether a transaction is open at ``i``, ``aborted_by[j]``
    the offset of the ABORT that closes the transaction of record ``j`` (0: none)."""

    def __init__(self, images: list[dict[int, Any]], open_: list[Any],
                 aborted_by: list[Any]) -> None:
        self.images = images
        self.open = open_
        self.aborted_by = aborted_by


def pick(values: list[Any], i: Any) -> Any:
    """``values[i]`` for a state-dependent index ``i`` (0-based list, ints or columns)."""
    out = values[0]
    for j in range(1, len(values)):
        out = where(i == j, values[j], out)
    return out


def fold_log(q: Any, keys: Any) -> Folds:
    """Fold the log value ``q`` (a sequence of records) at every offset ``0..capacity``.

    A data record outside a transaction sets its key at once; inside one it is held
    until the END (applied) or the ABORT (dropped). A BEGIN inside a transaction
    restarts it, an END or ABORT outside one is ignored (the loader faults on both)."""
    cap = q.type.capacity
    n = q.len()
    cur: dict[int, Any] = {k: 0 for k in keys}
    pend: dict[int, Any] = {k: -1 for k in keys}
    open_: Any = np.False_
    start: Any = 0
    images, opens = [dict(cur)], [open_]
    aborted_by: list[Any] = [0] * (cap + 1)
    for j in range(1, cap + 1):
        e = q.at(j)
        live = j <= n
        data = live & (e.kind == RecKind.DATA)
        begin = live & (e.kind == RecKind.BEGIN)
        end = live & (e.kind == RecKind.END) & open_
        abort = live & (e.kind == RecKind.ABORT) & open_
        for m in range(1, j):
            aborted_by[m] = where(abort & (m > start), j, aborted_by[m])
        for k in keys:
            hit = data & (e.key == k)
            cur[k] = where(hit & not_(open_), e.val,
                           where(end & (pend[k] >= 0), pend[k], cur[k]))
            pend[k] = where(begin | end | abort, -1, where(hit & open_, e.val, pend[k]))
        start = where(begin, j, start)
        open_ = where(begin, True, where(end | abort, False, open_))
        images.append(dict(cur))
        opens.append(open_)
    return Folds(images, opens, aborted_by)


def _keys(spec: Any, var: str) -> range:
    return spec.layout.vars[var].dims[1]


def _same_image(spec: Any, var: str, b: int, got: Any, image: dict[int, Any]) -> Any:
    return all_of(_keys(spec, var), lambda k: got[b][k] == image[k])


def published_is_committed_prefix(*, log: str = "log", hwm: str = "hwm", cache: str = "cache",
                                  off: str = "cacheOff",
                                  name: str = "PublishedIsCommittedPrefix") -> PredicateDecl:
    """Invariant: every cache holds the committed image of a committed offset outside
    any transaction: ``off[b] <= hwm /\\ ~Open(off[b]) /\\ cache[b] = Fold(off[b])``."""

    def inv(spec: Any, s: Any) -> Any:
        f = fold_log(getattr(s, log), _keys(spec, cache))
        c, o, h = getattr(s, cache), getattr(s, off), getattr(s, hwm)
        return all_of(ids_of(spec, cache), lambda b: (
            (o[b] <= h) & not_(pick(f.open, o[b])) & all_of(
                _keys(spec, cache),
                lambda k: c[b][k] == pick([im[k] for im in f.images], o[b]))))

    return PredicateDecl(inv, "invariant", name,
                         doc="The published cache is the image of a committed, "
                             "transaction-free prefix of the log.")


def aborted_never_visible(*, log: str = "log", cache: str = "cache", off: str = "cacheOff",
                          name: str = "AbortedNeverVisible") -> PredicateDecl:
    """Invariant: where the cache differs from the committed image, the value it shows
    is not one written by an aborted transaction at or below its offset."""

    def inv(spec: Any, s: Any) -> Any:
        q = getattr(s, log)
        keys = _keys(spec, cache)
        f = fold_log(q, keys)
        c, o = getattr(s, cache), getattr(s, off)
        cap = q.type.capacity

        def shows_aborted(b: int, k: int) -> Any:
            return any_of(range(1, cap + 1), lambda j: (
                (f.aborted_by[j] != 0) & (f.aborted_by[j] <= o[b]) & (q.at(j).key == k)
                & (q.at(j).val == c[b][k])))

        return all_of(ids_of(spec, cache), lambda b: all_of(keys, lambda k: (
            (c[b][k] == pick([im[k] for im in f.images], o[b])) | not_(shows_aborted(b, k)))))

    return PredicateDecl(inv, "invariant", name,
                         doc="No published value comes from an aborted metadata "
                             "transaction.")


def catch_up_before_publish(*, up: str = "up", off: str = "cacheOff", start: str = "startHwm",
                            name: str = "CatchUpBeforePublish") -> PredicateDecl:
    """Action property: a loader's first publish (its cache offset leaves 0) is at or
    above the high-water mark of when it started: ``off[b] = 0 /\\ off'[b] > 0 =>
    off'[b] >= start[b]``."""

    def prop(spec: Any, s: Any, t: Any) -> Any:
        o, o2, st, u2 = getattr(s, off), getattr(t, off), getattr(t, start), getattr(t, up)
        return all_of(ids_of(spec, off), lambda b: implies(
            u2[b] & (o[b] == 0) & (o2[b] > 0), o2[b] >= st[b]))

    return PredicateDecl(prop, "action", name,
                         doc="A starting loader publishes nothing before it has caught up "
                             "to the high-water mark it started with.")


def image_monotonic(*, up: str = "up", offs: tuple[str, ...] = ("imgOff", "cacheOff"),
                    name: str = "ImageMonotonic") -> PredicateDecl:
    """Action property: ``\\A b: up[b] /\\ up'[b] => off'[b] >= off[b]`` for the
    loader's image offset and the cache's."""

    def prop(spec: Any, s: Any, t: Any) -> Any:
        u, u2 = getattr(s, up), getattr(t, up)
        return all_of(ids_of(spec, up), lambda b: implies(u[b] & u2[b], all_of(
            offs, lambda v: getattr(t, v)[b] >= getattr(s, v)[b])))

    return PredicateDecl(prop, "action", name,
                         doc="A running loader's image and cache never go back to an "
                             "older offset.")


def agreement(*, cache: str = "cache", off: str = "cacheOff",
              name: str = "Agreement") -> PredicateDecl:
    """Invariant: ``\\A a # b: off[a] = off[b] => cache[a] = cache[b]``."""

    def inv(spec: Any, s: Any) -> Any:
        ids = ids_of(spec, cache)
        c, o = getattr(s, cache), getattr(s, off)
        return all_of(ids, lambda a: all_of((b for b in ids if b > a), lambda b: implies(
            o[a] == o[b], all_of(_keys(spec, cache), lambda k: c[a][k] == c[b][k]))))

    return PredicateDecl(inv, "invariant", name,
                         doc="Two brokers that published the same offset hold the same "
                             "image.")


def loader_never_faults(*, fault: str = "fault",
                        name: str = "LoaderNeverFaults") -> PredicateDecl:
    """Invariant: ``\\A b: ~fault[b]``."""

    def inv(spec: Any, s: Any) -> Any:
        fl = getattr(s, fault)
        return all_of(ids_of(spec, fault), lambda b: not_(fl[b]))

    return PredicateDecl(inv, "invariant", name,
                         doc="The loader never meets a record its transaction table "
                             "rejects.")


def reader_sees_one_image(*, log: str = "log", hwm: str = "hwm", read: str = "rd",
                          name: str = "ReaderSeesOneImage") -> PredicateDecl:
    """Invariant: what a reader holds is one committed image: ``\\A b: \\E i \\in
    0..hwm: ~Open(i) /\\ read[b] = Fold(i)``."""

    def inv(spec: Any, s: Any) -> Any:
        q = getattr(s, log)
        keys = _keys(spec, read)
        f = fold_log(q, keys)
        r, h = getattr(s, read), getattr(s, hwm)
        return all_of(ids_of(spec, read), lambda b: any_of(
            range(q.type.capacity + 1), lambda i: (i <= h) & not_(f.open[i])
            & _same_image(spec, read, b, r, f.images[i])))

    return PredicateDecl(inv, "invariant", name,
                         doc="A reader's view is one published image, never a mix of two.")
