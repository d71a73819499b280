"""Random simulation: seeded random walks through the batch kernel (TLC's ``-simulate``).

:class:`Simulator` runs random walks from the initial states and checks, at every
step, what the exhaustive checker checks: the invariants on every successor of the
walk's current state (TLC checks those of the successors it generates), the action
properties on every enabled transition, deadlocks, and the state and action
constraints. Many walks advance together: each step of a batch of walks is one
:meth:`~modelcheck.kernel.Kernel.expand` of their current states, the checker's own
successor function, so there is no second semantics.

**Reproducible.** Walk ``i`` of a run with seed ``s`` draws its random numbers from
its own ``numpy.random.PCG64(SeedSequence([s, i]))`` bit generator (raw 64-bit
outputs, whose streams numpy keeps stable across versions and platforms): which
initial state, then one number per step to pick a transition. A walk is the same
whichever batch or Spark task runs it; Python's ``hash()`` and set order are never
used. The reported violation is the one of the smallest walk index: when walk ``v``
fails, walks after ``v`` are abandoned and walks before it run to their end.

**TLC semantics, and where we differ.** Walks have at most ``depth`` steps
(TLC's ``-depth`` counts states: ``-depth 100`` is our ``depth=99``). A walk stops
at a state outside the state constraints or reached by a transition that violates
an action constraint (the state is in the walk and its invariants are checked, as
TLC's: a walk goes on only from a state with ``isInModel(s') && isInActions(s, s')``),
at a state without enabled actions (a deadlock when deadlock checking is on, as
TLC's), or at the depth bound. TLC picks an action
uniformly, then one of its successors; we pick uniformly among *all* enabled
transitions, each weighted by its action's weight (default 1; weight 0 never
picks an action, and a walk whose enabled actions all weigh 0 stops). TLC checks
the successors of the action it picked; we check every successor. Symmetry
reduction is never applied to walks (it is to the bounded BFS of shrinking).

Counts of a run: ``walks`` finished, ``steps`` taken, ``generated`` transitions
(enabled, checked), ``distinct_states`` visited by the walks, and per action its
transitions and the states it reached first. They are the counts of walks ``0 .. n-1``
of the seed, whatever ``walks_per_batch``: a finished walk is added to them only once
every walk of a smaller index is, and a run that finds a violation in walk ``v``
counts walks ``0 .. v`` (the states and steps of the abandoned walks after it are
not counted); a state's first action is that of the first walk (by index) that
reached it. Only a run stopped by time or Ctrl-C depends on the timing.

A walk whose current state has enabled actions that all weigh 0 stops there (ends
``weight 0``); the result warns of it, and when no walk took a single step the run is
``incomplete`` (reason ``weights``, exit 3): nothing past the initial states was
checked.

**Temporal properties** are checked on every walk that ends without a safety
violation, as TLC's simulation mode does (:class:`~modelcheck.liveness.WalkLiveness`):
the walk's states and steps form a graph in which every state may stutter; a walk that
revisits a state closes a cycle, and one that ends (no enabled action, the depth bound,
zero weights) stutters in its last state. A fair lasso of that graph violating a
property (fairness evaluated with the spec's real enabledness: WF(A) holds on the loop
iff A is taken on it or disabled at one of its states, SF(A) iff taken or disabled at
all) is a real counterexample, reported as ``check`` reports one (kind ``liveness``,
``loop``, ``fairness``; not shrunk). Walks never prove a property:
``liveness.properties`` says ``no counterexample in the walks``. With state or action
constraints (refused by ``check`` for liveness) the properties are not checked: the
result names them (``not_checked``, verdicts ``not checked``) and warns, its status
unaffected.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .budget import default_memory_limit
from .config import CheckConfig
from .errors import UsageError
from .explorer import build_kernel, complete_result, new_result
from .initial import check_initial, split_initial
from .interrupt import Interrupts
from .kernel import Kernel
from .library import Library
from .library import lookup as library_lookup
from .liveness import WalkLiveness, split_checks
from .result import Result, Status, TraceStep, Violation, ViolationKind
from .shrink import ShrinkReport, Target, shrink
from .spec import Spec
from .store import FingerprintSet, empty_keys, key_int, key_order, key_starts, keys_of
from .temporal import TemporalDecl

__all__ = ["SimConfig", "Simulator", "SimProgress", "simulate", "walk_generator",
           "uniform", "WalkSet", "WalkTally", "Found", "VisitedStates", "run_walks"]


@dataclass(frozen=True)
class SimConfig:
    """How to simulate (what to check is the :class:`~modelcheck.config.CheckConfig`)."""

    #: the run's seed: the same seed gives the same walks everywhere
    seed: int = 0
    #: walks to run (``None``: until ``time_limit``)
    runs: int | None = None
    #: steps per walk at most (TLC's ``-depth`` minus one)
    depth: int = 100
    #: seconds to run at most (``None``: until ``runs``); the walks still running then
    #: are cut short (counted, with the steps they took)
    time_limit: float | None = 60.0
    #: per action name, the weight of each of its transitions (default 1)
    weights: tuple[tuple[str, float], ...] = ()
    #: walks advanced together (one kernel evaluation per step of the batch)
    walks_per_batch: int = 2048
    #: shrink a counterexample before reporting it
    shrink: bool = True
    #: distinct states the shrinker's bounded BFS may store (0: no BFS)
    shrink_states: int = 200_000

    def __post_init__(self) -> None:
        if not 0 <= self.seed < 1 << 64:
            raise ValueError(f"seed must be in 0 .. 2**64-1, not {self.seed}")
        if self.runs is not None and self.runs < 1:
            raise ValueError(f"runs must be at least 1, not {self.runs}")
        if self.runs is None and self.time_limit is None:
            raise ValueError("give runs or time_limit (or both): a simulation needs an end")
        if self.depth < 0:
            raise ValueError(f"depth must be at least 0, not {self.depth}")
        if self.time_limit is not None and self.time_limit <= 0:
            raise ValueError(f"time_limit must be positive, not {self.time_limit}")
        if self.walks_per_batch < 1:
            raise ValueError(f"walks_per_batch must be at least 1, not {self.walks_per_batch}")
        for name, w in self.weights:
            if not (w >= 0 and np.isfinite(w)):
                raise ValueError(f"the weight of action {name} must be a finite number >= 0, "
                                 f"not {w}")

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "runs": self.runs, "depth": self.depth,
                "time_limit": self.time_limit, "weights": dict(self.weights),
                "walks_per_batch": self.walks_per_batch, "shrink": self.shrink,
                "shrink_states": self.shrink_states}


@dataclass(frozen=True)
class SimProgress:
    """A progress report of a simulation (every few seconds)."""

    walks: int
    steps: int
    distinct: int
    seconds: float
    fired: np.ndarray

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.seconds if self.seconds > 0 else 0.0


def walk_generator(seed: int, walk: int) -> np.random.PCG64:
    """The bit generator of walk ``walk`` of a run with ``seed``."""
    return np.random.PCG64(np.random.SeedSequence([seed, walk]))


def uniform(gen: np.random.PCG64) -> float:
    """The next number in [0, 1) of ``gen``: its next raw 64-bit output's top 53 bits."""
    return float(int(gen.random_raw()) >> 11) * (1.0 / (1 << 53))


