"""The level rule: expand one BFS level in batches and decide what the level found.

Every explorer (the local one, :mod:`modelcheck.explorer`, and the Spark backend's
per-bucket tasks) expands a level with :class:`LevelExpansion` and decides with
:meth:`LevelFindings.verdict`; the one rule below is written once, here.

A level is a set of states, handled in *fingerprint order* (the local explorer's
frontier is sorted; a Spark bucket is sorted, and buckets' findings are merged by
taking minima, which gives the same answer). Batches are consecutive runs of that
order, so nothing below depends on the batch size, the chunk size or the number of
partitions.

**The level rule.** Two phases, each deciding by the smallest fingerprint:

1. *Invariants.* Every state of the level is checked against the invariants. The
   first state (in fingerprint order) that violates one, or on which evaluating one
   raises, decides: a violation (the first invariant in declaration order, the
   others it violates listed as ``also_violated``) or a spec error. Nothing of the
   level is expanded and its successors are not counted.
2. *Expansion* (only when phase 1 found nothing). Every state is expanded: actions,
   action properties and action constraints on every transition, the state
   constraints on successors and the invariants on successors outside the model. If
   evaluating any of these raises, the error at the first state in fingerprint
   order is reported. Otherwise, in this order: a deadlock (the smallest deadlocked
   state; trace of ``d + 1`` states), an invariant violated by a successor outside
   the model, then an action property violated by a transition (both: the smallest
   transition by target fingerprint, then parent fingerprint, then action id; trace
   of ``d + 2`` states). These finish the level first: its new states are counted.

**State constraints** follow TLC's ``CONSTRAINT``: a successor outside them is
checked against the invariants but never stored, counted or expanded; an initial
state outside them likewise; a state whose successors are all outside them is not
a deadlock (deadlock means no enabled action).

**Action constraints** follow TLC's ``ACTION_CONSTRAINT`` (a successor is in the
model when ``isInModel(s') && isInActions(s, s')``): a transition that violates one
is not taken. Its successor is checked against the invariants and the transition
against the action properties, but the successor is not stored through it (another
transition may still reach and store it); the transition counts as enabled, so it
never makes a deadlock. Initial states have no transition and are not subject to
them. A successor *outside the model* is one outside the state constraints or
reached by such a transition.

Seams for tools built on the engine: ``on_batch`` of :class:`LevelExpansion` hands
an observer of the run (:mod:`modelcheck.run.observers`) every batch's transitions
into stored states and its labels (the state graph, for liveness, ``modelcheck
graph`` and the web explorer's graph), ``on_transitions`` the same transitions alone,
and :meth:`modelcheck.kernel.Kernel.successors_checked` expands a single state
(simulation, interactive exploration).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import SpecEvaluationError
from .kernel import Expansion, Kernel, SuccessorWords, _Dense
from .result import TraceStep, Violation, ViolationKind, json_value
from .spec import ActionInstance, PredicateDecl, RoleKind
from .store import (
    StoredPath,
    dedupe_min,
    dedupe_min_inverse,
    dedupe_min_packed,
    key_columns,
    key_int,
    key_min_row,
    key_order,
    merge_runs_min,
    take_rows,
)

__all__ = [
    "LevelExpansion", "LevelFindings", "KeptWords", "Verdict", "Hit", "ErrorAt", "TransitionHook",
    "BatchHook",
    "initial_states", "report", "rebuild_trace", "error_payload", "error_from_payload",
]

#: rows of the first piece a raising batch is expanded again in by
#: :meth:`LevelExpansion._locate` (the pieces double up to :data:`LOCATE_MAX` rows: the
#: longest wait for a stop request between two pieces)
LOCATE_FIRST = 256
LOCATE_MAX = 4096

#: a transition ``(target fp, parent fp, action id)``; tuples order as the rule wants
Hit = tuple[int, int, int]
#: ``(parent rows, action ids, child fps)`` of a batch's transitions into stored states;
#: a parent row indexes the level's (sorted) fingerprints
TransitionHook = Callable[[np.ndarray, np.ndarray, np.ndarray], None]
#: ``(start, expansion)`` of every batch the level rule recorded without a phase-1
#: problem: rows ``start..start + expansion.n`` of the level (an observer of the run,
#: :mod:`modelcheck.run.observers`)
BatchHook = Callable[[int, Expansion], None]


@dataclass(frozen=True)
class ErrorAt:
    """A spec error at the state with fingerprint ``fp`` (picklable, JSON-able)."""

    fp: int
    message: str
    where: str | None = None
    what: str | None = None
    state: dict[str, Any] | None = None

    def exception(self) -> SpecEvaluationError:
        return SpecEvaluationError(self.message, where=self.where, what=self.what,
                                   state=self.state)

    def to_json(self) -> dict[str, Any]:
        return {"fp": self.fp, "message": self.message, "where": self.where,
                "what": self.what,
                "state": None if self.state is None else json_value(self.state)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ErrorAt:
        return cls(int(d["fp"]), str(d["message"]), d.get("where"), d.get("what"),
                   d.get("state"))


def error_payload(fp: int, e: SpecEvaluationError) -> ErrorAt:
    return ErrorAt(int(fp), str(e), e.where, e.what, e.state)


def error_from_payload(err: ErrorAt) -> SpecEvaluationError:
    return err.exception()


def _min_err(a: ErrorAt | None, b: ErrorAt | None) -> ErrorAt | None:
    if a is None:
        return b
    if b is None:
        return a
    return a if a.fp <= b.fp else b


def _min_into(d: dict[int, Any], j: int, v: Any) -> None:
    if j not in d or v < d[j]:
        d[j] = v


class VerdictKind(enum.StrEnum):
    """What a :class:`Verdict` found (a :class:`~enum.StrEnum`: a checkpoint records it
    by its value)."""

    INVARIANT = "invariant"
    ERROR = "error"
    DEADLOCK = "deadlock"
    #: an invariant violated by a successor outside the state constraints
    OUTSIDE = "outside"
    #: an action property violated by a transition
    PROPERTY = "property"


@dataclass(frozen=True)
class Verdict:
    """What ends the run at a level (see the module docstring for the order)."""

    kind: VerdictKind
    #: invariant: the fp; deadlock: the fp; outside/property: the transition
    at: Any = None
    #: predicate indexes: the winner first, then the others at the same place
    which: tuple[int, ...] = ()
    error: ErrorAt | None = None
    #: decided in phase 1: the level's successors are not counted
    phase1: bool = False

    def __post_init__(self) -> None:
        # a kind given by its value (a checkpoint's "invariant") becomes the member
        object.__setattr__(self, "kind", VerdictKind(self.kind))


@dataclass
class LevelFindings:
    """What expanding a level (or a part of it) found. Parts merge by minima."""

    n_actions: int
    fired: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: phase 1: per invariant the smallest violating fp, and the smallest error
    inv_min: dict[int, int] = field(default_factory=dict)
    inv_error: ErrorAt | None = None
    #: phase 2
    exp_error: ErrorAt | None = None
    dead_min: int | None = None
    outside_min: dict[int, Hit] = field(default_factory=dict)
    prop_min: dict[int, Hit] = field(default_factory=dict)
    #: enabled transitions into successors outside the state constraints
    outside: int = 0

    def __post_init__(self) -> None:
        if len(self.fired) != self.n_actions:
            self.fired = np.zeros(self.n_actions, dtype=np.int64)

    # ------------------------------------------------------------ merging
    def merge(self, other: LevelFindings) -> None:
        self.fired = self.fired + other.fired
        for j, f in other.inv_min.items():
            _min_into(self.inv_min, j, f)
        self.inv_error = _min_err(self.inv_error, other.inv_error)
        self.exp_error = _min_err(self.exp_error, other.exp_error)
        if other.dead_min is not None:
            self.dead_min = other.dead_min if self.dead_min is None else min(self.dead_min,
                                                                             other.dead_min)
        for j, hit in other.outside_min.items():
            _min_into(self.outside_min, j, hit)
        for j, hit in other.prop_min.items():
            _min_into(self.prop_min, j, hit)
        self.outside += other.outside

    @property
    def phase1_problem(self) -> bool:
        return bool(self.inv_min) or self.inv_error is not None

    # ------------------------------------------------------------ the rule
    def verdict(self) -> Verdict | None:
        """The problem that ends the run at this level, or None (the level rule)."""
        if self.phase1_problem:
            v = min(self.inv_min.values()) if self.inv_min else None
            e = self.inv_error
            if e is not None and (v is None or e.fp < v):
                return Verdict(VerdictKind.ERROR, e.fp, (), e, phase1=True)
            assert v is not None
            js = tuple(sorted(j for j, f in self.inv_min.items() if f == v))
            return Verdict(VerdictKind.INVARIANT, v, js, phase1=True)
        if self.exp_error is not None:
            return Verdict(VerdictKind.ERROR, self.exp_error.fp, (), self.exp_error)
        if self.dead_min is not None:
            return Verdict(VerdictKind.DEADLOCK, self.dead_min)
        for kind, hits in ((VerdictKind.OUTSIDE, self.outside_min),
                           (VerdictKind.PROPERTY, self.prop_min)):
            if hits:
                best = min(hits.values())
                js = tuple(sorted(j for j, h in hits.items() if h == best))
                return Verdict(kind, best, js)
        return None

    # ------------------------------------------------------------ JSON
    def to_json(self) -> dict[str, Any]:
        return {
            "fired": [int(x) for x in self.fired],
            "inv_min": [[j, f] for j, f in sorted(self.inv_min.items())],
            "inv_error": None if self.inv_error is None else self.inv_error.to_json(),
            "exp_error": None if self.exp_error is None else self.exp_error.to_json(),
            "dead_min": self.dead_min,
            "outside_min": [[j, *h] for j, h in sorted(self.outside_min.items())],
            "prop_min": [[j, *h] for j, h in sorted(self.prop_min.items())],
            "outside": self.outside,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> LevelFindings:
        fired = np.asarray(d["fired"], dtype=np.int64)
        return cls(
            len(fired), fired,
            {int(j): int(f) for j, f in d["inv_min"]},
            None if d.get("inv_error") is None else ErrorAt.from_json(d["inv_error"]),
            None if d.get("exp_error") is None else ErrorAt.from_json(d["exp_error"]),
            None if d["dead_min"] is None else int(d["dead_min"]),
            {int(r[0]): (int(r[1]), int(r[2]), int(r[3])) for r in d.get("outside_min", [])},
            {int(r[0]): (int(r[1]), int(r[2]), int(r[3])) for r in d["prop_min"]},
            int(d.get("outside", 0)),
        )


class KeptWords:
    """The packed words of the successors a flush of :meth:`LevelExpansion.candidates`
    yields (with ``lazy_words``), gathered when asked: a consumer that keeps some of
    them (the local explorer keeps those not visited yet, about a third on TwoPhase)
    takes those (:meth:`take`), and the others' words are never built."""

    def __init__(self, source: SuccessorWords, rows: np.ndarray) -> None:
        #: the batch's successors, and the row among them of each yielded one
        self.source, self.rows = source, rows

    def __len__(self) -> int:
        return len(self.rows)

    def take(self, sel: np.ndarray) -> np.ndarray:
        """The words ``(len(sel), k)`` of the yielded successors ``sel`` (an index array
        or a boolean mask over them)."""
        return self.source.take(take_rows(self.rows, sel))

    def all(self) -> np.ndarray:
        """The words of every yielded successor."""
        return self.source.take(self.rows)


