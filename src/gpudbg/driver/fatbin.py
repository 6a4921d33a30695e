"""NVIDIA's fatbinary container as nvcc 13 writes it: parse, decompress,
choose the entry to run, and write (for tests and tools).

A fatbin is a 16-byte header (magic 0xBA55ED50, version 1, header size,
size of what follows) and a run of entries. Each entry is a header of at
least 64 bytes followed by its payload (padded to 8 bytes):

    0  u16 kind (PTX=1, ELF=2)      2  u16 version (0x0101)
    4  u32 header size              8  u64 payload size (padded)
    16 u32 compressed size          20 u32 options offset (in the header)
    24 u16 PTX ISA minor, 26 major  28 u32 arch (80 for sm_80/compute_80)
    32 u32 name offset, 36 length   40 u64 flags
    48 u64 reserved                 56 u64 decompressed size

Flags: 0x1 64-bit, 0x2 debug (-G), 0x10 Linux, 0x2000 LZ4 (a raw LZ4
block, nvcc -compress-mode=speed), 0x8000 zstd (a standard zstd frame,
CUDA 13's default), 0x100000 arch-specific (sm_90a), 0x200000
family-specific (sm_100f). The options record is (u32 offset, u32 length)
of the ptxas options string (" -g ..." for -G). An executable's
`.nv_fatbin` section holds one container per translation unit (plus
device-link stubs), back to back; nvcc's host code registers each through a
wrapper struct (magic 0x466243B1, version, pointer to the fatbin, pointer
to a prelink list or 0).

The one idea: the simulator runs PTX only, so loading means picking the
newest PTX entry the device can run (arch <= its compute capability, exact
match for `a` targets, same major for `f` targets) and decompressing only
that one, bounded by the size its header declares. Every malformed byte
sequence gets FatbinError naming the entry and what is wrong, never another
exception, a hang or an allocation beyond MAX_DECOMPRESSED. SASS (ELF
cubins) is never decoded. Host ELF objects and `ar` libraries are opened
only far enough to find their `.nv_fatbin` sections.
"""
from __future__ import annotations

import enum
import io
import os
import struct
from dataclasses import dataclass
from typing import Iterable, Sequence

FATBIN_MAGIC = 0xBA55ED50
FATBIN_VERSION = 1
WRAPPER_MAGIC = 0x466243B1
HEADER = struct.Struct("<IHHQ")                      # magic, version, header size, fat size
ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")             # see the module docstring
OPTIONS = struct.Struct("<II")                       # options string offset, length
WRAPPER = struct.Struct("<IIQQ")                     # magic, version, data pointer, filename/prelinked
ENTRY_VERSION = 0x0101
EM_CUDA = 190                                        # ELF e_machine of NVIDIA cubins
MAX_DECOMPRESSED = 256 << 20                         # no real entry comes near this
MAX_FATBIN = 1 << 30                                 # a fatbin read through a pointer


class EntryKind(enum.IntEnum):
    PTX = 1
    ELF = 2


class EntryFlags(enum.IntFlag):
    ADDRESS_64 = 0x1
    DEBUG = 0x2
    LINUX = 0x10
    COMPRESSED_LZ4 = 0x2000
    COMPRESSED_ZSTD = 0x8000
    ARCH_SPECIFIC = 0x100000     # compute_90a
    FAMILY_SPECIFIC = 0x200000   # compute_100f


_COMPRESSED = EntryFlags.COMPRESSED_LZ4 | EntryFlags.COMPRESSED_ZSTD
_DEFAULT_FLAGS = int(EntryFlags.ADDRESS_64 | EntryFlags.LINUX)


class FatbinError(ValueError):
    """A byte sequence is not a well-formed fatbinary (the message names the
    entry or offset and what is wrong)."""


class NoImageForDevice(ValueError):
    """A well-formed fatbin holds nothing this device can run."""


class UnreadableMemory(ValueError):
    """An address does not point at readable memory of this process."""


