"""The native code cache: entries that check out are loaded, anything else
is a miss (never a crash), concurrent processes never see or leave a
partial entry, the directory stays bounded, an unwritable directory only
turns caching off; a warm load in a fresh process plans, emits and
compiles nothing."""
from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cache_worker
from gpudbg.sim.native import code_cache, plan_store
from gpudbg.sim.native.code_cache import CodeCache, decode, encode

HERE = Path(__file__).resolve().parent


def entry_key(*parts: str) -> str:
    """A key of the cache's shape (64 hex digits) made of `parts`."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


KEY = entry_key("program", "ir")
keys = st.builds(entry_key, st.text(max_size=20), st.text(max_size=20))


@pytest.fixture(autouse=True)
def _worker_processes_count_compiles_alone(monkeypatch):
    """The worker processes count what they compile: under differential
    mode (GPUDBG_DIFFERENTIAL, inherited) they would also compile for the
    comparison run, which is not what these tests are about."""
    monkeypatch.delenv("GPUDBG_DIFFERENTIAL", raising=False)


def _spawn():
    return multiprocessing.get_context("spawn")


@given(keys, st.binary(max_size=2000))
def test_an_entry_decodes_to_its_payload(key, payload):
    assert decode(key, encode(key, payload)) == payload


@given(keys, st.binary(min_size=1, max_size=300), st.data())
def test_a_truncated_or_extended_entry_is_refused(key, payload, data):
    raw = encode(key, payload)
    cut = data.draw(st.integers(0, len(raw) - 1))
    assert decode(key, raw[:cut]) is None
    assert decode(key, raw + data.draw(st.binary(min_size=1, max_size=8))) is None


@given(keys, st.binary(max_size=300), st.data())
def test_any_flipped_bit_is_refused(key, payload, data):
    raw = bytearray(encode(key, payload))
    pos = data.draw(st.integers(0, len(raw) - 1))
    raw[pos] ^= 1 << data.draw(st.integers(0, 7))
    assert decode(key, bytes(raw)) is None


@given(keys, keys, st.binary(max_size=100))
def test_an_entry_of_another_key_is_refused(a, b, payload):
    if a != b:
        assert decode(b, encode(a, payload)) is None


def test_a_key_that_is_not_a_digest_is_refused(tmp_path):
    with pytest.raises(ValueError, match="64 lowercase hex"):
        CodeCache(tmp_path).load("../../etc/passwd")


def test_miss_then_hit(tmp_path):
    c = CodeCache(tmp_path / "sub")
    assert c.load(KEY) is None
    c.store(KEY, b"\x7fELF object")
    assert c.load(KEY) == b"\x7fELF object"
    assert [p.name for p in (tmp_path / "sub").iterdir()] == [KEY + ".o"]


@pytest.mark.parametrize("damage", ["truncated", "flipped", "wrong key", "empty", "garbage"])
def test_a_corrupt_entry_is_a_miss_and_is_removed(tmp_path, damage):
    c = CodeCache(tmp_path)
    c.store(KEY, bytes(range(256)) * 4)
    p = c.entry_path(KEY)
    raw = bytearray(p.read_bytes())
    if damage == "truncated":
        raw = raw[:len(raw) // 2]
    elif damage == "flipped":
        raw[-100] ^= 0x10
    elif damage == "wrong key":
        raw = bytearray(encode(entry_key("other", "ir"), bytes(range(256)) * 4))
    elif damage == "empty":
        raw = bytearray()
    else:
        raw = bytearray(b"not a cache entry at all" * 10)
    p.write_bytes(bytes(raw))
    assert c.load(KEY) is None
    assert not p.exists()
    c.store(KEY, b"fresh")
    assert c.load(KEY) == b"fresh"


def test_least_recently_used_entries_are_evicted_past_the_bound(tmp_path):
    c = CodeCache(tmp_path, max_bytes=10**9)
    ks = [entry_key(str(i), "") for i in range(5)]
    for i, k in enumerate(ks):
        c.store(k, bytes(1000))
        os.utime(c.entry_path(k), (1000 + i, 1000 + i))     # ages by data, not by the clock
    os.utime(c.entry_path(ks[0]), (2000, 2000))              # the oldest was used recently
    size = c.entry_path(ks[0]).stat().st_size
    c.max_bytes = 3 * size
    assert c.evict() == 2 * size
    assert [c.entry_path(k).exists() for k in ks] == [True, False, False, True, True]


def test_temporaries_of_dead_writers_are_swept_and_live_ones_kept(tmp_path):
    c = CodeCache(tmp_path)
    dead = tmp_path / ".tmp-dead.o"
    live = tmp_path / ".tmp-live.o"
    dead.write_bytes(b"x")
    live.write_bytes(b"y")
    os.utime(dead, (1000, 1000))
    c.evict()
    assert not dead.exists() and live.exists()


def test_clear_removes_every_entry(tmp_path):
    c = CodeCache(tmp_path)
    for i in range(3):
        c.store(entry_key(str(i), ""), b"x")
    assert c.clear() == 3 and list(tmp_path.iterdir()) == []


def test_directory_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv(code_cache.ENV_SWITCH, raising=False)
    monkeypatch.setenv(code_cache.ENV_DIR, str(tmp_path / "mine"))
    assert code_cache.directory() == tmp_path / "mine"
    monkeypatch.delenv(code_cache.ENV_DIR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert code_cache.directory() == tmp_path / "gpudbg" / "native"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert code_cache.directory() == tmp_path / "home" / ".cache" / "gpudbg" / "native"
    monkeypatch.setenv(code_cache.ENV_SWITCH, "off")
    assert code_cache.directory() is None and code_cache.current() is None


def _store_many(path: str, rounds: int, seed: int) -> None:
    c = CodeCache(Path(path))
    for i in range(rounds):
        c.store(KEY, bytes([seed, i % 256]) * (5000 + 997 * (i % 7)))


def test_readers_never_see_a_partial_entry_while_writers_replace_it(tmp_path):
    ctx = _spawn()
    writers = [ctx.Process(target=_store_many, args=(str(tmp_path), 150, s)) for s in (1, 2)]
    for w in writers:
        w.start()
    c = CodeCache(tmp_path)
    seen = 0
    while any(w.is_alive() for w in writers):
        try:
            raw = c.entry_path(KEY).read_bytes()
        except FileNotFoundError:
            continue
        assert decode(KEY, raw) is not None, "a reader saw a partial entry"
        seen += 1
    for w in writers:
        w.join(300)
        assert w.exitcode == 0
    assert decode(KEY, c.entry_path(KEY).read_bytes()) is not None
    assert [p.name for p in tmp_path.iterdir()] == [KEY + ".o"]    # no temporaries left


def test_two_processes_compiling_the_same_program_at_once(tmp_path):
    ctx = _spawn()
    barrier = ctx.Barrier(2)
    q = ctx.Queue()
    salt = 11
    procs = [ctx.Process(target=cache_worker._queue_run, args=(q, str(tmp_path), salt, barrier))
             for _ in range(2)]
    for p in procs:
        p.start()
    got = [q.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(300)
    for g in got:
        assert "error" not in g, g["error"]
        assert g == {"compiled": 1, "hits": 0, "planned": 1, "correct": True, "segments": g["segments"]}
        assert g["segments"] > 0
    entries = list(tmp_path.iterdir())
    assert len(entries) == 1 and entries[0].suffix == ".o"
    # a third process finds it and compiles nothing
    third = cache_worker.__file__
    out = subprocess.run([sys.executable, third, str(tmp_path), str(salt)], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == \
        {"compiled": 0, "hits": 1, "planned": 0, "correct": True, "segments": got[0]["segments"]}


def test_a_corrupt_entry_on_disk_is_recompiled_by_the_engine(tmp_path):
    def child():
        out = subprocess.run([sys.executable, cache_worker.__file__, str(tmp_path), "12"],
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])
    first = child()
    assert first["compiled"] == 1 and first["correct"]
    (entry,) = tmp_path.iterdir()
    raw = bytearray(entry.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    entry.write_bytes(bytes(raw))
    again = child()
    assert again["compiled"] == 1 and again["hits"] == 0 and again["correct"]
    warm = child()
    assert warm["hits"] == 1 and warm["planned"] == 0 and warm["compiled"] == 0 and warm["correct"]


def test_an_entry_whose_plans_do_not_read_back_is_recompiled(tmp_path):
    """A whole, checksummed entry whose payload is not a plan store
    payload of this format (another gpudbg wrote it, or a bug did): a
    miss, removed, compiled again and replaced by a good one."""
    def child():
        out = subprocess.run([sys.executable, cache_worker.__file__, str(tmp_path), "13"],
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])
    assert child()["compiled"] == 1
    (entry,) = tmp_path.iterdir()
    key = entry.stem
    c = CodeCache(tmp_path)
    stored, obj = plan_store.unpack(c.load(key))
    for bad in (b"", b"\x05\x00\x00\x00{bad}" + obj,
                plan_store.pack(stored, obj).replace(b'"format":%d' % plan_store.FORMAT, b'"format":99')):
        c.store(key, bad)
        again = child()
        assert again["compiled"] == 1 and again["planned"] == 1 and again["correct"], bad[:20]
        assert plan_store.unpack(c.load(key)) is not None      # the good entry is back


def test_an_unwritable_directory_only_disables_caching(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    where = blocker / "cache"            # cannot be created, even by root
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = cache_worker.run_native(str(where), salt=101)
        second = cache_worker.run_native(str(where), salt=102)
    assert first["correct"] and first["segments"] > 0 and first["compiled"] == 1
    assert second["correct"] and second["compiled"] == 1
    mine = [w for w in caught if "native code cache disabled" in str(w.message)]
    assert len(mine) == 1 and str(where) in str(mine[0].message)


def test_the_command_line_reports_and_clears(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(code_cache.ENV_SWITCH, raising=False)
    monkeypatch.setenv(code_cache.ENV_DIR, str(tmp_path))
    CodeCache(tmp_path).store(KEY, bytes(2_000_000))
    assert code_cache.main([]) == 0
    assert f"native code cache {tmp_path}: 1 entries, 2.0 MB" in capsys.readouterr().out
    assert code_cache.main(["--clear"]) == 0
    assert "removed 1 entries" in capsys.readouterr().out and list(tmp_path.iterdir()) == []
    monkeypatch.setenv(code_cache.ENV_SWITCH, "off")
    code_cache.main([])
    assert "off" in capsys.readouterr().out