@dataclass(frozen=True)
class WalkSet:
    """Walks ``first``, ``first + stride``, ``first + 2 stride``, ... of a run with
    ``seed``: ``count`` of them (``None``: until the run is stopped).

    Walk ``i`` draws from :func:`walk_generator` ``(seed, i)``, so a walk is the same
    whichever set, batch or process runs it: a run of ``R`` walks is
    ``WalkSet(seed, 0, 1, R)``; a Spark task runs a strided part of a block of it.
    """

    seed: int
    first: int = 0
    stride: int = 1
    count: int | None = None

    def __post_init__(self) -> None:
        if self.first < 0 or self.stride < 1 or (self.count is not None and self.count < 0):
            raise ValueError(f"not a set of walks: first {self.first}, stride "
                             f"{self.stride}, count {self.count}")

    def index(self, j: int) -> int:
        """The index of the ``j``-th walk of the set."""
        return self.first + j * self.stride


@dataclass
class Found:
    """A violation found by walk ``walk``: the walk's actions (the last one may be the
    violating transition) from initial state ``init`` (an index into the initial
    states in fingerprint order)."""

    walk: int
    target: Target
    init: int
    actions: list[int]
    also: tuple[str, ...] = ()
    #: a temporal property's violation: the walk's lasso, as the checker reports one
    lasso: Violation | None = None


