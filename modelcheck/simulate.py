"""Random simulation: seeded random walks through the batch kernel (TLC's ``-simulate``).

:class:`Simulator` runs random walks from the initial states and checks, at every
step, what the exhaustive checker checks: the invariants on every successor of the
walk's current state (TLC checks those of the successors it generates), the action
properties on every enabled transition, deadlocks, and the state constraints. Many
walks advance together: each step of a batch of walks is one
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
at a state outside the state constraints (the state is in the walk and its
invariants are checked, as TLC's), at a state without enabled actions (a deadlock
when deadlock checking is on, as TLC's), or at the depth bound. TLC picks an action
uniformly, then one of its successors; we pick uniformly among *all* enabled
transitions, each weighted by its action's weight (default 1; weight 0 never
picks an action, and a walk whose enabled actions all weigh 0 stops). TLC checks
the successors of the action it picked; we check every successor. Symmetry
reduction is never applied to walks (it is to the bounded BFS of shrinking).

Counts of a run: ``walks`` finished, ``steps`` taken, ``generated`` transitions
(enabled, checked), ``distinct_states`` visited by the walks. A run that finds a
violation counts every walk it started; which were started depends on
``walks_per_batch``; the violation and its trace do not.
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
from .interrupt import Interrupts
from .kernel import Kernel
from .library import Library
from .library import lookup as library_lookup
from .result import Result, TraceStep, Violation
from .shrink import ShrinkReport, Target, shrink
from .spec import Spec
from .store import FingerprintSet

__all__ = ["SimConfig", "Simulator", "SimProgress", "simulate", "walk_generator",
           "uniform"]


@dataclass(frozen=True)
class SimConfig:
    """How to simulate (what to check is the :class:`~modelcheck.config.CheckConfig`)."""

    #: the run's seed: the same seed gives the same walks everywhere
    seed: int = 0
    #: walks to run (``None``: until ``time_limit``)
    runs: int | None = None
    #: steps per walk at most (TLC's ``-depth`` minus one)
    depth: int = 100
    #: seconds to run at most (``None``: until ``runs``); walks started before it run on
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


@dataclass
class _Walk:
    index: int
    gen: np.random.PCG64
    init: int
    actions: list[int] = field(default_factory=list)


@dataclass
class _Found:
    """A violation found by walk ``walk``: the walk's actions (the last one may be the
    violating transition) from initial state ``init``."""

    walk: int
    target: Target
    init: int
    actions: list[int]
    also: tuple[str, ...] = ()


class Simulator:
    """Random walks through a bound spec (see the module docstring).

    ``config`` says what to check (``invariants``, ``check_deadlock``; ``max_depth``,
    when set, is the walk depth instead of ``sim.depth``; ``symmetry`` applies to the
    shrinker's BFS); ``sim`` how to simulate. For example::

        result = Simulator(MySpec(), sim=SimConfig(seed=7, runs=1000)).run()
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
        self.kernel: Kernel = build_kernel(spec, self.config.replace(symmetry=False), library)
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

    # ------------------------------------------------------------------ run
    def run(self) -> Result:
        with Interrupts() as stop:
            return _Run(self, stop).run()


class _Run:
    def __init__(self, sim: Simulator, stop: Interrupts) -> None:
        self.s, self.stop = sim, stop
        self.k = sim.kernel
        self.cfg = sim.sim
        self.layout = self.k.layout
        words, fps = self.k.initial_words()
        order = np.argsort(fps, kind="stable")
        self.init_words, self.init_fps = words[order], fps[order]
        self.init_in = (self.k.in_model_rows(self.init_words) if self.k.constraints
                        else np.ones(len(order), dtype=bool))
        ex = self.k.expand(self.init_words, expand=False)
        self.init_bad: dict[int, list[int]] = {}
        for j, rows in enumerate(ex.invariant_rows):
            for r in rows:
                self.init_bad.setdefault(int(r), []).append(j)
        n_act = len(self.k.actions)
        self.fired = np.zeros(n_act, dtype=np.int64)
        self.new_by_action = np.zeros(n_act, dtype=np.int64)
        self.seen = FingerprintSet()
        self.walks = 0
        self.steps = 0
        self.generated = 0
        self.longest = 0
        self.ends = {"depth": 0, "terminal": 0, "constraint": 0, "violation": 0}
        self.found: _Found | None = None
        self.next_walk = 0
        self.stopped: str | None = None
        limit = sim.config.memory_limit
        self.seen_limit = default_memory_limit() if limit == "auto" else limit
        self.seen_capped = False

    # ------------------------------------------------------------ walks
    def _may_start(self) -> bool:
        if self.stopped is not None:
            return False
        if self.cfg.runs is not None and self.next_walk >= self.cfg.runs:
            return False
        return self.found is None or self.next_walk < self.found.walk

    def _start(self) -> tuple[_Walk, np.ndarray] | None:
        """Start the next walk; None if it ended at once (counted)."""
        i = self.next_walk
        self.next_walk += 1
        gen = walk_generator(self.cfg.seed, i)
        init = int(uniform(gen) * len(self.init_fps))
        w = _Walk(i, gen, init)
        self._see(self.init_fps[init:init + 1], np.full(1, -1))
        bad = self.init_bad.get(init)
        if bad:
            names = [self.k.invariants[j].name for j in bad]
            self._violation(_Found(i, Target(names[0], "invariant"), init, [],
                                   tuple(names[1:])))
            return None
        if not self.init_in[init] or self.cfg.depth == 0:
            self._end(w, "constraint" if not self.init_in[init] else "depth")
            return None
        return w, self.init_words[init]

    def _end(self, w: _Walk, why: str) -> None:
        self.walks += 1
        self.ends[why] += 1
        self.longest = max(self.longest, len(w.actions))

    def _violation(self, f: _Found) -> None:
        self.walks += 1
        self.ends["violation"] += 1
        self.longest = max(self.longest, len(f.actions))
        if self.found is None or f.walk < self.found.walk:
            self.found = f

    def _see(self, fps: np.ndarray, actions: np.ndarray) -> None:
        u, first = np.unique(fps, return_index=True)
        fresh = ~self.seen.contains(u)
        if fresh.any() and self.seen_limit is not None and \
                self.seen.nbytes + self.seen.growth(int(fresh.sum())) > self.seen_limit:
            self.seen_capped = True  # count no more: distinct_states is a lower bound
            return
        if fresh.any():
            self.seen.add_sorted(u[fresh])
            acts = actions[first[fresh]]
            acts = acts[acts >= 0]
            if len(acts):
                self.new_by_action += np.bincount(acts, minlength=len(self.new_by_action))

    # ------------------------------------------------------------ the loop
    def run(self) -> Result:
        t0 = time.perf_counter()
        last = t0
        width = self.cfg.walks_per_batch
        slots: list[_Walk] = []
        rows: list[np.ndarray] = []
        try:
            while True:
                now = time.perf_counter()
                if self.stop.requested:
                    self.stopped = "interrupted"
                    break
                if (self.stopped is None and self.cfg.time_limit is not None
                        and now - t0 >= self.cfg.time_limit):
                    self.stopped = "time"
                if self.found is not None:  # walks after the violating one are moot
                    keep = [j for j, w in enumerate(slots) if w.index < self.found.walk]
                    slots = [slots[j] for j in keep]
                    rows = [rows[j] for j in keep]
                while len(slots) < width and self._may_start():
                    started = self._start()
                    if started is not None:
                        slots.append(started[0])
                        rows.append(started[1])
                if not slots:
                    break
                slots, rows = self._step(slots, np.stack(rows))
                if self.s.progress is not None and now - last >= self.s.progress_interval:
                    last = now
                    self.s.progress(SimProgress(self.walks, self.steps, len(self.seen),
                                                now - t0, self.fired.copy()))
        except KeyboardInterrupt:  # a second Ctrl-C
            self.stopped = "interrupted"
        return self._result(time.perf_counter() - t0)

    def _step(self, slots: list[_Walk], words: np.ndarray
              ) -> tuple[list[_Walk], list[np.ndarray]]:
        """Advance every walk of the batch by one step."""
        k = self.k
        ex = k.expand(words, constrain=False)
        self.fired += ex.fired
        self.generated += ex.generated
        order = np.argsort(ex.parent_rows, kind="stable")  # by walk, then action
        cw, cf = ex.child_words[order], ex.child_fps[order]
        cp, ca = ex.parent_rows[order], ex.action_ids[order].astype(np.int64)
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
        pick = self._choose(slots, cp, ca)
        keep_slots: list[_Walk] = []
        keep_rows: list[np.ndarray] = []
        moved: list[int] = []
        for r, w in enumerate(slots):
            if r in bad:
                c, props = bad[r]
                kind = "invariant" if props[0] in {p.name for p in k.invariants} else "action"
                also = tuple(dict.fromkeys(props[1:]))
                self.steps += 1
                self._violation(_Found(w.index, Target(props[0], kind), w.init,
                                       [*w.actions, int(ca[c])], also))
                continue
            if r in dead:
                self._violation(_Found(w.index, Target("Deadlock", "deadlock"), w.init,
                                       list(w.actions)))
                continue
            c = pick[r]
            if c < 0:
                self._end(w, "terminal")
                continue
            moved.append(c)
            w.actions.append(int(ca[c]))
            self.steps += 1
            keep_slots.append(w)
            keep_rows.append(cw[c])
        if moved:
            mv = np.asarray(moved)
            self._see(cf[mv], ca[mv])
            inside = (k.in_model_rows(cw[mv]) if k.constraints
                      else np.ones(len(mv), dtype=bool))
            out_s, out_r = [], []
            for w, row, ok in zip(keep_slots, keep_rows, inside):
                if not ok:
                    self._end(w, "constraint")
                elif len(w.actions) >= self.cfg.depth:
                    self._end(w, "depth")
                else:
                    out_s.append(w)
                    out_r.append(row)
            return out_s, out_r
        return keep_slots, keep_rows

    def _choose(self, slots: list[_Walk], cp: np.ndarray, ca: np.ndarray) -> np.ndarray:
        """Per walk, the index of the chosen transition (-1: none may be chosen)."""
        m = len(slots)
        u = np.array([uniform(w.gen) for w in slots])
        pick = np.full(m, -1, dtype=np.int64)
        if len(cp) == 0:
            return pick
        w = self.s.weights[ca]
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

    # ------------------------------------------------------------ result
    def _result(self, seconds: float) -> Result:
        k, cfg = self.k, self.cfg
        res = new_result(k, self.s.config, backend="simulate")
        res.symmetry = []
        violation: Violation | None = None
        info: dict[str, Any] = {
            **cfg.to_json(), "walks": self.walks, "steps": self.steps,
            "walks_per_second": round(self.walks / seconds, 1) if seconds > 0 else 0.0,
            "steps_per_second": round(self.steps / seconds, 1) if seconds > 0 else 0.0,
            "walk_ends": dict(self.ends), "distinct_capped": self.seen_capped,
            "stopped_by": self.stopped or ("violation" if self.found else "runs"),
        }
        if self.found is not None:
            f = self.found
            init_cells = self.layout.unpack(self.init_words[f.init])
            found_len = len(f.actions) + 1
            rep: ShrinkReport | None = None
            steps: tuple[TraceStep, ...]
            if cfg.shrink:
                steps, rep = shrink(self.s.spec, k, f.target, init_cells, f.actions,
                                    config=self.s.config, library=self.s.library,
                                    bfs_states=cfg.shrink_states)
            else:
                steps = _trace(k, init_cells, f.actions)
            also = _also(k, f, steps)
            violation = Violation(f.target.name, f.target.kind, steps, also)
            res.status = "deadlock" if f.target.kind == "deadlock" else "violation"
            info.update({"violation_walk": f.walk, "found_length": found_len,
                         "shrunk_length": len(steps),
                         "shrinking": None if rep is None else rep.to_json()})
        elif self.stopped == "interrupted":
            res.status, res.reason = "incomplete", "interrupted"
            res.message = (f"Interrupted after {self.walks:,} walks ({self.steps:,} steps); "
                           "no violation in them.")
        complete_result(res, k, violation=violation, distinct=len(self.seen),
                        generated=self.generated, depth=self.longest, seconds=seconds,
                        fired=self.fired, new_by_action=self.new_by_action)
        res.simulation = info
        return res


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


def _also(k: Kernel, f: _Found, steps: tuple[TraceStep, ...]) -> tuple[str, ...]:
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
