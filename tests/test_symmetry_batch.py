"""Symmetry canonicalises a batch in one pass: the canonical state of each state is a
function of its orbit and a member of it, checked here by brute force over values
(every permutation of the id sets relabels the state's Python value, type by type,
which is packed on its own), on random states of every kind of cell that a
permutation moves or maps (hypothesis). The ids' signatures follow the permutations;
the candidate permutations are exactly the sorted ones. Each type's
all-permutations and per-column functions also equal the per-permutation one
applied in turn."""

from __future__ import annotations

import itertools
from enum import IntEnum
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck import Array, Bag, Ids, Int, Record, Ref, Seq, SetOf, Spec, Union, action
from modelcheck.itfvalues import Record as RecordData
from modelcheck.store import key_int, key_ints
from modelcheck.symmetry import Symmetry, _Perm
from modelcheck.types import (
    BoundArray,
    BoundBag,
    BoundFunction,
    BoundRecord,
    BoundRef,
    BoundSeq,
    BoundSet,
    BoundType,
    BoundUnion,
)


class Kind(IntEnum):
    Ask = 0
    Done = 1


A = Ids(1, 3)
B = Ids(1, 2)


class Rich(Spec):
    """A variable of every kind symmetry touches: arrays indexed by a permuted set, ids,
    sets of records (one chunk and several), sequences, bags, records holding
    functions, arrays of sets, message unions."""

    symmetry = ("A", "B")
    A = A
    B = B
    owner = Array(A, Ref(B, none=0))
    held = SetOf(Record(a=A, b=B, n=Int(0, 1)))
    wide = SetOf(Record(a=A, n=Int(0, 30)))  # 93 elements: two chunks
    log = Seq(Ref(A), 2)
    bag = Bag(A, 2)
    fn = Record(f=Array(A, Ref(B, none=0)), x=Int(0, 2))
    per = Array(A, SetOf(B))
    grid = Array(A, Array(B, Int(0, 1)))
    msg = Union("type", Kind, Ask=Record(a=A, b=B), Done=None)
    fns = SetOf(Record(f=Array(B, Int(0, 1)), a=A))

    @action
    def Noop(self, s, t):
        return True


def _relabel(t: BoundType, v, pis):
    """Value ``v`` of type ``t`` under the permutations ``pis`` (plain Python)."""
    if isinstance(t, (BoundArray, BoundFunction)):
        pi = pis.get(t.index_name, {})
        return {pi.get(i, i): _relabel(t.elem, x, pis) for i, x in v.items()}
    if isinstance(t, BoundRef):
        return pis[t.ref].get(v, v) if t.ref in pis else v
    if isinstance(t, BoundSet):
        return [_relabel(t.elem, m, pis) for m in v]
    if isinstance(t, BoundBag):
        return {_relabel_key(t.elem, m, pis): c for m, c in v.items()}
    if isinstance(t, BoundSeq):
        return [_relabel(t.elem, x, pis) for x in v]
    if isinstance(t, BoundRecord):
        return {f: _relabel(ft, v[f], pis) for f, ft in t.fields.items()}
    if isinstance(t, BoundUnion):
        shape = t.shapes[t.names.index(v[t.tag])]
        if shape is None:
            return v
        return {t.tag: v[t.tag], **_relabel(shape, {f: v[f] for f in shape.fields}, pis)}
    return v


def _relabel_key(t, m, pis):
    out = _relabel(t, m, pis)
    return RecordData(out) if isinstance(out, dict) else out


def _all_pis(spec):
    sets = spec.symmetry_sets()
    per_set = [[(name, dict(zip(ids, p))) for p in itertools.permutations(ids)]
               for name, ids in sets.items()]
    return [dict(c) for c in itertools.product(*per_set)]


def _orbit_min(spec, cells):
    """The smallest fingerprint over the state's orbit, and that state's words."""
    layout = spec.layout
    values = layout.values_from_cells(cells)
    best = None
    for pis in _all_pis(spec):
        moved = {name: _relabel(info.btype, values[name], pis)
                 for name, info in layout.vars.items()}
        words = layout.pack(layout.cells_from_values(moved))[None]
        fp = key_int(layout.fingerprints(words), 0)
        if best is None or fp < best[0]:
            best = (fp, words[0])
    return best


@st.composite
def states(draw, spec):
    """Random states: every cell a code of its domain, made canonical (sequence slots
    past the length cleared) by a round trip through the state's value."""
    layout = spec.layout
    out = []
    for _ in range(draw(st.integers(1, 6))):
        cells = []
        for c in layout.cells:
            if c.kind == "set" and c.size > 1 << 16:
                bits = draw(st.sets(st.integers(0, c.size.bit_length() - 2), max_size=4))
                cells.append(sum(1 << b for b in bits))
            else:
                cells.append(draw(st.integers(c.lo, c.lo + c.size - 1)))
        out.append(layout.cells_from_values(layout.values_from_cells(cells)))
    return out


