"""Reading a corpus of PTX files as checked in: plain `.ptx` or xz-compressed
`.ptx.xz` (the corpus under tests/data/ptx_corpus is compressed to keep the
repository small). Only finding and decompressing: what is done with the
text (parsing, loading, counting registers) belongs to the callers.
"""
from __future__ import annotations

import lzma
from pathlib import Path

SUFFIXES = (".ptx", ".ptx.xz")


def is_ptx(path: Path) -> bool:
    return path.name.endswith(SUFFIXES)


def corpus_files(paths: list[Path]) -> list[Path]:
    """The PTX files named, and those under the folders named, sorted."""
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out += sorted(q for q in p.rglob("*") if q.is_file() and is_ptx(q))
        elif p.is_file():
            if not is_ptx(p):
                raise ValueError(f"{p}: not a PTX file (expected {' or '.join(SUFFIXES)})")
            out.append(p)
        else:
            raise FileNotFoundError(f"{p}: no such file or folder")
    return out


def read_ptx(path: Path) -> str:
    """The PTX text of `path`, decompressed if it ends in .xz."""
    path = Path(path)
    data = path.read_bytes()
    if path.name.endswith(".xz"):
        try:
            data = lzma.decompress(data)
        except lzma.LZMAError as e:
            raise ValueError(f"{path}: corrupt xz data ({e})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: PTX is not UTF-8 text (byte {e.start})") from None


def stem(path: Path) -> str:
    """The file's name without .ptx/.ptx.xz."""
    name = Path(path).name
    for s in SUFFIXES[::-1]:
        if name.endswith(s):
            return name[: -len(s)]
    return name


def read_register_table(path: Path) -> dict[tuple[str, str], int]:
    """A stored table of ptxas register counts: tab-separated file (relative
    to the table's folder), kernel, registers; '#' lines are comments."""
    table: dict[tuple[str, str], int] = {}
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        if line.startswith("#") or not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 3 or not parts[2].isdigit():
            raise ValueError(f"{path}:{n}: expected 'file<TAB>kernel<TAB>registers', got {line!r}")
        table[(parts[0], parts[1])] = int(parts[2])
    return table