@dataclass(frozen=True)
class FatbinEntry:
    kind: int
    arch: int                    # 80 for sm_80 / compute_80
    payload: bytes               # as stored (compressed or not, with padding)
    ptx_version: tuple[int, int] = (0, 0)
    flags: int = _DEFAULT_FLAGS
    name: str = ""
    offset: int = 0              # of the entry header in the data given to the parser
    decompressed_size: int = 0
    compressed_size: int = 0
    options: str = ""            # ptxas options recorded by nvcc (" -g ..." for -G)
    index: int = 0               # position in its container
    container: int = 0           # offset of its container's header

    @property
    def compressed(self) -> bool:
        return bool(self.flags & _COMPRESSED)

    @property
    def debug(self) -> bool:
        return bool(self.flags & EntryFlags.DEBUG)

    @property
    def target(self) -> str:
        """nvcc's name: compute_80 for PTX, sm_80 for SASS, with a/f suffix."""
        suffix = "a" if self.flags & EntryFlags.ARCH_SPECIFIC else \
            "f" if self.flags & EntryFlags.FAMILY_SPECIFIC else ""
        return f"{'compute' if self.kind == EntryKind.PTX else 'sm'}_{self.arch}{suffix}"

    def describe(self) -> str:
        what = "PTX" if self.kind == EntryKind.PTX else "SASS" if self.kind == EntryKind.ELF else "?"
        return f"entry {self.index} ({self.target} {what} at offset {self.offset})"

    def runs_on(self, cc: int) -> bool:
        """Whether a device of compute capability cc (90 for 9.0) can run it."""
        if self.flags & EntryFlags.ARCH_SPECIFIC:
            return self.arch == cc
        if self.flags & EntryFlags.FAMILY_SPECIFIC:
            return self.arch // 10 == cc // 10 and self.arch <= cc
        return self.arch <= cc

    def data(self) -> bytes:
        """The payload decompressed; its size is checked against the header."""
        if not self.compressed:
            return self.payload
        raw = self.payload[:self.compressed_size]
        want = self.decompressed_size
        try:
            if self.flags & EntryFlags.COMPRESSED_ZSTD:
                import zstandard
                reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw), read_across_frames=False)
                out = reader.read(want + 1)
                codec = "zstd"
            else:
                import lz4.block
                out = lz4.block.decompress(raw, uncompressed_size=want)
                codec = "LZ4"
        except Exception as e:   # zstandard.ZstdError, lz4.block.LZ4BlockError, ValueError...
            codec = "zstd" if self.flags & EntryFlags.COMPRESSED_ZSTD else "LZ4"
            raise FatbinError(f"{self.describe()}: {codec} data is corrupt ({e})") from None
        if len(out) != want:
            raise FatbinError(f"{self.describe()}: {codec} data decompresses to "
                              f"{'more than ' if len(out) > want else ''}{len(out)} bytes, "
                              f"the header says {want}")
        return out

    def ptx_text(self) -> str:
        raw = self.data().split(b"\x00", 1)[0]
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise FatbinError(f"{self.describe()} is not UTF-8 text (byte {e.start} of its payload)") from None


# ------------------------------------------------------------------ writer
def _ptx_meta(text: str) -> tuple[int, tuple[int, int]]:
    arch, version = 0, (0, 0)
    for line in text.splitlines():
        words = line.split("//", 1)[0].split()
        if len(words) >= 2 and words[0] == ".target" and not arch:
            t = words[1].rstrip(",")
            if t.startswith("sm_") and t[3:].rstrip("af").isdigit():
                arch = int(t[3:].rstrip("af"))
        elif len(words) >= 2 and words[0] == ".version" and version == (0, 0):
            major, _, minor = words[1].partition(".")
            if major.isdigit() and minor.isdigit():
                version = (int(major), int(minor))
    return arch, version


def _pad8(data: bytes) -> bytes:
    return data + b"\x00" * (-len(data) % 8)