class LevelExpansion:
    """Expand the states of a level, sorted by fingerprint, in batches (the level rule).

    Iterating :meth:`candidates` yields de-duplicated successors ``(child fps, keys,
    child words or None)`` whenever ``flush_rows`` are buffered, and at the end;
    ``keys`` is ``row * n_actions + action id`` (:meth:`parents` turns them into
    parent fingerprints and actions), the smallest per child. ``findings`` then holds
    what the level found. Words are returned only for layouts whose fingerprint is
    not the packed state itself. After a phase-1 problem no successor is yielded.

    ``words`` are the level's packed states; None when its keys are (an exact kernel's):
    each batch's words are then rebuilt from its keys, and the level is not held twice.

    ``batch_rows(start)``, when given, is asked before each batch how many states from
    row ``start`` on it may have (instead of ``batch_size``): the local explorer sizes
    batches to its memory budget, and stops a level (Ctrl-C, a budget) by raising from
    it. Batch sizes never change what a level finds.

    ``on_transitions`` sees every batch's transitions into stored states; ``on_batch``
    every batch's whole expansion (the transitions and the kernel's labels, for an
    observer of the run) once the level rule has recorded it without a phase-1
    problem.

    With ``lazy_words``, a flush of one batch yields its words as :class:`KeptWords`
    (gathered for the rows the consumer takes), not as an array.

    With ``inverse``, :attr:`inverse` holds, after each yield, which of the yielded
    successors each transition of the batches flushed reaches (an index into the
    yielded fingerprints, per transition in the order ``on_batch`` saw them).

    ``stop``, when given, is asked while a batch that raised is searched for its first
    raising state (:meth:`_locate`, a batch expansion at most): when it says True (a
    Ctrl-C), the search ends with the batch's error recorded as it is and
    :attr:`stopped` set, and so does the level once a spec error is recorded, so that
    the spec error, not the stop, ends the run. ``on_error`` is told the error of a
    batch that raised before that search (a worker process tells its coordinator,
    which may be stopped meanwhile).
    """

    def __init__(self, kernel: Kernel, fps: np.ndarray, words: np.ndarray | None, *,
                 expand: bool,
                 batch_size: int, flush_rows: int = 1 << 22,
                 on_transitions: TransitionHook | None = None,
                 batch_rows: Callable[[int], int] | None = None,
                 on_batch: BatchHook | None = None, inverse: bool = False,
                 stop: Callable[[], bool] | None = None,
                 on_error: Callable[[SpecEvaluationError], None] | None = None,
                 lazy_words: bool = False) -> None:
        self.kernel = kernel
        self.lazy_words = lazy_words
        self.fps = fps
        self.words = words
        self.expand = expand
        self.batch_size = max(1, int(batch_size))
        self.flush_rows = flush_rows
        self.on_transitions = on_transitions
        self.on_batch = on_batch
        self.batch_rows = batch_rows
        self.n_act = len(kernel.actions)
        self.findings = LevelFindings(self.n_act)
        self.exact = kernel.exact
        self.want_inverse = inverse
        #: see the class docstring (``inverse``)
        self.inverse: np.ndarray | None = None
        #: under a view, a child's rows hold different states: keep the smallest key's
        self.view = kernel.view is not None
        self.stop = stop
        self.on_error = on_error
        #: the search for a raising state was stopped (see the class docstring)
        self.stopped = False
        self._located_from = 0  # the first row not known to be fine, while locating

    def rows_and_actions(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(parent rows in the level, action ids)`` of candidate ``keys``."""
        return keys // self.n_act, keys % self.n_act

    def parents(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(parent fingerprints, action ids)`` of candidate ``keys``."""
        rows, acts = self.rows_and_actions(keys)
        return self.fps[rows], acts.astype(np.int32)

    def candidates(self) -> Iterator[tuple[np.ndarray, np.ndarray,
                                            np.ndarray | KeptWords | None]]:
        fps, n_act, f = self.fps, self.n_act, self.findings
        cand_fps: list[np.ndarray] = []
        cand_keys: list[np.ndarray] = []
        cand_words: list[np.ndarray | KeptWords] = []
        cand_inv: list[np.ndarray] = []  # per batch: its transitions' successor in it
        buffered = 0

        def flush() -> tuple[np.ndarray, np.ndarray, np.ndarray | KeptWords | None]:
            nonlocal buffered
            got = None
            if len(cand_fps) > 1 and self.exact and not self.want_inverse and not self.view:
                # the states are their keys: no rows needed, only each successor's
                # smallest key, from the batches' sorted runs as they are (one sort of
                # packed words instead of a stable argsort and its gathers:
                # TwoPhase RM=9's range tasks, 0.4 -> 0.2 CPU s)
                got = merge_runs_min(cand_fps, cand_keys)
            w: np.ndarray | KeptWords | None = None
            if got is not None:
                u, kmin = got
            else:
                # (one batch buffered, the local explorer's case: its arrays as they are)
                cf = np.concatenate(cand_fps) if len(cand_fps) > 1 else cand_fps[0]
                ck = np.concatenate(cand_keys) if len(cand_keys) > 1 else cand_keys[0]
                if len(cand_fps) > 1:
                    if self.want_inverse:
                        u, kmin, rows, inv = dedupe_min_inverse(cf, ck, ordered_runs=True)
                        base = np.cumsum([0] + [len(c) for c in cand_fps[:-1]])
                        self.inverse = np.concatenate(
                            [inv[b + i] for b, i in zip(base, cand_inv)])
                    else:
                        u, kmin, rows = dedupe_min(cf, ck, ordered_runs=True)
                else:
                    u, kmin, rows = cf, ck, None
                    if self.want_inverse:
                        self.inverse = cand_inv[0]
                if not self.exact:
                    if len(cand_words) == 1:
                        w = cand_words[0]
                    else:
                        cw = np.concatenate([c.all() if isinstance(c, KeptWords) else c
                                             for c in cand_words])
                        w = take_rows(cw, rows) if rows is not None else cw
            cand_fps.clear()
            cand_keys.clear()
            cand_words.clear()
            cand_inv.clear()
            buffered = 0
            return u, kmin, w

        end = 0
        while end < len(fps):
            if f.exp_error is not None and self.stop is not None and self.stop():
                break  # a spec error is recorded: it, not the stop, ends the run
            start = end
            size = self.batch_size if self.batch_rows is None else self.batch_rows(start)
            end = start + max(1, size)
            w = (self.words[start:end] if self.words is not None
                 else self.kernel.layout.words_of_keys(fps[start:end]))
            expand = self.expand and f.exp_error is None
            try:
                # an observer reads the transitions' keys, not their words: an exact
                # kernel's batch keeps no words (KRaft L5 with liveness: 0.07 CPU s)
                ex = self.kernel.expand(w, expand=expand, stop_on_violation=True,
                                        keys_only=self.exact)
            except SpecEvaluationError as err:
                if self.on_error is not None:
                    self.on_error(err)
                self._locate(w, start, expand, err)
                if f.phase1_problem or self.stopped:
                    break
                continue
            if self._record(ex, start):
                break  # the first phase-1 problem in fingerprint order decides
            if self.on_batch is not None:
                self.on_batch(start, ex)
            if not expand:
                continue
            # the batch's expansion (its successors' words, fingerprints, parents and
            # actions) is let go before the consumer runs and before the next batch is
            # expanded: two batches' expansions are never held at once
            child_fps, parent_rows, action_ids = ex.child_fps, ex.parent_rows, ex.action_ids
            # (the words of the successors kept are gathered, not of every one)
            child_words = None if self.exact else ex.successors
            del ex
            if len(child_fps):
                # one array of the batch's size, computed in place (each temporary of
                # a batch's successors is megabytes, mapped and faulted in afresh)
                keys = np.add(parent_rows, start, dtype=np.int64)
                keys *= n_act
                keys += action_ids
                if self.on_transitions is not None:
                    # (in int64: a batch's rows are int32, the level's may not fit)
                    self.on_transitions(np.add(parent_rows, start, dtype=np.int64),
                                        action_ids, child_fps)
                del parent_rows, action_ids
                packed = None
                if self.exact and not self.want_inverse and not self.view:
                    # no rows wanted (the words are the keys): the successors are
                    # packed a word a row, and freed, before the sort
                    held = [child_fps, keys]
                    del child_fps, keys
                    packed = dedupe_min_packed(held)
                    if packed is None:
                        child_fps, keys = held
                    del held
                rows = None
                if packed is not None:
                    u, kmin = packed
                    del packed
                else:
                    if self.want_inverse:
                        u, kmin, rows, inv = dedupe_min_inverse(child_fps, keys,
                                                                min_rows=self.view)
                        cand_inv.append(inv)
                    else:
                        u, kmin, rows = dedupe_min(child_fps, keys, min_rows=self.view)
                    del child_fps, keys
                cand_fps.append(u)
                cand_keys.append(kmin)
                if child_words is not None:
                    assert rows is not None  # (words: not an exact kernel, not packed)
                    kw = KeptWords(child_words, rows)
                    # (a batch that flushes now alone, whose successors are their parents
                    # and the words their actions changed: gathered by the consumer for
                    # the rows it keeps; else now, so that only its kept rows are held,
                    # not every successor's words)
                    lazy = self.lazy_words and not cand_words and \
                        buffered + len(u) >= self.flush_rows and \
                        not isinstance(child_words, _Dense)
                    cand_words.append(kw if lazy else kw.all())
                    del kw
                buffered += len(u)
                del child_words, rows, u, kmin
                if buffered >= self.flush_rows:
                    yield flush()
        if cand_fps and not f.phase1_problem:
            yield flush()

    # ------------------------------------------------------------ helpers
    def _record(self, ex: Expansion, start: int) -> bool:
        """Fold a batch's expansion into the findings; True on a phase-1 problem."""
        fps, f = self.fps, self.findings
        for j, bad in enumerate(ex.invariant_rows):
            if len(bad):
                _min_into(f.inv_min, j, key_int(fps, start + int(np.min(bad))))
        if f.inv_min:
            return True
        f.fired += ex.fired
        f.outside += ex.outside
        if len(ex.deadlock_rows):
            d = key_int(fps, start + int(np.min(ex.deadlock_rows)))
            f.dead_min = d if f.dead_min is None else min(f.dead_min, d)
        for hits, into in ((ex.outside_hits, f.outside_min), (ex.property_hits, f.prop_min)):
            for j, (pr, pa, pf) in enumerate(hits):
                if len(pr):
                    # the smallest child, then parent row, then action
                    i = np.lexsort((pa, pr, *reversed(key_columns(pf))))[0]
                    _min_into(into, j, (key_int(pf, i), key_int(fps, start + int(pr[i])),
                                        int(pa[i])))
        return False

    def _locate(self, w: np.ndarray, start: int, expand: bool,
                err: SpecEvaluationError) -> None:
        """A batch raised: find the first state (in fingerprint order) whose evaluation
        raises, and record what the level rule says about the batch up to it.

        The batch is expanded again in order in pieces (:data:`LOCATE_FIRST` rows,
        doubling up to :data:`LOCATE_MAX`), each piece that does not raise recorded, and
        the first piece that raises is halved down to its first raising state: about one
        expansion of the batch up to that state, in all. First with the invariants alone
        (does a state's phase 1 raise?), then, if none raises, with the expansion.
        Between two pieces a stop (``stop``, Ctrl-C) is honoured: the batch's error is
        then recorded as it is, with a note that its state was not isolated, so that an
        interrupted run still reports that the spec raised."""
        k, f = self.kernel, self.findings
        phase1 = True
        try:
            r = self._first_raising(w, start, False)
            if r is None and expand:
                phase1 = False
                r = self._first_raising(w, start, True)
        except (_Stopped, KeyboardInterrupt):
            self.stopped = True
            at = key_int(self.fps, start + self._located_from)
            note = (f"{str(err).rstrip('.')}. (Interrupted while locating the first state "
                    f"of a batch of {len(w):,} states that raises, in fingerprint order: "
                    "this is the error the batch raised, not isolated; an earlier state "
                    "of the level may raise too.)")
            e = ErrorAt(at, note, err.where, err.what, err.state)
            if phase1:
                f.inv_error = _min_err(f.inv_error, e)
            else:
                f.exp_error = _min_err(f.exp_error, e)
            return
        if r == -1:
            return  # an invariant violation before the raising state decides
        if r is None:
            # (raised as a batch, in no piece of it: reported at its last state)
            phase1, r = False, len(w) - 1
        fp = key_int(self.fps, start + r)
        cells = k.layout.unpack(w[r])
        if phase1:
            bad: list[int] = []
            for j, p in enumerate(k.invariants):
                try:
                    ok = k._eval_pred_scalar(p, cells, None)
                except SpecEvaluationError as e:
                    err = e
                    break
                if not ok:
                    bad.append(j)
            for j in bad:
                _min_into(f.inv_min, j, fp)
            if not bad:
                f.inv_error = _min_err(f.inv_error, error_payload(fp, err))
            return
        try:
            k.check_state(cells)
        except SpecEvaluationError as e:
            err = e
        f.exp_error = _min_err(f.exp_error, error_payload(fp, err))

    def _first_raising(self, w: np.ndarray, start: int, mode: bool) -> int | None:
        """The row of ``w`` of the first state whose evaluation (with ``expand=mode``)
        raises, the rows before it recorded; None if no piece raises, -1 if a recorded
        piece has a phase-1 problem (see :meth:`_locate`)."""
        n = len(w)
        lo, size = 0, LOCATE_FIRST
        self._located_from = 0
        while True:
            if lo >= n:
                return None
            hi = min(n, lo + size)
            ex = self._piece(w, lo, hi, mode)
            if ex is None:
                break
            if self._record(ex, start + lo):
                return -1
            lo, size = hi, min(2 * size, LOCATE_MAX)
            self._located_from = lo
        while hi - lo > 1:  # rows lo..hi-1 hold the first raising state
            mid = (lo + hi) // 2
            ex = self._piece(w, lo, mid, mode)
            if ex is None:
                hi = mid
                continue
            if self._record(ex, start + lo):
                return -1
            lo = self._located_from = mid
        return lo

    def _piece(self, w: np.ndarray, lo: int, hi: int, mode: bool) -> Expansion | None:
        """Rows ``lo..hi-1`` of ``w`` expanded (None: they raise), after asking ``stop``."""
        if self.stop is not None and self.stop():
            raise _Stopped
        k = self.kernel
        rows, k.scalar_locate_rows = k.scalar_locate_rows, 0  # (its message is not used)
        try:
            return k.expand(w[lo:hi], expand=mode, stop_on_violation=True)
        except SpecEvaluationError:
            return None
        finally:
            k.scalar_locate_rows = rows


class _Stopped(Exception):
    """The run asked :meth:`LevelExpansion._locate` to stop."""


def initial_states(kernel: Kernel) -> tuple[np.ndarray, np.ndarray, LevelFindings]:
    """The distinct initial states inside the state constraints, sorted by fingerprint:
    ``(fps, words, findings)``. Initial states outside the constraints are checked
    against the invariants (their problems are in ``findings``, phase 1 of level 0)
    and dropped. Under a view, of the initial states inside the constraints with one
    view the first (in the order the spec gives them) is kept, and one outside them is
    checked whatever its view (TLC's ``DoInitFunctor``: only states in the model are
    fingerprinted)."""
    words, fps = kernel.initial_words()
    if kernel.view is None:
        # a fingerprint is the state: de-duplicate before evaluating the constraints
        ufps, _, rows = dedupe_min(fps, np.zeros(len(fps), dtype=np.int64))
        words, fps = take_rows(words, rows), ufps
    f = LevelFindings(len(kernel.actions))
    if not kernel.constraints:
        keep = np.ones(len(fps), dtype=bool)
    else:
        try:
            keep = kernel.in_model_rows(words)
            out = np.flatnonzero(~keep)
            if len(out):
                ex = kernel.expand(words[out], expand=False)
                for j, bad in enumerate(ex.invariant_rows):
                    if len(bad):
                        sel = take_rows(fps, out[bad])
                        _min_into(f.inv_min, j, key_int(sel, key_min_row(sel)))
        except SpecEvaluationError:
            # Pinpoint the first initial state (in fingerprint order) that raises.
            keep = np.zeros(len(fps), dtype=bool)
            for i in key_order(fps):
                cells = kernel.layout.unpack(words[i])
                fp = key_int(fps, i)
                try:
                    keep[i] = kernel.satisfies_constraints(cells)
                    if not keep[i]:
                        for j, p in enumerate(kernel.invariants):
                            if not kernel._eval_pred_scalar(p, cells, None):
                                _min_into(f.inv_min, j, fp)
                except SpecEvaluationError as e:
                    f.inv_error = _min_err(f.inv_error, error_payload(fp, e))
                    break
    fps, words = take_rows(fps, keep), take_rows(words, keep)
    if kernel.view is not None:
        # the first state of each view, in the spec's order
        ufps, _, rows = dedupe_min(fps, np.zeros(len(fps), dtype=np.int64))
        return ufps, take_rows(words, rows), f
    return fps, words, f


# ---------------------------------------------------------------- reports
def _initial_state(kernel: Kernel, fp: int, final: PredicateDecl | None) -> list[int]:
    """The initial state a path of fingerprints starts from: the first with fingerprint
    ``fp`` inside the state constraints (the one the explorer stored); with ``final``
    (an invariant the path's only state violates), the first of those it may have
    reported: that one, or one outside the constraints (several states share a
    fingerprint under a view or symmetry)."""
    stored: list[int] | None = None
    outside: list[list[int]] = []
    for cells in kernel.initial_states():
        if kernel.fingerprint(cells) != fp:
            continue
        if not kernel.constraints or kernel.satisfies_constraints(cells):
            if stored is None:
                stored = cells
        else:
            outside.append(cells)
    choices = ([] if stored is None else [stored]) + outside
    if final is not None:
        bad = [c for c in choices if final in kernel.check_invariants(c)]
        choices = bad or choices
    if not choices:  # pragma: no cover - would be an engine bug
        raise RuntimeError("trace rebuild: no initial state has the recorded fingerprint")
    return choices[0]


def rebuild_trace(kernel: Kernel, fps: list[int] | tuple[int, ...] | StoredPath,
                  last: tuple[PredicateDecl | None, int] | None = None,
                  final: PredicateDecl | None = None) -> tuple[TraceStep, ...]:
    """Replay the spec along a path of fingerprints, returning full states and actions.
    The path may be a :class:`~modelcheck.store.StoredPath` through levels that have
    let their keys go: the fingerprint of such a step is that of the successor, by the
    recorded action instance, of the state before as the explorer stored it (the
    trace's state itself, or its canonical form under symmetry), so the spec is
    replayed once along the path, every state's successors evaluated once.

    At each step the successor with the wanted (canonical) fingerprint is taken,
    the first in action order whose transition satisfies the action constraints (the
    explorer stored it through one), so the trace is a real behaviour of the model
    even under symmetry reduction. ``final``: an invariant the last state violates
    (it tells which initial state a path of one state is). ``last = (property, fp)``
    appends one more step:
    the first transition to ``fp`` (that violates the action property, if one is
    given; or the first to a state that violates the invariant given, as a view's
    fingerprint is that of several states), which may be one the action constraints
    exclude. The first state may be an initial state outside the state constraints.
    Under a view, the successor taken at each step is the state the explorer stored
    (the first in action order from the stored parent).
    """
    layout = kernel.layout
    path = fps if isinstance(fps, StoredPath) else StoredPath(tuple(fps), (None,) * len(fps))
    first = path.fps[0]
    assert first is not None, "a path's first level keeps its keys"
    cur = _initial_state(kernel, first,
                         final if len(path.fps) == 1 and last is None else None)
    steps = [TraceStep(None, {}, layout.values_from_cells(cur))]
    targets: list[tuple[PredicateDecl | None, int | None, int | None]] = [
        (None, f, a) for f, a in zip(path.fps[1:], path.acts[1:])]
    if last is not None:
        targets.append((*last, None))
    stored = len(path.fps) - 1  # the steps to stored states (the rest: ``last``)
    for i, (prop, want, act) in enumerate(targets):
        successors = kernel.successors(cur)
        fp = want if want is not None else _stored_successor(kernel, cur, successors, act)
        found = excluded = None
        for inst, nxt in successors:
            if kernel.fingerprint(nxt) != fp:
                continue
            if prop is not None and prop not in (
                    kernel.check_invariants(nxt) if prop.kind is RoleKind.INVARIANT
                    else kernel.check_properties(cur, nxt)):
                continue
            if i < stored and kernel.view is not None and kernel.constraints and \
                    not kernel.satisfies_constraints(nxt):
                continue  # (under a view, one outside the model may share the fp)
            if i < stored and kernel.action_constraints and \
                    not kernel.satisfies_action_constraints(cur, nxt):
                # (only an action constraint that symmetry does not preserve leaves
                # no other: then this step stands)
                excluded = excluded or (inst, nxt)
                continue
            found = (inst, nxt)
            break
        found = found or excluded
        if found is None:  # pragma: no cover - would be an engine bug
            raise RuntimeError(f"trace rebuild: no successor has fingerprint {fp:#x}")
        inst, cur = found
        steps.append(TraceStep(inst.name, dict(inst.params), layout.values_from_cells(cur)))
    return tuple(steps)


def _stored_successor(kernel: Kernel, cur: list[int],
                      successors: list[tuple[ActionInstance, list[int]]],
                      act: int | None) -> int:
    """The fingerprint of the state the explorer stored as the successor by action
    instance ``act`` of the trace's state ``cur`` (as stored: ``cur`` itself, or under
    symmetry its canonical form, whose successor is then evaluated alone)."""
    if act is None:  # pragma: no cover - a level lets its keys go only with its actions
        raise RuntimeError("trace rebuild: a level without keys records no actions")
    stored = cur
    if kernel.symmetry is not None:
        words, _ = kernel.canonical(kernel.layout.pack(cur).reshape(1, -1))
        stored = kernel.layout.unpack(words[0])
    if stored == list(cur):
        nxt = next((n for inst, n in successors if inst.id == act), None)
    else:
        nxt = kernel.step(stored, kernel.actions[act])
    if nxt is None:  # pragma: no cover - would be an engine bug
        raise RuntimeError(f"trace rebuild: the recorded action {act} is not enabled")
    return kernel.fingerprint(nxt)


def report(kernel: Kernel, verdict: Verdict,
           path_to: Callable[[int], list[int] | StoredPath]) -> Violation:
    """The violation a verdict reports (raises the spec error of an ``error`` verdict).

    ``path_to(fp)`` gives the fingerprints from an initial state to a stored state
    ``fp`` (for a phase-1 verdict at level 0 outside the constraints: ``[fp]``), or
    the :class:`~modelcheck.store.StoredPath` to it.
    """
    if verdict.kind is VerdictKind.ERROR:
        assert verdict.error is not None
        raise verdict.error.exception()
    if verdict.kind is VerdictKind.INVARIANT:
        names = [kernel.invariants[j].name for j in verdict.which]
        also = sorted(set(names[1:]) - {names[0]})
        return Violation(names[0], ViolationKind.INVARIANT,
                         rebuild_trace(kernel, path_to(verdict.at),
                                       final=kernel.invariants[verdict.which[0]]),
                         tuple(also))
    if verdict.kind is VerdictKind.DEADLOCK:
        return Violation("Deadlock", ViolationKind.DEADLOCK,
                         rebuild_trace(kernel, path_to(verdict.at)))
    child, parent, _ = verdict.at
    if verdict.kind is VerdictKind.OUTSIDE:
        names = [kernel.invariants[j].name for j in verdict.which]
        trace = rebuild_trace(kernel, path_to(parent),
                              last=(kernel.invariants[verdict.which[0]], child))
        final = kernel.layout.cells_from_values(trace[-1].state)
        others = [p.name for p in kernel.check_invariants(final)]
        also = sorted(set(names[1:] + others) - {names[0]})
        return Violation(names[0], ViolationKind.INVARIANT, trace, tuple(also))
    prop = kernel.properties[verdict.which[0]]
    also = sorted({kernel.properties[j].name for j in verdict.which[1:]} - {prop.name})
    trace = rebuild_trace(kernel, path_to(parent), last=(prop, child))
    final = kernel.layout.cells_from_values(trace[-1].state)
    also += [p.name for p in kernel.check_invariants(final)]
    return Violation(prop.name, ViolationKind.ACTION, trace, tuple(also))
