"""The on-disk cache of compiled native code: a program's object bytes
(sim/native/jit.compile_object) kept across processes, so a kernel pays
LLVM's optimizer and code generator once per machine, not once per run.

The one idea: an entry is a self-describing file whose header names what
it holds (magic, format version, the full key, payload length, payload
sha256), written whole to a temporary file in the same directory and
renamed into place (os.replace is atomic), so a reader sees a complete
entry or none, and any entry that does not check out (truncated, a flipped
byte, another key or format) is treated as a miss: removed and compiled
again, never trusted and never an error. The engine's keys and payloads
are plan_store.py's: a key is what the code depends on (the program, the
variant, llvmlite/LLVM, the host CPU and the code generator's source), a
payload the object code with the plans that attach it, so a warm load
runs neither the planner nor LLVM.

Where: $GPUDBG_CACHE_DIR, else $XDG_CACHE_HOME/gpudbg/native, else
~/.cache/gpudbg/native; GPUDBG_NATIVE_CACHE=off disables it. The directory
is bounded (MAX_BYTES): past it the least recently used entries go (a hit
refreshes an entry's time). A directory that cannot be created or written
disables storing there, with one warning per process.

What it deliberately does not do: lock. Two processes compiling the same
program both compile and both rename; the last rename wins and both
entries are the same bytes. It does not cache in memory either (the
engine keeps loaded code per process).
"""
from __future__ import annotations

import hashlib
import os
import struct
import tempfile
import threading
import time
import warnings
from pathlib import Path

ENV_DIR = "GPUDBG_CACHE_DIR"
ENV_SWITCH = "GPUDBG_NATIVE_CACHE"
OFF_VALUES = ("0", "off", "no", "false")
MAGIC = b"GPUDBGNC"
FORMAT = 1
SUFFIX = ".o"
TEMP_PREFIX = ".tmp-"
MAX_BYTES = 256 << 20        # the directory's bound (entries and stale temporaries)
STALE_TEMP_SECONDS = 3600.0  # a temporary this old belongs to a writer that died
# magic, format, key length, payload length, payload sha256
_HEAD = struct.Struct("<8sIIQ32s")
_KEY_CHARS = frozenset("0123456789abcdef")


def directory() -> Path | None:
    """The cache directory the environment asks for (None: disabled)."""
    if os.environ.get(ENV_SWITCH, "").strip().lower() in OFF_VALUES:
        return None
    chosen = os.environ.get(ENV_DIR)
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gpudbg" / "native"


def encode(key: str, payload: bytes) -> bytes:
    """An entry's bytes: header, key, payload."""
    k = key.encode("ascii")
    return _HEAD.pack(MAGIC, FORMAT, len(k), len(payload), hashlib.sha256(payload).digest()) + k + payload


def decode(key: str, data: bytes) -> bytes | None:
    """The payload of entry bytes if they are a whole, unchanged entry of
    this format for `key`; else None."""
    if len(data) < _HEAD.size:
        return None
    magic, fmt, klen, plen, digest = _HEAD.unpack_from(data)
    if magic != MAGIC or fmt != FORMAT:
        return None
    k = key.encode("ascii")
    start = _HEAD.size + klen
    if klen != len(k) or data[_HEAD.size:start] != k or len(data) != start + plen:
        return None
    payload = data[start:]
    if hashlib.sha256(payload).digest() != digest:
        return None
    return payload