def build_entry(kind: int, arch: int, payload: bytes | str, *, compress: str | None = None,
                flags: int = _DEFAULT_FLAGS, ptx_version: tuple[int, int] = (0, 0), name: str = "",
                options: str | None = None) -> bytes:
    """One entry (header and payload) laid out as nvcc 13 lays it out.
    compress: None, "zstd" or "lz4" (sets the flag and the size fields)."""
    raw = payload.encode() + b"\x00" if isinstance(payload, str) else bytes(payload)
    flags = int(flags) & ~int(_COMPRESSED)
    csize = dsize = 0
    if compress == "zstd":
        import zstandard
        body, flags = zstandard.ZstdCompressor().compress(raw), flags | EntryFlags.COMPRESSED_ZSTD
    elif compress == "lz4":
        import lz4.block
        body, flags = lz4.block.compress(raw, store_size=False), flags | EntryFlags.COMPRESSED_LZ4
    elif compress is None:
        body = raw
    else:
        raise ValueError(f"compress must be None, 'zstd' or 'lz4', not {compress!r}")
    if compress:
        csize, dsize = len(body), len(raw)
    tail = bytearray()
    name_off = ENTRY.size if name else 0
    tail += _pad8(name.encode()) if name else b""
    opt_off = 0
    if options is not None:
        opt_off = ENTRY.size + len(tail)
        text = options.encode()
        tail += OPTIONS.pack(opt_off + OPTIONS.size, len(text)) + _pad8(text)
    hsize = ENTRY.size + len(tail)
    padded = _pad8(body)
    return ENTRY.pack(int(kind), ENTRY_VERSION, hsize, len(padded), csize, opt_off, ptx_version[1],
                      ptx_version[0], int(arch), name_off, len(name.encode()), int(flags), 0, dsize) \
        + bytes(tail) + padded


def build_container(entries: Iterable[bytes]) -> bytes:
    """A fatbin header followed by entries from build_entry."""
    body = b"".join(entries)
    return HEADER.pack(FATBIN_MAGIC, FATBIN_VERSION, HEADER.size, len(body)) + body


def build_fatbin(ptx_entries: Iterable[str | bytes | tuple], compress: str | None = None) -> bytes:
    """A fatbin. Each entry is PTX text (arch and ISA version read from its
    `.target`/`.version`), or a tuple (text, arch), or (kind, arch, payload)
    for entries such as ELF ones."""
    blobs = []
    for item in ptx_entries:
        if isinstance(item, tuple) and len(item) == 3:
            kind, arch, payload = item
            payload = payload.encode() if isinstance(payload, str) else bytes(payload)
            version = _ptx_meta(payload.decode("utf-8", "replace"))[1] if kind == EntryKind.PTX else (0, 0)
        else:
            text, arch = (item if isinstance(item, tuple) else (item, None))
            text = text.decode() if isinstance(text, (bytes, bytearray)) else text
            if not isinstance(text, str):
                raise TypeError(f"a PTX entry must be str or bytes, not {type(text).__name__}")
            found, version = _ptx_meta(text)
            arch = found if arch is None else arch
            kind, payload = EntryKind.PTX, text.encode() + b"\x00"
        blobs.append(build_entry(kind, arch, payload, compress=compress, ptx_version=version))
    return build_container(blobs)


def build_wrapper(data_pointer: int, version: int = 1) -> bytes:
    """The __fatBinC_Wrapper_t bytes nvcc's host code registers."""
    return WRAPPER.pack(WRAPPER_MAGIC, version, data_pointer, 0)


# ------------------------------------------------------------------ parser
def is_fatbin(data: bytes) -> bool:
    return len(data) >= 4 and struct.unpack_from("<I", data)[0] == FATBIN_MAGIC


def is_wrapper(data: bytes) -> bool:
    return len(data) >= 4 and struct.unpack_from("<I", data)[0] == WRAPPER_MAGIC


def parse_wrapper(data: bytes) -> int:
    """The fatbin pointer of a wrapper struct."""
    if len(data) < WRAPPER.size:
        raise FatbinError(f"fatbin wrapper needs {WRAPPER.size} bytes, got {len(data)}")
    magic, version, pointer, _ = WRAPPER.unpack_from(data)
    if magic != WRAPPER_MAGIC:
        raise FatbinError(f"bad fatbin wrapper magic 0x{magic:08x} (expected 0x{WRAPPER_MAGIC:08X})")
    if version not in (1, 2):
        raise FatbinError(f"fatbin wrapper version {version} is unknown (expected 1 or 2)")
    if pointer == 0:
        raise FatbinError("fatbin wrapper holds a null data pointer")
    return pointer


