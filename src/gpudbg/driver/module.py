"""Loaded modules, their functions and globals, and kernel launch.

Loading is parse (PTX text -> IR) then the simulator's loader (globals and
constants allocated and initialized in device memory, code translated once).
A launch is what a real driver does with a QMD: validate the configuration
against the device limits and the kernel's footprint, write the launch
descriptor and the packed parameters into one LAUNCH allocation in device
memory, and push a LAUNCH command that points at it; the allocation is freed
when the launch's fence retires. Nothing here executes code.
"""
from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Sequence

from gpudbg.driver import commands as C
from gpudbg.driver.params import pack_params, unpack_extra
from gpudbg.runtime.errors import DriverError, mcError_t
from gpudbg.sim.device_model import occupancy
from gpudbg.sim.memory.spaces import AllocationKind, OutOfMemory

_ids = itertools.count(1)
EXTRA_KEYS = {"END": 0x00, "BUFFER_POINTER": 0x01, "BUFFER_SIZE": 0x02}


class Function:
    """mcFunction_t: one entry of a loaded module."""

    def __init__(self, module: "Module", kernel: Any):
        self.module = module
        self.kernel = kernel
        self.name: str = kernel.name

    def __repr__(self) -> str:
        return f"<mcFunction {self.name}>"


class Module:
    """mcModule_t."""

    def __init__(self, context: Any, loaded: Any, name: str):
        self.id = next(_ids)
        self.context = context
        self.loaded = loaded
        self.name = name
        self.functions = {n: Function(self, k) for n, k in loaded.functions.items()}
        self.unloaded = False
        for f in self.functions.values():
            context.gpu.register_function(f.kernel)

    def __repr__(self) -> str:
        return f"<mcModule {self.id} {self.name}>"

    def get_function(self, name: str) -> Function:
        if not isinstance(name, str):
            raise DriverError(mcError_t.mcErrorInvalidValue, f"function name must be str, not {name!r}")
        f = self.functions.get(name)
        if f is None:
            known = ", ".join(sorted(self.functions)) or "none"
            raise DriverError(mcError_t.mcErrorNotFound,
                              f"module {self.name} has no kernel {name!r} (kernels: {known})")
        return f

    def get_global(self, name: str) -> tuple[int, int]:
        if not isinstance(name, str):
            raise DriverError(mcError_t.mcErrorInvalidValue, f"global name must be str, not {name!r}")
        g = self.loaded.globals.get(name)
        if g is None:
            known = ", ".join(sorted(self.loaded.globals)) or "none"
            raise DriverError(mcError_t.mcErrorNotFound,
                              f"module {self.name} has no global {name!r} (globals: {known})")
        return g

    def unload(self, sync: bool = True) -> None:
        ctx = self.context
        if self.unloaded:
            raise DriverError(mcError_t.mcErrorNotFound, f"{self!r} is already unloaded")
        if sync:
            ctx.wait_idle_quietly()   # kernels of this module may still be queued
        for f in self.functions.values():
            ctx.gpu.unregister_function(f.kernel)
        with ctx.gpu.cv:
            self.loaded.unload()
        self.unloaded = True
        if self in ctx.modules:
            ctx.modules.remove(self)


def _image_text(image: Any) -> str:
    if isinstance(image, str):
        text = image
    elif isinstance(image, (bytes, bytearray, memoryview)):
        raw = bytes(image).split(b"\x00", 1)[0]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise DriverError(mcError_t.mcErrorInvalidImage,
                              "image is not PTX text (not UTF-8; cubin/fatbin are not supported)") from None
    else:
        raise DriverError(mcError_t.mcErrorInvalidValue,
                          f"image must be PTX as str or bytes, not {type(image).__name__}")
    if ".version" not in text or ".target" not in text:
        raise DriverError(mcError_t.mcErrorInvalidImage,
                          "image is not PTX: no .version/.target directives")
    return text


def load_data(context: Any, image: Any, name: str = "<image>") -> Module:
    from gpudbg.ptx.errors import PTXParseError
    from gpudbg.ptx.parser import parse
    from gpudbg.sim.loader import load_module

    text = _image_text(image)
    try:
        ir_module = parse(text, name)
    except PTXParseError as e:
        raise DriverError(mcError_t.mcErrorInvalidKernelFile, str(e)) from None
    try:
        with context.gpu.cv:
            loaded = load_module(context.gpu, ir_module)
    except OutOfMemory as e:
        raise DriverError(mcError_t.mcErrorMemoryAllocation, str(e)) from None
    except Exception as e:  # LoadError, unsupported instruction: the message names the place
        raise DriverError(mcError_t.mcErrorInvalidKernelFile, f"{type(e).__name__}: {e}") from None
    m = Module(context, loaded, name)
    context.modules.append(m)
    return m


