"""The run directory's ``.npy`` files are opened by a header parse of their own and a
read-only mapping (:func:`modelcheck.shards.files._load`, ``_header``, ``_rows``):
checked against ``numpy.load`` on arrays of every dtype, shape and byte order the
files may hold, and on headers the fast parse leaves to numpy."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck.shards import files

DTYPES = ["<u8", "<i8", "<u4", "<i4", "<i2", "|i1", "|u1", "|b1", ">u8", ">i4", "<f8"]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(DTYPES), st.lists(st.integers(0, 5), min_size=0, max_size=3),
       st.booleans(), st.integers(0, 2**31))
def test_load_equals_numpy(dtype: str, shape: list[int], fortran: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 100, size=tuple(shape)).astype(np.dtype(dtype))
    if fortran:
        a = np.asfortranarray(a)
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    raw = buf.getvalue()
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "a.npy"
        p.write_bytes(raw)
        ref = np.load(p, allow_pickle=False)
        for mm in (True, False):
            got = files._load(p, mmap=mm)
            assert got.dtype == ref.dtype and got.shape == ref.shape
            assert np.array_equal(got, ref)
            if mm:
                assert not got.flags.writeable
        with open(p, "rb") as f:
            shape_, fortran_, dtype_ = files._header(f)
            at = f.tell()
        with open(p, "rb") as f:
            version = np.lib.format.read_magic(f)
            want = (np.lib.format.read_array_header_1_0(f) if version == (1, 0)
                    else np.lib.format.read_array_header_2_0(f))
            assert (shape_, fortran_, dtype_) == want and at == f.tell()
        if a.ndim:
            assert files._rows(p) == a.shape[0]


@pytest.mark.parametrize("version", [(1, 0), (2, 0)])
def test_header_versions(tmp_path: Path, version: tuple[int, int]) -> None:
    a = np.arange(10, dtype=np.uint64).reshape(5, 2)
    p = tmp_path / "v.npy"
    with open(p, "wb") as f:
        np.lib.format.write_array(f, a, version=version)
    assert np.array_equal(files._load(p), a) and files._rows(p) == 5
