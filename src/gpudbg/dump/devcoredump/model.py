"""The object model of a drm/msm GPU devcoredump, one dataclass per section.

The model mirrors the text, not the hardware: every field the kernel prints
has a typed attribute, sections that may be absent are None (and an empty
list means "header printed, nothing under it", which a6xx_show does), and
binary blobs hold the bytes as the kernel dumps them: little-endian dwords
with trailing zero dwords trimmed (readers zero-fill up to the declared
size with `contents()`). Blobs are normalised to that trimmed form on
construction, so a model written and parsed back compares equal. Layout
(which generation's show() produced it) decides section order and register
offset width when writing. Sections the parser does not know are kept as
UnknownSection, verbatim, with the name of the section they followed.
It does not interpret register values; that is the analyzer's job.
"""
from __future__ import annotations

import abc
import enum
from dataclasses import dataclass, field
import numpy as np

from gpudbg.dump.ascii85 import bytes_from_dwords, dwords_from_bytes, trim_trailing_zeros


class Layout(enum.Enum):
    """Which show() printed the dump: decides section order and offset width."""

    ADRENO = "adreno"   # a2xx-a4xx: adreno_show only
    A5XX = "a5xx"       # adreno_show + registers-hlsq
    A6XX = "a6xx"       # a6xx/a7xx/a8xx: a6xx_show


class RevisionForm(enum.Enum):
    DOTTED = "dotted"   # revision: 630 (6.3.0.2)
    HEX = "hex"         # revision: 660 (06060001)


class FaultForm(enum.Enum):
    EQUALS = "equals"   # "  - iova=0000000100001000"
    COLON = "colon"     # "  - far: 0000000100001000"


def _canonical(data: bytes, what: str) -> bytes:
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"{what}: data must be bytes, not {type(data).__name__}")
    if len(data) % 4:
        raise ValueError(f"{what}: data is {len(data)} bytes, not a whole number of dwords")
    return bytes_from_dwords(trim_trailing_zeros(dwords_from_bytes(bytes(data))))


