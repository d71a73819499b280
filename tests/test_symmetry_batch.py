"""Symmetry applies every permutation to a batch in one pass: the canonical state of
each state is the member of its orbit with the smallest fingerprint, computed here by
brute force over values (every permutation of the id sets relabels the state's Python
value, type by type, which is packed and fingerprinted on its own), on random states
of every kind of cell that a permutation moves or maps (hypothesis). Each type's
all-permutations function also equals the per-permutation one applied in turn."""

from __future__ import annotations

import itertools
from enum import IntEnum

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


@settings(max_examples=60, deadline=None)
@given(batch=states(SPEC))
def test_canonical_is_the_orbit_minimum_by_brute_force(batch) -> None:
    layout = SPEC.layout
    sym = Symmetry(layout, SPEC.symmetry_sets())
    assert sym.group_size == 12
    words = np.stack([layout.pack(c) for c in batch])
    canon, fps = sym.canonical(words)
    for row, cells in enumerate(batch):
        fp, best = _orbit_min(SPEC, cells)
        assert key_int(fps, row) == fp
        assert canon[row].tolist() == best.tolist()
    # the per-permutation reference: each permutation applied in turn
    cols = [layout.decode_cell(words, i) for i in range(len(layout.cells))]
    ref = key_ints(layout.fingerprints(words))
    for pis in sym.pis:
        moved = key_ints(layout.fingerprints(layout.pack_columns(
            _Perm(layout, pis).apply(layout, cols))))
        ref = [min(a, b) for a, b in zip(ref, moved)]
    assert key_ints(fps) == ref


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