class CodeCache:
    """One cache directory: load, store and keep it under its bound."""

    def __init__(self, path: Path, max_bytes: int = MAX_BYTES):
        self.path = Path(path)
        self.max_bytes = max_bytes

    def entry_path(self, key: str) -> Path:
        if len(key) != 64 or not set(key) <= _KEY_CHARS:
            raise ValueError(f"native code cache key {key!r} is not 64 lowercase hex digits")
        return self.path / (key + SUFFIX)

    def load(self, key: str) -> bytes | None:
        """The cached payload for `key`, or None (missing or damaged: a
        damaged entry is removed)."""
        p = self.entry_path(key)
        try:
            data = p.read_bytes()
        except OSError:
            return None
        payload = decode(key, data)
        if payload is None:
            _remove(p)
            return None
        try:
            os.utime(p)               # recently used: evicted last
        except OSError:
            pass
        return payload

    def store(self, key: str, payload: bytes) -> bool:
        """Write the entry (atomically); False when the directory cannot
        be written (OSError is left to the caller to report)."""
        p = self.entry_path(key)
        self.path.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=SUFFIX, dir=self.path)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(encode(key, payload))
            os.replace(tmp, p)
        except BaseException:
            _remove(Path(tmp))
            raise
        self.evict()
        return True

    def evict(self) -> int:
        """Remove least recently used entries (and temporaries of dead
        writers) until the directory is within its bound; bytes removed."""
        now = time.time()
        files = []
        for e in _scan(self.path):
            name = e.name
            if not name.endswith(SUFFIX):
                continue
            try:
                st = e.stat()
            except OSError:
                continue
            if name.startswith(TEMP_PREFIX):
                if now - st.st_mtime > STALE_TEMP_SECONDS:
                    _remove(Path(e.path))
                continue              # a live writer's file: not ours to judge
            files.append((st.st_mtime, st.st_size, e.path))
        total = sum(size for _, size, _ in files)
        freed = 0
        for _, size, path in sorted(files):
            if total - freed <= self.max_bytes:
                break
            if _remove(Path(path)):
                freed += size
        return freed

    def clear(self) -> int:
        """Remove every entry; how many."""
        n = 0
        for e in _scan(self.path):
            if e.name.endswith(SUFFIX) and _remove(Path(e.path)):
                n += 1
        return n


def _scan(path: Path) -> list:
    try:
        with os.scandir(path) as it:
            return list(it)
    except OSError:
        return []


def _remove(p: Path) -> bool:
    try:
        p.unlink()
        return True
    except OSError:
        return False


_warned: set[str] = set()
_warn_lock = threading.Lock()


def _warn_once(path: Path, error: OSError) -> None:
    with _warn_lock:
        if str(path) in _warned:
            return
        _warned.add(str(path))
    warnings.warn(f"gpudbg: native code cache disabled: cannot write {path} "
                  f"({error.strerror or error}); set {ENV_DIR} to a writable directory "
                  f"or {ENV_SWITCH}=off", RuntimeWarning, stacklevel=3)


def current() -> CodeCache | None:
    """The cache of the current environment (None: disabled, or a
    directory this process already failed to write)."""
    d = directory()
    if d is None or str(d) in _warned:
        return None
    return CodeCache(d)


def load(key: str) -> bytes | None:
    """The cached object code for `key` in the current cache, or None."""
    c = current()
    return None if c is None else c.load(key)


def discard(key: str) -> None:
    """Remove the entry of `key` from the current cache (a payload its
    reader refused)."""
    c = current()
    if c is not None:
        _remove(c.entry_path(key))


def store(key: str, payload: bytes) -> None:
    """Keep `payload` for `key` in the current cache; an unwritable
    directory disables caching there (one warning), never fails."""
    c = current()
    if c is None:
        return
    try:
        c.store(key, payload)
    except OSError as e:
        _warn_once(c.path, e)


def main(argv: list[str] | None = None) -> int:
    """`python -m gpudbg.sim.native.code_cache [--clear]`: where the cache
    is, how much it holds; --clear empties it."""
    import argparse
    ap = argparse.ArgumentParser(prog="python -m gpudbg.sim.native.code_cache",
                                 description="gpudbg's cache of compiled native code")
    ap.add_argument("--clear", action="store_true", help="remove every cached entry")
    args = ap.parse_args(argv)
    d = directory()
    if d is None:
        print(f"native code cache: off ({ENV_SWITCH})")
        return 0
    c = CodeCache(d)
    if args.clear:
        print(f"native code cache {d}: removed {c.clear()} entries")
        return 0
    sizes = []
    for e in _scan(d):
        if e.name.endswith(SUFFIX) and not e.name.startswith(TEMP_PREFIX):
            try:
                sizes.append(e.stat().st_size)
            except OSError:
                pass
    print(f"native code cache {d}: {len(sizes)} entries, {sum(sizes) / 1e6:.1f} MB "
          f"(bound {c.max_bytes / 1e6:.0f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
