"""CUDA C++ to PTX with NVRTC from pip, and to a loaded Module.

NVRTC ships without the C library headers, so kernels written as for nvcc
(printf, assert, malloc) would not compile. The one idea: a small prelude is
handed to NVRTC as an in-memory header and pulled in with `--pre-include`,
so the user's file keeps its own line numbers (error messages, __LINE__ in
asserts and the `.loc` line table all stay exact), and the usual header
names (<cstdio>, <assert.h>, ...) resolve to that prelude too. Compiled PTX
is cached on disk by a hash of everything that determines it (sources that
include files from disk are not cached); the cache is an optimisation only,
so any failure to read or write it is ignored.

CUDA's own headers (cuda_fp16.h, cuda_bf16.h, cuda_fp8.h, mma.h,
cooperative_groups.h, and CCCL: CUB, libcu++'s cuda::barrier/pipeline/
atomic_ref) come from the pinned pip packages that ship them
(nvidia-cuda-runtime, nvidia-cuda-crt, nvidia-cuda-cccl), found through
cuda-pathfinder and handed to NVRTC as include paths, so no manual -I is
needed; a source including only those headers is still cached, keyed by
the packages' versions. Each entry carries the
SHA-256 and length of its PTX in a first comment line, so a damaged entry
(truncated by a full disk, edited, of an older format) is detected
(CacheEntryError), removed and compiled afresh instead of breaking that
source for good; entries are written atomically (temp file + rename), so
concurrent processes never read half an entry.

It does not produce cubins or link device code (the simulator runs PTX), and
it does not emulate the rest of the C/C++ standard library.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from gpudbg.reader_error import ReaderError

if TYPE_CHECKING:
    from gpudbg.api.module import Module

__all__ = ["CacheEntryError", "CompileError", "CompilerUnavailableError", "Diagnostic", "compile",
           "compile_ptx", "lowered_names", "cache_dir", "read_cache_entry", "source_line", "DEFAULT_ARCH"]

DEFAULT_ARCH = "compute_80"
PRELUDE_NAME = "__gpudbg_prelude.h"
# Bump when the prelude or the post-processing changes: it is part of the cache key.
_PRELUDE_VERSION = "1"

_PRINTF = 'extern "C" __device__ int printf(const char *__format, ...);\n'
_MALLOC = 'extern "C" __device__ void *malloc(size_t __size);\n'
_FREE = 'extern "C" __device__ void free(void *__ptr);\n'
# As CUDA's assert.h does for device code: __assertfail(message, file, line,
# function, charsize), with the assertion text, __FILE__, __LINE__ and the
# pretty function name.
_ASSERT = (
    'extern "C" __device__ void __assertfail(const char *__assertion, const char *__file,\n'
    '                                        unsigned int __line, const char *__function,\n'
    '                                        size_t __charsize);\n'
    '#ifndef assert\n'
    '#ifdef NDEBUG\n'
    '#define assert(e) (static_cast<void>(0))\n'
    '#else\n'
    '#define assert(e) (static_cast<bool>(e) ? static_cast<void>(0) : '
    '__assertfail(#e, __FILE__, __LINE__, __PRETTY_FUNCTION__, sizeof(char)))\n'
    '#endif\n'
    '#endif\n'
)

# A user declaration of one of these names means the prelude must not declare
# it again (a differing declaration would conflict).
_DECLARED = {
    "printf": re.compile(r"\bint\s+printf\s*\("),
    "malloc": re.compile(r"\*\s*malloc\s*\("),
    "free": re.compile(r"\bvoid\s+free\s*\("),
    "assert": re.compile(r"#\s*define\s+assert\b|\bvoid\s+__assertfail\s*\("),
}
_PARTS = {"printf": _PRINTF, "malloc": _MALLOC, "free": _FREE, "assert": _ASSERT}

# Standard header names that resolve to the prelude, as they would declare
# the same functions with nvcc.
_STD_HEADERS = ("stdio.h", "cstdio", "assert.h", "cassert", "stdlib.h", "cstdlib")

_ARCH_OPTIONS = ("-arch", "--gpu-architecture")
# The pip packages whose headers NVRTC is given, in include-path order
# (CCCL first: its libcu++ must win over any older copy in the toolkit's dir).
_HEADER_PACKAGES = (("cccl", "nvidia-cuda-cccl"), ("cudart", "nvidia-cuda-runtime"))
_LINE_OPTIONS = ("-lineinfo", "--generate-line-info", "-G", "--device-debug")

_DIAG = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<severity>error|warning|remark|catastrophic error)"
                   r"(?: #[\w-]+)?: (?P<message>.*)$", re.M)


@dataclass(frozen=True)
class Diagnostic:
    """One message of the NVRTC log, with its place."""

    file: str
    line: int
    severity: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.severity}: {self.message}"


class CompileError(Exception):
    """NVRTC rejected the source or the options; `log` is NVRTC's full log
    and `diagnostics` its file:line messages."""

    def __init__(self, message: str, log: str = "", name: str = "", options: Sequence[str] = ()):
        self.log = log
        self.name = name
        self.options = tuple(options)
        self.diagnostics = parse_log(log)
        lines = [message]
        errors = [d for d in self.diagnostics if d.severity != "warning" and d.severity != "remark"]
        lines += [str(d) for d in errors]
        if log.strip():
            lines += ["", "NVRTC log:", log.rstrip()]
        super().__init__("\n".join(lines))


class CompilerUnavailableError(CompileError):
    """NVRTC itself cannot be loaded (cuda-bindings / nvidia-cuda-nvrtc missing)."""


def parse_log(log: str) -> list[Diagnostic]:
    """The `file(line): severity: message` entries of an NVRTC log."""
    return [Diagnostic(m["file"], int(m["line"]), m["severity"], m["message"].strip())
            for m in _DIAG.finditer(log)]


# ------------------------------------------------------------------ options
def _normalize_options(options: str | Iterable[str]) -> list[str]:
    if isinstance(options, str):
        opts = options.split()
    else:
        try:
            opts = list(options)
        except TypeError:
            raise TypeError(f"options must be a string or a sequence of strings, "
                            f"not {type(options).__name__}") from None
    for o in opts:
        if not isinstance(o, str):
            raise TypeError(f"every compiler option must be a str, got {o!r}")
        if not o.strip():
            raise ValueError("empty compiler option")
    return opts


def _has(opts: Sequence[str], names: Sequence[str]) -> bool:
    return any(o == n or o.startswith(n + "=") for o in opts for n in names)


@functools.lru_cache(maxsize=1)
def cuda_include_dirs() -> tuple[str, ...]:
    """The header directories of the pinned CUDA header packages that are
    installed (cuda-pathfinder knows their layout); a package that is
    missing is simply not searched, and NVRTC names the header it lacks."""
    try:
        from cuda.pathfinder import find_nvidia_header_directory
    except ImportError:
        return ()
    dirs = []
    for libname, _package in _HEADER_PACKAGES:
        try:
            d = find_nvidia_header_directory(libname)
        except Exception:   # unknown name in an older pathfinder, unreadable site dir
            d = None
        if d and os.path.isdir(d) and d not in dirs:
            dirs.append(d)
    return tuple(dirs)


@functools.lru_cache(maxsize=1)
def _header_versions() -> str:
    from importlib import metadata
    out = []
    for _libname, package in _HEADER_PACKAGES + (("crt", "nvidia-cuda-crt"),):
        try:
            out.append(f"{package}={metadata.version(package)}")
        except metadata.PackageNotFoundError:
            out.append(f"{package}=none")
    return ",".join(out)


def effective_options(options: str | Iterable[str] = (), line_info: bool = True) -> list[str]:
    """The options NVRTC is given: the user's, the default architecture
    unless one is named, line info unless disabled or -G already asks for
    full debug info, CUDA's header directories after the user's own, and
    the prelude."""
    opts = _normalize_options(options)
    if not _has(opts, _ARCH_OPTIONS):
        opts.append(f"--gpu-architecture={DEFAULT_ARCH}")
    if line_info and not _has(opts, _LINE_OPTIONS):
        opts.append("-lineinfo")
    opts += [f"--include-path={d}" for d in cuda_include_dirs()]
    opts.append(f"--pre-include={PRELUDE_NAME}")
    return opts


def prelude_for(source: str) -> str:
    """The prelude with the declarations `source` does not make itself."""
    parts = [_PARTS[k] for k, pat in _DECLARED.items() if not pat.search(source)]
    return "#pragma once\n" + "".join(parts)


# ------------------------------------------------------------------ NVRTC
def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError as e:
        raise CompilerUnavailableError(
            f"NVRTC is not available ({e}); install cuda-bindings and nvidia-cuda-nvrtc") from None
    return nvrtc


def _check(nvrtc, result, what: str) -> None:
    if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise CompilerUnavailableError(f"NVRTC {what} failed: {result!r}")


def _run_nvrtc(source: str, name: str, opts: Sequence[str], headers: dict[str, str],
               name_expressions: Sequence[str] = ()) -> str:
    """Compile; return PTX text or raise CompileError with the log. Each
    name expression's lowered name (nvrtcGetLoweredName) is appended to the
    PTX as a comment line, so the disk cache keeps it with the PTX.

    Output buffers are bytearrays: NVRTC writes into them, and writing into
    a bytes object would corrupt CPython's shared one-byte bytes singletons."""
    nvrtc = _nvrtc()
    names = [h.encode() for h in headers]
    bodies = [b.encode() for b in headers.values()]
    try:
        err, prog = nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), len(headers), bodies, names)
    except Exception as e:  # the shared library failed to load
        raise CompilerUnavailableError(f"NVRTC could not be used: {e}") from None
    _check(nvrtc, err, "program creation")
    try:
        for expr in name_expressions:
            _check(nvrtc, nvrtc.nvrtcAddNameExpression(prog, expr.encode())[0], f"name expression {expr!r}")
        err, = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
        res, size = nvrtc.nvrtcGetProgramLogSize(prog)
        _check(nvrtc, res, "log size query")
        buf = bytearray(size)
        _check(nvrtc, nvrtc.nvrtcGetProgramLog(prog, buf)[0], "log query")
        log = bytes(buf).rstrip(b"\x00").decode(errors="replace")
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            what = ("invalid compiler option" if err == nvrtc.nvrtcResult.NVRTC_ERROR_INVALID_OPTION
                    else "compilation failed")
            raise CompileError(f"{name}: {what}", log, name, opts)
        res, size = nvrtc.nvrtcGetPTXSize(prog)
        _check(nvrtc, res, "PTX size query")
        buf = bytearray(size)
        _check(nvrtc, nvrtc.nvrtcGetPTX(prog, buf)[0], "PTX query")
        ptx = bytes(buf).rstrip(b"\x00").decode()
        for expr in name_expressions:
            res, lowered = nvrtc.nvrtcGetLoweredName(prog, expr.encode())
            if res != nvrtc.nvrtcResult.NVRTC_SUCCESS:
                raise CompileError(f"{name}: name expression {expr!r} names no __global__ function or "
                                   f"__device__/__constant__ variable of the program ({res.name})",
                                   log, name, opts)
            ptx += f"\n// gpudbg lowered-name {lowered.decode()} {expr}"
        return ptx + ("\n" if name_expressions else "")
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def _relative_file_directives(ptx: str, name: str) -> str:
    """NVRTC writes `.file 1 "<cwd>/<name>"`; name the file as the caller
    did, so the PTX (and the cache) does not depend on the working directory."""
    if os.path.isabs(name):
        return ptx
    absolute = os.path.join(os.getcwd(), name)
    return ptx.replace(f'"{absolute}"', f'"{name}"')