def fatbin_size(data: bytes, base: int = 0) -> int:
    """Bytes of the container at `base` (header plus entries), from its header."""
    if len(data) - base < HEADER.size:
        raise FatbinError(f"fatbin header at offset {base} needs {HEADER.size} bytes, "
                          f"only {max(len(data) - base, 0)} remain")
    magic, _version, hsize, fat = HEADER.unpack_from(data, base)
    if magic != FATBIN_MAGIC:
        raise FatbinError(f"bad fatbin magic 0x{magic:08x} at offset {base} (expected 0x{FATBIN_MAGIC:08X})")
    return hsize + fat


def containers(data: bytes) -> list[list[FatbinEntry]]:
    """The entries of each container that follow each other from offset 0
    (8-byte aligned, as in a `.nv_fatbin` section); bytes after the last
    one, such as section padding, are ignored."""
    data = bytes(data)
    out: list[list[FatbinEntry]] = []
    pos = 0
    while True:
        out.append(parse_container(data, pos))
        pos += fatbin_size(data, pos)
        pos += -pos % 8
        if not (pos + HEADER.size <= len(data) and struct.unpack_from("<I", data, pos)[0] == FATBIN_MAGIC):
            return out


def parse_fatbin(data: bytes) -> list[FatbinEntry]:
    """All entries of all the containers that follow each other from offset 0."""
    return [e for c in containers(data) for e in c]


def _text_field(data: bytes, pos: int, ehsize: int, off: int, length: int, what: str, index: int) -> str:
    if off + length > ehsize or (length and off < ENTRY.size):
        raise FatbinError(f"entry {index} at offset {pos}: {what} ({off}+{length}) lies outside "
                          f"its {ehsize}-byte header")
    return data[pos + off:pos + off + length].split(b"\x00", 1)[0].decode("utf-8", "replace")


def parse_container(data: bytes, base: int = 0) -> list[FatbinEntry]:
    """The entries of the one container whose header is at `base`; header
    fields are checked, payloads are not decompressed."""
    data = bytes(data)
    size = fatbin_size(data, base)
    _magic, version, hsize, fat = HEADER.unpack_from(data, base)
    if version != FATBIN_VERSION:
        raise FatbinError(f"fatbin version {version} at offset {base} is unknown (expected 1)")
    if hsize < HEADER.size:
        raise FatbinError(f"fatbin header size {hsize} at offset {base} is below {HEADER.size}")
    start, end = base + hsize, base + size
    if end > len(data):
        raise FatbinError(f"fatbin at offset {base} declares {fat} bytes of entries after its header "
                          f"but only {max(len(data) - start, 0)} are present")
    entries: list[FatbinEntry] = []
    pos = start
    while pos < end:
        i = len(entries)
        if end - pos < ENTRY.size:
            raise FatbinError(f"entry {i} header at offset {pos} needs {ENTRY.size} bytes, "
                              f"{end - pos} remain in the container")
        (kind, _ver, ehsize, psize, csize, opt_off, minor, major, arch, name_off, name_len, flags, _zero,
         dsize) = ENTRY.unpack_from(data, pos)
        where = f"entry {i} at offset {pos}"
        if kind not in (EntryKind.PTX, EntryKind.ELF):
            raise FatbinError(f"{where} has unknown kind {kind} (PTX=1, ELF=2)")
        if ehsize < ENTRY.size:
            raise FatbinError(f"{where} has header size {ehsize}, below {ENTRY.size}")
        if pos + ehsize + psize > end:
            raise FatbinError(f"{where} ({ehsize}-byte header, {psize}-byte payload) "
                              f"runs past the container's end at offset {end}")
        name = _text_field(data, pos, ehsize, name_off, name_len, "name", i) if name_len else ""
        options = ""
        if opt_off:
            if opt_off < ENTRY.size or opt_off + OPTIONS.size > ehsize:
                raise FatbinError(f"{where}: options record at {opt_off} lies outside its {ehsize}-byte header")
            options = _text_field(data, pos, ehsize, *OPTIONS.unpack_from(data, pos + opt_off), "options", i)
        if flags & _COMPRESSED:
            if flags & _COMPRESSED == _COMPRESSED:
                raise FatbinError(f"{where}: flags 0x{flags:x} claim both LZ4 and zstd compression")
            if not 0 < csize <= psize:
                raise FatbinError(f"{where}: compressed size {csize} is not within its {psize}-byte payload")
            if not 0 < dsize <= MAX_DECOMPRESSED:
                raise FatbinError(f"{where}: decompressed size {dsize} is not within 1..{MAX_DECOMPRESSED}")
        payload = data[pos + ehsize:pos + ehsize + psize]
        entries.append(FatbinEntry(kind, arch, payload, (major, minor), flags, name, pos, dsize, csize,
                                   options, i, base))
        pos += ehsize + psize
    return entries


