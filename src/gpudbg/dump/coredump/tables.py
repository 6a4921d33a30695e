"""The row structs of an `.nvcudmp` GPU coredump, as data.

Each table is a list of (since-version, field, type) triples in declaration
order (COREDUMP-FORMAT.md §3); a layout version selects the prefix of fields
a driver branch wrote. One description drives both directions: `pack_rows`
writes rows of a layout, `unpack_rows` reads rows of any entry size the way
libcudacore does, stepping by `sh_entsize` and reading only fields whose end
lies inside the row, so older (shorter) and newer (longer) rows both load.
Rows are plain dicts of field name -> int. Natural alignment and tail
padding follow the C layout the driver uses (every table here is 8-byte
aligned once padded). Deliberately not modelled: the packed, unpadded rows a
newer LLDB test helper writes (a reader still steps over them by entsize).
"""
from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from functools import lru_cache

SHT_LOUSER = 0x80000000


class SectionType(enum.IntEnum):
    """CUDBG section types (sh_type = SHT_LOUSER + n)."""

    MANAGED_MEM = SHT_LOUSER + 1
    GLOBAL_MEM = SHT_LOUSER + 2
    LOCAL_MEM = SHT_LOUSER + 3
    SHARED_MEM = SHT_LOUSER + 4
    DEV_REGS = SHT_LOUSER + 5
    ELF_IMG = SHT_LOUSER + 6
    RELF_IMG = SHT_LOUSER + 7
    BT = SHT_LOUSER + 8
    DEV_TABLE = SHT_LOUSER + 9
    CTX_TABLE = SHT_LOUSER + 10
    SM_TABLE = SHT_LOUSER + 11
    GRID_TABLE = SHT_LOUSER + 12
    CTA_TABLE = SHT_LOUSER + 13
    WP_TABLE = SHT_LOUSER + 14
    LN_TABLE = SHT_LOUSER + 15
    MOD_TABLE = SHT_LOUSER + 16
    DEV_PRED = SHT_LOUSER + 17
    PARAM_MEM = SHT_LOUSER + 18
    DEV_UREGS = SHT_LOUSER + 19
    DEV_UPRED = SHT_LOUSER + 20
    CB_TABLE = SHT_LOUSER + 21
    META_DATA = SHT_LOUSER + 22
    CBU_BAR = SHT_LOUSER + 23
    # Ours, far from NVIDIA's range so a future CUDBG type cannot collide:
    # JSON with register maps, lane-level exceptions and embedded PTX.
    GPUDBG_NOTE = SHT_LOUSER + 0x67640001


class Layout(enum.IntEnum):
    """Driver branches that changed row layouts (2024 header history)."""

    R346 = 346
    R400 = 400
    R525 = 525
    R550 = 550
    R555 = 555
    R565 = 565
    R570 = 570
    R575 = 575


_FORMATS = {"u64": "Q", "u32": "I", "u16": "H"}
_SIZES = {"u64": 8, "u32": 4, "u16": 2}


def _f(since: int, names: str, typ: str) -> list[tuple[int, str, str]]:
    return [(since, n, typ) for n in names.split()]


# table name -> [(since, field, type)], in C declaration order.
TABLES: dict[str, list[tuple[int, str, str]]] = {
    "device": _f(346, "devName devType smType", "u64") + _f(
        346, "devId pciBusId pciDevId numSMs numWarpsPerSM numLanesPerWarp numRegsPerLane "
             "numPredicatesPrLane smMajor smMinor instructionSize status", "u32")
        + _f(400, "numUniformRegsPrWarp numUniformPredicatesPrWarp", "u32")
        + _f(575, "numConvergenceBarriersPrWarp padding0", "u32"),
    "context": _f(346, "contextId sharedWindowBase localWindowBase globalWindowBase", "u64")
        + _f(346, "deviceIdx tid", "u32"),
    "module": _f(346, "moduleHandle", "u64"),
    "grid": _f(346, "gridId64 contextId function functionEntry moduleHandle parentGridId64 "
                    "paramsOffset", "u64")
        + _f(346, "kernelType origin gridStatus numRegs gridDimX gridDimY gridDimZ blockDimX "
                  "blockDimY blockDimZ attrLaunchBlocking attrHostTid", "u32")
        + _f(525, "clusterDimX clusterDimY clusterDimZ padding0", "u32")
        + _f(565, "preferredClusterDimX preferredClusterDimY preferredClusterDimZ padding1", "u32"),
    "constbank": _f(550, "addr", "u64") + _f(550, "size bankId", "u32"),
    "sm": _f(346, "smId padding0", "u32") + _f(555, "exception errorPCValid", "u32")
        + _f(555, "errorPC", "u64")
        + _f(555, "clusterExceptionTargetBlockIdxValid clusterExceptionTargetBlockIdxX "
                  "clusterExceptionTargetBlockIdxY clusterExceptionTargetBlockIdxZ", "u32"),
    "cta": _f(346, "gridId64", "u64") + _f(346, "blockIdxX blockIdxY blockIdxZ padding0", "u32")
        + _f(525, "clusterIdxX clusterIdxY clusterIdxZ padding1", "u32")
        + _f(565, "clusterDimX clusterDimY clusterDimZ padding2", "u32"),
    "warp": _f(346, "errorPC", "u64")
        + _f(346, "warpId validLanesMask activeLanesMask isWarpBroken errorPCValid padding0", "u32")
        + _f(525, "numRegs padding1", "u32") + _f(570, "sharedMemSize padding2", "u32")
        + _f(575, "inSyscallLanesMask cbuActiveLanesMask cbuExitedLanesMask "
                  "cbuCollectiveLanesMask", "u32"),
    "lane": _f(346, "virtualPC physPC", "u64")
        + _f(346, "ln threadIdxX threadIdxY threadIdxZ exception callDepth syscallCallDepth "
                  "ccRegister", "u32")
        + _f(575, "cbuThreadState padding0", "u32"),
    "backtrace": _f(346, "returnAddress virtualReturnAddress", "u64") + _f(346, "level pad", "u32"),
    # 24 bytes per the format doc: the four version numbers are 16-bit
    "meta": _f(565, "generatorName", "u64")
        + _f(565, "driverVersionMajor driverVersionMinor cudaDriverVersionMajor "
                  "cudaDriverVersionMinor", "u16") + _f(565, "flags timestamp", "u32"),
}

