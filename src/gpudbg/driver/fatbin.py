"""NVIDIA's fatbinary container: parse, choose the entry to run, and write.

A fatbin is a 16-byte header (magic 0xBA55ED50, version 1, header size,
size of what follows) and a run of entries, each a 64-byte header (kind
PTX=1 / ELF=2, version, header size, payload size, compressed size, PTX ISA
version, sm arch, name offset/length, flags, decompressed size) followed by
its payload. nvcc's host code registers it through a wrapper struct (magic
0x466243B1, version, pointer to the fatbin). The one idea: the simulator
runs PTX only, so loading means picking the newest PTX entry whose arch the
device can run (arch <= its compute capability); an image that holds only
SASS (ELF cubins) gets mcErrorNoKernelImageForDevice naming what it holds.

Every malformed byte sequence gets FatbinError with the offset, never an
IndexError or a struct error. NVIDIA does not document the compression of
compressed entries, so they are refused with an explicit error rather than
guessed at. Host ELF objects and `ar` libraries are opened only far enough
to find their `.nv_fatbin` sections.
"""
from __future__ import annotations

import enum
import io
import struct
from dataclasses import dataclass
from typing import Iterable, Sequence

FATBIN_MAGIC = 0xBA55ED50
FATBIN_VERSION = 1
WRAPPER_MAGIC = 0x466243B1
HEADER = struct.Struct("<IHHQ")                      # magic, version, header size, fat size
ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")             # see FatbinEntry
WRAPPER = struct.Struct("<IIQQ")                     # magic, version, data pointer, filename/prelinked
ENTRY_VERSION = 0x0101
EM_CUDA = 190                                        # ELF e_machine of NVIDIA cubins


class EntryKind(enum.IntEnum):
    PTX = 1
    ELF = 2


class EntryFlags(enum.IntFlag):
    ADDRESS_64 = 0x1
    DEBUG = 0x2
    LINUX = 0x10
    COMPRESSED = 0x2000          # LZ4-style, undocumented
    COMPRESSED_ZSTD = 0x8000     # newer toolkits, undocumented


_COMPRESSED = EntryFlags.COMPRESSED | EntryFlags.COMPRESSED_ZSTD


class FatbinError(ValueError):
    """A byte sequence is not a well-formed fatbinary (message has the offset)."""


class NoImageForDevice(ValueError):
    """A well-formed fatbin holds nothing this device can run."""


class CompressedEntry(ValueError):
    """The entry to run is compressed, which is not supported."""


@dataclass(frozen=True)
class FatbinEntry:
    kind: int
    arch: int                    # sm arch number: 80 for sm_80
    payload: bytes
    ptx_version: tuple[int, int] = (0, 0)
    flags: int = int(EntryFlags.ADDRESS_64 | EntryFlags.LINUX)
    name: str = ""
    offset: int = 0              # of the entry header in the container
    decompressed_size: int = 0

    @property
    def compressed(self) -> bool:
        return bool(self.flags & _COMPRESSED)

    def ptx_text(self) -> str:
        raw = self.payload.split(b"\x00", 1)[0]
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise FatbinError(f"PTX entry at offset {self.offset} is not UTF-8 text "
                              f"(byte {e.start} of its payload)") from None


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


def build_fatbin(ptx_entries: Iterable[str | bytes | tuple]) -> bytes:
    """A fatbin of uncompressed PTX entries. Each entry is PTX text (arch and
    ISA version read from its `.target`/`.version`), or a tuple (text, arch)
    or (kind, arch, payload) for tests that need ELF or odd entries."""
    body = bytearray()
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
        padded = payload + b"\x00" * (-len(payload) % 8)
        body += ENTRY.pack(int(kind), ENTRY_VERSION, ENTRY.size, len(padded), 0, 0, version[1],
                           version[0], int(arch), 0, 0, int(EntryFlags.ADDRESS_64 | EntryFlags.LINUX),
                           0, 0)
        body += padded
    return HEADER.pack(FATBIN_MAGIC, FATBIN_VERSION, HEADER.size, len(body)) + bytes(body)


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
    if version not in (1, 2):
        raise FatbinError(f"fatbin wrapper version {version} is unknown (expected 1 or 2)")
    if pointer == 0:
        raise FatbinError("fatbin wrapper holds a null data pointer")
    return pointer


def fatbin_size(data: bytes) -> int:
    """Bytes of the first container (header plus entries), from its header."""
    if len(data) < HEADER.size:
        raise FatbinError(f"fatbin header needs {HEADER.size} bytes, got {len(data)}")
    magic, version, hsize, fat = HEADER.unpack_from(data)
    if magic != FATBIN_MAGIC:
        raise FatbinError(f"bad fatbin magic 0x{magic:08x} at offset 0 (expected 0x{FATBIN_MAGIC:08X})")
    return hsize + fat


