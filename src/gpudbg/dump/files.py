"""How gpudbg's dump writers (GPU coredumps, devcoredumps) put a file on
disk: atomically, private (mode 0600) and never over an existing file.

The one idea: the bytes go to a temporary file (mkstemp: mode 0600 whatever
the umask) in the target directory, are flushed to disk, and the file is
then published with link(2), which fails instead of replacing when the name
is taken; so a reader never sees a half-written dump and an existing file
(an earlier dump, or anything else) is never touched. A taken name either
gets a number before its extension (core.nvcudmp -> core.1.nvcudmp,
core.2.nvcudmp, ...) or is refused with FileExistsError, as the caller
chooses. On a file system without hard links the file is created with
O_EXCL instead (still never overwriting, but visible while it is written).

It does not create names from patterns (the writers do) or lock anything.
"""
from __future__ import annotations

import enum
import errno
import os
import tempfile
from pathlib import Path
from typing import Iterator

MAX_NUMBER = 100_000


class OnExisting(enum.Enum):
    """What a dump writer does when its file name is already taken."""

    NUMBER = "number"   # publish under name.1.ext, name.2.ext, ... (the first free one)
    REFUSE = "refuse"   # raise FileExistsError


def numbered(path: Path, n: int) -> Path:
    """`path` with `.n` before its extension (n = 0: `path` itself)."""
    if n == 0:
        return path
    return path.with_name(f"{path.stem}.{n}{path.suffix}") if path.suffix else path.with_name(f"{path.name}.{n}")


def _candidates(path: Path, on_existing: OnExisting) -> Iterator[Path]:
    yield path
    if on_existing is OnExisting.NUMBER:
        for n in range(1, MAX_NUMBER):
            yield numbered(path, n)


def _exclusive_write(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        try:
            os.unlink(path)
        except OSError:
            pass
        raise


def replace_atomically(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` at `path`, replacing what is there, atomically: a
    private temp file beside it, then rename, so a concurrent reader sees
    the old file or the whole new one (findings files, the compile cache)."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def publish(path: str | os.PathLike[str], data: bytes,
            on_existing: OnExisting = OnExisting.NUMBER) -> Path:
    """Write `data` as a new file at `path` (or, with NUMBER, the first free
    numbered name); returns the path written. The directory must exist."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        linkable = True
        for candidate in _candidates(path, on_existing):
            try:
                if linkable:
                    os.link(tmp, candidate)
                else:
                    _exclusive_write(candidate, data)
                return candidate
            except FileExistsError:
                continue
            except OSError as e:
                if not linkable or e.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS,
                                                   errno.EMLINK, errno.EXDEV):
                    raise
                linkable = False   # no hard links here: create the name exclusively instead
                try:
                    _exclusive_write(candidate, data)
                    return candidate
                except FileExistsError:
                    continue
        if on_existing is OnExisting.REFUSE:
            raise FileExistsError(errno.EEXIST, "file exists; a dump never overwrites a file", str(path))
        raise FileExistsError(errno.EEXIST, f"{path} and its numbered names up to .{MAX_NUMBER - 1} "
                                            f"all exist", str(path))
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