class VisitedStates:
    """The distinct states walks visit (a :class:`~modelcheck.store.FingerprintSet`)
    and, per action instance, how many of them it reached first (coverage's new
    states; ``-1`` stands for an initial state).

    With a ``limit`` (bytes), the set stops growing rather than go beyond it: the
    count is then a lower bound (``capped``). With ``record``, the new states are
    also kept in the order they were seen, each with the action that reached it
    (:meth:`recorded`; what a Spark task sends back to be counted on the driver).
    """

    def __init__(self, n_actions: int, limit: int | None = None,
                 record: bool = False, width: int = 1) -> None:
        self.set = FingerprintSet(width)
        self.new_by_action = np.zeros(n_actions, dtype=np.int64)
        self.limit = limit
        self.capped = False
        self._record: list[tuple[np.ndarray, np.ndarray, int]] | None = [] if record else None

    def __len__(self) -> int:
        return len(self.set)

    def see(self, fps: np.ndarray, actions: np.ndarray, walk: int = -1) -> None:
        """Visit states ``fps``, reached by ``actions`` (one per state; ``-1``: initial)
        in walk ``walk`` (recorded with them); of repeated fingerprints the first row
        counts."""
        order = key_order(fps)
        first = order[key_starts(fps[order])]
        u = fps[first]
        fresh = ~self.set.contains(u)
        if not fresh.any():
            return
        if self.limit is not None and \
                self.set.nbytes + self.set.growth(int(fresh.sum())) > self.limit:
            self.capped = True  # count no more: the count is a lower bound
            return
        new, acts = u[fresh], np.asarray(actions)[first[fresh]].astype(np.int64)
        self.set.add_sorted(new)
        if self._record is not None:
            self._record.append((new, acts, walk))
        acts = acts[acts >= 0]
        if len(acts):
            self.new_by_action += np.bincount(acts, minlength=len(self.new_by_action))

    def recorded(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The new states in the order they were seen (fingerprints), the action that
        reached each and the walk that did (empty unless ``record``)."""
        if not self._record:
            return (empty_keys(self.set.width), np.zeros(0, dtype=np.int64),
                    np.zeros(0, dtype=np.int64))
        return (np.concatenate([f for f, _, _ in self._record]),
                np.concatenate([a for _, a, _ in self._record]),
                np.concatenate([np.full(len(f), w, dtype=np.int64)
                                for f, _, w in self._record]))


#: how a walk ends (``WalkTally.ends``): at the depth bound, at a state without enabled
#: actions, at a state outside the constraints, at a state whose enabled actions all
#: weigh 0 (``weight 0``: the walk was cut short by ``--weights``), at a violation, or
#: where the run stopped (``cut``: by its time limit or a Ctrl-C; its steps count)
WALK_ENDS = ("depth", "terminal", "constraint", "weight 0", "violation", "cut")

#: walks of the first kernel evaluation of a step under a time limit; later ones are
#: sized by the time a walk's step took, to :data:`STEP_SHARE` of the limit
FIRST_CHUNK = 16
STEP_SHARE = 1 / 50

#: initial states whose invariants are checked at once before the walks (the clock is
#: looked at between two such chunks)
STARTS_CHUNK = 4096


@dataclass
class WalkTally:
    """What running a set of walks (:func:`run_walks`) counted and found.

    ``walks`` finished, ``steps`` taken, ``generated`` transitions (enabled, checked),
    the ``longest`` walk, how walks ended (``ends``), transitions per action instance
    (``fired``), the violation of the smallest walk index (``found``), why the run
    stopped early (``stopped``: ``"interrupted"``, ``"time"`` or ``None``), and the
    visited states: their number (``distinct``, a lower bound if
    ``distinct_capped``), the new states per action (``new_by_action``) and, when
    recorded, the states themselves (``states``, ``reached_by``, ``reached_in``: see
    :meth:`VisitedStates.recorded`). Tallies of parts of a run add up with
    :meth:`add` (everything but the visited states, which are counted by feeding each
    part's recorded states to one :class:`VisitedStates`).
    """

    fired: np.ndarray
    walks: int = 0
    steps: int = 0
    generated: int = 0
    longest: int = 0
    ends: dict[str, int] = field(default_factory=lambda: dict.fromkeys(WALK_ENDS, 0))
    found: Found | None = None
    stopped: str | None = None
    distinct: int = 0
    distinct_capped: bool = False
    new_by_action: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    states: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint64))
    reached_by: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    reached_in: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @classmethod
    def empty(cls, n_actions: int) -> WalkTally:
        return cls(np.zeros(n_actions, dtype=np.int64),
                   new_by_action=np.zeros(n_actions, dtype=np.int64))

    def add(self, other: WalkTally) -> None:
        """Add ``other``'s counts; keep the violation of the smaller walk index; a stop
        by interrupt outranks one by time."""
        self.walks += other.walks
        self.steps += other.steps
        self.generated += other.generated
        self.longest = max(self.longest, other.longest)
        for why, n in other.ends.items():
            self.ends[why] = self.ends.get(why, 0) + n
        self.fired = self.fired + other.fired
        if other.found is not None and (self.found is None
                                        or other.found.walk < self.found.walk):
            self.found = other.found
        if other.stopped == "interrupted" or (other.stopped and not self.stopped):
            self.stopped = other.stopped

    def count_states(self, visited: VisitedStates) -> None:
        """Take the visited-state figures from ``visited``."""
        self.distinct = len(visited)
        self.distinct_capped = visited.capped
        self.new_by_action = visited.new_by_action.copy()


@dataclass
class _Walk:
    """A walk and what it counted so far (added to the tally when it is committed)."""

    index: int
    gen: np.random.PCG64
    init: int
    #: transitions per action instance (while it runs: row ``row`` of the walker's table)
    fired: np.ndarray | None = None
    row: int = -1
    actions: list[int] = field(default_factory=list)
    generated: int = 0
    #: the states the walk visited (fingerprints) and the action that reached each
    seen: list[int] = field(default_factory=list)
    seen_by: list[int] = field(default_factory=list)
    #: the packed states of the walk (kept when temporal properties are checked)
    words: list[np.ndarray] = field(default_factory=list)
    #: how it ended (``WALK_ENDS``) and, for a violation, what it found
    end: str | None = None
    found: Found | None = None


@dataclass(frozen=True)
class _Starts:
    """The initial states in fingerprint order (a walk's ``init`` indexes them)."""

    words: np.ndarray
    fps: np.ndarray
    inside: np.ndarray  # within the state constraints
    bad: dict[int, list[int]]  # state -> the invariants it violates


def _starts(k: Kernel, over: Callable[[], bool] | None = None) -> _Starts | None:
    """The initial states, their invariants checked :data:`STARTS_CHUNK` at a time;
    None when ``over()`` says the run must stop (asked between two chunks)."""
    words, fps = k.initial_words()
    order = key_order(fps)
    words, fps = words[order], fps[order]
    inside = (k.in_model_rows(words) if k.constraints
              else np.ones(len(order), dtype=bool))
    bad: dict[int, list[int]] = {}
    for lo in range(0, len(words), STARTS_CHUNK):
        if over is not None and over():
            return None
        ex = k.expand(words[lo:lo + STARTS_CHUNK], expand=False)
        for j, rows in enumerate(ex.invariant_rows):
            for r in rows:
                bad.setdefault(lo + int(r), []).append(j)
    return _Starts(words, fps, inside, bad)


def _initial_words(k: Kernel) -> np.ndarray:
    """The initial states in fingerprint order (what a walk's ``init`` indexes)."""
    words, fps = k.initial_words()
    return words[key_order(fps)]


def run_walks(kernel: Kernel, walks: WalkSet, *, weights: np.ndarray, depth: int,
              walks_per_batch: int = 2048, time_limit: float | None = None,
              stop: Callable[[], bool] | None = None,
              progress: Callable[[SimProgress], None] | None = None,
              progress_interval: float = 3.0, seen_limit: int | None = None,
              record_states: bool = False, live: WalkLiveness | None = None,
              clock: Callable[[], float] = time.perf_counter) -> WalkTally:
    """Run the walks of ``walks`` through ``kernel`` (see the module docstring).

    ``weights`` holds one weight per action instance; walks take at most ``depth``
    steps; ``walks_per_batch`` of them advance together. Walks are started in index
    order until the set is done, ``time_limit`` seconds have passed (on ``clock``,
    from this call on, the initial states' check included), ``stop()`` returns true or
    a walk found a violation: walks of a larger index than the violating one are then
    abandoned (not counted), those of a smaller one run to their end. The time and
    ``stop()`` are looked at between two kernel evaluations: with a time limit, a step
    of the walks is evaluated in chunks of walks, each sized to take about
    :data:`STEP_SHARE` of the limit (the first :data:`FIRST_CHUNK` walks), so a slow
    spec stops near the limit. The walks still running then end ``cut``: they are
    counted as walks, with the steps they took. A second Ctrl-C
    (``KeyboardInterrupt``) stops at once, counting the finished walks only.
    ``seen_limit`` bounds the visited set (bytes); ``record_states`` keeps the
    visited states in the tally. With ``live``, every walk that ends without a safety
    violation (or at a state outside the constraints) is checked for a fair lasso
    violating a temporal property (:class:`~modelcheck.liveness.WalkLiveness`), a
    violation of the walk like any other.

    The walks, the violation and, without a time limit or stop, every count depend on
    ``walks`` and ``walks_per_batch`` only.
    """
    return _Walker(kernel, walks, weights, depth, walks_per_batch, seen_limit,
                   record_states, live, clock).run(time_limit, stop, progress,
                                                   progress_interval)


class _Walker:
    def __init__(self, kernel: Kernel, walks: WalkSet, weights: np.ndarray, depth: int,
                 walks_per_batch: int, seen_limit: int | None, record: bool,
                 live: WalkLiveness | None = None,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.k = kernel
        self.live = live
        self.set = walks
        self.weights = np.asarray(weights, dtype=np.float64)
        self.depth = depth
        self.width = walks_per_batch
        self.clock = clock
        self.deadline: float | None = None  # on ``clock``
        self.time_limit: float | None = None
        self.stop: Callable[[], bool] | None = None
        #: the latest chunks of a step: (walks, seconds), to fit their cost (``_chunk``)
        self.timings: list[tuple[int, float]] = []
        self.chunk_max = 0  # the most walks evaluated at once so far
        self.init = _Starts(np.zeros((0, kernel.layout.n_words), dtype=np.uint64),
                            empty_keys(kernel.key_width), np.zeros(0, dtype=bool), {})
        n_act = len(kernel.actions)
        self.n_act = n_act
        #: per running walk (its ``row``), its transitions per action instance so far
        self.fired = np.zeros((walks_per_batch, n_act), dtype=np.int64)
        self.free = list(range(walks_per_batch - 1, -1, -1))
        self.t = WalkTally.empty(n_act)
        self.key_width = kernel.key_width
        self.visited = VisitedStates(n_act, seen_limit, record, self.key_width)
        self.started = 0  # walks of the set started
        self.committed = 0  # walks of the set committed (or discarded), in set order
        self.done: dict[int, _Walk] = {}  # finished walks not yet committed, by position
        self.found: Found | None = None  # the violation of the smallest walk index so far
        self.pending: list[tuple[_Walk, str]] = []  # ended walks to check for lassos

    def _check_lassos(self) -> None:
        """Check the walks that ended since the last call for lassos violating a
        temporal property (in one batch), then end them."""
        pending, self.pending = self.pending, []
        if not pending or self.live is None:
            return
        found = self.live.check_many([(np.stack(w.words), keys_of(w.seen, self.key_width),
                                       w.actions) for w, _ in pending])
        for (w, why), lasso in zip(pending, found):
            w.words = []
            if lasso is None:
                self._finish(w, why)
            else:
                self._violation(w, Found(w.index, Target(lasso.property, ViolationKind.LIVENESS),
                                         w.init, list(w.actions), lasso.also_violated,
                                         lasso))

    # ------------------------------------------------------------ walks
    def _may_start(self) -> bool:
        t = self.t
        if t.stopped is not None:
            return False
        if self.set.count is not None and self.started >= self.set.count:
            return False
        return self.found is None or self.set.index(self.started) < self.found.walk

    def _start(self) -> tuple[_Walk, np.ndarray] | None:
        """Start the next walk; None if it ended at once."""
        i = self.set.index(self.started)
        self.started += 1
        gen = walk_generator(self.set.seed, i)
        init = int(uniform(gen) * len(self.init.fps))
        w = _Walk(i, gen, init)
        w.seen.append(key_int(self.init.fps, init))
        w.seen_by.append(-1)
        if self.live is not None:
            w.words.append(self.init.words[init])
        bad = self.init.bad.get(init)
        if bad:
            names = [self.k.invariants[j].name for j in bad]
            self._violation(w, Found(i, Target(names[0], ViolationKind.INVARIANT), init, [],
                                     tuple(names[1:])))
            return None
        if not self.init.inside[init] or self.depth == 0:
            self._end(w, "constraint" if not self.init.inside[init] else "depth")
            return None
        w.row = self.free.pop()
        return w, self.init.words[init]

    def _end(self, w: _Walk, why: str) -> None:
        if w.fired is None:  # its transitions, out of the table
            if w.row >= 0:
                w.fired = self.fired[w.row].copy()
                self.fired[w.row] = 0
                self.free.append(w.row)
            else:
                w.fired = np.zeros(self.n_act, dtype=np.int64)
        if self.live is not None and why != "constraint" and w.found is None:
            self.pending.append((w, why))  # checked for lassos by _check_lassos
            return
        self._finish(w, why)

    def _finish(self, w: _Walk, why: str) -> None:
        w.end = why
        self.done[(w.index - self.set.first) // self.set.stride] = w
        self._commit()

    def _violation(self, w: _Walk, f: Found) -> None:
        w.found = f
        if self.found is None or f.walk < self.found.walk:
            self.found = f
        self._end(w, "violation")

    def _commit(self, gaps: bool = False) -> None:
        """Add the finished walks to the tally in walk order, up to the first walk still
        running (with ``gaps``, past it: a stopped run counts every walk that finished);
        after a violation, no walk of a larger index is counted. So every count is that
        of the walks of the set up to the last committed one, whatever the batch."""
        t = self.t
        while self.done and t.found is None:
            if self.committed in self.done:
                j = self.committed
            elif gaps:
                j = min(self.done)
            else:
                return
            w = self.done.pop(j)
            self.committed = j + 1
            t.walks += 1
            t.ends[w.end or "depth"] += 1
            t.steps += len(w.actions)
            t.longest = max(t.longest, len(w.actions))
            t.generated += w.generated
            if w.fired is not None:
                t.fired += w.fired
            self.visited.see(keys_of(w.seen, self.key_width),
                             np.asarray(w.seen_by, dtype=np.int64), w.index)
            if w.found is not None:
                t.found = w.found
        if t.found is not None:
            self.done.clear()

    # ------------------------------------------------------------ the loop
    def run(self, time_limit: float | None, stop: Callable[[], bool] | None,
            progress: Callable[[SimProgress], None] | None,
            progress_interval: float) -> WalkTally:
        t = self.t
        t0 = self.clock()
        last = t0
        self.stop, self.time_limit = stop, time_limit
        self.deadline = None if time_limit is None else t0 + time_limit
        slots: list[_Walk] = []
        rows: list[np.ndarray] = []
        try:
            init = _starts(self.k, self._over)
            if init is not None:
                self.init = init
            while t.stopped is None:
                now = self.clock()
                if self._over():
                    break
                if self.found is not None:  # walks after the violating one are moot
                    keep = [j for j, w in enumerate(slots) if w.index < self.found.walk]
                    slots = [slots[j] for j in keep]
                    rows = [rows[j] for j in keep]
                while len(slots) < self.width and self._may_start():
                    started = self._start()
                    if started is not None:
                        slots.append(started[0])
                        rows.append(started[1])
                self._check_lassos()
                if not slots:
                    break
                slots, rows = self._step(slots, np.stack(rows))
                self._check_lassos()
                if progress is not None and now - last >= progress_interval:
                    last = now
                    # (the steps of the walks still running count too)
                    running = sum(len(w.actions) for w in slots)
                    progress(SimProgress(t.walks, t.steps + running, len(self.visited),
                                         now - t0, t.fired.copy()))
            for w in slots:  # stopped (time, Ctrl-C): the walks still running are cut
                self._cut(w)
        except KeyboardInterrupt:  # a second Ctrl-C
            t.stopped = "interrupted"
        self._commit(gaps=t.stopped is not None)
        t.count_states(self.visited)
        t.states, t.reached_by, t.reached_in = self.visited.recorded()
        return t

    def _over(self) -> bool:
        """Whether the run must stop now (``stop()``, or the time limit); sets
        ``stopped``."""
        t = self.t
        if t.stopped is None:
            if self.stop is not None and self.stop():
                t.stopped = "interrupted"
            elif self.deadline is not None and self.clock() >= self.deadline:
                t.stopped = "time"
        return t.stopped is not None

    def _cut(self, w: _Walk) -> None:
        """End a running walk where the run stopped (its steps count; no lasso check)."""
        w.fired = self.fired[w.row].copy()
        self.fired[w.row] = 0
        self.free.append(w.row)
        self._finish(w, "cut")

    def _step(self, slots: list[_Walk], words: np.ndarray
              ) -> tuple[list[_Walk], list[np.ndarray]]:
        """Advance every walk of the batch by one step; with a time limit, in chunks of
        walks between which the clock and ``stop()`` are looked at (the walks after a
        stop keep their state)."""
        if self.deadline is None:
            return self._step_chunk(slots, words)
        out_s: list[_Walk] = []
        out_r: list[np.ndarray] = []
        i = 0
        while i < len(slots):
            if self._over():
                out_s += slots[i:]
                out_r += list(words[i:])
                break
            n = self._chunk(len(slots) - i)
            t = self.clock()
            got_s, got_r = self._step_chunk(slots[i:i + n], words[i:i + n])
            self.timings = [*self.timings[-7:], (n, self.clock() - t)]
            self.chunk_max = max(self.chunk_max, n)
            out_s += got_s
            out_r += got_r
            i += n
        return out_s, out_r

    def _chunk(self, rest: int) -> int:
        """Walks of the next kernel evaluation of a step (of ``rest`` left) under a time
        limit: :data:`FIRST_CHUNK` at first, then as many as add about
        :data:`STEP_SHARE` of the limit (or, if more, twice the fixed cost of an
        evaluation) to the fixed cost, at the cost ``a + b * walks`` fitted to the latest chunks
        (with one size measured, all of it per walk); at most four times the largest
        so far."""
        assert self.time_limit is not None
        if not self.timings:
            return min(rest, FIRST_CHUNK)
        n = np.array([c for c, _ in self.timings], dtype=np.float64)
        t = np.array([s for _, s in self.timings], dtype=np.float64)
        if np.ptp(n) > 0:
            b, a = np.polyfit(n, t, 1)
            a = max(float(a), 0.0)
            b = max(float(b), 0.0)
        else:
            a, b = 0.0, float(t.mean() / n[0])
        # (a chunk's walks cost at least twice its fixed cost: two thirds of the time
        # go to walks, however short the limit)
        fit = max(self.time_limit * STEP_SHARE, 2 * a) / max(b, 1e-12)
        return max(1, min(rest, int(min(fit, 1 << 30)), 4 * self.chunk_max))

    def _step_chunk(self, slots: list[_Walk], words: np.ndarray
                    ) -> tuple[list[_Walk], list[np.ndarray]]:
        """Advance every walk of ``slots`` (their states ``words``) by one step."""
        k = self.k
        ex = k.expand(words, constrain=False)
        order = np.argsort(ex.parent_rows, kind="stable")  # by walk, then action
        cw, cf = ex.child_words[order], ex.child_fps[order]
        cp, ca = ex.parent_rows[order], ex.action_ids[order].astype(np.int64)
        action_ok = None if ex.action_ok is None else ex.action_ok[order]
        counts = np.bincount(cp, minlength=len(slots))
        # each walk counts the transitions of its state, in its row of the table
        np.add.at(self.fired, (np.array([w.row for w in slots])[cp], ca), 1)
        # violations: per walk, the first transition (in action order) that violates
        # an invariant at its target or an action property
        bad: dict[int, tuple[int, list[str]]] = {}  # walk row -> (child index, properties)
        if k.invariants and len(cw):
            inv_rows = k.expand(cw, expand=False).invariant_rows
            for j, children in enumerate(inv_rows):
                for c in children:
                    _note(bad, int(cp[c]), int(c), k.invariants[j].name)
        for j, (pr, pa, _pf) in enumerate(ex.property_hits):
            for r, a in zip(pr, pa):
                c = _child_index(cp, ca, int(r), int(a))
                _note(bad, int(r), c, k.properties[j].name)
        dead = set(int(r) for r in ex.deadlock_rows)
        pick = _choose(self.weights, [w.gen for w in slots], cp, ca)
        inv_names = {p.name for p in k.invariants}
        keep_slots: list[_Walk] = []
        keep_rows: list[np.ndarray] = []
        moved: list[int] = []
        for r, w in enumerate(slots):
            w.generated += int(counts[r])
            if r in bad:
                c, props = bad[r]
                kind = (ViolationKind.INVARIANT if props[0] in inv_names
                        else ViolationKind.ACTION)
                also = tuple(dict.fromkeys(props[1:]))
                w.actions.append(int(ca[c]))
                w.seen.append(key_int(cf, c))
                w.seen_by.append(int(ca[c]))
                self._violation(w, Found(w.index, Target(props[0], kind), w.init,
                                         list(w.actions), also))
                continue
            if r in dead:
                self._violation(w, Found(w.index, Target("Deadlock", ViolationKind.DEADLOCK),
                                         w.init, list(w.actions)))
                continue
            c = pick[r]
            if c < 0:
                self._end(w, "weight 0" if counts[r] else "terminal")
                continue
            moved.append(c)
            w.actions.append(int(ca[c]))
            w.seen.append(key_int(cf, c))
            w.seen_by.append(int(ca[c]))
            if self.live is not None:
                w.words.append(cw[c])
            keep_slots.append(w)
            keep_rows.append(cw[c])
        if moved:
            mv = np.asarray(moved)
            inside = (k.in_model_rows(cw[mv]) if k.constraints
                      else np.ones(len(mv), dtype=bool))
            if action_ok is not None:
                inside &= action_ok[mv]
            out_s, out_r = [], []
            for w, row, ok in zip(keep_slots, keep_rows, inside):
                if not ok:
                    self._end(w, "constraint")
                elif len(w.actions) >= self.depth:
                    self._end(w, "depth")
                else:
                    out_s.append(w)
                    out_r.append(row)
            return out_s, out_r
        return keep_slots, keep_rows


def _choose(weights: np.ndarray, gens: Sequence[np.random.PCG64], cp: np.ndarray,
            ca: np.ndarray) -> np.ndarray:
    """Per walk, the index of the chosen transition (-1: none may be chosen)."""
    m = len(gens)
    u = np.array([uniform(g) for g in gens])
    pick = np.full(m, -1, dtype=np.int64)
    if len(cp) == 0:
        return pick
    w = weights[ca]
    cum = np.cumsum(w)
    counts = np.bincount(cp, minlength=m)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    tot = np.bincount(cp, weights=w, minlength=m)
    base = np.where(starts > 0, cum[np.maximum(starts - 1, 0)], 0.0)
    has = (counts > 0) & (tot > 0)
    idx = np.searchsorted(cum, base + u * tot, side="right")
    last = starts + counts - 1
    idx = np.minimum(idx, last)
    # rounding can land on a zero-weight transition at the end: step back
    for r in np.flatnonzero(has):
        i = int(idx[r])
        while w[i] == 0 and i > starts[r]:
            i -= 1
        pick[r] = i if w[i] > 0 else -1
    return pick


class Simulator:
    """Random walks through a bound spec (see the module docstring).

    ``config`` says what to check (``invariants``, ``check_deadlock``; ``max_depth``,
    when set, is the walk depth instead of ``sim.depth``; ``symmetry`` applies to the
    shrinker's BFS); ``sim`` how to simulate. For example::

        result = Simulator(MySpec(), sim=SimConfig(seed=7, runs=1000)).run()

    :meth:`run` runs the walks in this process; another runner (the Spark backend's)
    runs parts of them elsewhere with :func:`run_walks` and reports the sum of the
    parts' tallies with :meth:`result`.
    """

    def __init__(self, spec: Spec, config: CheckConfig | None = None,
                 sim: SimConfig | None = None, *, library: Library | None = library_lookup,
                 progress: Callable[[SimProgress], None] | None = None,
                 progress_interval: float = 3.0) -> None:
        self.spec = spec
        self.config = config or CheckConfig()
        self.sim = sim or SimConfig()
        if self.config.max_depth is not None:
            self.sim = _replace(self.sim, depth=self.config.max_depth)
        self.library = library
        #: the initial-state properties (checked on the initial states before the walks)
        self.config, self.initial = split_initial(spec, self.config)
        # the safety checks go into the kernel; the temporal properties into the walk check
        safety, temporal = split_checks(spec, self.config, library)
        self.temporal: list[TemporalDecl] = temporal
        #: the checker of the temporal properties on walks (None: none, or refused)
        self.live, self.live_refused = WalkLiveness.of(spec, temporal)
        #: the invariants and action properties checked (``config.invariants`` less the
        #: temporal properties)
        self.safety_names: tuple[str, ...] | None = safety.invariants
        # walks are of whole states (a view, as TLC's -simulate, changes nothing: the
        # states a walk visits, its lassos and the distinct states counted are states)
        self.kernel: Kernel = build_kernel(spec, safety.replace(symmetry=False, view=False),
                                           library)
        self.progress = progress
        self.progress_interval = progress_interval
        self.weights = self._weights()

    def _weights(self) -> np.ndarray:
        names = {a.name for a in self.kernel.actions}
        given = dict(self.sim.weights)
        unknown = sorted(set(given) - names)
        if unknown:
            raise UsageError(f"--weights: no action {', '.join(unknown)} in spec "
                             f"{self.spec.name} (its actions: {', '.join(sorted(names))}).")
        return np.array([float(given.get(a.name, 1.0)) for a in self.kernel.actions])

    def seen_limit(self) -> int | None:
        """Bytes the set of visited states may take (``config.memory_limit``)."""
        limit = self.config.memory_limit
        return default_memory_limit() if limit == "auto" else limit

    # ------------------------------------------------------------------ run
    def initial_violation(self) -> Result | None:
        """The violation of an initial-state property by an initial state, checked
        before the walks (:func:`~modelcheck.initial.check_initial`), if any."""
        return check_initial(self.spec, self.config, self.initial,
                             list(self.kernel.invariants))

    def run(self) -> Result:
        """Run walks ``0, 1, ...`` of the seed here; Ctrl-C stops with the walks so far."""
        found = self.initial_violation()
        if found is not None:
            return found
        cfg = self.sim
        with Interrupts() as stop:
            t0 = time.perf_counter()
            tally = run_walks(self.kernel, WalkSet(cfg.seed, 0, 1, cfg.runs),
                              weights=self.weights, depth=cfg.depth,
                              walks_per_batch=cfg.walks_per_batch,
                              time_limit=cfg.time_limit, stop=lambda: stop.requested,
                              progress=self.progress,
                              progress_interval=self.progress_interval,
                              seen_limit=self.seen_limit(), live=self.live)
            return self.result(tally, time.perf_counter() - t0)

    # ------------------------------------------------------------ result
    def result(self, tally: WalkTally, seconds: float, *, backend: str = "simulate",
               info: Mapping[str, Any] | None = None) -> Result:
        """The result of a run that counted ``tally`` in ``seconds`` (the rates' time):
        its violation, if any, shrunk (unless ``sim.shrink`` is off) and replayed into a
        trace (a temporal property's lasso as found); ``info`` adds to the
        ``simulation`` object. The walks were checked with :attr:`live` (every runner
        passes it to :func:`run_walks`)."""
        k, cfg = self.kernel, self.sim
        res = new_result(k, self.config, backend=backend)
        violation: Violation | None = None
        status, reason, message = Status.OK, None, None
        checked, liveness = dict(res.checked), dict(res.liveness)
        out: dict[str, Any] = {
            **cfg.to_json(), **(info or {}), "walks": tally.walks, "steps": tally.steps,
            "walks_per_second": round(tally.walks / seconds, 1) if seconds > 0 else 0.0,
            "steps_per_second": round(tally.steps / seconds, 1) if seconds > 0 else 0.0,
            "walk_ends": dict(tally.ends), "distinct_capped": tally.distinct_capped,
            "stopped_by": tally.stopped or ("violation" if tally.found else "runs"),
        }
        live = self.live
        unchecked = [] if live is not None else [p.name for p in self.temporal]
        out["not_checked"] = unchecked
        warnings: list[str] = []
        if unchecked:
            why = self.live_refused or "not checked"
            warnings.append(f"temporal properties NOT checked: {', '.join(unchecked)} "
                            f"({why}; run `modelcheck check` for liveness).")
            liveness = {
                "properties": {n: "not checked" for n in unchecked},
                "formulas": {p.name: p.formula for p in self.temporal},
                "reason": why}
        elif live is not None:
            checked["temporal"] = [p.name for p in self.temporal]
            bad = set() if tally.found is None or tally.found.lasso is None else \
                {tally.found.target.name, *tally.found.also}
            liveness = {
                "properties": {p.name: "violated" if p.name in bad else
                               "no counterexample in the walks" for p in self.temporal},
                **live.checked_as}
        cut = tally.ends.get("weight 0", 0)
        if cut:
            warnings.append(
                f"{cut:,} of {tally.walks:,} walks stopped at a state whose enabled actions "
                "all weigh 0 (--weights): the states beyond it were not explored.")
        out["warnings"] = warnings
        if tally.found is not None:
            f = tally.found
            init_cells = k.layout.unpack(_initial_words(k)[f.init])
            found_len = len(f.actions) + 1
            rep: ShrinkReport | None = None
            steps: tuple[TraceStep, ...]
            if f.lasso is not None:  # a lasso: shown as found (the checker's form)
                steps = f.lasso.trace
            elif cfg.shrink:
                steps, rep = shrink(self.spec, k, f.target, init_cells, f.actions,
                                    config=self.config, library=self.library,
                                    bfs_states=cfg.shrink_states)
            else:
                steps = _trace(k, init_cells, f.actions)
            violation = f.lasso or Violation(f.target.name, f.target.kind, steps,
                                             _also(k, f, steps))
            status = (Status.DEADLOCK if f.target.kind is ViolationKind.DEADLOCK
                      else Status.VIOLATION)
            out.update({"violation_walk": f.walk, "found_length": found_len,
                        "shrunk_length": len(steps),
                        "shrinking": None if rep is None else rep.to_json()})
        elif tally.stopped == "interrupted":
            status, reason = Status.INCOMPLETE, "interrupted"
            message = (f"Interrupted after {tally.walks:,} walks{_cut_note(tally)} "
                       f"({tally.steps:,} steps); no violation in them.")
        elif tally.stopped == "time":
            limit = f"the time limit (--time {cfg.time_limit:g} s)" \
                if cfg.time_limit is not None else "the time limit"
            if tally.steps == 0:
                status, reason = Status.INCOMPLETE, "time"
                message = (f"Stopped at {limit} before any walk took a step: nothing "
                           "past the initial states was checked; give more time.")
            else:
                message = (f"Stopped at {limit} after {tally.walks:,} walks"
                           f"{_cut_note(tally)} ({tally.steps:,} steps); no violation "
                           "in them.")
        elif tally.steps == 0 and cut:
            status, reason = Status.INCOMPLETE, "weights"
            message = (f"No walk took a step: in the initial states of the {cut:,} "
                       "walks, every enabled action weighs 0 (--weights); nothing "
                       "past them was checked.")
        return complete_result(res, k, violation=violation, distinct=tally.distinct,
                               generated=tally.generated, depth=tally.longest,
                               seconds=seconds, fired=tally.fired,
                               new_by_action=tally.new_by_action, status=status,
                               reason=reason, message=message, symmetry=[],
                               checked=checked, liveness=liveness, simulation=out)


def _cut_note(tally: WalkTally) -> str:
    """``, N of them cut short ...`` for the walks a stop cut (or nothing)."""
    n = tally.ends.get("cut", 0)
    if not n:
        return ""
    return f", {n:,} of them cut short by the stop (the steps they took are counted)"


def _replace(sim: SimConfig, **changes: Any) -> SimConfig:
    from dataclasses import replace

    return replace(sim, **changes)


def _note(bad: dict[int, tuple[int, list[str]]], row: int, child: int, name: str) -> None:
    cur = bad.get(row)
    if cur is None or child < cur[0]:
        bad[row] = (child, [name])
    elif child == cur[0]:
        cur[1].append(name)


def _child_index(cp: np.ndarray, ca: np.ndarray, row: int, action: int) -> int:
    lo = int(np.searchsorted(cp, row, side="left"))
    hi = int(np.searchsorted(cp, row, side="right"))
    return lo + int(np.flatnonzero(ca[lo:hi] == action)[0])


def _trace(k: Kernel, init: Sequence[int], actions: Sequence[int]) -> tuple[TraceStep, ...]:
    cur = list(init)
    steps = [TraceStep(None, {}, k.layout.values_from_cells(cur))]
    for a in actions:
        inst = k.actions[a]
        nxt = k.step(cur, inst)
        assert nxt is not None, "a walk's step is not enabled on replay (engine bug)"
        cur = nxt
        steps.append(TraceStep(inst.name, dict(inst.params), k.layout.values_from_cells(cur)))
    return tuple(steps)


def _also(k: Kernel, f: Found, steps: tuple[TraceStep, ...]) -> tuple[str, ...]:
    """The other properties the last state (or step) of the reported trace violates."""
    last = k.layout.cells_from_values(steps[-1].state)
    names = [p.name for p in k.check_invariants(last)]
    if len(steps) > 1:
        prev = k.layout.cells_from_values(steps[-2].state)
        names += [p.name for p in k.check_properties(prev, last)]
    return tuple(sorted(set(names) - {f.target.name}))


def simulate(spec: Spec, config: CheckConfig | None = None, *,
             library: Library | None = library_lookup,
             progress: Callable[[SimProgress], None] | None = None,
             **options: Any) -> Result:
    """Simulate a bound spec: ``Simulator(spec, config, SimConfig(...)).run()``.

    Keyword ``options`` are fields of :class:`SimConfig` (``seed``, ``runs``, ...; with
    ``runs`` and no ``time_limit``, no time limit) or of
    :class:`~modelcheck.config.CheckConfig` (``invariants``, ``check_deadlock``, ...).

    For example::

        >>> from modelcheck.simulate import simulate
        >>> from modelcheck import Spec, Int, action
        >>> class Up(Spec):
        ...     x = Int(0, 3)
        ...     check_deadlock = False
        ...     @action
        ...     def Inc(self, s, t):
        ...         t.x = s.x + 1
        ...         return s.x < 3
        >>> r = simulate(Up(), seed=1, runs=5)
        >>> r.status, r.simulation["steps"], r.distinct_states
        ('ok', 15, 4)
    """
    sim_fields = set(SimConfig.__dataclass_fields__)
    check_opts = {k: v for k, v in options.items() if k not in sim_fields}
    sim_opts = {k: v for k, v in options.items() if k in sim_fields}
    cfg = CheckConfig.of(config, check_opts, "simulate")
    return Simulator(spec, cfg, SimConfig(**_sim_options(sim_opts)), library=library,
                     progress=progress).run()


def _sim_options(options: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(options)
    if isinstance(out.get("weights"), Mapping):
        out["weights"] = tuple(sorted(out["weights"].items()))
    if "runs" in out and "time_limit" not in out:
        out["time_limit"] = None
    return out
