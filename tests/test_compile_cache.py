"""The compile cache detects a damaged entry, discards it and compiles
afresh (a truncated entry that still held `.version` was returned as is
before, so that source failed to load for good), and concurrent writers
never expose half an entry."""
from __future__ import annotations

import threading

import pytest

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")

import gpudbg
from gpudbg import compiler
from gpudbg.compiler import CacheEntryError, read_cache_entry
from gpudbg.reader_error import ReaderError

SRC = r"""
extern "C" __global__ void twice(int *a) { a[threadIdx.x] *= 2; }
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "gpudbg" / "ptx"


def _entry(cache):
    (entry,) = cache.glob("*.ptx")
    return entry


def _nvrtc_calls(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = compiler._run_nvrtc

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(compiler, "_run_nvrtc", counting)
    return calls


@pytest.mark.parametrize("damage", [
    lambda raw: raw[: len(raw) * 3 // 5],                      # a full disk cut it (keeps .version)
    lambda raw: raw.replace(b"mul.", b"mul!", 1),               # a changed byte
    lambda raw: raw + b"\n// appended\n",                       # something appended
    lambda raw: raw.split(b"\n", 1)[1],                         # the raw PTX of the old format
    lambda raw: b"",                                            # empty
])
def test_a_damaged_entry_is_discarded_and_recompiled(cache, monkeypatch, damage):
    ptx = gpudbg.compile_ptx(SRC, name="twice.cu")
    entry = _entry(cache)
    entry.write_bytes(damage(entry.read_bytes()))
    calls = _nvrtc_calls(monkeypatch)
    assert gpudbg.compile_ptx(SRC, name="twice.cu") == ptx and len(calls) == 1
    assert read_cache_entry(entry) == ptx                       # rewritten whole
    assert gpudbg.compile_ptx(SRC, name="twice.cu") == ptx and len(calls) == 1   # a hit again
    m = gpudbg.compile(SRC, name="twice.cu")
    a = gpudbg.to_device(__import__("numpy").arange(4, dtype="int32"))
    m.twice[1, 4](a)
    assert a.to_host().tolist() == [0, 2, 4, 6]


def test_the_readers_error_names_the_entry_and_the_place(cache):
    gpudbg.compile_ptx(SRC, name="twice.cu")
    entry = _entry(cache)
    raw = entry.read_bytes()
    header = raw.index(b"\n") + 1
    entry.write_bytes(raw[:header + 10])
    with pytest.raises(CacheEntryError) as ei:
        read_cache_entry(entry)
    e = ei.value
    assert isinstance(e, ReaderError) and e.file == str(entry) and e.offset == header + 10
    assert "truncated" in e.reason and e.location() == f"{entry}: offset 0x{header + 10:x}"
    entry.write_bytes(b"garbage")
    with pytest.raises(CacheEntryError, match="no gpudbg cache header") as ei:
        read_cache_entry(entry)
    assert ei.value.offset == 0


def test_a_damaged_entry_that_cannot_be_removed_is_still_a_miss(cache, monkeypatch):
    ptx = gpudbg.compile_ptx(SRC, name="twice.cu")
    entry = _entry(cache)
    entry.write_bytes(entry.read_bytes()[:100])
    monkeypatch.setattr(compiler, "_cache_write", lambda key, text: None)   # and cannot be rewritten
    real_unlink = type(entry).unlink

    def refuse(self, *a, **k):
        if self == entry:
            raise PermissionError("read-only cache")
        return real_unlink(self, *a, **k)
    monkeypatch.setattr(type(entry), "unlink", refuse)
    assert gpudbg.compile_ptx(SRC, name="twice.cu") == ptx
    assert gpudbg.compile_ptx(SRC, name="twice.cu") == ptx


def test_concurrent_writers_and_readers_see_whole_entries(cache):
    bodies = [f".version 8.0\n// writer {i}\n" + "x" * (1000 * (i + 1)) + "\n" for i in range(4)]
    key = "0" * 64
    seen: list[str | None] = []
    stop = threading.Event()

    def writer(body: str) -> None:
        while not stop.is_set():
            compiler._cache_write(key, body)

    def reader() -> None:
        for _ in range(300):
            seen.append(compiler._cache_read(key))

    writers = [threading.Thread(target=writer, args=(b,)) for b in bodies]
    for t in writers:
        t.start()
    readers = [threading.Thread(target=reader) for _ in range(2)]
    for t in readers:
        t.start()
    for t in readers:
        t.join()
    stop.set()
    for t in writers:
        t.join()
    hits = [s for s in seen if s is not None]
    assert hits and set(hits) <= set(bodies)
    assert [p.name for p in cache.iterdir() if p.name.endswith(".tmp")] == []
