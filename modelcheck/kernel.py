"""The successor kernel: one spec, two evaluators (one state, or a batch of states).

:class:`Kernel` is the only code that runs a spec's actions and predicates. The
level rule (:mod:`modelcheck.level`, which the local explorer and the Spark
backend drive), trace replay and the state-graph export all call it.

* :meth:`Kernel.successors` evaluates one state with numpy scalars: used to
  replay traces, rebuild counterexamples, pinpoint errors and expand a single
  state (:meth:`Kernel.successors_checked` adds the action properties and the
  state and action constraints).
* :meth:`Kernel.expand` evaluates a batch of packed states as numpy columns:
  invariants on the batch, every action instance's guard and assignments, action
  properties on every enabled transition, deadlocks. Successor fingerprints are
  computed incrementally from the packed parent (only assigned cells change).
  On a small batch, the instances of a large action family are evaluated in one
  call over (instances x states) (:mod:`modelcheck.family`), falling back to one
  call per instance whenever that cannot be shown to give the same results.

Both validate what the spec returns (guards must be boolean, assigned values
integers inside the declared domain) and turn any failure into a
:class:`~modelcheck.errors.SpecEvaluationError` naming the spec line, the action
with its parameters and the offending state.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np

from . import codec
from .errors import SpecDefinitionError, SpecEvaluationError, source_location, user_frame_location
from .expr import Functions, InitProduct, _Both
from .family import (
    Decoder,
    FamilyState,
    Leaf,
    Scatter,
    call_family,
    grid_mask,
    grid_values,
    param_column,
)
from .layout import Layout, add_terms, hash_parts, words_of_keys
from .spec import ActionDecl, ActionInstance, PredicateDecl, RoleKind, Spec
from .store import concat_clear, empty_keys, key_int, take_rows
from .symmetry import Symmetry
from .types.sets import SetValue
from .undefined import bool_hint, collect_undefined
from .views import Branch, Narrow, NextView, StateView

__all__ = ["Kernel", "Checks", "Expansion", "format_state"]

_U64 = np.uint64


@dataclass
class Expansion:
    """What :meth:`Kernel.expand` found for one batch of ``n`` states."""

    n: int
    #: per checked invariant (by position), rows of the batch that violate it
    invariant_rows: list[np.ndarray]
    #: successors: packed words ``(m, k)``, gathered when asked (none when expanded
    #: ``keys_only``; :attr:`child_words` are all of them), fingerprints, parent row
    #: (``int32``), action instance id (``int32``)
    successors: SuccessorWords
    child_fps: np.ndarray
    parent_rows: np.ndarray
    action_ids: np.ndarray
    #: number of enabled transitions per action instance
    fired: np.ndarray
    #: rows with no enabled action (only when deadlock checking is on)
    deadlock_rows: np.ndarray
    #: per checked action property: (parent rows, action ids, child fingerprints) violating it
    property_hits: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)
    #: per checked invariant: transitions (parent rows, action ids, child fingerprints)
    #: into successors outside the state constraints that violate it (TLC checks the
    #: invariants on such successors, but never stores or expands them)
    outside_hits: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)
    #: enabled transitions into successors outside the state constraints, or that
    #: violate an action constraint (not in ``child_*``)
    outside: int = 0
    #: with ``constrain=False`` and action constraints: per successor of ``child_*``,
    #: whether its transition satisfies every action constraint (else None)
    action_ok: np.ndarray | None = None
    #: per observed state predicate (:attr:`Checks.labels`), rows of the batch where
    #: it is false (never a violation: an observer of the run records them)
    label_rows: list[np.ndarray] = field(default_factory=list)
    #: per observed step predicate (:attr:`Checks.step_labels`): the transitions of
    #: ``child_*`` and those outside the model (parent rows, action ids, child
    #: fingerprints) where it is false, as ``property_hits`` (never a violation)
    step_label_hits: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(
        default_factory=list)

    @property
    def generated(self) -> int:
        return int(self.fired.sum())

    @property
    def child_words(self) -> np.ndarray:
        """The successors' packed words ``(m, k)`` (all of them: :attr:`successors`
        gathers the rows asked for)."""
        return self.successors.all()


class SuccessorWords:
    """The packed words ``(m, k)`` of a batch's successors, gathered when asked: a
    consumer that keeps some of them (the level rule keeps the first successor of each
    key) takes those rows (:meth:`take`) and never builds the others."""

    def __len__(self) -> int:
        raise NotImplementedError

    def take(self, rows: np.ndarray) -> np.ndarray:
        """The words of successors ``rows`` (an index array), ``(len(rows), k)``."""
        raise NotImplementedError

    def all(self) -> np.ndarray:
        """The words of every successor, ``(m, k)``."""
        raise NotImplementedError


class _Dense(SuccessorWords):
    """Successors' words held as one array."""

    def __init__(self, words: np.ndarray) -> None:
        self.words = words

    def __len__(self) -> int:
        return len(self.words)

    def take(self, rows: np.ndarray) -> np.ndarray:
        return take_rows(self.words, rows)

    def all(self) -> np.ndarray:
        return self.words


class _KeyWords(SuccessorWords):
    """Successors' words held as their exact keys of one or two columns (a bijection of
    the words, :func:`~modelcheck.layout.words_of_keys`)."""

    def __init__(self, keys: np.ndarray) -> None:
        self.keys = keys
        self._all: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.keys)

    def take(self, rows: np.ndarray) -> np.ndarray:
        if self._all is not None:
            return take_rows(self._all, rows)
        return words_of_keys(take_rows(self.keys, rows))

    def all(self) -> np.ndarray:
        if self._all is None:
            # (one column: a copy, not a view of the keys)
            w = words_of_keys(self.keys)
            self._all = w.copy() if self.keys.ndim == 1 else w
        return self._all


class _Changed(SuccessorWords):
    """Successors as their parents' rows and the words their actions changed: run ``r``
    (successors ``starts[r]`` up to the next run's start) changed the words
    ``groups[g].words`` (``g = run_group[r]``), whose new values are the columns of
    ``groups[g].cols`` from ``run_offset[r]``. A row's words are its parent's with those
    columns written in: built for the rows asked for only, in one gather."""

    def __init__(self, parent_words: np.ndarray, parents: np.ndarray,
                 groups: list[_ChangedGroup], starts: np.ndarray, run_group: np.ndarray,
                 run_offset: np.ndarray) -> None:
        self.parent_words = parent_words
        self.parents = parents
        self.groups = groups
        self.starts = starts
        self.run_group = run_group
        self.run_offset = run_offset
        self._all: np.ndarray | None = None

    @classmethod
    def of(cls, parent_words: np.ndarray, parents: np.ndarray, cols: list[np.ndarray],
           runs: Sequence[tuple[int, int, tuple[int, ...] | None]]) -> _Changed:
        """From the runs of an accumulated batch (``runs[i]``: successors ``start:end``
        changed the words ``words``, whose new values are ``cols[i]``, ``(len(words),
        end - start)``); ``cols`` is emptied (each piece let go once copied)."""
        index: dict[tuple[int, ...], int] = {}
        run_group = np.empty(len(runs), dtype=np.int64)
        run_offset = np.empty(len(runs), dtype=np.int64)
        sizes: list[int] = []
        members: list[list[int]] = []
        for r, (lo, hi, words) in enumerate(runs):
            assert words is not None
            g = index.setdefault(words, len(index))
            if g == len(sizes):
                sizes.append(0)
                members.append([])
            run_group[r] = g
            run_offset[r] = sizes[g]
            sizes[g] += hi - lo
            members[g].append(r)
        groups = []
        for words, g in index.items():
            rs = members[g]
            if len(rs) == 1:
                c = cols[rs[0]]
            else:
                c = np.empty((len(words), sizes[g]), dtype=_U64)
                for r in rs:
                    at = int(run_offset[r])
                    c[:, at:at + runs[r][1] - runs[r][0]] = cols[r]
            idx = None if len(index) == 1 else np.concatenate(
                [np.arange(runs[r][0], runs[r][1]) for r in rs])
            groups.append(_ChangedGroup(words, c, idx))
        cols.clear()
        starts = np.array([lo for lo, _hi, _w in runs], dtype=np.int64)
        return cls(parent_words, parents, groups, starts, run_group, run_offset)

    def __len__(self) -> int:
        return len(self.parents)

    def take(self, rows: np.ndarray) -> np.ndarray:
        if self._all is not None:
            return take_rows(self._all, rows)
        out = take_rows(self.parent_words, np.take(self.parents, rows))
        if len(self.groups) == 1:
            g = self.groups[0]
            for j, w in enumerate(g.words):
                out[:, w] = np.take(g.cols[j], rows)
            return out
        run = np.searchsorted(self.starts, rows, side="right") - 1
        gid = self.run_group[run]
        pos = self.run_offset[run]
        pos += rows
        pos -= self.starts[run]
        for gi, g in enumerate(self.groups):
            if not g.words:
                continue
            sel = np.flatnonzero(gid == gi)
            if not len(sel):
                continue
            p = pos[sel]
            for j, w in enumerate(g.words):
                out[sel, w] = np.take(g.cols[j], p)
        return out

    def all(self) -> np.ndarray:
        if self._all is None:
            out = take_rows(self.parent_words, self.parents)
            for g in self.groups:
                for j, w in enumerate(g.words):
                    if g.idx is None:
                        out[:, w] = g.cols[j]
                    else:
                        out[g.idx, w] = g.cols[j]
            self._all = out
        return self._all


@dataclass
class _ChangedGroup:
    """The successors of a batch that changed the words ``words``: their new values
    ``cols`` ``(len(words), count)`` and their rows among the batch's successors
    (``idx``; None: all of them, in order)."""

    words: tuple[int, ...]
    cols: np.ndarray
    idx: np.ndarray | None


@dataclass(frozen=True)
class Checks:
    """What a kernel evaluates, apart from how it runs the spec: the invariants and
    action properties it checks (their violations are the level rule's), whether it
    reports deadlocks, and the predicates it only *observes*: ``labels`` (state
    predicates, evaluated on every state; where false is reported in
    :attr:`Expansion.label_rows`) and ``step_labels`` (step predicates, evaluated on
    every transition as action properties are; :attr:`Expansion.step_label_hits`).
    A label is never a violation: an observer of the run (liveness, which labels the
    state graph with the parts of the temporal properties) records it."""

    invariants: tuple[PredicateDecl, ...] = ()
    properties: tuple[PredicateDecl, ...] = ()
    check_deadlock: bool | None = None  # None: the spec's
    labels: tuple[PredicateDecl, ...] = ()
    step_labels: tuple[PredicateDecl, ...] = ()

    def observing(self, labels: Sequence[PredicateDecl],
                  step_labels: Sequence[PredicateDecl]) -> Checks:
        """These checks, also observing ``labels`` and ``step_labels``."""
        return replace(self, labels=(*self.labels, *labels),
                       step_labels=(*self.step_labels, *step_labels))