def holdings(entries: Sequence[FatbinEntry]) -> str:
    """What a fatbin holds, in nvcc's words: "sm_75 SASS, compute_80 PTX"."""
    return ", ".join(f"{e.target} {'PTX' if e.kind == EntryKind.PTX else 'SASS'}" for e in entries) \
        or "no entries"


def select_ptx(entries: Sequence[FatbinEntry], compute_capability: tuple[int, int],
               debug: bool | None = None) -> FatbinEntry:
    """The PTX entry to run on a device of this compute capability: among
    those it can run, one whose debug flag matches `debug` (when given),
    then the highest arch, then the highest PTX ISA version."""
    cc = compute_capability[0] * 10 + compute_capability[1]
    ptx = [e for e in entries if e.kind == EntryKind.PTX]
    usable = [e for e in ptx if e.runs_on(cc)]
    if not usable:
        why = ("SASS (ELF cubins) runs only on the real GPU it was built for; the simulator "
               "needs PTX") if not ptx else f"every PTX entry targets an arch above sm_{cc} or another family"
        raise NoImageForDevice(f"fatbin holds {holdings(entries)}: nothing the simulated sm_{cc} device can "
                               f"run ({why}); add a PTX target: "
                               f"-gencode arch=compute_{cc},code=compute_{cc}")
    return max(usable, key=lambda e: (debug is None or e.debug == debug, e.arch, e.ptx_version))


def load_ptx(data: bytes, compute_capability: tuple[int, int], debug: bool | None = None) -> str:
    """The PTX text to run from the first container of `data` (what
    cuModuleLoadFatBinary does with a pointer to a fatbin)."""
    return select_ptx(parse_container(data, 0), compute_capability, debug).ptx_text()