# ------------------------------------------------------------------ cache
def cache_dir() -> Path:
    """$XDG_CACHE_HOME/gpudbg/ptx, or ~/.cache/gpudbg/ptx."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gpudbg" / "ptx"


@functools.lru_cache(maxsize=1)
def _nvrtc_version() -> str:
    try:
        nvrtc = _nvrtc()
        res, major, minor = nvrtc.nvrtcVersion()
        return f"{major}.{minor}"
    except Exception:
        return "unknown"


_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"]', re.M)
_INCLUDE_OPTIONS = ("-I", "--include-path", "-include", "--pre-include")


def _package_header(name: str) -> bool:
    """Whether an include resolves to a CUDA header package's file (whose
    content the package versions in the cache key pin) and not to a file
    of the user's in the working directory."""
    if os.path.exists(name):
        return False
    return any(os.path.isfile(os.path.join(d, name)) for d in cuda_include_dirs())


def cacheable(source: str, user_options: Sequence[str]) -> bool:
    """Whether the PTX depends only on what the cache key holds: not when
    the source or the options pull in the user's files from disk, which
    may change (CUDA's own headers are pinned by the key)."""
    if any(inc not in _STD_HEADERS and not _package_header(inc) for inc in _INCLUDE.findall(source)):
        return False
    return not any(o.startswith(_INCLUDE_OPTIONS) for o in user_options)


