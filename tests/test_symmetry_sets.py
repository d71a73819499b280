"""Set cells under symmetry: the sparse permutation (members present only) moves exactly
the bits that the dense bit-matrix gather and a plain-Python relabelling move."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck.types.sets import _dense_set_permutation, _sparse_set_permutation

W = 62


def _encode(members: set[int], widths: list[int]) -> list[int]:
    out = [0] * len(widths)
    for i in members:
        out[i // W] |= 1 << (i % W)
    return out


@st.composite
def _case(draw: st.DrawFn) -> tuple[int, list[int], list[set[int]]]:
    n = draw(st.integers(1, 200))
    to = draw(st.permutations(range(n)))
    dense = draw(st.booleans())
    elem = st.integers(0, n - 1)
    sets = draw(st.lists(
        st.sets(elem, max_size=n) if dense else st.sets(elem, max_size=3), max_size=12))
    return n, list(to), sets


@settings(max_examples=300, deadline=None)
@given(_case())
def test_sparse_equals_dense_and_python(case: tuple[int, list[int], list[set[int]]]) -> None:
    n, to, sets = case
    widths = [min(W, n - k) for k in range(0, n, W)]
    rows = [_encode(s, widths) for s in sets]
    cols = [np.array([r[k] for r in rows], dtype=np.int64) for k in range(len(widths))]
    perm = np.array(to, dtype=np.int64)
    sparse = _sparse_set_permutation(perm, W, widths)(cols)
    dense = _dense_set_permutation(perm, W, widths)(cols)
    expected = [_encode({to[i] for i in s}, widths) for s in sets]
    for k in range(len(widths)):
        assert sparse[k].dtype == cols[k].dtype
        assert sparse[k].tolist() == dense[k].tolist() == [e[k] for e in expected]
    # a second permutation of the very same columns (the members listed once are reused)
    back = np.empty_like(perm)
    back[perm] = np.arange(n)
    again = _sparse_set_permutation(back, W, widths)(cols)
    inverse = [_encode({int(back[i]) for i in s}, widths) for s in sets]
    for k in range(len(widths)):
        assert again[k].tolist() == [e[k] for e in inverse]