def load_file(context: Any, path: Any) -> Module:
    if not isinstance(path, (str, Path)):
        raise DriverError(mcError_t.mcErrorInvalidValue, f"path must be str or Path, not {path!r}")
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise DriverError(mcError_t.mcErrorFileNotFound, f"{p}: no such file") from None
    except OSError as e:
        raise DriverError(mcError_t.mcErrorFileNotFound, f"{p}: {e.strerror}") from None
    return load_data(context, data, str(p))


def _dims(name: str, dims: Sequence[int]) -> tuple[int, int, int]:
    out = []
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int):
            raise DriverError(mcError_t.mcErrorInvalidValue, f"{name} dimensions must be ints, got {d!r}")
        out.append(d)
    return out[0], out[1], out[2]


def validate_launch(context: Any, function: Function, grid: Sequence[int], block: Sequence[int],
                    shared_bytes: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    m = context.device.model
    k = function.kernel
    g, b = _dims("grid", grid), _dims("block", block)
    if isinstance(shared_bytes, bool) or not isinstance(shared_bytes, int) or shared_bytes < 0:
        raise DriverError(mcError_t.mcErrorInvalidValue, "sharedMemBytes must be a non-negative int")
    for axis, (n, lim) in enumerate(zip(g, m.max_grid_dims)):
        if not 1 <= n <= lim:
            raise DriverError(mcError_t.mcErrorInvalidConfiguration,
                              f"grid dimension {'xyz'[axis]}={n} is outside 1..{lim}")
    for axis, (n, lim) in enumerate(zip(b, m.max_block_dims)):
        if not 1 <= n <= lim:
            raise DriverError(mcError_t.mcErrorInvalidConfiguration,
                              f"block dimension {'xyz'[axis]}={n} is outside 1..{lim}")
    threads = b[0] * b[1] * b[2]
    limit = min(m.max_threads_per_block, k.max_threads_per_block or m.max_threads_per_block)
    if threads > limit:
        raise DriverError(mcError_t.mcErrorInvalidConfiguration,
                          f"{threads} threads per block exceed {function.name}'s limit of {limit}")
    shared = k.static_shared + shared_bytes
    if shared > m.shared_per_block:
        raise DriverError(mcError_t.mcErrorInvalidValue,
                          f"{function.name} needs {shared} bytes of shared memory per block "
                          f"({k.static_shared} static + {shared_bytes} dynamic), the limit is "
                          f"{m.shared_per_block}")
    if occupancy(m, threads, k.num_regs, shared) == 0:
        raise DriverError(mcError_t.mcErrorLaunchOutOfResources,
                          f"{function.name} with {threads} threads of {k.num_regs} registers and "
                          f"{shared} bytes of shared memory cannot fit on one SM")
    return g, b


def launch(context: Any, function: Any, grid: Sequence[int], block: Sequence[int],
           shared_bytes: int, stream: Any, args: Sequence[Any] | None, extra: Any) -> int:
    """Validate, write the descriptor, push LAUNCH; returns the grid id."""
    if not isinstance(function, Function):
        raise DriverError(mcError_t.mcErrorInvalidResourceHandle, f"{function!r} is not a function handle")
    if function.module.unloaded or function.module.context is not context:
        raise DriverError(mcError_t.mcErrorInvalidResourceHandle,
                          f"{function!r} belongs to an unloaded module or another context")
    g, b = validate_launch(context, function, grid, block, shared_bytes)
    k = function.kernel
    if args is not None and extra is not None:
        raise DriverError(mcError_t.mcErrorInvalidValue, "pass either kernelParams or extra, not both")
    if extra is not None:
        params = unpack_extra(k, extra, EXTRA_KEYS)
    else:
        params = pack_params(k, args if args is not None else ())
    gpu = context.gpu
    try:
        alloc = gpu.alloc_internal(C.DESCRIPTOR_BYTES + len(params), AllocationKind.LAUNCH,
                                   f"launch {function.name}")
    except OutOfMemory as e:
        raise DriverError(mcError_t.mcErrorMemoryAllocation, str(e)) from None
    grid_id = gpu.next_grid_id()
    desc = C.encode_descriptor(code_address=k.code_address, grid_x=g[0], grid_y=g[1], grid_z=g[2],
                               block_x=b[0], block_y=b[1], block_z=b[2], shared_bytes=shared_bytes,
                               param_address=alloc.base + C.DESCRIPTOR_BYTES,
                               param_size=len(params), grid_id=grid_id)
    alloc.data[:C.DESCRIPTOR_BYTES] = memoryview(desc)
    alloc.data[C.DESCRIPTOR_BYTES:C.DESCRIPTOR_BYTES + len(params)] = memoryview(params)
    fence = stream.submit([C.make(C.Opcode.LAUNCH, descriptor=alloc.base)])
    context.defer_free(stream, fence, alloc)
    context.reap()
    return grid_id
