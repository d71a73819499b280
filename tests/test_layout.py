"""State layout: mixed-radix packing, exactness (one or two words), and the documented
64-bit hash and its 128-bit pair for wider states."""

from __future__ import annotations

import numpy as np
from bruteforce import brute_force_check
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck import Array, Bool, Const, Ids, Int, SetOf, Spec, action, explore, invariant
from modelcheck.layout import collision_probability, fingerprint64, fingerprint128


class Wide(Spec):
    """Enough cells that the layout needs several 64-bit words."""

    check_deadlock = False
    N = Const(12)
    Cells = Ids(1, N)
    v = Array(Cells, Int(0, 200))
    b = Bool()

    @action(i=Cells)
    def Bump(self, s, t, i):
        t.v[i] = s.v[i] + 1
        return s.v[i] < 2

    @action
    def Flip(self, s, t):
        t.b = ~s.b
        return ~s.b


class Wider(Wide):
    """``Wide`` with two constant cells that take the state past 128 bits."""

    pad1 = Int(0, 2**60)
    pad2 = Int(0, 2**60)


def test_two_word_layout_is_exact_and_explores_exactly() -> None:
    spec = Wide()
    assert spec.layout.n_words == 2 and spec.layout.exact
    r = explore(spec)
    # 3 values per cell, 12 cells, times the flag
    assert r.distinct_states == 3**12 * 2
    assert r.fingerprint == "exact"
    assert r.collision_probability == 0.0


def test_wider_layout_uses_128_bit_fingerprints_and_explores_exactly() -> None:
    spec = Wider(N=8)
    assert spec.layout.n_words > 2 and not spec.layout.exact
    r = explore(spec)
    assert r.distinct_states == 3**8 * 2
    assert r.fingerprint == "hash128"
    n = r.distinct_states
    assert r.collision_probability == n * (n - 1) / 2 / 2.0**128
    # the figure: 10**9 states of more than 128 bits collide with a chance
    # below 10**-18
    assert collision_probability(10**9, False) < 1e-18


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 20), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_fingerprint128_matches_the_reference(n: int, k: int, seed: int) -> None:
    """Column 0 is the sum of SplitMix64's finaliser of each word plus ``(i + 1) *
    SEED``, column 1 the sum of MurmurHash3's of each word plus ``(i + 1) * SEED2``
    (the documented algorithm, in Python integers)."""
    rng = np.random.default_rng(seed)
    words = rng.integers(0, 2**64, size=(n, k), dtype=np.uint64, endpoint=False)
    words[rng.random((n, k)) < 0.2] = np.uint64(2**64 - 1)  # carries in word + offset
    fp = fingerprint128(words)
    assert fp.shape == (n, 2) and fp.dtype == np.uint64
    mask, s1, s2 = 2**64 - 1, 0x9E3779B97F4A7C15, 0xD1B54A32D192ED03
    want = []
    for row in words.tolist():
        a = sum(_mix((w + (i + 1) * s1) & mask) for i, w in enumerate(row)) & mask
        b = sum(_fmix((w + (i + 1) * s2) & mask) for i, w in enumerate(row)) & mask
        want.append([a, b])
    assert fp.tolist() == want


def test_fingerprint128_is_fixed() -> None:
    # The hash is part of the checkpoint format (``hash128-sum-v2`` in its layout
    # digest): a change needs a new name there.
    words = np.array([[0, 0, 0], [1, 2, 3], [2**64 - 1, 12345, 0]], dtype=np.uint64)
    assert fingerprint128(words).tolist() == [
        [FIXED[0], FIXED[1]], [FIXED[2], FIXED[3]], [FIXED[4], FIXED[5]]]


FIXED = [6295367884614957298, 10671048650731293446, 17131231889413068804,
         13885256908001447324, 2309409230391765596, 8866157902232904033]