SPEC = Rich()


def _orbit(spec, cells):
    """The packed states of the state's orbit, one per permutation (in
    :attr:`Symmetry.all_pis` order), by relabelling its value."""
    layout = spec.layout
    values = layout.values_from_cells(cells)
    out = []
    for pis in _all_pis(spec):
        moved = {name: _relabel(info.btype, values[name], pis)
                 for name, info in layout.vars.items()}
        out.append(layout.pack(layout.cells_from_values(moved)))
    return out


@settings(max_examples=60, deadline=None)
@given(batch=states(SPEC))
def test_canonical_is_a_function_of_the_orbit_by_brute_force(batch) -> None:
    """Every member of a state's orbit (relabelled by plain Python) gets the same
    canonical state, and that state is a member of the orbit: two states get one
    canonical state exactly when one is a permutation of the other."""
    _check_function_of_orbit(batch, Symmetry(SPEC.layout, SPEC.symmetry_sets()))


@settings(max_examples=30, deadline=None)
@given(batch=states(SPEC))
def test_canonical_with_set_signatures_bit_by_bit(batch) -> None:
    """The same with the sets' signature rows summed member by member (the form of
    sets too large for byte tables) and permutations ranked by Lehmer codes (the form
    of sets of many ids)."""
    with mock.patch("modelcheck.symmetry._SIG_BYTES", 0), \
            mock.patch("modelcheck.symmetry._RANK_IDS", 0):
        sym = Symmetry(SPEC.layout, SPEC.symmetry_sets())
    assert not len(sym._byte_cells) and len(sym._set_tables) == 4
    assert sym._rank_tables == [None, None]
    _check_function_of_orbit(batch, sym)


@settings(max_examples=30, deadline=None)
@given(batch=states(SPEC))
def test_without_signatures_the_orbit_minimum(batch) -> None:
    """With no signature rows at all (every cell over the work bound), every
    permutation is a candidate: the canonical state is the orbit member with the
    smallest fingerprint, by brute force over values."""
    with mock.patch("modelcheck.symmetry._SIG_WORK", 0):
        sym = Symmetry(SPEC.layout, SPEC.symmetry_sets())
    assert not len(sym._cell_idx) and not len(sym._byte_cells) and not sym._set_tables
    layout = SPEC.layout
    words = np.stack([layout.pack(c) for c in batch])
    canon, fps = sym.canonical(words)
    for row, cells in enumerate(batch):
        fp, best = _orbit_min(SPEC, cells)
        assert key_int(fps, row) == fp
        assert canon[row].tolist() == best.tolist()
    _check_function_of_orbit(batch, sym)


def _check_function_of_orbit(batch, sym: Symmetry) -> None:
    layout = SPEC.layout
    assert sym.group_size == 12
    assert sym.all_pis == _all_pis(SPEC)
    orbits = [_orbit(SPEC, cells) for cells in batch]
    words = np.stack([w for orbit in orbits for w in orbit])
    canon, fps = sym.canonical(words)
    assert key_ints(fps) == key_ints(layout.fingerprints(canon))
    for k, orbit in enumerate(orbits):
        rows = range(k * 12, (k + 1) * 12)
        first = canon[k * 12].tolist()
        assert all(canon[r].tolist() == first for r in rows)
        assert first in [w.tolist() for w in orbit]
    # one state at a time, and in another order: the same canonical states
    back, back_fps = sym.canonical(words[::-1].copy())
    assert back[::-1].tolist() == canon.tolist()
    assert key_ints(back_fps[::-1]) == key_ints(fps)


@settings(max_examples=40, deadline=None)
@given(batch=states(SPEC))
def test_signatures_follow_the_permutation(batch) -> None:
    """``sig(g(s), g(i)) = sig(s, i)`` for every permutation ``g`` and id ``i``: what
    makes the sorted permutations (hence the canonical state) a function of the orbit."""
    layout = SPEC.layout
    sym = Symmetry(layout, SPEC.symmetry_sets())
    n_cells = len(layout.cells)
    for cells in batch:
        orbit = np.stack(_orbit(SPEC, cells))
        x = np.stack([layout.decode_cell(orbit, i) for i in range(n_cells)])
        sig = sym.signatures(x)
        for p, pis in enumerate(sym.all_pis):
            for cols, (name, ids) in zip(sym._cols, SPEC.symmetry_sets().items()):
                mine, moved = sig[0, cols], sig[p, cols]
                for a, i in enumerate(ids):
                    assert moved[ids.index(pis[name][i])] == mine[a]
    # the signatures tell ids apart: on these states, some id differs from another
    assert len(sym._cell_idx) and len(sym._byte_cells) and not sym._set_tables