def _cache_key(source: str, name: str, opts: Sequence[str]) -> str:
    h = hashlib.sha256()
    for part in (_PRELUDE_VERSION, _nvrtc_version(), _header_versions(), name, "\0".join(opts), source):
        h.update(part.encode())
        h.update(b"\x01")
    return h.hexdigest()


_ENTRY_HEADER = re.compile(r"// gpudbg ptx cache (\d+) sha256=([0-9a-f]{64}) bytes=(\d{1,12})\n")
_ENTRY_FORMAT = 2


class CacheEntryError(ReaderError):
    """A compile-cache entry that is not a whole, unchanged entry of this
    format: `file` is the entry, `offset` where its damage shows."""

    def __init__(self, path: Path, offset: int, message: str):
        super().__init__(f"{path}: {message}")
        self.file, self.offset, self.reason = str(path), offset, message


def _entry_bytes(ptx: str) -> bytes:
    body = ptx.encode()
    head = f"// gpudbg ptx cache {_ENTRY_FORMAT} sha256={hashlib.sha256(body).hexdigest()} bytes={len(body)}\n"
    return head.encode() + body


def read_cache_entry(path: Path) -> str:
    """The PTX of one cache entry; CacheEntryError if the entry is damaged
    (truncated, changed, another format), OSError if it cannot be read."""
    data = path.read_bytes()
    nl = data.find(b"\n")
    m = _ENTRY_HEADER.fullmatch(data[:nl + 1].decode("ascii", "replace")) if 0 <= nl < 200 else None
    if m is None:
        raise CacheEntryError(path, 0, "no gpudbg cache header (another format, or damaged)")
    if int(m[1]) != _ENTRY_FORMAT:
        raise CacheEntryError(path, 0, f"cache format {m[1]}, this gpudbg writes {_ENTRY_FORMAT}")
    body = data[nl + 1:]
    if len(body) != int(m[3]):
        raise CacheEntryError(path, nl + 1 + min(len(body), int(m[3])),
                              f"{len(body)} bytes of PTX where the header says {m[3]} (truncated or appended to)")
    if hashlib.sha256(body).hexdigest() != m[2]:
        raise CacheEntryError(path, nl + 1, "the PTX does not match its checksum (changed on disk)")
    try:
        return body.decode()
    except UnicodeDecodeError as e:   # unreachable with a matching checksum of our own UTF-8 text
        raise CacheEntryError(path, nl + 1 + e.start, "PTX is not UTF-8") from None