class _Blob(abc.ABC):
    """Mixin for elements with a `data` blob and a declared length in bytes."""

    data: bytes

    @abc.abstractmethod
    def declared_bytes(self) -> int | None:
        """The length the size/dwords/count field declares, in bytes."""

    def dwords(self) -> np.ndarray:
        """The dumped dwords zero-filled to the declared length."""
        have = dwords_from_bytes(self.data)
        n = self.declared_bytes()
        if n is None or n // 4 <= have.size:
            return have
        out = np.zeros(n // 4, dtype=np.uint32)
        out[: have.size] = have
        return out

    def contents(self) -> bytes:
        return bytes_from_dwords(self.dwords())

    def window(self, start: int, count: int) -> np.ndarray:
        """`dwords()[start:start + count]` without building the whole
        declared length (a bo may declare gigabytes and dump a few words)."""
        have = dwords_from_bytes(self.data)
        declared = self.declared_bytes()
        start = max(int(start), 0)
        end = start + max(int(count), 0)
        end = min(end, max(have.size, declared // 4 if declared is not None else 0))
        out = np.zeros(max(end - start, 0), dtype=np.uint32)
        n = min(end, have.size) - start
        if n > 0:
            out[:n] = have[start:start + n]
        return out

    def window_bytes(self, start: int, nbytes: int) -> bytes:
        """`contents()[start:start + nbytes]`, built only that far."""
        first, skip = divmod(max(int(start), 0), 4)
        raw = bytes_from_dwords(self.window(first, (skip + max(int(nbytes), 0) + 3) // 4))
        return raw[skip:skip + max(int(nbytes), 0)]


@dataclass
class DumpTime:
    seconds: int
    nanoseconds: int

    def __post_init__(self) -> None:
        if self.seconds < 0 or not 0 <= self.nanoseconds < 1_000_000_000:
            raise ValueError(f"bad dump time {self.seconds}.{self.nanoseconds}")

    def __str__(self) -> str:
        return f"{self.seconds}.{self.nanoseconds:09d}"

    @property
    def as_float(self) -> float:
        return self.seconds + self.nanoseconds / 1e9


@dataclass
class Revision:
    """`revision: <gpu id> (<chip id>)`; chip id = core.major.minor.patch bytes."""

    gpu_id: int
    chip_id: int
    form: RevisionForm = RevisionForm.DOTTED

    @classmethod
    def from_parts(cls, gpu_id: int, core: int, major: int, minor: int, patch: int,
                   form: RevisionForm = RevisionForm.DOTTED) -> "Revision":
        for name, v in (("core", core), ("major", major), ("minor", minor), ("patch", patch)):
            if not 0 <= v <= 255:
                raise ValueError(f"revision {name}={v} does not fit in a byte")
        return cls(gpu_id, core << 24 | major << 16 | minor << 8 | patch, form)

    @property
    def parts(self) -> tuple[int, int, int, int]:
        c = self.chip_id
        return (c >> 24) & 0xFF, (c >> 16) & 0xFF, (c >> 8) & 0xFF, c & 0xFF

    @property
    def core(self) -> int:
        return self.parts[0]

    def __str__(self) -> str:
        if self.form is RevisionForm.HEX:
            return f"{self.gpu_id} ({self.chip_id:08x})"
        return f"{self.gpu_id} ({'.'.join(str(p) for p in self.parts)})"


@dataclass
class FaultInfo:
    """`fault-info:` or `pgtable-fault-info:` items, in order, as text."""

    items: list[tuple[str, str]]
    form: FaultForm = FaultForm.EQUALS

    def get(self, key: str) -> str | None:
        for k, v in self.items:
            if k == key:
                return v
        return None

    def hex(self, key: str) -> int | None:
        v = self.get(key)
        return None if v is None else int(v, 16)

    @property
    def address(self) -> int | None:
        """The faulting iova: `iova` (either form) or else `far`."""
        v = self.hex("iova")
        return v if v is not None else self.hex("far")


@dataclass
class VmLogEntry:
    op: str
    queue: int
    start: int
    end: int


@dataclass
class Ringbuffer(_Blob):
    id: int
    iova: int
    last_fence: int
    retired_fence: int
    rptr: int           # dwords
    wptr: int           # dwords
    size: int           # bytes
    data: bytes = b""
    extra: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.data = _canonical(self.data, f"ringbuffer {self.id}")

    def declared_bytes(self) -> int:
        return self.size

    @property
    def size_dwords(self) -> int:
        return self.size // 4


@dataclass
class BufferObject(_Blob):
    iova: int
    size: int
    data: bytes = b""
    flags: int | None = None
    name: str | None = None
    extra: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.data = _canonical(self.data, f"bo 0x{self.iova:x}")

    def declared_bytes(self) -> int:
        return self.size

    @property
    def end(self) -> int:
        return self.iova + self.size


@dataclass
class Register:
    offset: int         # bytes from the start of the GPU register region
    value: int
    slice: int | None = None   # a8xx sliced register regions

    @property
    def index(self) -> int:
        return self.offset >> 2


@dataclass
class GmuBuffer(_Blob):
    """gmu-log / gmu-hfi / gmu-debug; all None when only the header is printed."""

    iova: int | None = None
    size: int | None = None
    data: bytes = b""
    queue_history: list[list[int]] | None = None   # gmu-hfi only

    def __post_init__(self) -> None:
        self.data = _canonical(self.data, "gmu buffer")

    def declared_bytes(self) -> int | None:
        return self.size


# Indexed-register names that changed across kernels -> the current name
# (typos fixed, _DBG suffixes added), so tools can compare dumps of any age.
INDEXED_RENAMES: dict[str, str] = {
    "CP_SEQ_STAT": "CP_SQE_STAT",
    "CP_MEMPOOOL": "CP_MEM_POOL_DBG",
    "CP_MEMPOOL": "CP_MEM_POOL_DBG",
    "CP_UCODE_DBG_DATA": "CP_SQE_UCODE_DBG",
    "CP_ROQ": "CP_ROQ_DBG",
    "CP_BV_SQE_STAT_ADDR": "CP_BV_SQE_STAT",
    "CP_BV_MEMPOOL": "CP_BV_MEM_POOL_DBG",
}


@dataclass
class IndexedRegisters(_Blob):
    name: str
    dwords_count: int
    data: bytes = b""
    pipe: int | None = None     # a8xx
    slice: int | None = None    # a8xx

    def __post_init__(self) -> None:
        self.data = _canonical(self.data, f"indexed-registers {self.name}")

    def declared_bytes(self) -> int:
        return self.dwords_count * 4

    @property
    def canonical_name(self) -> str:
        return INDEXED_RENAMES.get(self.name, self.name)


@dataclass
class ShaderEntry(_Blob):
    """One bank (a6xx) / usptp (a7xx) / ctx (a8xx): `path` is the nesting
    above `size:`, e.g. (("bank", "0"),) or (("pipe", "BR"), ("sp", "0"), ("usptp", "1"))."""

    path: tuple[tuple[str, str], ...]
    size: int           # dwords
    data: bytes = b""

    def __post_init__(self) -> None:
        self.path = tuple((str(k), str(v)) for k, v in self.path)
        self.data = _canonical(self.data, f"shader entry {self.path}")

    def declared_bytes(self) -> int:
        return self.size * 4

    def get(self, key: str) -> str | None:
        return dict(self.path).get(key)


@dataclass
class ShaderBlock:
    type: str
    entries: list[ShaderEntry] = field(default_factory=list)


@dataclass
class ClusterContext:
    context: int
    registers: list[Register] = field(default_factory=list)


@dataclass
class Cluster:
    """a6xx: path (("cluster-name", X),); a7xx: (("pipe", P), ("cluster-name", X))."""

    path: tuple[tuple[str, str], ...]
    contexts: list[ClusterContext] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.path = tuple((str(k), str(v)) for k, v in self.path)

    @property
    def name(self) -> str | None:
        return dict(self.path).get("cluster-name")


@dataclass
class DebugbusBlock(_Blob):
    name: str
    count: int          # dwords
    data: bytes = b""

    def __post_init__(self) -> None:
        self.data = _canonical(self.data, f"debugbus {self.name}")

    def declared_bytes(self) -> int:
        return self.count * 4


@dataclass
class UnknownSection:
    """A top-level line (and its indented body) the parser does not know."""

    name: str
    lines: list[str]            # verbatim, header first
    start_line: int             # 1-based
    end_line: int               # inclusive
    after: str | None = None    # the known key that preceded it (None: after the header)


@dataclass
class ParseWarning:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass
class Devcoredump:
    module: str | None = "msm"
    kernel: str | None = None
    time: DumpTime | None = None
    comm: str | None = None
    cmdline: str | None = None
    debugfs_title: str | None = None        # "<gpu> Status:" instead of the --- header
    gpu_initialized: int | None = None
    revision: Revision | None = None
    fault_info: FaultInfo | None = None
    pgtable_fault_info: FaultInfo | None = None
    vm_log: list[VmLogEntry] | None = None
    rbbm_status: int | None = None
    ringbuffers: list[Ringbuffer] | None = None
    bos: list[BufferObject] | None = None
    registers: list[Register] | None = None
    registers_hlsq: list[Register] | None = None
    gmu_log: GmuBuffer | None = None
    gmu_hfi: GmuBuffer | None = None
    gmu_debug: GmuBuffer | None = None
    registers_gmu: list[Register] | None = None
    indexed_registers: list[IndexedRegisters] | None = None
    shader_blocks: list[ShaderBlock] | None = None
    clusters: list[Cluster] | None = None
    debugbus: list[DebugbusBlock] | None = None
    layout: Layout = Layout.A6XX
    unknown_sections: list[UnknownSection] = field(default_factory=list)
    warnings: list[ParseWarning] = field(default_factory=list, compare=False)

    @property
    def offset_digits(self) -> int:
        """%06x in a6xx_show, %04x in adreno_show / a5xx."""
        return 6 if self.layout is Layout.A6XX else 4

    def register(self, offset: int) -> int | None:
        """The first value dumped for a byte offset in `registers:`."""
        for r in self.registers or ():
            if r.offset == offset:
                return r.value
        return None

    def register64(self, offset: int) -> int | None:
        lo, hi = self.register(offset), self.register(offset + 4)
        if lo is None:
            return None
        return lo | ((hi or 0) << 32)

    def find_bo(self, iova: int) -> BufferObject | None:
        for bo in self.bos or ():
            if bo.iova <= iova < bo.end:
                return bo
        return None