def test_one_word_apart_never_collide() -> None:
    """States that differ in one word differ in both columns (each term is a bijection
    of the word), whatever the other words hold."""
    rng = np.random.default_rng(7)
    base = rng.integers(0, 2**64, size=(1, 5), dtype=np.uint64, endpoint=False)
    words = np.repeat(base, 4096, axis=0)
    words[:, 3] = rng.permutation(2**20).astype(np.uint64)[:4096]
    fp = fingerprint128(words)
    assert len(set(fp[:, 0].tolist())) == len(set(fp[:, 1].tolist())) == 4096


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_pack_unpack_roundtrip(data: st.DataObject) -> None:
    spec = Wide(N=data.draw(st.integers(1, 20)))
    layout = spec.layout
    cells = [data.draw(st.integers(c.lo, c.hi)) for c in layout.cells]
    words = layout.pack(cells)
    assert layout.unpack(words) == cells
    values = layout.values_from_cells(cells)
    assert layout.cells_from_values(values) == cells


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 62), min_size=1, max_size=8), st.data())
def test_pack_unpack_any_cell_sizes(bits: list[int], data: st.DataObject) -> None:
    """Cells of any sizes (mixed radix, in two words by first fit when the layout order
    would take more): packing round-trips, through both decoders."""
    from modelcheck.family import Decoder

    ns: dict = {f"v{i}": Int(0, 2**b + i) for i, b in enumerate(bits)}
    ns["Noop"] = action(lambda self, s, t: s.v0 >= 0)
    layout = type("Cells", (Spec,), ns)().layout
    cells = [[data.draw(st.integers(c.lo, c.hi)) for c in layout.cells] for _ in range(3)]
    words = layout.pack_columns([np.array(col) for col in zip(*cells)])
    assert [layout.unpack(w) for w in words] == cells
    every = np.arange(len(layout.cells))
    assert Decoder(layout).matrix(words, every).tolist() == cells


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.sampled_from([0, 0, 1, 3])), min_size=2,
                max_size=9), st.data())
def test_decode_powers_of_two_among_other_sizes(sizes: list[tuple[int, int]],
                                                data: st.DataObject) -> None:
    """Mixed radix with sizes ``2**b`` (divided out by shifts, taken modulo by masks)
    among other sizes (divisions): every cell decodes to its value (against Python
    integers' mixed radix), at every multiplier."""
    ns: dict = {f"v{i}": Int(0, 2**b + extra - 1) for i, (b, extra) in enumerate(sizes)}
    ns["pad"] = Int(0, 2**62 - 1)  # with pad2, past 64 bits: mixed radix
    ns["pad2"] = Int(0, 6)
    ns["Noop"] = action(lambda self, s, t: s.v0 >= 0)
    layout = type("Mixed", (Spec,), ns)().layout
    assert not layout.bitfields
    cells = [[data.draw(st.integers(c.lo, c.hi)) for c in layout.cells] for _ in range(4)]
    words = layout.pack_columns([np.array(col) for col in zip(*cells)])
    for row, w in zip(cells, words.tolist()):
        want = [0] * layout.n_words
        for i, v in enumerate(row):
            want[int(layout.word_of[i])] += (v - int(layout.lo[i])) * int(layout.mult[i])
        assert w == want
    for i in range(len(layout.cells)):
        assert layout.decode_cell(words, i).tolist() == [row[i] for row in cells]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from([0, 0, 1, 1, 16, 32, 47, 62]), min_size=2, max_size=9),
       st.data())
def test_pack_unpack_cells_that_fill_a_word_exactly(bits: list[int],
                                                    data: st.DataObject) -> None:
    """Cells of 2**b values (one-value cells included) whose sizes multiply to exactly
    2**64: the next cell, even a one-value one, starts a new word (its multiplier would
    be 2**64, which no word holds), and packing round-trips."""
    from modelcheck.family import Decoder

    ns: dict = {f"v{i}": Int(0, 2**b - 1) for i, b in enumerate(bits)}
    ns["Noop"] = action(lambda self, s, t: s.v0 >= 0)
    layout = type("Exact", (Spec,), ns)().layout
    assert all(int(m) < 2**64 for m in layout.mult.tolist())
    cells = [[data.draw(st.integers(c.lo, c.hi)) for c in layout.cells] for _ in range(3)]
    words = layout.pack_columns([np.array(col) for col in zip(*cells)])
    assert [layout.unpack(w) for w in words] == cells
    every = np.arange(len(layout.cells))
    assert Decoder(layout).matrix(words, every).tolist() == cells