@settings(max_examples=30, deadline=None)
@given(batch=states(SPEC), data=st.data())
def test_pairs_equal_each_permutation_in_turn(batch, data) -> None:
    """(state, permutation) pairs moved together equal each permutation applied on its
    own to the state's cells (:class:`~modelcheck.symmetry._Perm`)."""
    layout = SPEC.layout
    sym = Symmetry(layout, SPEC.symmetry_sets())
    words = np.stack([layout.pack(c) for c in batch])
    x = np.stack([layout.decode_cell(words, i) for i in range(len(layout.cells))])
    pairs = data.draw(st.lists(st.tuples(st.integers(0, len(batch) - 1),
                                         st.integers(0, sym.group_size - 1)), min_size=1))
    state = np.array([a for a, _ in pairs], dtype=np.int64)
    which = np.array([b for _, b in pairs], dtype=np.int64)
    got = sym._apply(x, state, which)
    assert (sym._decode(words) == x).all()
    assert (sym._pack(x) == words).all()
    for j, (a, p) in enumerate(pairs):
        cols = [col[a:a + 1] for col in x]
        one = layout.pack_columns(_Perm(layout, sym.all_pis[p]).apply(layout, cols))
        assert got[j].tolist() == one[0].tolist()


@settings(max_examples=30, deadline=None)
@given(batch=states(SPEC))
def test_sorted_permutations_by_brute_force(batch) -> None:
    """The candidate permutations of each state are exactly those after which each
    set's ids carry non-decreasing signatures."""
    layout = SPEC.layout
    sym = Symmetry(layout, SPEC.symmetry_sets())
    words = np.stack([layout.pack(c) for c in batch])
    x = np.stack([layout.decode_cell(words, i) for i in range(len(layout.cells))])
    state, which = sym.candidates(x)
    for row, cells in enumerate(batch):
        orbit = np.stack(_orbit(SPEC, cells))
        ox = np.stack([layout.decode_cell(orbit, i) for i in range(len(layout.cells))])
        sig = sym.signatures(ox)
        expected = [p for p in range(sym.group_size) if all(
            (np.diff(sig[p, cols].astype(object)) >= 0).all() for cols in sym._cols)]
        assert sorted(which[state == row].tolist()) == expected


@settings(max_examples=40, deadline=None)
@given(batch=states(SPEC), shared=st.booleans())
def test_each_types_permutations_equal_the_permutations_in_turn(batch, shared) -> None:
    layout = SPEC.layout
    many = Symmetry(layout, SPEC.symmetry_sets()).pis
    cells = np.array(batch, dtype=np.int64).T  # (cells, n)
    for info in layout.vars.values():
        leaf = info.leaf
        k = info.leaf_cells
        fast = leaf.cells_permutations(many)
        slow = BoundType.cells_permutations(leaf, many)  # each permutation in turn
        assert (fast is None) == (slow is None)
        if fast is None:
            continue
        block = cells[info.first_cell:info.first_cell + k][None]
        if not shared:  # a different block per permutation
            block = np.stack([np.roll(block[0], p, axis=1) for p in range(len(many))])
        assert fast(block).tolist() == slow(block).tolist()


@settings(max_examples=40, deadline=None)
@given(batch=states(SPEC), data=st.data())
def test_each_types_paired_permutations_equal_the_permutations_in_turn(batch, data) -> None:
    """One permutation per column (:meth:`BoundType.cells_permutations_paired`): each
    type's numpy pass equals each column moved by its own permutation's
    :meth:`BoundType.cells_permutation`."""
    layout = SPEC.layout
    many = Symmetry(layout, SPEC.symmetry_sets()).all_pis
    cells = np.array(batch, dtype=np.int64).T  # (cells, n)
    for info in layout.vars.values():
        leaf = info.leaf
        k = info.leaf_cells
        fast = leaf.cells_permutations_paired(many)
        slow = BoundType.cells_permutations_paired(leaf, many)
        assert (fast is None) == (slow is None)
        if fast is None:
            continue
        # every element of the variable in every state: (k, elements * n)
        e = info.n_cells // k
        block = cells[info.first_cell:info.first_cell + info.n_cells]
        block = block.reshape(e, k, -1).transpose(1, 0, 2).reshape(k, -1)
        which = np.array(data.draw(st.lists(st.integers(0, len(many) - 1),
                                            min_size=block.shape[1],
                                            max_size=block.shape[1])), dtype=np.int64)
        got = fast(block, which)
        assert got.tolist() == slow(block, which).tolist()
        for j, p in enumerate(which.tolist()):
            f = leaf.cells_permutation(many[p])
            col = [block[i, j:j + 1] for i in range(k)]
            expected = col if f is None else f(col)
            assert got[:, j].tolist() == [int(np.asarray(c).reshape(-1)[0]) for c in expected]