def _cache_read(key: str) -> str | None:
    """A hit, or None: a missing or unreadable entry is a miss, a damaged
    one is removed (best effort) and is a miss, so it is compiled afresh."""
    path = cache_dir() / f"{key}.ptx"
    try:
        return read_cache_entry(path)
    except CacheEntryError:
        try:
            path.unlink()
        except OSError:
            pass
        return None
    except OSError:
        return None


def _cache_write(key: str, ptx: str) -> None:
    """Atomically (a private temp file in the cache directory, then rename),
    so a process reading concurrently sees the old entry or the whole new
    one; silently gives up on any OS error (the cache is an optimisation)."""
    from gpudbg.dump.files import replace_atomically
    try:
        d = cache_dir()
        d.mkdir(parents=True, exist_ok=True)
        replace_atomically(d / f"{key}.ptx", _entry_bytes(ptx))
    except OSError:
        pass


# ------------------------------------------------------------------ public
def compile_ptx(source: str, options: str | Iterable[str] = (), name: str = "kernel.cu", *,
                line_info: bool = True, cache: bool = True, name_expressions: Iterable[str] = ()) -> str:
    """CUDA C++ source to PTX text (see the module docstring for the prelude
    and the cache). Raises CompileError carrying NVRTC's log. Name
    expressions (`"foo<float>"`, `"&bar"`) instantiate templates; their
    lowered names travel in the PTX (lowered_names())."""
    exprs = _name_expressions(name_expressions)
    if not isinstance(source, str):
        raise TypeError(f"source must be CUDA C++ text (str), not {type(source).__name__}")
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty file name, got {name!r}")
    opts = effective_options(options, line_info)
    cache = cache and cacheable(source, _normalize_options(options))
    key = _cache_key(source, name, [*opts, *(f"--name-expression={e}" for e in exprs)]) if cache else ""
    if cache:
        hit = _cache_read(key)
        if hit is not None:
            return hit
    headers = {PRELUDE_NAME: prelude_for(source)}
    headers.update({h: f'#include "{PRELUDE_NAME}"\n' for h in _STD_HEADERS})
    ptx = _relative_file_directives(_run_nvrtc(source, name, opts, headers, exprs), name)
    if cache:
        _cache_write(key, ptx)
    return ptx