# ------------------------------------------------------------------ host containers
def elf_fatbins(data: bytes) -> tuple[list[bytes], int]:
    """The `.nv_fatbin` / `__nv_relfatbin` section contents of an ELF file and
    its e_machine (EM_CUDA for a cubin)."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile
    try:
        elf = ELFFile(io.BytesIO(data))
        machine = elf.header["e_machine"]
        machine = EM_CUDA if machine in (EM_CUDA, "EM_CUDA") else machine
        found = [s.data() for s in elf.iter_sections()
                 if s.name in (".nv_fatbin", "__nv_relfatbin") and s.header["sh_type"] != "SHT_NOBITS"]
    except (ELFError, struct.error, ValueError, KeyError, IndexError, AttributeError) as e:
        raise FatbinError(f"not a readable ELF file ({type(e).__name__}: {e})") from None
    return found, machine


def elf_ptx(data: bytes, compute_capability: tuple[int, int],
            debug: bool | None = None) -> list[FatbinEntry]:
    """For an nvcc-built host object or executable: the PTX entry chosen from
    each fatbin container of its `.nv_fatbin` sections (one per translation
    unit), skipping containers with nothing the device can run (device-link
    stubs are empty or SASS). Raises NoImageForDevice when none has any."""
    sections, _machine = elf_fatbins(data)
    chosen: list[FatbinEntry] = []
    held: list[FatbinEntry] = []
    for section in sections:
        if not is_fatbin(section):
            raise FatbinError("a .nv_fatbin section does not start with the fatbin magic")
        for entries in containers(section):
            held += entries
            try:
                chosen.append(select_ptx(entries, compute_capability, debug))
            except NoImageForDevice:
                pass
    if not chosen:
        select_ptx(held, compute_capability, debug)     # raises, naming everything the file holds
    return chosen


def ar_members(data: bytes) -> list[tuple[str, bytes]]:
    """The members of a System V `ar` archive (a static library)."""
    if not data.startswith(b"!<arch>\n"):
        raise FatbinError("not an ar archive (no !<arch> magic)")
    out, pos = [], 8
    while pos + 60 <= len(data):
        hdr = data[pos:pos + 60]
        if hdr[58:60] != b"`\n":
            raise FatbinError(f"ar member header at offset {pos} is malformed")
        name = hdr[0:16].decode("ascii", "replace").strip()
        try:
            size = int(hdr[48:58].decode("ascii").strip())
        except ValueError:
            raise FatbinError(f"ar member at offset {pos} has a bad size field") from None
        body = data[pos + 60:pos + 60 + size]
        if len(body) != size:
            raise FatbinError(f"ar member {name} at offset {pos} is truncated")
        if name not in ("/", "//", "/SYM64/"):
            out.append((name.rstrip("/"), body))
        pos += 60 + size + (size & 1)
    return out


# ------------------------------------------------------------------ process memory
def read_process_memory(address: int, size: int) -> bytes:
    """`size` bytes of this process's memory at `address`, read through
    /proc/self/mem so an unmapped address is an UnreadableMemory error, not
    a segmentation fault."""
    if address <= 0 or size < 0:
        raise UnreadableMemory(f"address 0x{max(address, 0):x} is not readable memory of this process")
    try:
        fd = os.open("/proc/self/mem", os.O_RDONLY)
    except OSError:                      # no procfs: read directly, as NVIDIA's driver would
        import ctypes
        return ctypes.string_at(address, size)
    try:
        out = os.pread(fd, size, address)
    except (OSError, OverflowError):
        out = b""
    finally:
        os.close(fd)
    if len(out) != size:
        raise UnreadableMemory(f"{size} bytes at 0x{address:x} are not readable memory of this process")
    return out


def fatbin_at(address: int) -> bytes:
    """The fatbin container at an address in process memory, its size taken
    from its own header (what __cudaRegisterFatBinary's wrapper points at)."""
    head = read_process_memory(address, HEADER.size)
    size = fatbin_size(head)
    if size > MAX_FATBIN:
        raise FatbinError(f"fatbin at 0x{address:x} declares {size} bytes, more than {MAX_FATBIN}")
    return read_process_memory(address, size)


def image_at(address: int) -> bytes:
    """An image at an address in process memory: a wrapper struct (its 24
    bytes), a fatbin (its declared size), or NUL-terminated PTX text."""
    head = read_process_memory(address, 4)
    if is_wrapper(head):
        return read_process_memory(address, WRAPPER.size)
    if is_fatbin(head):
        return fatbin_at(address)
    out, chunk = bytearray(), 4096
    while b"\x00" not in out and len(out) < MAX_DECOMPRESSED:
        step = chunk - (address + len(out)) % chunk      # never read across an unmapped page
        try:
            out += read_process_memory(address + len(out), step)
        except UnreadableMemory:
            if not out:
                raise
            break
    return bytes(out.split(b"\x00", 1)[0])


__all__ = ["FATBIN_MAGIC", "WRAPPER_MAGIC", "MAX_DECOMPRESSED", "EntryKind", "EntryFlags", "FatbinEntry",
           "FatbinError", "NoImageForDevice", "UnreadableMemory", "build_entry", "build_container",
           "build_fatbin", "build_wrapper", "parse_fatbin", "parse_container", "containers", "parse_wrapper",
           "fatbin_size", "holdings", "select_ptx", "load_ptx", "is_fatbin", "is_wrapper", "elf_fatbins",
           "elf_ptx", "ar_members", "read_process_memory", "fatbin_at", "image_at"]
