"""Test harness for executor tests: compile CUDA C++ with NVRTC, load the PTX
onto a fresh SimGPU and launch a kernel with its arguments packed by the
kernel's own parameter table.

The one idea: kernel sources live next to this file as `<name>.cu`, and the
PTX NVRTC made from them is checked in as `<name>.<tag>.ptx` whose first line
records a hash of the source and options. A fixture whose hash matches is
used as is (no NVRTC in the common path, keeping the tests fast); a stale or
missing one is compiled again (and cached per process). It deliberately does
not write fixtures during a test run: `regenerate()` does that on request.
"""
from __future__ import annotations

import functools
import hashlib
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gpudbg.ptx import parse
from gpudbg.sim.executor import LaunchStats, launch_grid
from gpudbg.sim.faults import FaultReport, KernelFault
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.loader import LoadedModule, load_module

HERE = Path(__file__).parent
ARCH = "-arch=compute_80"
_HEADER = "// gpudbg-fixture "


class CompileError(Exception):
    """NVRTC rejected a test kernel; the message carries its log."""


@functools.lru_cache(maxsize=None)
def compile_cuda(src: str, opts: tuple[str, ...] = (ARCH,), name: str = "k.cu") -> str:
    """CUDA C++ -> PTX text with NVRTC (cached per source and options),
    through the project's own compiler front end."""
    from gpudbg.compiler import CompileError as NvrtcError
    from gpudbg.compiler import compile_ptx
    try:
        return compile_ptx(src, list(opts), name, line_info=False, cache=False)
    except NvrtcError as e:
        raise CompileError(str(e)) from None


def _tag(opts: tuple[str, ...]) -> str:
    flags = [o.lstrip("-").replace("=", "").replace("_", "") for o in opts if o != ARCH]
    return "-".join(["O"] + flags) if not flags else "-".join(flags)


def _digest(src: str, opts: tuple[str, ...]) -> str:
    return hashlib.sha256((src + "\0" + " ".join(opts)).encode()).hexdigest()[:16]


def fixture_path(name: str, opts: tuple[str, ...]) -> Path:
    return HERE / f"{name}.{_tag(opts)}.ptx"


@functools.lru_cache(maxsize=None)
def kernel_ptx(name: str, opts: tuple[str, ...] = (ARCH,)) -> str:
    """PTX of kernels/<name>.cu built with opts: the checked-in fixture when
    it is current, else a fresh NVRTC build."""
    src = (HERE / f"{name}.cu").read_text()
    path = fixture_path(name, opts)
    digest = _digest(src, opts)
    if path.exists():
        text = path.read_text()
        first, _, rest = text.partition("\n")
        if first == _HEADER + digest:
            return rest
    return compile_cuda(src, opts, f"{name}.cu")


OPTIMIZED = (ARCH,)
DEBUG = (ARCH, "-G")
LINEINFO = (ARCH, "-lineinfo")
# the builds each test module uses, which are the fixtures worth keeping
ASYNC_O = (ARCH, "-std=c++17")
ASYNC_90 = ("-arch=compute_90", "-std=c++17")
VARIANTS = {"faults": [LINEINFO, DEBUG], "tensor90": [("-arch=compute_90",)],
            # its -G build (1.9 MB of libcu++) is compiled by the test, not kept
            "async_copy": [ASYNC_O, ASYNC_90]}
DEFAULT_VARIANTS = [OPTIMIZED, DEBUG]


def regenerate(names: list[str] | None = None) -> list[Path]:
    """Rewrite the checked-in PTX fixtures from their .cu sources
    (`python -c "import kernels; kernels.regenerate()"` from tests/sim)."""
    out = []
    for cu in sorted(HERE.glob("*.cu")):
        if names and cu.stem not in names:
            continue
        src = cu.read_text()
        for opts in VARIANTS.get(cu.stem, DEFAULT_VARIANTS):
            ptx = compile_cuda(src, opts, cu.name)
            path = fixture_path(cu.stem, opts)
            path.write_text(_HEADER + _digest(src, opts) + "\n" + ptx)
            out.append(path)
    return out


# ------------------------------------------------------------------ launching


@dataclass
class Ptr:
    """A raw pointer argument (e.g. a garbage address for fault tests)."""

    value: int


@dataclass
class Out:
    """An output buffer of `count` elements of `dtype`, initialized to
    `fill`; read back after the launch."""

    count: int
    dtype: object = np.float32
    fill: object = 0