def test_a_one_value_cell_after_a_full_word_explores() -> None:
    """A set of 64 possible members (a 64-bit word of its own) and a one-value cell."""

    class Full(Spec):
        s = SetOf(Int(0, 63))
        z = Int(0, 0)

        @action(i=Int(0, 2))
        def Add(self, s, t, i):
            t.s = s.s.with_(i)
            return ~s.s.has(i)

    r = explore(Full(), check_deadlock=False)
    assert (r.distinct_states, r.depth) == (8, 3)


def _bump(name: str, label: str):  # type: ignore[no-untyped-def]
    def bump(self, s, t):  # type: ignore[no-untyped-def]
        setattr(t, name, getattr(s, name) + 1)
        return getattr(s, name) < 2

    bump.__name__ = label
    return bump


def _cells_spec(bits: list[int]) -> type[Spec]:
    """Variables ``v0, v1, ...`` of ``2**b + 1`` values (``b = 0``: one value), an
    action bumping each many-valued one up to 2 and an invariant that every one-value
    variable is 0."""
    ns: dict = {"check_deadlock": False}
    ones = []
    for i, b in enumerate(bits):
        name = f"v{i}"
        ns[name] = Int(0, 0 if b == 0 else 2**b)
        if b == 0:
            ones.append(name)
            continue

        ns[f"Bump{i}"] = action(_bump(name, f"Bump{i}"))

    def ones_are_zero(self, s):  # type: ignore[no-untyped-def]
        e = getattr(s, ones[0]) == 0
        for name in ones[1:]:
            e = e & (getattr(s, name) == 0)
        return e

    ns["OnesAreZero"] = invariant(ones_are_zero)
    return type("Cells", (Spec,), ns)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0, 0, 3, 20, 30, 40]), min_size=3, max_size=7)
       .filter(lambda bs: 0 in bs and any(bs)))
def test_one_value_cells_between_others_read_as_their_value(bits: list[int]) -> None:
    """One-value cells anywhere in a mixed-radix layout (a one-value cell shares its
    multiplier with the cell after it): the run equals the one-state-at-a-time oracle,
    which never packs a state (a one-value cell once read the cells above it in its
    word as its own value: a violation of an invariant that holds)."""
    spec = _cells_spec(bits)()
    r = explore(spec)
    o = brute_force_check(spec)
    assert (r.status.value, r.distinct_states, r.depth) == (o.status, o.distinct, o.depth)


def test_a_one_value_cell_before_the_top_cell_of_a_word() -> None:
    """The case found: ``a`` (2**20 + 1 values), ``z`` (one value), ``v`` in one word
    of two (the state is wider than 64 bits): ``z`` is 0 in every state."""
    spec = _cells_spec([20, 0, 20, 30])()
    assert not spec.layout.bitfields and spec.layout.n_words == 2
    r = explore(spec)
    assert (r.status.value, r.distinct_states) == ("ok", 27)


def test_cells_that_fit_two_words_by_first_fit_are_exact() -> None:
    """Sizes 2**40, 2**30, 2**20, 2**30 take three words in layout order, two when
    each cell goes to the first word with room: exact fingerprints."""
    ns: dict = {f"v{i}": Int(0, 2**b - 1) for i, b in enumerate((40, 30, 20, 30))}
    ns["Noop"] = action(lambda self, s, t: s.v0 >= 0)
    layout = type("FirstFit", (Spec,), ns)().layout
    assert layout.n_words == 2 and layout.exact
    assert layout.word_of.tolist() == [0, 1, 0, 1]