def parse_fatbin(data: bytes) -> list[FatbinEntry]:
    """All entries of the containers that follow each other from offset 0
    (bytes after the last one, such as section padding, are ignored)."""
    data = bytes(data)
    entries: list[FatbinEntry] = []
    pos = 0
    while True:
        entries += _parse_container(data, pos)
        pos += fatbin_size(data[pos:])
        pos += -pos % 8
        if not (pos + HEADER.size <= len(data) and struct.unpack_from("<I", data, pos)[0] == FATBIN_MAGIC):
            return entries


def _parse_container(data: bytes, base: int) -> list[FatbinEntry]:
    if len(data) - base < HEADER.size:
        raise FatbinError(f"fatbin header at offset {base} needs {HEADER.size} bytes, "
                          f"only {len(data) - base} remain")
    magic, version, hsize, fat = HEADER.unpack_from(data, base)
    if magic != FATBIN_MAGIC:
        raise FatbinError(f"bad fatbin magic 0x{magic:08x} at offset {base}")
    if version != FATBIN_VERSION:
        raise FatbinError(f"fatbin version {version} at offset {base} is unknown (expected 1)")
    if hsize < HEADER.size:
        raise FatbinError(f"fatbin header size {hsize} at offset {base} is below {HEADER.size}")
    start, end = base + hsize, base + hsize + fat
    if end > len(data):
        raise FatbinError(f"fatbin at offset {base} declares {fat} bytes of entries after its header "
                          f"but only {max(len(data) - start, 0)} are present")
    entries = []
    pos = start
    while pos < end:
        if end - pos < ENTRY.size:
            raise FatbinError(f"entry header at offset {pos} needs {ENTRY.size} bytes, "
                              f"{end - pos} remain in the container")
        (kind, _ver, ehsize, size, _csize, _unk, minor, major, arch, name_off, name_len, flags, _zero,
         dsize) = ENTRY.unpack_from(data, pos)
        if kind not in (EntryKind.PTX, EntryKind.ELF):
            raise FatbinError(f"entry at offset {pos} has unknown kind {kind} (PTX=1, ELF=2)")
        if ehsize < ENTRY.size:
            raise FatbinError(f"entry at offset {pos} has header size {ehsize}, below {ENTRY.size}")
        if pos + ehsize + size > end:
            raise FatbinError(f"entry at offset {pos} ({ehsize}-byte header, {size}-byte payload) "
                              f"runs past the container's end at offset {end}")
        name = ""
        if name_len:
            if name_off + name_len > ehsize:
                raise FatbinError(f"entry at offset {pos}: name ({name_off}+{name_len}) lies outside "
                                  f"its {ehsize}-byte header")
            name = data[pos + name_off:pos + name_off + name_len].split(b"\x00", 1)[0].decode("utf-8", "replace")
        payload = data[pos + ehsize:pos + ehsize + size]
        entries.append(FatbinEntry(kind, arch, payload, (major, minor), flags, name, pos, dsize))
        pos += ehsize + size
    return entries


def select_ptx(entries: Sequence[FatbinEntry], compute_capability: tuple[int, int]) -> FatbinEntry:
    """The newest PTX entry the device can run: highest arch <= cc, then the
    highest PTX ISA version."""
    cc = compute_capability[0] * 10 + compute_capability[1]
    ptx = [e for e in entries if e.kind == EntryKind.PTX]
    usable = [e for e in ptx if e.arch <= cc]
    if not usable:
        held = ", ".join(f"{EntryKind(e.kind).name} sm_{e.arch}" for e in entries) or "no entries"
        why = ("SASS (ELF cubins) runs only on the real GPU it was built for; the simulator "
               "needs PTX") if not ptx else f"every PTX entry targets an arch above sm_{cc}"
        raise NoImageForDevice(f"fatbin holds {held}: nothing for the simulated sm_{cc} device ({why})")
    best = max(usable, key=lambda e: (e.arch, e.ptx_version))
    if best.compressed:
        raise CompressedEntry(f"PTX entry sm_{best.arch} at offset {best.offset} is compressed "
                              f"(flags 0x{best.flags:x}); compressed fatbins are not supported yet "
                              f"(the compression is undocumented): build with nvcc -Xfatbin "
                              f"-compress=false or --no-compress")
    return best


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


__all__ = ["FATBIN_MAGIC", "WRAPPER_MAGIC", "EntryKind", "EntryFlags", "FatbinEntry", "FatbinError",
           "NoImageForDevice", "CompressedEntry", "build_fatbin", "build_wrapper", "parse_fatbin",
           "parse_wrapper", "fatbin_size", "select_ptx", "is_fatbin", "is_wrapper", "elf_fatbins",
           "ar_members"]
