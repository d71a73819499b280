"""The Kafka replication port's message sets (sorted, duplicate-free sequences of
records, :mod:`specs.kafka_replication`) against Python sets.

The port applies each operation to every slot at once (one matrix per cell); the
oracle here is a Python set of the records' codes, sorted by the record's index in its
type, one state at a time. Batches mix states of every length, and one state is also
evaluated on its own (numpy scalars, as the trace replay evaluates it).
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specs.kafka_replication import KafkaReplication, _sadd, _sdel, _sfilter, _sunion

SPEC = KafkaReplication(BrokerCount=2)
#: fetch requests (six cells) and fetch responses (a record holding a sequence)
KINDS = ("m_freq", "m_fresp", "d_fresp")


def _seq_type(kind: str):
    return SPEC.layout.vars[kind].leaf


def _records(kind: str):
    """A strategy of canonical codes of the element type (read back from a value)."""
    et = _seq_type(kind).elem
    cells = [t for _, t in et.cells()]
    raw = st.tuples(*(st.integers(t.lo, t.hi) for t in cells))
    return raw.map(lambda c: tuple(et.codes(et.value(list(c)))))


def _index(et, codes) -> int:
    return et.index_of(et.view([np.int64(c) for c in codes]))[0]


def _sorted(et, items) -> list[tuple[int, ...]]:
    return sorted(set(items), key=lambda c: _index(et, c))


def _batch(kind: str, sets: list[list[tuple[int, ...]]], one: bool):
    """The sequences ``sets`` as one value: a batch (columns), or with ``one`` the only
    state as numpy scalars."""
    bs = _seq_type(kind)
    et = bs.elem
    rows = [bs.codes([et.value(list(c)) for c in s]) for s in sets]
    cols = np.array(rows, dtype=np.int64).T
    bools = {i for i, (_, t) in enumerate(bs.cells()) if getattr(t, "boolean", False)}
    if one:
        return bs.view([np.bool_(c[0]) if i in bools else np.int64(c[0])
                        for i, c in enumerate(cols)])
    return bs.view([c.astype(bool) if i in bools else c for i, c in enumerate(cols)])


def _back(kind: str, value, n: int) -> list[tuple[int, ...]]:
    """The codes of each state's sequence."""
    bs = _seq_type(kind)
    cols = [np.broadcast_to(np.asarray(c).astype(np.int64), (n,))
            for c in bs.columns(value)[:1 + bs.capacity * bs.elem.n_cells]]
    out = []
    for r in range(n):
        codes = [int(c[r]) for c in cols]
        length = codes[0]
        k = bs.elem.n_cells
        out.append([tuple(codes[1 + j * k:1 + (j + 1) * k]) for j in range(length)])
        # slots past the length hold the element type's first value
        zero = [t.lo for _, t in bs.elem.cells()]
        assert all(codes[1 + j * k:1 + (j + 1) * k] == zero
                   for j in range(length, bs.capacity))
    return out


@st.composite
def _case(draw):
    kind = draw(st.sampled_from(KINDS))
    bs = _seq_type(kind)
    et = bs.elem
    pool = draw(st.lists(_records(kind), min_size=1, max_size=bs.capacity + 2, unique=True))
    n = draw(st.integers(1, 4))
    sets = [_sorted(et, draw(st.lists(st.sampled_from(pool), max_size=bs.capacity - 1)))
            for _ in range(n)]
    others = [_sorted(et, draw(st.lists(st.sampled_from(pool), max_size=bs.capacity - 1)))
              for _ in range(n)]
    xs = [draw(st.sampled_from(pool)) for _ in range(n)]
    conds = [draw(st.booleans()) for _ in range(n)]
    return kind, sets, others, xs, conds


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_case(), st.booleans())
def test_set_operations_agree_with_python_sets(case, one) -> None:
    kind, sets, others, xs, conds = case
    if one:
        sets, others, xs, conds = sets[:1], others[:1], xs[:1], conds[:1]
    n = len(sets)
    bs = _seq_type(kind)
    et = bs.elem
    q = _batch(kind, sets, one)
    r = _batch(kind, others, one)
    if one:
        x = et.view([np.int64(c) for c in xs[0]])
        cond = np.bool_(conds[0])
    else:
        x = et.view([np.array([c[i] for c in xs], dtype=np.int64) for i in range(et.n_cells)])
        cond = np.array(conds)

    def fits(s) -> bool:
        return len(s) <= bs.capacity

    added = _back(kind, _sadd(q, x, cond), n)
    removed = _back(kind, _sdel(q, x, cond), n)
    union = _back(kind, _sunion(q, r), n)
    # a record's first cell is its source (or its kind's first field): keep the even ones
    kept = _back(kind, _sfilter(q, lambda m: et.columns(m)[0] % 2 == 0), n)
    for i in range(n):
        want_add = _sorted(et, sets[i] + [xs[i]]) if conds[i] else sets[i]
        if fits(want_add):
            assert added[i] == want_add
        want_del = [c for c in sets[i] if not (conds[i] and c == xs[i])]
        assert removed[i] == want_del
        want_union = _sorted(et, sets[i] + others[i])
        if fits(want_union):
            assert union[i] == want_union
        assert kept[i] == [c for c in sets[i] if c[0] % 2 == 0]