def _name_expressions(exprs: Iterable[str]) -> list[str]:
    if isinstance(exprs, str):
        raise TypeError("name_expressions must be a list of strings, not one string")
    out = list(exprs)
    for e in out:
        if not isinstance(e, str) or not e.strip() or "\n" in e:
            raise ValueError(f"every name expression must be a one-line, non-empty str, got {e!r}")
    return out


_LOWERED = re.compile(r"^// gpudbg lowered-name (\S+) (.+)$", re.M)


def lowered_names(ptx: str) -> dict[str, str]:
    """{name expression: mangled name} recorded by compile_ptx."""
    return {m[2]: m[1] for m in _LOWERED.finditer(ptx)}


# Sources compiled in this process, by file name, so a fault report can quote
# the offending line of a kernel that never existed on disk.
_SOURCES: dict[str, str] = {}


def source_line(file: str, line: int) -> str | None:
    """Line `line` (1-based) of a source compiled here, or of the file on disk."""
    text = _SOURCES.get(file)
    if text is None:
        try:
            text = Path(file).read_text(errors="replace")
        except (OSError, ValueError):
            return None
    lines = text.splitlines()
    return lines[line - 1] if 1 <= line <= len(lines) else None


def compile(source: str, options: str | Iterable[str] = (), name: str | None = None, *,
            line_info: bool = True, cache: bool = True, name_expressions: Iterable[str] = ()) -> "Module":
    """Compile CUDA C++ and load it on the current device (mcModuleLoadData).
    `name_expressions` instantiate templates: `mod["foo<float>"]` is then
    the instantiation (NVRTC's lowered name).

    Without a `name`, a source written as a string literal in the calling
    .py file is compiled as lines of that file (string_origin.py), so
    reports and breakpoints say `prog.py:LINE`; any other source is
    `kernel.cu`."""
    from gpudbg import string_origin
    from gpudbg.api.module import Module

    text = source
    if name is None:
        origin = string_origin.find(source) if isinstance(source, str) else None
        if origin is not None:
            text, name = string_origin.with_line_directive(source, origin), origin.file
        else:
            name = "kernel.cu"
    ptx = compile_ptx(text, options, name, line_info=line_info, cache=cache, name_expressions=name_expressions)
    if text is source:   # a .py origin is read from its file, as its lines are the file's
        _SOURCES[name] = source
    return Module.from_ptx(ptx, name=name, source=source)