class Kernel:
    """Evaluates a bound spec's actions, invariants and action properties.

    What it evaluates is ``checks`` (:class:`Checks`); without it, the keyword
    arguments ``invariants`` (default: the spec's), ``properties`` (default: the
    spec's) and ``check_deadlock`` (default: the spec's) say it, with no labels. How
    it runs the spec is the rest: symmetry reduction, the spec's view (``view=False``
    fingerprints whole states even if the spec declares one), the family evaluator's
    sizes."""

    def __init__(
        self,
        spec: Spec,
        *,
        invariants: Sequence[PredicateDecl] | None = None,
        properties: Sequence[PredicateDecl] | None = None,
        check_deadlock: bool | None = None,
        symmetry: bool = True,
        view: bool = True,
        family_rows: int = 1 << 15,
        family_min: int = 8,
        narrow_min: int = 1024,
        checks: Checks | None = None,
    ) -> None:
        if checks is None:
            checks = Checks(tuple(spec.invariants if invariants is None else invariants),
                            tuple(spec.properties if properties is None else properties),
                            check_deadlock)
        else:
            assert invariants is None and properties is None and check_deadlock is None, \
                "say what to check either with checks or with the keywords"
        self.checks = checks
        self.spec = spec
        self.layout: Layout = spec.layout
        self.actions: tuple[ActionInstance, ...] = spec.actions
        self.invariants = checks.invariants
        self.properties = checks.properties
        self.labels = checks.labels
        self.step_labels = checks.step_labels
        #: evaluated on every state: the invariants, then the labels
        self._state_preds = (*self.invariants, *self.labels)
        #: evaluated on every transition: the action properties, then the step labels
        self._step_preds = (*self.properties, *self.step_labels)
        self.constraints = tuple(spec.constraints)
        self.action_constraints = tuple(spec.action_constraints)
        self.check_deadlock = (spec.check_deadlock if checks.check_deadlock is None
                               else checks.check_deadlock)
        self._bool_cells = self.layout.bool_cells
        sets = spec.symmetry_sets() if symmetry else {}
        #: the variables of the spec's view (TLA+'s ``VIEW``) when it applies: a state's
        #: fingerprint is then its view's, and of several states with one view the
        #: explorers keep the first reached (the smallest parent, then action)
        self.view: tuple[str, ...] | None = spec.view if view and spec.view else None
        #: how states are keyed (:mod:`modelcheck.store`): ``exact`` (the packed state,
        #: or its view's, one or two words) or ``hash128`` (wider states, or views);
        #: under a view sized by the view's own packing, not the state's
        self.key_kind = self.layout.fingerprint_kind
        #: the keys' ``uint64`` columns
        self.key_width = self.layout.key_width
        #: under a view, the keys of packed states (their views')
        self._view_keys: Callable[[np.ndarray], np.ndarray] | None = None
        if self.view is not None:
            self.key_kind, self.key_width, self._view_keys = \
                self.layout.view_keys(self.view)
        self.fingerprints: Callable[[np.ndarray], np.ndarray] = self.layout.fingerprints
        #: the keys are the packed states (the frontier needs no words of its own); not
        #: under a view, whose keys are those of the states' views
        self.exact = self.key_kind == "exact" and self.view is None
        self.symmetry: Symmetry | None = \
            Symmetry(self.layout, sets, self.fingerprints) if sets else None
        #: the keys of a batch's successors of three words or more are computed once,
        #: from all of them, after every action has run, when they are the states' own
        #: (no view, no symmetry reduction) and no step predicate reads them on the way
        #: (a few numpy calls a batch instead of per action instance); until then, and
        #: until the caller keeps some, a successor is its parent's row and the words
        #: its action changed (:class:`_Changed`). Keys of one or two words are
        #: stepped per action from their parents' (:attr:`linear`)
        self.deferred = (self.layout.n_words >= 3 and self.view is None
                         and self.symmetry is None and not self._step_preds)
        #: (so hashed: the keys from their parents', :class:`_HashParts`)
        self.incremental = self.deferred and self.key_kind == "hash128"
        #: exact keys of one or two words that are the states' own (no symmetry
        #: reduction) are linear in the cells' values (:meth:`Layout.key_steps`): a
        #: successor's key is its parent's plus each changed cell's difference times
        #: its step, so no action gathers its parents' words or keys its successors
        #: from them, and the successors' words are those of their keys when asked
        #: (:class:`_KeyWords`)
        self.linear = self.exact and self.symmetry is None
        self._key_steps = self.layout.key_steps() if self.layout.exact else None
        #: the instances of an action family are evaluated in one call over up to
        #: ``family_rows`` (instance, state) pairs, when that covers ``family_min``
        #: instances or more (a call over the grid costs a few per-instance calls);
        #: ``family_rows=0`` turns it off. Speed only: the results are the same.
        self.family_rows = family_rows
        self.family_min = family_min
        #: on batches of at least this many states, an action whose guard
        #: (:meth:`NextView.none_enabled`) holds in at most half of them is evaluated
        #: again on those alone. Speed only: the results are the same.
        self.narrow_min = narrow_min
        #: when a batch raises, the states of it evaluated one at a time to name the
        #: one that raises (at most; 0: the batch's error as it is, as the level
        #: engine asks while it locates the first raising state itself)
        self.scalar_locate_rows = 4096
        self._families = _families(self.actions)
        self._family_failed: set[int] = set()
        #: per action instance with ``MemberOf`` parameters: the (variable, chunk, bit)
        #: of each parameter's element in its set variable, or None where that is not a
        #: set of one-bit members (a bag, a value outside the element type)
        self._member_plans: dict[int, list[tuple[str, int, int]] | None] = {}
        self._leaves: dict[tuple[str, tuple[int, ...]], Leaf | None] = {}
        self._hi = self.layout.lo + self.layout.size - 1
        self._decoder = Decoder(self.layout)

    def canonical(self, words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Packed states and fingerprints, canonicalised when symmetry reduction is on;
        under a view, the states as they are and the fingerprints of their views."""
        if self._view_keys is not None:
            return words, self._view_keys(words)
        if self.symmetry is None:
            return words, self.fingerprints(words)
        return self.symmetry.canonical(words)

    def initial_words(self, *, batched: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Packed (canonical) initial states ``(n, k)`` and their fingerprints, in the
        order the spec gives them (``batched``: see :meth:`initial_packed`)."""
        return self.canonical(self.initial_packed(batched=batched))

    def initial_packed(self, *, batched: bool = True) -> np.ndarray:
        """The initial states packed ``(n, k)`` (not canonicalised), in the spec's order.

        When ``init_states`` returns an :func:`~modelcheck.expr.init_product` (and
        ``batched``), its combinations are enumerated in packed form, in chunks, and its
        ``such_that`` filter evaluated on each chunk as a batch: no dict per state.
        Otherwise (``batched=False`` forces it) each state is converted from its dict.
        Both give the same states in the same order."""
        init = self.spec.init_states()
        if batched and isinstance(init, InitProduct):
            return self._product_words(init)
        cells = np.array(self._initial_cells(init), dtype=np.int64)
        return self.layout.pack_columns(list(cells.reshape(-1, len(self.layout.cells)).T))

    # ------------------------------------------------------------------ views
    def scalar_view(self, cells: Sequence[int]) -> StateView:
        bools = self._bool_cells

        def get(i: int) -> Any:
            v = int(cells[i])
            return np.bool_(v) if i in bools else np.int64(v)

        return StateView(self.layout, get, None)

    def batch_view(self, words: np.ndarray, cols: np.ndarray | None = None) -> StateView:
        """The batch of packed states ``words`` ``(n, k)`` as a view; ``cols``: the
        words transposed ``(k, n)``, contiguous, if at hand (each cell is then decoded
        from a contiguous column, not one strided across the rows)."""
        layout, bools = self.layout, self._bool_cells
        src = words if cols is None else cols.T

        def get(i: int) -> Any:
            col = layout.decode_cell(src, i)
            return col.astype(bool) if i in bools else col

        return StateView(layout, get, len(words))

    # ------------------------------------------------------- one state (scalar)
    def initial_states(self, *, batched: bool = True) -> list[list[int]]:
        """Cell vectors of the initial states, validated against the declared domains,
        in the spec's order (``batched``: see :meth:`initial_packed`)."""
        init = self.spec.init_states()
        if batched and isinstance(init, InitProduct):
            words = self._product_words(init)
            cols = [self.layout.decode_cell(words, i) for i in range(len(self.layout.cells))]
            return np.column_stack(cols).tolist() if cols else [[] for _ in words]
        return self._initial_cells(init)

    def _initial_cells(self, init: Iterable[Mapping[str, Any]]) -> list[list[int]]:
        """The initial states ``init`` (``init_states``' value) one dict at a time."""
        out = []
        for values in self.spec.initial_values(init):
            out.append(self._cells_of(values))
        if out:
            # the domains, checked for all initial states at once
            arr = np.array(out, dtype=np.int64).reshape(len(out), -1)
            bad = np.argwhere((arr < self.layout.lo) | (arr > self._hi))
            if len(bad):
                r, i = (int(x) for x in bad[0])
                raise self._init_out_of_domain(i, int(arr[r, i]))
        if isinstance(init, InitProduct) and init.pred is not None:
            preds = self._init_filters(init.pred)
            out = [c for c in out if all(self._eval_pred_scalar(p, c, None) for p in preds)]
        if not out:
            raise self._no_initial_state()
        return out

    def _cells_of(self, values: Mapping[str, Any]) -> list[int]:
        try:
            return self.layout.cells_from_values(values)
        except (KeyError, TypeError, ValueError) as e:
            raise SpecEvaluationError(
                f"spec {self.spec.name}: an initial state is malformed ({e!r}); "
                f"give every array element a value. State: {values}"
            ) from None

    def _init_out_of_domain(self, i: int, v: int) -> SpecEvaluationError:
        c = self.layout.cells[i]
        return SpecEvaluationError(
            f"{self.layout.vars[c.var].decl}: initial value {c.name} = {v} is "
            f"outside its domain {c.lo}..{c.hi} in spec {self.spec.name}."
        )

    def _no_initial_state(self) -> SpecEvaluationError:
        return SpecEvaluationError(
            f"{source_location(type(self.spec).init_states)}: spec {self.spec.name} has no "
            "initial state: init_states() yielded nothing."
        )

    # ------------------------------------------ initial states as a packed product
    def _init_filters(self, pred: Any) -> list[PredicateDecl]:
        """``such_that``'s filter as declared predicates (evaluated as invariants are)."""
        if isinstance(pred, _Both):
            return [*self._init_filters(pred.first), *self._init_filters(pred.second)]
        if isinstance(pred, PredicateDecl):
            return [pred]
        if not callable(pred):
            raise SpecDefinitionError(
                f"{source_location(type(self.spec).init_states)}: init_product(...)"
                f".such_that takes a declared predicate (self.Inv) or a function of the "
                f"state (lambda s: ...), got {pred!r}.")
        f = pred

        def fn(spec: Spec, s: StateView) -> Any:
            return f(s)

        p = PredicateDecl(fn, RoleKind.CONSTRAINT, name=getattr(f, "__name__", "such_that"))
        fn.__wrapped__ = f  # type: ignore[attr-defined]  # errors name f's lines
        p.where = source_location(f)
        return [p]

    def _product_factors(self, init: InitProduct) -> tuple[list[int], list[np.ndarray]]:
        """The product as factors: the cells that no factor sets (their values in
        the declared initial state), and per factor, in the product's order (a
        ``functions`` choice split into one factor per domain element, first element
        first), the packed words ``(m, k)`` of its ``m`` choices on its own cells."""
        layout, lo, k = self.layout, self.layout.lo, self.layout.n_words
        base = {name: info.btype.default() for name, info in layout.vars.items()}
        unknown = [name for name in init.choices if name not in base]
        if unknown:
            raise SpecDefinitionError(
                f"{source_location(type(self.spec).init_states)}: init_states gives unknown "
                f"variable(s) {', '.join(unknown)}.")
        base_cells = self._cells_of(base)
        covered = np.zeros(len(layout.cells), dtype=bool)
        parts: list[np.ndarray] = []
        for name, choices in init.choices.items():
            info = layout.vars[name]
            var_cells = np.arange(info.first_cell, info.first_cell + info.n_cells)
            default = base[name]
            elements = _split_elements(choices, info.dims, default)
            if elements is None or not isinstance(choices, Functions):
                groups = [(var_cells, [_merged(default, v) for v in choices])]
            else:
                groups = []
                for d in elements:
                    sel = [c.index for c in layout.cells[info.first_cell:var_cells[-1] + 1]
                           if c.path[0] == d]
                    groups.append((np.array(sel, dtype=np.int64),
                                   [{**default, d: v} for v in choices.values]))
            for cols, values in groups:
                covered[cols] = True
                codes = np.array([[self._cells_of({**base, name: v})[c] for c in cols]
                                  for v in values], dtype=np.int64).reshape(len(values), -1)
                bad = np.argwhere((codes < lo[cols]) | (codes > self._hi[cols]))
                if len(bad):
                    r, j = (int(x) for x in bad[0])
                    raise self._init_out_of_domain(int(cols[j]), int(codes[r, j]))
                parts.append(self._pack_cells(cols, codes))
        rest = np.flatnonzero(~covered)
        fixed = self._pack_cells(rest, np.array([[base_cells[c] for c in rest]],
                                                dtype=np.int64).reshape(1, -1))
        assert fixed.shape == (1, k)
        return [int(c) for c in rest], [fixed, *parts]

    def _pack_cells(self, cols: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """Words ``(m, k)`` holding ``codes`` ``(m, len(cols))`` in cells ``cols`` and
        nothing in the others (so that words of disjoint cells add up)."""
        layout = self.layout
        words = np.zeros((len(codes), layout.n_words), dtype=_U64)
        with np.errstate(over="ignore"):
            for j, c in enumerate(cols):
                raw = (codes[:, j] - layout.lo[c]).astype(_U64)
                words[:, layout.word_of[c]] += raw * layout.mult[c]
        return words

    def _product_words(self, init: InitProduct, chunk: int = 1 << 17) -> np.ndarray:
        """The states of ``init`` packed, in product order, filtered chunk by chunk."""
        _, (fixed, *parts) = self._product_factors(init)
        preds = [] if init.pred is None else self._init_filters(init.pred)
        sizes = [len(p) for p in parts]
        total = 1
        for m in sizes:
            total *= m
        strides = [1] * len(sizes)
        for i in range(len(sizes) - 2, -1, -1):
            strides[i] = strides[i + 1] * sizes[i + 1]
        out = []
        with np.errstate(over="ignore"):
            for a in range(0, total, chunk):
                rows = np.arange(a, min(total, a + chunk), dtype=np.int64)
                words = np.repeat(fixed, len(rows), axis=0)
                for part, stride, m in zip(parts, strides, sizes):
                    if m == 1:
                        words += part[0]
                    else:
                        words += part[(rows // stride) % m]
                if preds:
                    words = words[self._init_keep(preds, words)]
                out.append(words)
        words = np.concatenate(out) if out else np.zeros((0, self.layout.n_words), dtype=_U64)
        if not len(words):
            raise self._no_initial_state()
        return words

    def _init_keep(self, preds: list[PredicateDecl], words: np.ndarray) -> np.ndarray:
        """Mask of the packed states where every ``such_that`` filter holds."""
        if len(words) == 1:
            return self._init_keep(preds, np.repeat(words, 2, axis=0))[:1]
        v = self.batch_view(words)
        keep = np.ones(len(words), dtype=bool)
        for p in preds:
            keep[self._pred_rows(p, v, None, words, None)] = False
        return keep

    def successors(self, cells: Sequence[int]) -> list[tuple[ActionInstance, list[int]]]:
        """Every enabled action instance of one state with its successor, in action order."""
        out = []
        for inst in self.actions:
            nxt = self.step(cells, inst)
            if nxt is not None:
                out.append((inst, nxt))
        return out

    def step(self, cells: Sequence[int], inst: ActionInstance) -> list[int] | None:
        """The successor of one state by one action instance, or None if not enabled."""
        s = self.scalar_view(cells)
        if inst.members and not bool(inst.member_mask(s)):
            return None  # a MemberOf parameter that is no member: the body never runs
        t = NextView(s)
        with collect_undefined() as undefined:
            try:
                g = inst.call(self.spec, s, t)
            except Exception as e:
                raise self._error(inst.decl.fn, f"action {inst.label}", e, cells) from None
        if not _is_bool_scalar(g):
            raise self._not_bool(inst.decl.fn, f"the guard of action {inst.label}", g, cells)
        taken = self._taken(inst, t, undefined)
        if taken is None:
            return None
        cond, assigned, undefined = taken
        if cond is not None and not _is_bool_scalar(cond):
            raise self._not_bool(inst.decl.fn, f"the condition of action {inst.label}", cond,
                                 cells)
        if not g or (cond is not None and not cond):
            return None
        for mask, where, message in undefined:
            if not np.any(mask):
                continue  # only in an arm of a where that this state does not select
            raise SpecEvaluationError(
                f"{where}: action {inst.label} is enabled in the state "
                f"{format_state(self.layout, cells)}, but {message}.",
                where=where, what=f"action {inst.label}",
                state=self.layout.values_from_cells(cells))
        nxt = list(cells)
        for ci, v in assigned.items():
            nxt[ci] = self._check_assigned_scalar(inst, ci, v, cells)
        return nxt

    def _taken(self, inst: ActionInstance, t: NextView, undefined: list[Any]
               ) -> tuple[Any, dict[int, Any], list[Any]] | None:
        """What instance ``inst`` does after its action ran on ``t``: the condition of its
        branch (None without branches), the cells it assigns and the undefined values
        (CHOOSE) that matter to it; None when the body never reached its branch."""
        branches: dict[str, Branch] = t._branches
        unknown = [b for b in branches if b not in inst.decl.branches]
        if unknown:
            raise SpecEvaluationError(
                f"{source_location(inst.decl.fn)}: action {inst.decl.name} took branch(es) "
                f"{', '.join(map(repr, unknown))} that its source does not show; write "
                "`with t.branch(\"name\", cond):` directly in the action's body, with a "
                "string literal name.", where=source_location(inst.decl.fn),
                what=f"action {inst.label}")
        if inst.branch is None:
            return None if branches else (None, t._assigned, undefined)
        mine = branches.get(inst.branch)
        if mine is None:
            return None
        assigned = dict(t._assigned)
        assigned.update(mine.assigned)
        others = [b.undefined for name, b in branches.items() if name != inst.branch]
        keep = [u for i, u in enumerate(undefined)
                if not any(lo <= i < hi for lo, hi in others)]
        return mine.cond, assigned, keep

    def check_invariants(self, cells: Sequence[int]) -> list[PredicateDecl]:
        """The checked invariants that one state violates."""
        bad = []
        for p in self.invariants:
            if not self._eval_pred_scalar(p, cells, None):
                bad.append(p)
        return bad

    def check_properties(self, cells: Sequence[int], nxt: Sequence[int]) -> list[PredicateDecl]:
        """The checked action properties that one transition violates."""
        return [p for p in self.properties if not self._eval_pred_scalar(p, cells, nxt)]

    def satisfies_constraints(self, cells: Sequence[int]) -> bool:
        return all(self._eval_pred_scalar(p, cells, None) for p in self.constraints)

    def satisfies_action_constraints(self, cells: Sequence[int], nxt: Sequence[int]) -> bool:
        """Whether the transition from ``cells`` to ``nxt`` satisfies every action
        constraint (TLC's ``ACTION_CONSTRAINT``)."""
        return all(self._eval_pred_scalar(p, cells, nxt) for p in self.action_constraints)

    def _eval_pred_scalar(self, p: PredicateDecl, cells: Sequence[int],
                          nxt: Sequence[int] | None) -> bool:
        s = self.scalar_view(cells)
        with collect_undefined() as undefined:
            try:
                r = (p.fn(self.spec, s) if nxt is None
                     else p.fn(self.spec, s, self.scalar_view(nxt)))
            except Exception as e:
                raise self._error(p.fn, f"{p.kind} {p.name}", e, cells, nxt) from None
        for mask, where, message in undefined:
            if np.any(mask):
                st = format_state(self.layout, cells)
                extra = f"; next state {format_state(self.layout, nxt)}" if nxt else ""
                raise SpecEvaluationError(
                    f"{where}: {p.kind} {p.name} failed with {message} in the state "
                    f"{st}{extra}.", where=where, what=f"{p.kind} {p.name}",
                    state=self.layout.values_from_cells(cells))
        if not _is_bool_scalar(r):
            raise self._not_bool(p.fn, f"{p.kind} {p.name}", r, cells)
        return bool(r)

    def fingerprint(self, cells: Sequence[int]) -> int:
        """The (canonical, under symmetry) fingerprint of one state."""
        words = self.layout.pack(cells).reshape(1, -1)
        return key_int(self.canonical(words)[1], 0)

    # ------------------------------------------------------------ batch (numpy)
    def expand(self, words: np.ndarray, *, expand: bool = True,
               stop_on_violation: bool = False, constrain: bool = True,
               keys_only: bool = False) -> Expansion:
        """Check invariants on a batch of packed states and, if ``expand``, generate successors.

        ``words`` has shape ``(n, k)``. Parent rows in the result index ``words``.
        With ``stop_on_violation``, nothing is expanded when a state of the batch
        violates an invariant (the level rule: the level ends with that
        violation, whatever the successors are).

        Successors outside the state constraints (TLC's ``CONSTRAINT``), and those of
        transitions that violate an action constraint (TLC's ``ACTION_CONSTRAINT``,
        evaluated on every enabled transition, before symmetry reduction), are
        checked against the invariants (``outside_hits``) and left out of
        ``child_*``; they still count as enabled transitions, so a state whose only
        successors are excluded is not a deadlock. With ``constrain=False`` every
        successor is in ``child_*`` and the constraints are left to the caller
        (simulation: a walk stops *at* a state outside them, as TLC's does), with
        ``action_ok`` saying which transitions satisfy the action constraints.

        ``keys_only``: the caller reads the successors' keys, not their words; when the
        keys are the packed states (:attr:`exact`) and no constraint reads the words,
        ``child_words`` then has no rows (``layout.words_of_keys(child_fps)`` are the
        words), so that a batch does not hold each successor twice over.
        """
        n = len(words)
        if n == 1:
            # numpy lets `if` test a one-element array; evaluating two copies makes a
            # spec that uses `if`/`and`/`or` on state values fail the same way at
            # every batch size.
            return _first_row(self.expand(np.repeat(words, 2, axis=0), expand=expand,
                                          stop_on_violation=stop_on_violation,
                                          constrain=constrain, keys_only=keys_only))
        layout = self.layout
        # several words: transposed once, so that every cell decodes from a contiguous
        # column (and, deferred, the changed words are gathered from them)
        cols = np.ascontiguousarray(words.T) if layout.n_words > 1 else None
        s = self.batch_view(words, cols)
        n_inv, n_prop = len(self.invariants), len(self.properties)
        state_rows = [self._pred_rows(p, s, None, words, None) for p in self._state_preds]
        inv_rows, label_rows = state_rows[:n_inv], state_rows[n_inv:]
        fired = np.zeros(len(self.actions), dtype=np.int64)
        empty_w = np.zeros((0, layout.n_words), dtype=_U64)
        empty_i = np.zeros(0, dtype=np.int64)
        if not expand or n == 0 or (stop_on_violation and any(len(r) for r in inv_rows)):
            return Expansion(n, inv_rows, _Dense(empty_w), np.zeros(0, dtype=_U64),
                             np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32),
                             fired, empty_i,
                             [_no_hits() for _ in self.properties],
                             [_no_hits() for _ in self.invariants],
                             label_rows=label_rows,
                             step_label_hits=[_no_hits() for _ in self.step_labels])
        keep_words = not (keys_only and self.exact and not self.constraints
                          and not self.action_constraints)
        acc = _Accumulator(n, len(self.actions), self.check_deadlock, len(self._step_preds),
                           bool(self.action_constraints),
                           keep_words=(keep_words or self.deferred) and not self.linear,
                           deferred=self.deferred)
        if acc.deferred:
            acc.word_cols = cols
        elif self.linear:
            acc.parent_keys = self.fingerprints(words)
        stutter = [self._stutter_verdict(p, s) for p in self._step_preds]
        fam_state: FamilyState | None = None
        for fi, fam in enumerate(self._families):
            chunk = self._family_chunk(fi, fam, n)
            lo = 0
            while chunk >= 2 and fam.count - lo >= 2 and fi not in self._family_failed:
                hi = min(fam.count, lo + chunk)
                if fam_state is None:
                    fam_state = FamilyState(s, words, self._decoder, self._bool_cells,
                                            self._leaves)
                if self._expand_family(fam, lo, hi, fam_state, s, words, acc, stutter):
                    lo = hi
                else:
                    # evaluated one by one from now on (which also reports its errors)
                    self._family_failed.add(fi)
            b = len(fam.branches)
            rest = self.actions[fam.first + lo * b:fam.first + fam.count * b]
            for _key, group in itertools.groupby(rest, key=lambda a: a.params):
                self._expand_group(list(group), s, words, acc, stutter)
        fired, hits, any_enabled = acc.fired, acc.hits, acc.any_enabled
        deadlocks = empty_i
        if any_enabled is not None:
            deadlocks = np.flatnonzero(~any_enabled)
        succ: SuccessorWords
        if acc.parents:
            # each list is let go once concatenated: the successors are never held
            # twice over (a batch's peak: 88 -> 60 bytes a two-word successor)
            cp = concat_clear(acc.parents)
            ca = acc.take_action_ids()
            if self.linear:
                cf = concat_clear(acc.fps)
                succ = _KeyWords(cf) if keep_words else _Dense(empty_w)
            elif not acc.deferred:
                succ = _Dense(concat_clear(acc.words) if acc.keep_words else empty_w)
                cf = concat_clear(acc.fps)
            else:
                # the successors are their parents and the words their actions changed
                changed = _Changed.of(words, cp, acc.words, acc.changed)
                cf = self._changed_keys(words, changed)
                succ = changed if keep_words else _Dense(empty_w)
        else:
            succ, cf, cp, ca = _Dense(empty_w), empty_keys(self.key_width), \
                np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)
        ok = None
        if acc.action_ok is not None:
            ok = np.concatenate(acc.action_ok) if acc.action_ok else np.zeros(0, dtype=bool)
        all_hits = [_cat_hits(h) for h in hits]
        prop_hits, step_label_hits = all_hits[:n_prop], all_hits[n_prop:]
        outside_hits = [_no_hits() for _ in self.invariants]
        outside = 0
        if (self.constraints or ok is not None) and constrain and len(succ):
            cw = succ.all()
            keep = self.in_model_rows(cw) if self.constraints else np.ones(len(cw), dtype=bool)
            if ok is not None:
                keep &= ok
            if not keep.all():
                out = np.flatnonzero(~keep)
                outside = len(out)
                ow = take_rows(cw, out)
                ov = self.batch_view(ow)
                for j, p in enumerate(self.invariants):
                    bad = self._pred_rows(p, ov, None, ow, None)
                    if len(bad):
                        sel = out[bad]
                        outside_hits[j] = (cp[sel], ca[sel], take_rows(cf, sel))
                succ = _Dense(take_rows(cw, keep))
                cf, cp, ca = take_rows(cf, keep), cp[keep], ca[keep]
        return Expansion(n, inv_rows, succ, cf, cp, ca, fired, deadlocks, prop_hits,
                         outside_hits, outside, None if constrain else ok,
                         label_rows, step_label_hits)

    def _step_key(self, keys: np.ndarray, ci: int | np.ndarray, delta: np.ndarray) -> None:
        """Add to the exact keys ``keys`` (``(m,)`` or ``(m, 2)``, :attr:`linear`) the
        change ``delta`` (``uint64``, the new value less the old modulo 2**64; scaled
        in place) of cell ``ci`` (one cell, or one per key)."""
        assert self._key_steps is not None
        c0, c1 = self._key_steps
        with np.errstate(over="ignore"):
            if keys.ndim == 2:
                if isinstance(ci, np.ndarray) or c1[ci]:
                    keys[:, 1] += delta * c1[ci]
                delta *= c0[ci]
                keys[:, 0] += delta
            else:
                delta *= c0[ci]
                keys += delta

    def _changed_keys(self, words: np.ndarray, succ: _Changed) -> np.ndarray:
        """The 128-bit keys ``(m, 2)`` of successors held as their parents' rows (of the
        batch ``words``) and the words they changed (:class:`_Changed`): the parent's
        fingerprint less its terms of the changed words plus the successor's
        (:func:`~modelcheck.layout.add_terms`).

        Computed in slices of :data:`KEY_SLICE` successors in scratch arrays: a fresh
        array of a batch's size is faulted in page by page (on this project's machine
        ~4 ns an 8-byte element, twenty times the arithmetic on it), so the keys are
        the only one."""
        m = len(succ)
        out = np.empty((m, 2), dtype=_U64)
        hp = _HashParts(words)
        scratch = np.empty((4, min(m, KEY_SLICE)), dtype=_U64)
        for g in succ.groups:
            par = succ.parents if g.idx is None else np.take(succ.parents, g.idx)
            dst = out if g.idx is None else np.empty((len(par), 2), dtype=_U64)
            hp.keys_into(dst, par, g.cols, g.words, scratch)
            if g.idx is not None:
                out[g.idx] = dst
        return out

    def _word_cols(self, words: np.ndarray, rows: np.ndarray, changed: tuple[int, ...],
                   cols: np.ndarray | None) -> np.ndarray:
        """The words ``changed`` of the states ``rows`` of ``words``, as columns
        ``(len(changed), len(rows))``; ``cols``: ``words`` transposed (contiguous), if
        at hand (``np.take`` copies a strided column whole before it gathers)."""
        out = np.empty((len(changed), len(rows)), dtype=_U64)
        for j, w in enumerate(changed):
            if cols is not None:
                np.take(cols[w], rows, out=out[j])
            else:
                out[j] = words[rows, w]
        return out

    def _member_plan(self, inst: ActionInstance, s: StateView
                     ) -> list[tuple[str, int, int]] | None:
        """Where each ``MemberOf`` parameter of ``inst`` sits in its set variable:
        ``(variable, chunk, bit)``; None unless every one is an element of a set
        variable's element type (then :meth:`ActionInstance.member_mask` decides)."""
        if inst.id in self._member_plans:
            return self._member_plans[inst.id]
        plan: list[tuple[str, int, int]] | None = []
        args = inst.arguments
        for var, k in inst.members:
            v = getattr(s, var)
            if type(v) is not SetValue or plan is None:  # not a subclass (sparse sets)
                plan = None
                break
            idx, outside = v._type.elem.index_of(args[k])
            if not isinstance(idx, int) or not isinstance(outside, (bool, np.bool_)) \
                    or outside:
                plan = None
                break
            w = v._type.chunk_bits
            plan.append((var, idx // w, idx % w))
        self._member_plans[inst.id] = plan
        return plan

    def _member_rows(self, inst: ActionInstance, s: StateView, n: int,
                     bits: dict[tuple[Any, ...], np.ndarray]) -> np.ndarray | None:
        """:meth:`ActionInstance.member_mask` of ``inst`` on the batch as ``n`` booleans
        (None when it has no ``MemberOf`` parameter). A set variable's chunk is split
        into bit planes once a batch (``bits``, by variable, chunk and bit: the bits of
        members asked for, each a shift and a mask of the chunk's bytes, not its
        words), so that each instance's mask is one of them."""
        if not inst.members:
            return None
        plan = self._member_plan(inst, s)
        if plan is None:
            member = inst.member_mask(s)
            return np.broadcast_to(np.asarray(member, dtype=bool), (n,))
        acc: np.ndarray | None = None
        for var, c, bit in plan:
            plane = bits.get((var, c, bit))
            if plane is None:
                by = bits.get((var, c))
                if by is None:
                    ch = np.asarray(getattr(s, var).chunks[c])
                    ch = np.ascontiguousarray(np.broadcast_to(ch, (n,)), dtype="<i8")
                    # the chunks' bytes transposed: byte b of every state contiguous
                    by = np.ascontiguousarray(ch.view(np.uint8).reshape(n, 8).T)
                    bits[(var, c)] = by
                # the bit of each state's byte, its 0/1 bytes read as booleans
                plane = np.right_shift(by[bit >> 3], bit & 7)
                plane &= 1
                plane = plane.view(bool)
                bits[(var, c, bit)] = plane
            acc = plane if acc is None else acc & plane
        assert acc is not None
        return acc

    def _family_chunk(self, fi: int, fam: _Family, n: int) -> int:
        """Instances of family ``fam`` per family call on ``n`` states (< 2: none)."""
        if fam.count < 2 or fi in self._family_failed or not fam.values.shape[1]:
            return 0
        chunk = min(fam.count, self.family_rows // max(n, 1))
        return chunk if chunk >= max(2, self.family_min) else 0

    def _expand_group(self, insts: list[ActionInstance], s: StateView, words: np.ndarray,
                      acc: _Accumulator, stutter: list[tuple[set[int] | None,
                                                             np.ndarray | None]]) -> None:
        """Evaluate one parameter combination of an action on the batch (the
        per-instance evaluator): the body runs once, and each of ``insts`` (one per
        branch, or the action itself) takes what it does."""
        n = acc.n
        member = self._member_rows(insts[0], s, n, acc.member_bits)
        if member is not None:
            if not member.any():
                return  # a MemberOf parameter that is a member in no state of the batch
        t = NextView(s, narrow=n >= self.narrow_min)
        g: Any = None
        with collect_undefined() as undefined:
            try:
                g = insts[0].call(self.spec, s, t)
            except Narrow:
                pass
            except Exception as e:
                if t._narrowed is None:  # (else a spec's handler turned the request)
                    raise self._locate_action_error(insts[0], words, e) from None
        # set when the action asks for its states alone, however the call ended (a
        # spec's handler may have swallowed the request)
        few: np.ndarray | None = t._narrowed
        if few is not None:
            # the guard holds in few states (NextView.none_enabled): the action
            # again on those alone (two at least, as a batch is evaluated)
            sel = np.flatnonzero(few)
            if len(sel) < 2:
                sel = np.union1d(sel, np.flatnonzero(~few)[:2 - len(sel)])
            sub = take_rows(words, sel)
            sv = self.batch_view(sub)
            t = NextView(sv)
            with collect_undefined() as undefined:
                try:
                    g = insts[0].call(self.spec, sv, t)
                except Exception as e:
                    raise self._locate_action_error(insts[0], sub, e) from None
            self._take_group(insts, sv, sub, t, g, undefined,
                             None if member is None else member[sel], acc, stutter, sel)
            return
        self._take_group(insts, s, words, t, g, undefined, member, acc, stutter, None)

    def _take_group(self, insts: list[ActionInstance], s: StateView, words: np.ndarray,
                    t: NextView, g: Any, undefined: list[Any], member: np.ndarray | None,
                    acc: _Accumulator,
                    stutter: list[tuple[set[int] | None, np.ndarray | None]],
                    sel: np.ndarray | None) -> None:
        """The transitions of ``insts`` from the call that gave guard ``g`` and next
        state ``t`` on the batch ``words`` (the rows ``sel`` of the expanded batch,
        or all of it when None)."""
        layout, n = self.layout, len(words)
        for inst in insts:
            taken = self._taken(inst, t, undefined)
            if taken is None:
                continue
            cond, assigned, und = taken
            # the labels are built only for an error (not per instance and batch)
            mask = self._mask(g, n, inst.decl.fn, partial(_part_of, "guard", inst), words)
            if cond is not None:
                mask = mask & self._mask(cond, n, inst.decl.fn,
                                         partial(_part_of, "condition", inst), words)
            if member is not None:
                mask = mask & member
            for um, _where, message in und:
                bad = np.flatnonzero(mask & um)
                if len(bad):
                    raise self._locate_action_error(inst, words[bad],
                                                    SpecEvaluationError(message))
            rows = np.flatnonzero(mask)
            m = len(rows)
            if m == 0:
                continue
            acc.fired[inst.id] = m
            at = rows if sel is None else sel[rows]  # the rows of the expanded batch
            if acc.any_enabled is not None:
                if sel is None and 16 * m >= n:
                    # (an elementwise or of n booleans costs less than setting m
                    # scattered ones, unless m is a small part of them)
                    acc.any_enabled |= mask
                else:
                    acc.any_enabled[at] = True
            changed: tuple[int, ...] = ()
            keys = acc.parent_keys
            if acc.deferred:
                # only the words the action changes, as columns (the successors are
                # their parents' rows and these until some are kept)
                changed = self._changed_words(assigned)
                child = self._word_cols(words, rows, changed,
                                        acc.word_cols if sel is None else None)
            elif keys is not None:
                # the parents' keys, stepped below by the changed cells
                child = take_rows(keys, at)
            else:
                child = take_rows(words, rows)
            post: dict[int, Any] = {}
            same = s._cache
            with np.errstate(over="ignore"):
                for ci, v in assigned.items():
                    if v is same.get(ci):
                        continue  # the cell's own column: unchanged
                    vr = self._assigned_rows(inst, ci, v, rows, n, words)
                    post[ci] = vr
                    # new - old in int64, then the same bits as uint64: scaled and added
                    # modulo 2**64, the word ends up holding the new value
                    delta = np.subtract(vr, s._cell(ci)[rows], dtype=np.int64).view(_U64)
                    if keys is not None:
                        self._step_key(child, ci, delta)
                        continue
                    delta *= layout.mult[ci]
                    w = int(layout.word_of[ci])
                    if acc.deferred:
                        child[changed.index(w)] += delta
                    else:
                        child[:, w] += delta
            ok = None
            if self.action_constraints:
                # on the successor itself, before symmetry reduction, as the properties
                ok = np.ones(m, dtype=bool)
                pre_v = _SubView(s, rows, {}).view(layout, m)
                post_v = _SubView(s, rows, post).view(layout, m)
                for p in self.action_constraints:
                    ok[self._pred_rows(p, pre_v, post_v, words, rows, inst)] = False
            # one action instance: its id is recorded once, not once a transition
            if acc.deferred:
                fps = None
                acc.add(child, None, at, inst.id, ok, changed)
            elif keys is not None:
                fps = child
                acc.add(None, fps, at, inst.id, ok)
            else:
                child, fps = self.canonical(child)
                acc.add(child, fps, at, inst.id, ok)
            if self._step_preds:
                pre_sub = _SubView(s, rows, {})
                post_sub = _SubView(s, rows, post)
                for j, p in enumerate(self._step_preds):
                    reads, ok_mask = stutter[j]
                    if reads is not None and ok_mask is not None and reads.isdisjoint(post):
                        # The action leaves every cell the property reads of the next
                        # state unchanged: its verdict is the one on (s, s).
                        bad = np.flatnonzero(~ok_mask[at])
                    else:
                        bad = self._pred_rows(p, pre_sub.view(layout, m),
                                              post_sub.view(layout, m), words, rows, inst)
                    if len(bad):
                        assert fps is not None  # (step predicates: not deferred)
                        acc.hits[j].append((at[bad], np.full(len(bad), inst.id, dtype=np.int32),
                                            take_rows(fps, bad)))

    def _expand_family(self, fam: _Family, lo: int, hi: int, fs: FamilyState, s: StateView,
                       words: np.ndarray, acc: _Accumulator,
                       stutter: list[tuple[set[int] | None, np.ndarray | None]]) -> bool:
        """Evaluate parameter combinations ``lo:hi`` of family ``fam`` (every branch of
        each) on the batch in one call (:mod:`modelcheck.family`), with the
        per-instance evaluator's results; False (nothing recorded) when they must be
        evaluated one by one instead."""
        n, k, nb = acc.n, hi - lo, len(fam.branches)
        params = [param_column(fam.values[lo:hi, j]) for j in range(fam.values.shape[1])]
        call = call_family(self.spec, fam.decl.fn, fs, params, k)
        if call is None or any(b not in fam.decl.branches for b in call.branches):
            return False  # (a branch the source does not show is an error, reported there)
        parts: list[_FamilyPart] = []
        for bi, name in enumerate(fam.branches):
            mask, assigned, undefined = call.mask, call.assigned, call.undefined
            if name is not None:
                br = call.branches.get(name)
                if br is None:
                    continue  # the body never reached this branch: no instance fires
                cond = grid_mask(br.cond, k, n)
                if cond is None:
                    return False
                mask = mask & cond
                assigned = {**assigned, **br.assigned}
                others = [b.undefined for b_name, b in call.branches.items() if b_name != name]
                undefined = [u for i, u in enumerate(undefined)
                             if not any(ulo <= i < uhi for ulo, uhi in others)]
            for um, _where, _message in undefined:
                um_grid = grid_mask(um, k, n)
                if um_grid is None or (mask & um_grid).any():
                    return False  # an error on an enabled pair: reported one by one
            scatters = [sc for sc in call.scatters if sc.branch is None or sc.branch == name]
            part = self._family_part(fam, lo, bi, nb, mask, assigned, scatters, s, words,
                                     stutter, acc.deferred, acc.word_cols, acc.parent_keys)
            if part is None:
                return False
            parts.append(part)
        for part in parts:
            acc.fired[fam.first + (lo + np.arange(k)) * nb + part.branch] = part.fired
            if acc.any_enabled is not None:
                acc.any_enabled |= part.enabled
        parts = [p for p in parts if len(p.rows)]
        if not parts:
            return True
        changed: tuple[int, ...] | None = None
        child: np.ndarray | None = None
        if acc.deferred:
            # the words any part changes: a part's columns of the others are its parents'
            changed = tuple(sorted({w for p in parts for w in p.changed or ()}))
            child = np.concatenate([self._widened(p, changed, words) for p in parts],
                                   axis=1)
        elif acc.parent_keys is None:
            child = np.concatenate([p.child for p in parts])
        fps = None if acc.deferred else np.concatenate([p.fps for p in parts])
        rows = np.concatenate([p.rows for p in parts])
        ids = np.concatenate([p.ids for p in parts])
        bad = [np.concatenate([p.bad[j] for p in parts])
               for j in range(len(self._step_preds))]
        ok = None
        if self.action_constraints:
            ok = np.concatenate([p.ok for p in parts if p.ok is not None])
        if len(parts) > 1:
            # instance by instance (parameters, then branch), states in order within each
            order = np.argsort(ids.astype(np.int64) * n + rows, kind="stable")
            if child is not None:
                child = np.take(child, order, axis=1) if acc.deferred \
                    else take_rows(child, order)
            fps = None if fps is None else take_rows(fps, order)
            rows, ids = rows[order], ids[order]
            bad = [b[order] for b in bad]
            ok = None if ok is None else ok[order]
        acc.add(child, fps, rows, ids, ok, changed)
        for j, b in enumerate(bad):
            sel = np.flatnonzero(b)
            if len(sel):
                assert fps is not None  # (step predicates: not deferred)
                acc.hits[j].append((rows[sel], ids[sel], take_rows(fps, sel)))
        return True

    def _family_part(self, fam: _Family, lo: int, bi: int, nb: int, mask: np.ndarray,
                     assigned: dict[int, Any], scatters: list[Scatter], s: StateView,
                     words: np.ndarray,
                     stutter: list[tuple[set[int] | None, np.ndarray | None]],
                     deferred: bool = False,
                     word_cols: np.ndarray | None = None,
                     keys: np.ndarray | None = None) -> _FamilyPart | None:
        """The transitions of branch ``bi`` of a family call (the whole action when it
        has no branches) on the grid ``mask``; None when they cannot be vouched for
        (``word_cols``: ``words`` transposed, if at hand; ``keys``: the batch's exact
        keys, when the successors' are stepped from them, :attr:`linear`: the part's
        ``child`` is then empty and ``fps`` the keys)."""
        layout = self.layout
        k, n = mask.shape
        flat = np.flatnonzero(mask)
        m = len(flat)
        inst = flat // n
        rows = flat % n
        fired = np.bincount(inst, minlength=k)
        enabled: np.ndarray = np.asarray(mask.any(axis=0))
        if m == 0:
            empty = np.zeros(0, dtype=bool)
            return _FamilyPart(bi, fired, enabled, words[:0], np.zeros(0, dtype=_U64), rows,
                               inst.astype(np.int32), [empty for _ in self._step_preds],
                               empty if self.action_constraints else None)
        post: dict[int, np.ndarray] = {}
        scattered: list[tuple[np.ndarray, np.ndarray, frozenset[int]]] = []
        for ci, v in assigned.items():
            vr = grid_values(v, k, n, flat)
            if vr is None or np.any((vr < layout.lo[ci]) | (vr > self._hi[ci])):
                return None
            post[ci] = vr
        for sc in scatters:
            cr = grid_values(sc.cells, k, n, flat)
            vr = grid_values(sc.value, k, n, flat)
            if cr is None or vr is None or np.any((vr < layout.lo[cr])
                                                  | (vr > self._hi[cr])):
                return None
            scattered.append((cr, vr, frozenset(np.unique(cr).tolist())))
        changed: tuple[int, ...] | None = None
        if deferred:
            # only the words the call changes (of the assigned cells and of every cell
            # a row may write), as columns
            changed = tuple(sorted(set(self._changed_words(post)).union(
                *(self._changed_words(dict.fromkeys(c)) for _, _, c in scattered))))
            slot = np.zeros(layout.n_words, dtype=np.int64)
            slot[list(changed)] = np.arange(len(changed))
            child = self._word_cols(words, rows, changed, word_cols)
        elif keys is not None:
            child = take_rows(keys, rows)
        else:
            child = take_rows(words, rows)
        with np.errstate(over="ignore"):
            for ci, vr in post.items():
                delta = (vr - s._cell(ci)[rows].astype(np.int64)).astype(_U64)
                if keys is not None:
                    self._step_key(child, ci, delta)
                elif deferred:
                    child[slot[layout.word_of[ci]]] += delta * layout.mult[ci]
                else:
                    child[:, layout.word_of[ci]] += delta * layout.mult[ci]
            at = np.arange(m)
            for cr, vr, _cells in scattered:
                delta = (vr - self._decoder.per_row(words, rows, cr)).astype(_U64)
                if keys is not None:
                    self._step_key(child, cr, delta)
                elif deferred:
                    child[slot[layout.word_of[cr]], at] += delta * layout.mult[cr]
                else:
                    child[at, layout.word_of[cr]] += delta * layout.mult[cr]
        pre = _SubView(s, rows, {}).view(layout, m)
        post_view = _scattered_view(s, rows, post, scattered, layout, m)
        ok: np.ndarray | None = None
        if self.action_constraints:
            # on the successors themselves, before symmetry reduction
            ok = np.ones(m, dtype=bool)
            for p in self.action_constraints:
                holds = _grid_verdict(self.spec, p, pre, post_view, m)
                if holds is None:
                    return None
                ok &= holds
        fps: np.ndarray | None = None
        if keys is not None:
            child, fps = words[:0], child
        elif not deferred:
            child, fps = self.canonical(child)
        ids = (fam.first + (inst + lo) * nb + bi).astype(np.int32)
        bad: list[np.ndarray] = []
        if self._step_preds:
            written = set(post).union(*(c for _, _, c in scattered))
            for j, p in enumerate(self._step_preds):
                reads, ok_mask = stutter[j]
                if reads is not None and ok_mask is not None and reads.isdisjoint(written):
                    bad.append(~ok_mask[rows])
                    continue
                holds = _grid_verdict(self.spec, p, pre, post_view, m)
                if holds is None:
                    return None
                bad.append(~holds)
        return _FamilyPart(bi, fired, enabled, child, fps, rows, ids, bad, ok, changed)

    def _widened(self, part: _FamilyPart, changed: tuple[int, ...],
                 words: np.ndarray) -> np.ndarray:
        """A deferred part's columns of the words ``changed`` (a superset of its own):
        its parents' words where it changed none."""
        if part.changed == changed:
            return part.child
        own = part.changed or ()
        return np.stack([part.child[own.index(w)] if w in own
                         else words[part.rows, w] for w in changed]) \
            if changed else np.zeros((0, len(part.rows)), dtype=_U64)

    def _changed_words(self, assigned: Mapping[int, Any]) -> tuple[int, ...]:
        """The words holding the cells ``assigned`` (those an action may change)."""
        word_of = self.layout.word_of
        return tuple(sorted({int(word_of[ci]) for ci in assigned}))

    def in_model_rows(self, words: np.ndarray) -> np.ndarray:
        """Mask of the packed states that satisfy every state constraint."""
        if len(words) == 1:
            return self.in_model_rows(np.repeat(words, 2, axis=0))[:1]
        v = self.batch_view(words)
        keep = np.ones(len(words), dtype=bool)
        for p in self.constraints:
            keep[self._pred_rows(p, v, None, words, None)] = False
        return keep

    # ------------------------------------------------------ one state, all checks
    def check_state(self, cells: Sequence[int], *, expand: bool = True) -> None:
        """Evaluate everything the batch evaluator evaluates on one state, in its order
        (invariants, then every action with its action properties and action
        constraints, then the state constraints on the successors and the invariants
        on those outside them), only
        to raise the :class:`SpecEvaluationError` it raises, if any."""
        if self.check_invariants(cells) or not expand:
            return
        self.successors_checked(cells)

    def successors_checked(self, cells: Sequence[int]
                           ) -> list[tuple[ActionInstance, list[int], bool, list[PredicateDecl]]]:
        """Every enabled action instance of one state with its successor, whether the
        transition is in the model (it satisfies the action constraints and its
        successor the state constraints) and the action properties it violates; action
        properties and action constraints are evaluated on every transition, and the
        invariants on successors outside the model (so this raises what :meth:`expand`
        raises on this state)."""
        out = []
        succ = self.successors(cells)
        violated = [self.check_properties(cells, nxt) for _inst, nxt in succ]
        allowed = [self.satisfies_action_constraints(cells, nxt) for _inst, nxt in succ]
        for (inst, nxt), bad, ok in zip(succ, violated, allowed):
            inside = self.satisfies_constraints(nxt) and ok
            if not inside:
                self.check_invariants(nxt)
            out.append((inst, nxt, inside, bad))
        return out

    # ---------------------------------------------------------------- helpers
    def _stutter_verdict(self, p: PredicateDecl,
                         s: StateView) -> tuple[set[int] | None, np.ndarray | None]:
        """Evaluate action property ``p`` on ``(s, s)``, recording the cells it reads
        of the next state. On a batch, spec code cannot branch on state values, so
        the same cells are read for any next state; an action that assigns none of
        them gets this verdict without evaluating ``p`` again."""
        reads: set[int] = set()

        def get(i: int) -> Any:
            reads.add(i)
            return s._cell(i)

        try:
            r = p.fn(self.spec, s, StateView(self.layout, get, s._n))
        except Exception:
            return None, None  # evaluated per action, where errors are pinpointed
        if isinstance(r, np.ndarray) and r.dtype == np.bool_ and r.shape == (s._n,):
            return reads, r
        if _is_bool_scalar(r):
            return reads, np.full(s._n or 1, bool(r))
        return None, None

    def _pred_rows(self, p: PredicateDecl, s: StateView, t: StateView | None,
                   words: np.ndarray, rows: np.ndarray | None,
                   inst: ActionInstance | None = None) -> np.ndarray:
        """Rows (of ``s``) where predicate ``p`` is false."""
        with collect_undefined() as undefined:
            try:
                r = p.fn(self.spec, s) if t is None else p.fn(self.spec, s, t)
            except Exception as e:
                raise self._locate_pred_error(p, words, rows, inst, e) from None
        n = s._n if s._n is not None else 1
        for um, _where, message in undefined:
            bad = np.flatnonzero(np.broadcast_to(um, (n,)))
            if len(bad):
                # the scalar evaluator names the first such state
                raise self._locate_pred_error(p, words, bad if rows is None else rows[bad],
                                              inst, SpecEvaluationError(message))
        mask = self._mask(r, n, p.fn, f"{p.kind} {p.name}", words)
        return np.flatnonzero(~mask)

    def _mask(self, g: Any, n: int, fn: Callable[..., Any], what: str | Callable[[], str],
              words: np.ndarray) -> np.ndarray:
        """``g`` (a predicate's or guard's value) as a boolean column of ``n`` rows;
        ``what`` names it in an error (a callable: built only then)."""
        if isinstance(g, np.ndarray) and g.dtype == np.bool_ and g.shape == (n,):
            return g
        if _is_bool_scalar(g):
            return np.full(n, bool(g))
        # an error from here on: its text (``what``) is built only now
        if callable(what):
            what = what()
        if isinstance(g, np.ndarray) and g.dtype == np.bool_:
            raise SpecEvaluationError(
                f"{source_location(fn)}: {what} returned an array of shape {g.shape} "
                f"for a batch of {n} states; combine conditions with & | ~ only."
            )
        raise self._not_bool(fn, what, g, self.layout.unpack(words[0]) if len(words) else None)

    def _assigned_rows(self, inst: ActionInstance, ci: int, v: Any, rows: np.ndarray, n: int,
                       words: np.ndarray) -> Any:
        cell = self.layout.cells[ci]
        if isinstance(v, (int, np.integer, np.bool_)):
            val = int(v)
            if not cell.lo <= val <= cell.hi:
                raise self._out_of_domain(inst, ci, val, self.layout.unpack(words[int(rows[0])]))
            return np.int64(val)
        arr = np.asarray(v)
        if arr.dtype.kind not in "biu":
            raise SpecEvaluationError(
                f"{source_location(inst.decl.fn)}: action {inst.label} assigns "
                f"{cell.name} a value of type {type(v).__name__} ({_short_repr(v)}); "
                "state values must be integers, booleans or enum members."
            )
        vr = arr[rows] if arr.ndim == 1 and arr.shape[0] == n else arr
        if vr.ndim > 1 or (vr.ndim == 1 and vr.shape[0] != len(rows)):
            raise SpecEvaluationError(
                f"{source_location(inst.decl.fn)}: action {inst.label} assigns {cell.name} "
                f"an array of shape {arr.shape}; assign one value per state."
            )
        vr = vr.astype(np.int64, copy=False)
        if vr.size and (vr.min() < cell.lo or vr.max() > cell.hi):
            bad = (vr < cell.lo) | (vr > cell.hi)
            i = int(np.flatnonzero(np.atleast_1d(bad))[0])
            row = int(rows[i])
            val = int(np.atleast_1d(vr)[i])
            raise self._out_of_domain(inst, ci, val, self.layout.unpack(words[row]))
        return vr

    def _check_assigned_scalar(self, inst: ActionInstance, ci: int, v: Any,
                               cells: Sequence[int]) -> int:
        cell = self.layout.cells[ci]
        arr = np.asarray(v)
        if arr.dtype.kind not in "biu" or arr.ndim != 0:
            raise SpecEvaluationError(
                f"{source_location(inst.decl.fn)}: action {inst.label} assigns "
                f"{cell.name} a value of type {type(v).__name__} ({_short_repr(v)}); "
                "state values must be integers, booleans or enum members."
            )
        val = int(arr)
        if not cell.lo <= val <= cell.hi:
            raise self._out_of_domain(inst, ci, val, cells)
        return val

    def _out_of_domain(self, inst: ActionInstance, ci: int, val: int,
                       cells: Sequence[int]) -> SpecEvaluationError:
        cell = self.layout.cells[ci]
        what = self.layout.types[ci].explain_out_of_domain(cell.name, val)
        if what is None:
            what = (f"assigns {cell.name} = {val}, outside its declared domain "
                    f"{cell.lo}..{cell.hi}")
        return SpecEvaluationError(
            f"{source_location(inst.decl.fn)}: action {inst.label} {what}, in the state "
            f"{format_state(self.layout, cells)}. Strengthen the guard or widen the "
            "variable's domain.",
            where=source_location(inst.decl.fn), what=f"action {inst.label}",
            state=self.layout.values_from_cells(cells),
        )

    def _not_bool(self, fn: Callable[..., Any], what: str, value: Any,
                  cells: Sequence[int] | None) -> SpecEvaluationError:
        kind = getattr(value, "dtype", type(value).__name__)
        st = f" in the state {format_state(self.layout, cells)}" if cells is not None else ""
        return SpecEvaluationError(
            f"{source_location(fn)}: {what} returned {_short_repr(value)} of type {kind}, "
            f"not a boolean{st}."
            + (bool_hint(value) or " Build conditions with comparisons and & | ~ (not "
               "`and`, `or`, `not`), and return them."),
            where=source_location(fn), what=what,
            state=self.layout.values_from_cells(cells) if cells is not None else None,
        )

    def _error(self, fn: Callable[..., Any], what: str, e: BaseException,
               cells: Sequence[int], nxt: Sequence[int] | None = None) -> SpecEvaluationError:
        where = user_frame_location(sys.exc_info()[2], fn)
        if isinstance(e, SpecEvaluationError):
            detail = str(e)
        else:
            detail = f"{type(e).__name__}: {e}"
        st = format_state(self.layout, cells)
        extra = f"; next state {format_state(self.layout, nxt)}" if nxt is not None else ""
        return SpecEvaluationError(
            f"{where}: {what} failed with {detail} in the state {st}{extra}.",
            where=where, what=what, state=self.layout.values_from_cells(cells),
        )

    def _locate_action_error(self, inst: ActionInstance, words: np.ndarray,
                             e: BaseException) -> SpecEvaluationError:
        tb = sys.exc_info()[2]
        for row in range(min(len(words), self.scalar_locate_rows)):
            cells = self.layout.unpack(words[row])
            try:
                self.step(cells, inst)
            except SpecEvaluationError as err:
                return err
        return self._batch_only_error(inst.decl.fn, f"action {inst.label}", e, tb, words)

    def _locate_pred_error(self, p: PredicateDecl, words: np.ndarray, rows: np.ndarray | None,
                           inst: ActionInstance | None, e: BaseException) -> SpecEvaluationError:
        tb = sys.exc_info()[2]
        candidates = range(len(words)) if rows is None else (int(r) for r in rows)
        for k, row in enumerate(candidates):
            if k >= self.scalar_locate_rows:
                break
            cells = self.layout.unpack(words[row])
            if p.kind in (RoleKind.ACTION, RoleKind.ACTION_CONSTRAINT) and inst is not None:
                nxt = self.step(cells, inst)
                if nxt is None:
                    continue
                try:
                    self._eval_pred_scalar(p, cells, nxt)
                except SpecEvaluationError as err:
                    return SpecEvaluationError(f"{err} (on a transition by {inst.label})",
                                               where=err.where, what=err.what, state=err.state)
            else:
                try:
                    self._eval_pred_scalar(p, cells, None)
                except SpecEvaluationError as err:
                    return err
        return self._batch_only_error(p.fn, f"{p.kind} {p.name}", e, tb, words)

    def _batch_only_error(self, fn: Callable[..., Any], what: str, e: BaseException,
                          tb: Any, words: np.ndarray) -> SpecEvaluationError:
        where = user_frame_location(tb, fn)
        hint = ""
        if "truth value" in str(e) or "ambiguous" in str(e):
            hint = (" The spec uses `if`, `and`, `or` or `not` on a state value, which cannot "
                    "work on a batch of states: use where(cond, a, b) and & | ~ instead.")
        st = format_state(self.layout, self.layout.unpack(words[0])) if len(words) else "?"
        return SpecEvaluationError(
            f"{where}: {what} failed with {type(e).__name__}: {e} while evaluating a batch of "
            f"states (first state {st}).{hint}",
            where=where, what=what,
        )


@dataclass(frozen=True)
class _Family:
    """A run of instances of one action: ``count`` parameter combinations, each with
    one instance per branch (``branches``: the action's branch names, or ``(None,)``);
    combination ``j`` has parameter values ``values[j]`` (one column per parameter) and
    its instance of branch ``b`` the id ``first + j * len(branches) + b``."""

    decl: ActionDecl
    first: int
    count: int
    values: np.ndarray
    branches: tuple[str | None, ...]


def _families(actions: Sequence[ActionInstance]) -> list[_Family]:
    out: list[_Family] = []
    i = 0
    while i < len(actions):
        j = i
        while j < len(actions) and actions[j].decl is actions[i].decl:
            j += 1
        decl = actions[i].decl
        groups = [list(g) for _, g in itertools.groupby(actions[i:j], key=lambda a: a.params)]
        branches: tuple[str | None, ...] = decl.branches or (None,)
        regular = all(tuple(a.branch for a in g) == branches for g in groups) and all(
            type(v) is int for g in groups for _, v in g[0].params) and not any(
            g[0].members or g[0].args is not None for g in groups)
        if regular:
            values = np.array([[v for _, v in g[0].params] for g in groups],
                              dtype=np.int64).reshape(len(groups), len(decl.params))
            out.append(_Family(decl, i, len(groups), values, branches))
        else:  # not expected from Spec; evaluated one combination at a time
            first = i
            for g in groups:
                out.append(_Family(decl, first, 1, np.zeros((1, 0), dtype=np.int64),
                                   tuple(a.branch for a in g)))
                first += len(g)
        i = j
    return out


@dataclass
class _FamilyPart:
    """The transitions of one branch of a family call: per combination how many fired,
    the states with one enabled, and per transition the successor (deferred: the
    columns of the words ``changed``), its fingerprint, parent row, action id, (per
    action property) whether it violates it and (with action constraints) whether it
    satisfies them all."""

    branch: int
    fired: np.ndarray
    enabled: np.ndarray
    child: np.ndarray
    fps: np.ndarray | None  # (None: deferred, see Kernel.deferred)
    rows: np.ndarray
    ids: np.ndarray
    bad: list[np.ndarray]
    ok: np.ndarray | None = None
    #: (deferred) the words the successors may differ in from their parents
    changed: tuple[int, ...] | None = None


class _Accumulator:
    """The successors, counts and property hits of one batch, in action order."""

    def __init__(self, n: int, n_actions: int, deadlock: bool, n_props: int,
                 action_constraints: bool = False, keep_words: bool = True,
                 deferred: bool = False) -> None:
        self.n = n
        #: the successors' keys are computed at the end (``fps`` stays empty) from the
        #: words their actions changed (``words`` holds, per added run, the columns of
        #: those words; ``changed`` says which they are: ``(start, end, words)``)
        self.deferred = deferred
        self.changed: list[tuple[int, int, tuple[int, ...] | None]] = []
        self._rows = 0
        #: whether the successors' words are kept (else only their keys)
        self.keep_words = keep_words
        self.fired = np.zeros(n_actions, dtype=np.int64)
        self.any_enabled = np.zeros(n, dtype=bool) if deadlock else None
        self.words: list[np.ndarray] = []
        self.fps: list[np.ndarray] = []
        #: parent rows (``int32``: a batch has fewer than 2**31 states)
        self.parents: list[np.ndarray] = []
        #: per :meth:`add`, its action ids: an array, or one id for all its rows
        self.action_ids: list[np.ndarray | int] = []
        self._counts: list[int] = []  # rows per add
        self.hits: list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = [
            [] for _ in range(n_props)]
        #: per added successor, whether its transition satisfies the action constraints
        self.action_ok: list[np.ndarray] | None = [] if action_constraints else None
        #: the bit planes of the batch's set variables (``Kernel._member_rows``)
        self.member_bits: dict[tuple[Any, ...], np.ndarray] = {}
        #: (deferred) the batch's words transposed, one contiguous column a word
        self.word_cols: np.ndarray | None = None
        #: (:attr:`Kernel.linear`) the batch's keys: a successor's is its parent's,
        #: stepped by the cells its action changed
        self.parent_keys: np.ndarray | None = None

    def add(self, words: np.ndarray | None, fps: np.ndarray | None, parents: np.ndarray,
            action_ids: np.ndarray | int, ok: np.ndarray | None = None,
            changed: tuple[int, ...] | None = None) -> None:
        """Record transitions: the successors' ``words`` and ``fps`` (None when the
        batch's keys are computed once at its end: ``words`` are then the columns
        ``(len(changed), m)`` of the words ``changed``, those that differ from the
        parents'), their ``parents`` (rows of the batch) and ``action_ids`` (one id
        when all are of one instance).

        A batch's pieces are all held until :meth:`Kernel.expand` concatenates them, and
        they come from the heap (each is below ``memtune.MMAP_THRESHOLD``), whose pages
        stay resident once freed: 12 bytes a one-word successor rather than 28, parents
        in ``int32`` and an instance's ids as one number."""
        m = len(parents)
        if self.keep_words:
            assert words is not None
            self.words.append(words)
        if self.deferred:
            self.changed.append((self._rows, self._rows + m, changed))
            self._rows += m
        else:
            assert fps is not None
            self.fps.append(fps)
        self.parents.append(parents.astype(np.int32, copy=False))
        self.action_ids.append(action_ids if isinstance(action_ids, int)
                               else action_ids.astype(np.int32, copy=False))
        self._counts.append(m)
        if self.action_ok is not None:
            assert ok is not None
            self.action_ok.append(ok)

    def take_action_ids(self) -> np.ndarray:
        """The action ids of every transition added (``int32``), the pieces let go."""
        out = np.empty(sum(self._counts), dtype=np.int32)
        at = 0
        for ids, m in zip(self.action_ids, self._counts):
            out[at:at + m] = ids
            at += m
        self.action_ids.clear()
        self._counts.clear()
        return out


#: successors a slice of :meth:`Kernel._changed_keys` (its scratch stays in the caches)
KEY_SLICE = 1 << 15


class _HashParts:
    """A batch's per-word terms of :func:`~modelcheck.layout.fingerprint128` and its
    fingerprints' columns: a successor's fingerprint is its parent's, less the parent's
    terms of the words the action changed, plus the successor's terms of them."""

    def __init__(self, words: np.ndarray) -> None:
        self.a, self.b = hash_parts(words)
        self.fp0 = self.a.sum(axis=0, dtype=_U64)
        self.fp1 = self.b.sum(axis=0, dtype=_U64)

    def bases(self, changed: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Per parent, its fingerprint's columns less its terms of the words ``changed``."""
        with np.errstate(over="ignore"):
            b0, b1 = self.fp0.copy(), self.fp1.copy()
            for w in changed:
                b0 -= self.a[w]
                b1 -= self.b[w]
        return b0, b1

    def keys_into(self, out: np.ndarray, parents: np.ndarray, cols: np.ndarray,
                  changed: tuple[int, ...], scratch: np.ndarray) -> None:
        """Write into ``out`` ``(m, 2)`` the fingerprints of the successors of the
        batch's rows ``parents`` that changed the words ``changed`` to ``cols``
        ``(len(changed), m)``, a slice at a time (``scratch``: ``(4, slice)``)."""
        b0, b1 = self.bases(changed)
        step = scratch.shape[1]
        with np.errstate(over="ignore"):
            for lo in range(0, len(parents), step):
                hi = min(len(parents), lo + step)
                h = hi - lo
                f0, f1 = scratch[0, :h], scratch[1, :h]
                p = parents[lo:hi]
                np.take(b0, p, out=f0)
                np.take(b1, p, out=f1)
                add_terms(f0, f1, cols[:, lo:hi], changed, scratch[2:, :h])
                out[lo:hi, 0] = f0
                out[lo:hi, 1] = f1


def _scattered_view(s: StateView, rows: np.ndarray, post: dict[int, np.ndarray],
                    scattered: list[tuple[np.ndarray, np.ndarray, frozenset[int]]],
                    layout: Layout, m: int) -> StateView:
    """The next states of a family's transitions: ``s`` at ``rows`` with the fixed
    assignments ``post`` and the per-row cells of ``scattered``."""
    sub = _SubView(s, rows, post).view(layout, m)

    def get(i: int) -> Any:
        col = sub._cell(i)
        for cells, values, cellset in scattered:
            if i in cellset:
                v = values != 0 if col.dtype == np.bool_ else values
                col = np.where(cells == i, v, col)
        return col

    return StateView(layout, get, m)


def _part_of(part: str, inst: ActionInstance) -> str:
    """How an error names a part of an action instance (``the guard of action A(1)``)."""
    return f"the {part} of action {inst.label}"


def _first_row(ex: Expansion) -> Expansion:
    """Restrict an expansion of two identical rows to the first."""
    keep = ex.parent_rows == 0
    succ = ex.successors
    words = _Dense(succ.take(np.flatnonzero(keep))) if len(succ) == len(keep) else succ
    return Expansion(
        1,
        [r[r == 0] for r in ex.invariant_rows],
        words, ex.child_fps[keep], ex.parent_rows[keep], ex.action_ids[keep],
        ex.fired // 2,
        ex.deadlock_rows[ex.deadlock_rows == 0],
        [(rows[rows == 0], acts[rows == 0], fps[rows == 0]) for rows, acts, fps in
         ex.property_hits],
        [(rows[rows == 0], acts[rows == 0], fps[rows == 0]) for rows, acts, fps in
         ex.outside_hits],
        ex.outside // 2,
        None if ex.action_ok is None else ex.action_ok[keep],
        [r[r == 0] for r in ex.label_rows],
        [(rows[rows == 0], acts[rows == 0], fps[rows == 0]) for rows, acts, fps in
         ex.step_label_hits],
    )


def _grid_verdict(spec: Spec, p: PredicateDecl, pre: StateView, post: StateView,
                  m: int) -> np.ndarray | None:
    """Predicate ``p`` of ``(pre, post)`` on the ``m`` transitions of a family call, as a
    boolean column; None when it cannot be vouched for (evaluated one by one then)."""
    try:
        r = p.fn(spec, pre, post)
    except Exception:
        return None
    if isinstance(r, np.ndarray) and r.dtype == np.bool_ and r.shape == (m,):
        return r
    if _is_bool_scalar(r):
        return np.full(m, bool(r))
    return None


def _no_hits() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32),
            np.zeros(0, dtype=_U64))


def _cat_hits(h: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not h:
        return _no_hits()
    return (np.concatenate([x[0] for x in h]), np.concatenate([x[1] for x in h]),
            np.concatenate([x[2] for x in h]))


class _SubView:
    """Lazily restricts a batch view to ``rows``, optionally overriding some cells."""

    def __init__(self, base: StateView, rows: np.ndarray, override: dict[int, Any]) -> None:
        self.base = base
        self.rows = rows
        self.override = override

    def view(self, layout: Layout, m: int) -> StateView:
        base, rows, over = self.base, self.rows, self.override

        def get(i: int) -> Any:
            v = over.get(i)
            if v is not None:
                col = base._cell(i)
                if col.dtype == np.bool_:
                    return np.broadcast_to(v != 0, (m,))
                return np.broadcast_to(v, (m,))
            return base._cell(i)[rows]

        return StateView(layout, get, m)


def _is_bool_scalar(v: Any) -> bool:
    return isinstance(v, (bool, np.bool_)) or (isinstance(v, np.ndarray) and v.shape == ()
                                                and v.dtype == np.bool_)


def _short_repr(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


#: above this many characters a state's cell by cell form gives way to its values
WIDE_STATE_TEXT = 1000


def format_state(layout: Layout, cells: Sequence[int] | None) -> str:
    """A state on one line: ``logEnd=1, regEpoch[1]=1, fenced[1]=TRUE, ...``, cell by
    cell. A wide state whose cell form passes :data:`WIDE_STATE_TEXT` characters (every
    slot of a bounded sequence, every field of every record) is written by variable in
    the traces' notation instead (``log=<<...>>``, records ``[f: v]``, the slots past a
    sequence's length left out), which is shorter (the Kafka replication port: about
    2,000 characters instead of 31,000)."""
    if cells is None:
        return "?"
    text = "[" + ", ".join(
        f"{c.name}={layout.display_value(c, int(v))}" for c, v in zip(layout.cells, cells)
    ) + "]"
    if len(text) <= WIDE_STATE_TEXT:
        return text
    try:
        values = layout.values_from_cells(cells)
    except Exception:  # noqa: BLE001 - a successor outside its domain: keep the cells
        return text
    short = "[" + ", ".join(f"{n}={codec.text(v)}" for n, v in values.items()) + "]"
    return short if len(short) < len(text) else text


def _merged(default: Any, value: Any) -> Any:
    """A variable's value as ``Spec.initial_values`` merges it: a map into an array's
    declared initial value, anything else as it is."""
    if isinstance(value, Mapping) and isinstance(default, dict):
        return {**default, **value}
    return value


def _split_elements(choices: Sequence[Any], dims: tuple[range, ...],
                    default: Any) -> list[int] | None:
    """The domain elements a ``functions(D, V)`` choice of an array variable splits
    into (one factor each, first element first), or None to take it whole: when it
    is no :class:`Functions`, or its domain is not distinct indices of the array."""
    if not isinstance(choices, Functions) or not dims or not isinstance(default, dict):
        return None
    dom = choices.domain
    if not all(isinstance(d, int) and not isinstance(d, bool) and d in dims[0] for d in dom):
        return None
    return list(dom) if len(set(dom)) == len(dom) else None