@dataclass
class Result:
    gpu: SimGPU
    module: LoadedModule
    stats: LaunchStats | None
    arrays: list  # per argument: array read back (None for scalars)
    bases: list  # per argument: device address of its buffer (None for scalars)
    fault: FaultReport | None = None
    printf: list[str] = field(default_factory=list)

    def __getitem__(self, i: int) -> np.ndarray:
        return self.arrays[i]


_SCALAR = {"u8": "<B", "s8": "<b", "b8": "<B", "u16": "<H", "s16": "<h", "b16": "<H",
           "u32": "<I", "s32": "<i", "b32": "<I", "u64": "<Q", "s64": "<q", "b64": "<Q",
           "f32": "<f", "f64": "<d"}


@functools.lru_cache(maxsize=64)
def _parsed(ptx: str):
    return parse(ptx, "k.ptx")


def _pack(params: bytearray, p, value) -> None:
    if isinstance(value, (bytes, bytearray)):
        if len(value) != p.size:
            raise ValueError(f"parameter {p.name} takes {p.size} bytes, got {len(value)}")
        params[p.offset:p.offset + p.size] = value
        return
    fmt = _SCALAR.get(p.type)
    if fmt is None or struct.calcsize(fmt) != p.size:
        raise ValueError(f"cannot pack {value!r} into parameter {p.name} (.{p.type}, {p.size} bytes)")
    if fmt[-1] in "fd":
        struct.pack_into(fmt, params, p.offset, float(value))
    else:
        bits = p.size * 8
        struct.pack_into(fmt.upper(), params, p.offset, int(value) & ((1 << bits) - 1))


def run(ptx: str, kernel: str, grid, block, args, shared: int = 0, gpu: SimGPU | None = None,
        budget: int | None = None, expect_fault: bool = False, module: LoadedModule | None = None) -> Result:
    """Load `ptx`, launch `kernel` and read every buffer argument back.

    Arguments: numpy arrays (copied to a fresh allocation), Out(...) (a
    fresh output allocation), Ptr(v) (a raw pointer value), bytes (a struct
    parameter), or Python scalars (packed as the parameter's type). With
    expect_fault the KernelFault's report is returned in Result.fault; an
    unexpected fault (or a missing one) fails the test. `module`: launch
    from a module already loaded (on its gpu) instead of loading `ptx`."""
    gpu = module.gpu if module is not None else gpu or SimGPU()
    if budget is not None:
        gpu.instruction_budget = budget
    lm = module if module is not None else load_module(gpu, _parsed(ptx))
    k = lm.functions[kernel]
    if len(args) != len(k.params):
        raise ValueError(f"{kernel} takes {len(k.params)} parameters, got {len(args)}")
    params = bytearray(k.param_size)
    arrays, bases, dtypes = [], [], []
    for p, a in zip(k.params, args):
        if isinstance(a, Out):
            a = np.full(a.count, a.fill, dtype=a.dtype)
        if isinstance(a, np.ndarray):
            a = np.ascontiguousarray(a)
            buf = gpu.memory.alloc(max(a.nbytes, 1))
            gpu.memory.write(buf.base, a.view(np.uint8).reshape(-1))
            struct.pack_into("<Q", params, p.offset, buf.base)
            arrays.append(a)
            bases.append(buf.base)
            dtypes.append((a.dtype, a.shape))
            continue
        if isinstance(a, Ptr):
            struct.pack_into("<Q", params, p.offset, a.value & (2**64 - 1))
        else:
            _pack(params, p, a)
        arrays.append(None)
        bases.append(None)
        dtypes.append(None)
    grid = tuple(grid) + (1,) * (3 - len(grid))
    block = tuple(block) + (1,) * (3 - len(block))
    stats, fault = None, None
    try:
        stats = launch_grid(gpu, k, grid, block, shared, bytes(params), 1)
    except KernelFault as e:
        if not expect_fault:
            raise
        fault = e.report
    if expect_fault and fault is None:
        raise AssertionError(f"{kernel} was expected to fault but completed")
    out = []
    for base, dt in zip(bases, dtypes):
        if base is None:
            out.append(None)
            continue
        dtype, shape = dt
        nbytes = int(np.prod(shape)) * dtype.itemsize
        out.append(gpu.memory.read(base, nbytes).view(dtype).reshape(shape).copy())
    return Result(gpu, lm, stats, out, bases, fault, list(gpu.printf_buffer))


def hand_ptx(name: str) -> str:
    """A hand-written PTX fixture, kernels/<name>.hand.ptx."""
    return (HERE / f"{name}.hand.ptx").read_text()
