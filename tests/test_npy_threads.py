"""The state graph's files are read by several threads, and numpy parses each ``.npy``
header with ``ast.literal_eval``, which CPython 3.11 cannot run in two threads at once
("SystemError: AST constructor recursion depth mismatch", seen in a workers' liveness
run). The headers ``numpy.save`` writes for the run's arrays (one or two dimensions)
are parsed without it (:data:`modelcheck.shards.files._HEADER`); any other is parsed by
numpy under one lock."""

from __future__ import annotations

import ast
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from modelcheck.shards import files, stategraph


@pytest.fixture
def arrays(tmp_path: Path) -> list[tuple[Path, np.ndarray]]:
    out = []
    for i, dt in enumerate([np.uint64, np.int32, np.uint8, np.uint32]):
        a = (np.arange(i * 7 + 3, dtype=np.int64) * 3 + i).astype(dt)
        p = tmp_path / f"a{i}.npy"
        np.save(p, a)
        out.append((p, a))
    p = tmp_path / "two.npy"
    a2 = np.arange(12, dtype=np.uint64).reshape(6, 2)
    np.save(p, a2)
    out.append((p, a2))
    return out


def test_headers_are_parsed_under_the_lock(monkeypatch, arrays, tmp_path) -> None:
    parsed: list[bool] = []
    real = ast.literal_eval

    def spy(text):  # type: ignore[no-untyped-def]
        parsed.append(files._PARSE.locked())
        return real(text)

    monkeypatch.setattr(ast, "literal_eval", spy)
    for path, a in arrays:
        for got in (stategraph._load(path), files._load(path, mmap=False),
                    files._load(path, mmap=True)):
            assert got.dtype == a.dtype and np.array_equal(got, a)
        assert files._rows(path) == len(a)
    assert parsed == []  # the run's headers: parsed without literal_eval
    p = tmp_path / "three.npy"  # a header the fast parse does not take: numpy's
    a3 = np.arange(24, dtype=np.uint16).reshape(2, 3, 4)
    np.save(p, a3)
    for got in (files._load(p, mmap=False), files._load(p, mmap=True)):
        assert got.dtype == a3.dtype and np.array_equal(got, a3)
    assert parsed and all(parsed)


def test_many_threads_read_the_same_files(arrays) -> None:
    def read(i: int) -> bool:
        path, a = arrays[i % len(arrays)]
        return bool(np.array_equal(stategraph._load(path), a))

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(read, range(400)))