# The section type that holds rows of each table.
TABLE_SECTION: dict[str, SectionType] = {
    "device": SectionType.DEV_TABLE, "context": SectionType.CTX_TABLE,
    "module": SectionType.MOD_TABLE, "grid": SectionType.GRID_TABLE,
    "constbank": SectionType.CB_TABLE, "sm": SectionType.SM_TABLE, "cta": SectionType.CTA_TABLE,
    "warp": SectionType.WP_TABLE, "lane": SectionType.LN_TABLE, "backtrace": SectionType.BT,
    "meta": SectionType.META_DATA,
}
SECTION_TABLE: dict[int, str] = {int(v): k for k, v in TABLE_SECTION.items()}

# What a writer aiming at cuda-gdb 11.8 emits (COREDUMP-FORMAT.md §6): the
# r400 rows, whose lane row is the fixed 48 bytes that reader requires, plus
# the metadata row, which 11.8 skips as an unknown section type.
WRITE_LAYOUT: dict[str, Layout] = {
    "device": Layout.R400, "context": Layout.R400, "module": Layout.R400, "grid": Layout.R400,
    "constbank": Layout.R550, "sm": Layout.R400, "cta": Layout.R400, "warp": Layout.R400,
    "lane": Layout.R400, "backtrace": Layout.R400, "meta": Layout.R565,
}


class TableError(ValueError):
    """A table description or section body that cannot be packed or read."""


@dataclass(frozen=True)
class RowLayout:
    table: str
    version: int
    fields: tuple[tuple[str, str, int], ...]  # (name, type, offset)
    size: int

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f[0] for f in self.fields)


@lru_cache(maxsize=None)
def row_layout(table: str, version: int | Layout) -> RowLayout:
    """The fields present in `table` rows written by driver branch `version`,
    with C offsets, and the padded row size."""
    if table not in TABLES:
        raise TableError(f"unknown coredump table {table!r}; known: {', '.join(sorted(TABLES))}")
    version = int(version)
    fields = []
    off = 0
    align = 1
    for since, name, typ in TABLES[table]:
        if since > version:
            continue
        size = _SIZES[typ]
        off = (off + size - 1) // size * size
        fields.append((name, typ, off))
        off += size
        align = max(align, size)
    if not fields:
        raise TableError(f"table {table!r} does not exist in layout r{version}")
    size = (off + align - 1) // align * align
    return RowLayout(table, version, tuple(fields), size)


def full_layout(table: str) -> RowLayout:
    """Every field this module knows of a table (the newest layout)."""
    return row_layout(table, max(Layout))


def pack_rows(table: str, rows: list[dict[str, int]], version: int | Layout | None = None) -> bytes:
    """Rows as the bytes of a section; missing fields are 0, unknown names
    are an error (a typo must not silently write zeros)."""
    lay = row_layout(table, WRITE_LAYOUT[table] if version is None else version)
    out = bytearray(lay.size * len(rows))
    known = set(lay.names)
    for i, row in enumerate(rows):
        extra = set(row) - known
        if extra:
            raise TableError(f"{table} row {i}: fields {sorted(extra)} are not in layout r{lay.version}")
        base = i * lay.size
        for name, typ, off in lay.fields:
            v = int(row.get(name, 0))
            limit = 1 << (8 * _SIZES[typ])
            if not 0 <= v < limit:
                raise TableError(f"{table} row {i}: {name}={v} does not fit in {typ}")
            struct.pack_into("<" + _FORMATS[typ], out, base + off, v)
    return bytes(out)


def unpack_rows(table: str, data: bytes, entsize: int) -> list[dict[str, int]]:
    """Rows of a section with row size `entsize` (any layout version): each
    known field whose bytes lie inside the row is read; fields the writer's
    version lacks are simply absent from the dicts. A row too short for the
    fields of the table's oldest layout is an error, so every row has them."""
    if entsize <= 0:
        raise TableError(f"{table} section has entry size {entsize}")
    if len(data) % entsize:
        raise TableError(f"{table} section of {len(data)} bytes is not a whole number of "
                         f"{entsize}-byte rows")
    oldest = row_layout(table, min(since for since, _n, _t in TABLES[table]))
    last_name, last_type, last_off = [f for f in oldest.fields if not f[0].startswith("pad")][-1]
    if last_off + _SIZES[last_type] > entsize:
        raise TableError(f"{table} rows of {entsize} bytes are too short for the oldest layout "
                         f"(r{oldest.version}: {last_off + _SIZES[last_type]} bytes up to {last_name})")
    lay = full_layout(table)
    present = [(n, t, o) for n, t, o in lay.fields if o + _SIZES[t] <= entsize]
    rows = []
    for base in range(0, len(data), entsize):
        rows.append({n: struct.unpack_from("<" + _FORMATS[t], data, base + o)[0]
                     for n, t, o in present})
    return rows