def test_fingerprint64_is_fixed() -> None:
    # The hash is part of the checkpoint and trace format: it must never change.
    words = np.array([[0, 0], [1, 2], [2**64 - 1, 12345]], dtype=np.uint64)
    fps = fingerprint64(words)
    assert len(set(fps.tolist())) == 3
    assert fps.tolist() == fingerprint64(words.copy()).tolist()
    assert fps.tolist() == [int(x) for x in _reference_hash(words)]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 20), st.integers(1, 60), st.integers(0, 2**32 - 1))
def test_fingerprint64_matches_the_reference(n: int, k: int, seed: int) -> None:
    """Both ways of hashing (a few rows in Python integers, more in numpy) give the
    documented algorithm's values, whatever the batch's shape."""
    rng = np.random.default_rng(seed)
    words = rng.integers(0, 2**64, size=(n, k), dtype=np.uint64, endpoint=False)
    words[rng.random((n, k)) < 0.2] = np.uint64(2**64 - 1)  # carries in word + i * SEED
    assert fingerprint64(words).tolist() == _reference_hash(words)
    assert fingerprint64(words).dtype == np.uint64


def _mix(x: int) -> int:
    """SplitMix64's finaliser in plain Python integers."""
    mask = 2**64 - 1
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & mask
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & mask
    return x ^ (x >> 31)


def _fmix(x: int) -> int:
    """MurmurHash3's fmix64 in plain Python integers."""
    mask = 2**64 - 1
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & mask
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & mask
    return x ^ (x >> 33)


def _reference_hash(words: np.ndarray, seed: int = 0x9E3779B97F4A7C15) -> list[int]:
    """The documented algorithm in plain Python integers."""
    mask = 2**64 - 1
    mix = _mix
    out = []
    for row in words.tolist():
        h = seed
        for i, w in enumerate(row):
            h = mix(h ^ mix((w + i * seed) & mask))
        out.append(h)
    return out


def test_collision_probability() -> None:
    assert collision_probability(10**6, exact=True) == 0.0
    p = collision_probability(10**6, exact=False, bits=64)
    assert 2e-8 < p < 3e-8
    assert collision_probability(10**6, exact=False) == p / 2.0**64


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=50),
       st.integers(1, 2**62))
def test_mod_is_the_remainder(values: list[int], size: int) -> None:
    """The remainder by a multiplication (numpy's ``%`` of a column divides value by
    value) is Python's ``%``, over the whole ``uint64`` range."""
    from modelcheck.layout import _mod

    x = np.array(values, dtype=np.uint64)
    assert _mod(x, size).tolist() == [v % size for v in values]
    assert x.tolist() == values  # (the input is left as it was)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(-5, 5), st.integers(0, 40)), min_size=2, max_size=8),
       st.data())
def test_decoded_cells_are_new_arrays_with_their_offsets(cells_spec: list[tuple[int, int]],
                                                        data: st.DataObject) -> None:
    """Cells with any lowest value, bit fields and mixed radix: each decodes to its
    value, and the column handed back is the caller's to change (the packed words,
    a whole-word cell's included, stay as they were)."""
    ns: dict = {f"v{i}": Int(lo, lo + 2**b) for i, (lo, b) in enumerate(cells_spec)}
    if data.draw(st.booleans()):
        ns["pad"] = Int(0, 2**62 - 1)  # past 64 bits: mixed radix
    ns["Noop"] = action(lambda self, s, t: s.v0 >= s.v0)
    layout = type("Offsets", (Spec,), ns)().layout
    rows = [[data.draw(st.integers(c.lo, c.hi)) for c in layout.cells] for _ in range(3)]
    words = layout.pack_columns([np.array(col) for col in zip(*rows)])
    before = words.copy()
    for i in range(len(layout.cells)):
        col = layout.decode_cell(words, i)
        assert col.dtype == np.int64 and col.tolist() == [r[i] for r in rows]
        col += 1
    assert np.array_equal(words, before)
