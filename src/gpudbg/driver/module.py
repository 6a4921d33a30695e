"""Loaded modules, their functions and globals, and kernel launch.

Loading is decode (PTX text, a fatbin or its wrapper, a host ELF's
.nv_fatbin, a linked IR image, or a pointer to one of these: all end as
PTX, the one thing the simulator runs), parse (PTX text -> IR), then the
simulator's loader (globals and constants allocated and initialized in
device memory, code translated once), then the JIT options applied to each
kernel's footprint (register cap, thread limits), which is what launch
validation and block placement read.
A launch is what a real driver does with a QMD: validate the configuration
against the device limits and the kernel's footprint, write the launch
descriptor and the packed parameters into one LAUNCH allocation in device
memory, and push a LAUNCH command that points at it; the allocation is freed
when the launch's fence retires. Nothing here executes code. Unloading
returns at once and invalidates the handle; the code and globals go once
the work queued before it has retired (CUDA's lifetime rule).
"""
from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from gpudbg.sim import cluster as sim_cluster
from gpudbg.sim import debug_port, instrument
from gpudbg.sim.device_model import occupancy
from gpudbg.sim import launch_limits as sim_launch_limits
from gpudbg.driver import commands as C
from gpudbg.driver import host_site
from gpudbg.driver import fatbin as FB
from gpudbg.driver import launch_buffers, launch_check, launch_config, limits
from gpudbg.driver.graph import _MarkerFence
from gpudbg.driver.jit_options import JitOptions
from gpudbg.driver.linker import LinkedImage
from gpudbg.driver.params import pack_params, unpack_extra
from gpudbg.driver.status import Cause, CUresult, EngineError
from gpudbg.driver.types import CUfunction_attribute, CUjit_cacheMode, CUjit_option
from gpudbg.sim.device_model import occupancy
from gpudbg.sim.memory.spaces import OutOfMemory

_ids = itertools.count(1)
EXTRA_KEYS = {"END": 0x00, "BUFFER_POINTER": 0x01, "BUFFER_SIZE": 0x02}


class Function:
    """mcFunction_t: one entry of a loaded module."""

    def __init__(self, module: "Module", kernel: Any):
        self.module = module
        self.kernel = kernel
        self.name: str = kernel.name
        self.launch_label = f"launch {kernel.name}"     # what its launch blocks are called in reports
        # what mcFuncSetAttribute set (driver/launch_config.py FunctionConfig; None: nothing yet) and
        # the launch shapes that passed validation (driver/launch_check.py): kept on the handle, so
        # that a launch finds them without a weak-dictionary lookup each
        self.launch_config: Any = None
        self.launch_shapes: dict = {}
        self.limit_uses: frozenset | None = None    # what of the launch limits the kernel uses (limits.py)

    def __repr__(self) -> str:
        return f"<mcFunction {self.name}>"

    def get_attribute(self, attrib: Any) -> int:
        return function_attribute(self, attrib)


class Module:
    """mcModule_t. `jit` holds the options it was loaded with, `info_log`
    the load log those options' log buffers received."""

    def __init__(self, context: Any, loaded: Any, name: str, jit: JitOptions | None = None):
        self.id = next(_ids)
        self.context = context
        self.loaded = loaded
        self.name = name
        self.jit = jit if jit is not None else JitOptions()
        self.info_log = ""
        self.targeted_threads: int | None = None
        self.functions = {n: Function(self, k) for n, k in loaded.functions.items()}
        self.unloaded = False
        for f in self.functions.values():
            context.gpu.register_function(f.kernel)

    def __repr__(self) -> str:
        return f"<mcModule {self.id} {self.name}>"

    def get_function(self, name: str) -> Function:
        if not isinstance(name, str):
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"function name must be str, not {name!r}")
        f = self.functions.get(name)
        if f is None:
            known = ", ".join(sorted(self.functions)) or "none"
            raise EngineError(CUresult.CUDA_ERROR_NOT_FOUND,
                              f"module {self.name} has no kernel {name!r} (kernels: {known})")
        return f

    def get_global(self, name: str) -> tuple[int, int]:
        if not isinstance(name, str):
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"global name must be str, not {name!r}")
        g = self.loaded.globals.get(name)
        if g is None:
            known = ", ".join(sorted(self.loaded.globals)) or "none"
            raise EngineError(CUresult.CUDA_ERROR_NOT_FOUND,
                              f"module {self.name} has no global {name!r} (globals: {known})")
        return g

    def unload(self, sync: bool = True) -> None:
        """mcModuleUnload: returns at once and invalidates the handle; the
        code and globals stay until every launch or copy queued in the
        context so far has retired (work already queued may use them).
        `sync` is accepted for old callers and changes nothing."""
        ctx = self.context
        with ctx.lock:
            if self.unloaded:
                raise EngineError(CUresult.CUDA_ERROR_NOT_FOUND, f"{self!r} is already unloaded")
            self.unloaded = True
            if self in ctx.modules:
                ctx.modules.remove(self)
            queued = _MarkerFence(_context_marker(ctx))
        ctx.defer(queued, 0, self._release)
        ctx.reap()

    def _release(self) -> None:
        """Unregister the code and free the globals (no queued work uses them)."""
        ctx = self.context
        if debug_port.attached() is not None:   # "about to be unloaded": its code is still there
            debug_port.notify("module_unloaded", ctx.gpu, self.loaded.program, self.name)
        for f in self.functions.values():
            ctx.gpu.unregister_function(f.kernel)
        with ctx.gpu.cv:
            self.loaded.unload()


def _context_marker(ctx: Any) -> Any:
    """Everything queued in the context so far (every stream's last fence)."""
    from gpudbg.driver.fence import Marker
    m = Marker()
    for s in ctx.all_streams():
        m = m.merged(s.channel.marker())
    return m


# ------------------------------------------------------------------ function attributes
def _cc(context: Any) -> int:
    major, minor = context.device.model.compute_capability
    return major * 10 + minor


def _ptx_arch(module_ir: Any) -> int | None:
    for t in getattr(module_ir, "targets", ()):
        digits = "".join(c for c in t[3:] if c.isdigit()) if t.startswith("sm_") else ""
        if digits:
            return int(digits)
    return None


def function_attribute(f: "Function", attrib: Any) -> int:
    """CUfunction_attribute semantics. The fields mcFuncGetAttributes also
    reports come from the same record (driver/launch_config.py), so the two
    queries cannot disagree; the cache mode is the JIT option the module
    was loaded with, the cluster fields are the kernel's
    .reqnctapercluster directive."""
    A = CUfunction_attribute
    try:
        a = A(int(attrib)) if not isinstance(attrib, bool) else None
    except (TypeError, ValueError):
        a = None
    if a is None:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{attrib!r} is not a CUfunction_attribute")
    r = launch_config.attributes(f)
    values = {
        A.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: r.maxThreadsPerBlock,
        A.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: r.sharedSizeBytes,
        A.CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: r.constSizeBytes,
        A.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: r.localSizeBytes,
        A.CU_FUNC_ATTRIBUTE_NUM_REGS: r.numRegs,
        A.CU_FUNC_ATTRIBUTE_PTX_VERSION: r.ptxVersion,
        A.CU_FUNC_ATTRIBUTE_BINARY_VERSION: r.binaryVersion,
        A.CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: int(f.module.jit.cache_mode is CUjit_cacheMode.CU_JIT_CACHE_OPTION_CA),
        A.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: r.maxDynamicSharedSizeBytes,
        A.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: r.preferredShmemCarveout,
        A.CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET: r.clusterDimMustBeSet,
        A.CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH: r.requiredClusterWidth,
        A.CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT: r.requiredClusterHeight,
        A.CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: r.requiredClusterDepth,
        A.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: r.nonPortableClusterSizeAllowed,
        A.CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: r.clusterSchedulingPolicyPreference,
    }
    return int(values[a])


# ------------------------------------------------------------------ images
def _read_pointer(context: Any, ptr: int) -> bytes:
    """The bytes from a user pointer (pinned host or device memory) to the
    end of its allocation: an image passed as `const void *`."""
    info = context.engine.uva.resolve(ptr) if ptr else None
    if info is None:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                          f"image pointer 0x{ptr:x} is not host-pinned or device memory of this process")
    with info.gpu.cv:
        return bytes(info.gpu.memory.read(info.address, info.remaining))


def _as_bytes(context: Any, image: Any) -> bytes | str:
    if isinstance(image, str):
        return image
    if isinstance(image, (bytes, bytearray, memoryview)):
        return bytes(image)
    if isinstance(image, np.ndarray):
        return image.tobytes()
    if isinstance(image, (int, np.integer)) and not isinstance(image, bool):
        return _read_pointer(context, int(image))
    raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                      f"image must be PTX text, image bytes or a pointer, not {type(image).__name__}")


def _ptx_from_fatbin(context: Any, data: bytes, debug: bool | None = None) -> str:
    """The PTX to run from the first container of a fatbin (NVIDIA reads
    only that one through a fatbin pointer)."""
    try:
        return FB.load_ptx(data, context.device.model.compute_capability, debug)
    except FB.NoImageForDevice as e:
        raise EngineError(CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU, str(e)) from None
    except FB.FatbinError as e:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_IMAGE, f"fatbin: {e}") from None


def _host_image(context: Any, ptr: int, what: str) -> bytes:
    """The image at a pointer: pinned host or device memory of the engine
    (to the end of its allocation), else this process's own memory (a
    wrapper, fatbin or PTX string in the program's data, as nvcc's host code
    and cuda-python pass them), read without risking a fault."""
    if context.engine.uva.resolve(ptr) is not None:
        return _read_pointer(context, ptr)
    try:
        return FB.image_at(ptr)
    except FB.UnreadableMemory as e:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{what} 0x{ptr:x}: {e}") from None
    except FB.FatbinError as e:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_IMAGE, f"{what} 0x{ptr:x}: {e}") from None


def unwrap_fatbin(context: Any, data: bytes) -> bytes:
    """A wrapper struct's fatbin, read through its data pointer."""
    try:
        ptr = FB.parse_wrapper(data)
    except FB.FatbinError as e:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_IMAGE, str(e)) from None
    data = _host_image(context, ptr, "fatbin wrapper's data pointer")
    if not FB.is_fatbin(data):
        raise EngineError(CUresult.CUDA_ERROR_INVALID_IMAGE,
                          f"fatbin wrapper's data pointer 0x{ptr:x} does not point at a fatbin "
                          f"(no magic 0x{FB.FATBIN_MAGIC:08X})")
    return data


def _ptx_from_elf(context: Any, data: bytes, debug: bool | None = None) -> str:
    """The PTX of a host object or executable: its .nv_fatbin holds one
    container per translation unit; the one whose PTX defines kernels."""
    try:
        sections, machine = FB.elf_fatbins(data)
        if machine == FB.EM_CUDA:
            raise EngineError(CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU,
                              "image is a cubin (SASS for a real NVIDIA GPU); the simulator runs PTX only: "
                              "load the PTX or a fatbin that contains PTX")
        if not sections:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_IMAGE, "ELF image has no .nv_fatbin section")
        chosen = [(e, e.ptx_text()) for e in FB.elf_ptx(data, context.device.model.compute_capability, debug)]
    except FB.NoImageForDevice as e:
        raise EngineError(CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU, f"ELF image's {e}") from None
    except FB.FatbinError as e:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_IMAGE, f"ELF image's .nv_fatbin: {e}") from None
    with_kernels = [(e, t) for e, t in chosen if ".entry" in t] or chosen
    if len(with_kernels) > 1:
        units = ", ".join(f"{e.target} PTX of the fatbin at section offset {e.container}" for e, _ in with_kernels)
        raise EngineError(CUresult.CUDA_ERROR_INVALID_IMAGE,
                          f"ELF image holds kernels of {len(with_kernels)} translation units ({units}); a module "
                          f"is one of them: load their fatbins separately (gpudbg.driver.fatbin.elf_ptx)")
    return with_kernels[0][1]


def image_to_ptx(context: Any, image: Any, fatbin_only: bool = False, debug: bool | None = None) -> str:
    """PTX text from any image form: PTX text, a fatbin, a fatbin wrapper,
    a host ELF with a .nv_fatbin section, or a pointer to one of these
    (engine memory or the process's own). `debug` prefers (-G) entries with
    (True) or without (False) the debug flag."""
    if isinstance(image, (int, np.integer)) and not isinstance(image, bool) and image:
        data = _host_image(context, int(image), "image pointer")
    else:
        data = _as_bytes(context, image)
    if isinstance(data, str):
        text = data
    elif FB.is_wrapper(data):
        return _ptx_from_fatbin(context, unwrap_fatbin(context, data), debug)
    elif FB.is_fatbin(data):
        return _ptx_from_fatbin(context, data, debug)
    elif data.startswith(b"\x7fELF") and not fatbin_only:
        return _ptx_from_elf(context, data, debug)
    else:
        try:
            text = data.split(b"\x00", 1)[0].decode("utf-8")
        except UnicodeDecodeError:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_IMAGE,
                              "image is neither PTX text, a fatbin nor an ELF object") from None
    if fatbin_only:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_IMAGE,
                          f"image is not a fatbinary (no magic 0x{FB.FATBIN_MAGIC:08X} or wrapper "
                          f"0x{FB.WRAPPER_MAGIC:08X}); use mcModuleLoadData for PTX")
    if ".version" not in text or ".target" not in text:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_IMAGE, "image is not PTX: no .version/.target directives")
    return text


def parse_ptx(text: str, name: str) -> Any:
    from gpudbg.ptx.errors import PTXParseError
    from gpudbg.ptx.parser import parse
    try:
        return parse(text, name)
    except PTXParseError as e:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_PTX, str(e)) from None


# ------------------------------------------------------------------ loading
def _thread_limit(model: Any, k: Any, jit: JitOptions) -> int:
    limit = min(model.max_threads_per_block, model.registers_per_sm // max(k.num_regs, 1) // 32 * 32)
    cap = jit.max_threads_per_block
    override = cap is not None and jit.get(CUjit_option.CU_JIT_OVERRIDE_DIRECTIVE_VALUES, 0)
    if not override:
        for key in ("maxntid", "reqntid"):
            dims = k.directives.get(key)
            if dims is not None:
                dims = dims if isinstance(dims, (tuple, list)) else (dims,)
                limit = min(limit, int(np.prod([int(d) for d in dims])))
    return min(limit, cap) if cap is not None else limit


def _apply_jit(context: Any, loaded: Any, jit: JitOptions) -> int | None:
    """Register cap and thread limits into each kernel's footprint; returns
    the threads per block targeted (mcJitThreadsPerBlock's output)."""
    model = context.device.model
    caps = []
    if jit.max_registers is not None:
        caps.append(jit.max_registers)
    targeted = None
    if jit.threads_per_block is not None:
        warps = -(-jit.threads_per_block // model.lanes)
        per_warp = model.registers_per_block // warps // model.register_allocation_unit \
            * model.register_allocation_unit
        caps.append(max(per_warp // model.lanes, 1))
        targeted = jit.threads_per_block
    for k in loaded.functions.values():
        for c in caps:
            k.num_regs = min(k.num_regs, c)
        if caps or jit.max_threads_per_block is not None:
            k.max_threads_per_block = _thread_limit(model, k, jit)
    return targeted


def _check_target(context: Any, module_ir: Any, jit: JitOptions) -> None:
    cc = _cc(context)
    target = jit.target
    if target is None:
        return
    if target > cc:
        raise EngineError(CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU,
                          f"CU_JIT_TARGET compute_{target} is newer than the device (sm_{cc})")
    arch = _ptx_arch(module_ir)
    if arch is not None and arch > target:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_PTX,
                          f"PTX .target sm_{arch} cannot be compiled for CU_JIT_TARGET compute_{target}")


def _load_log(name: str, loaded: Any, jit: JitOptions) -> str:
    lines = [f"gpudbg JIT: loaded {name}: {len(loaded.functions)} kernel(s)"
             + (" (" + ", ".join(loaded.functions) + ")" if loaded.functions else "")]
    if jit.verbose:
        for k in loaded.functions.values():
            lines.append(f"Function properties for {k.name}: {k.num_regs} registers, {k.static_shared} bytes smem, "
                         f"{k.local_size} bytes lmem, max {k.max_threads_per_block} threads per block")
    if jit.get(CUjit_option.CU_JIT_GENERATE_DEBUG_INFO):
        lines.append("debug info recorded (CU_JIT_GENERATE_DEBUG_INFO)")
    if jit.get(CUjit_option.CU_JIT_GENERATE_LINE_INFO):
        lines.append("line info recorded (CU_JIT_GENERATE_LINE_INFO)")
    lines += jit.ignored_notes()
    return "\n".join(lines) + "\n"


def load_ir(context: Any, ir_module: Any, name: str, jit: JitOptions | None = None) -> Module:
    """Load a parsed (or linked) module with JIT options applied."""
    from gpudbg.sim.loader import load_module
    jit = jit if jit is not None else JitOptions()
    _check_target(context, ir_module, jit)
    try:
        with context.gpu.cv:
            loaded = load_module(context.gpu, ir_module)
    except OutOfMemory as e:
        raise EngineError(CUresult.CUDA_ERROR_OUT_OF_MEMORY, str(e)) from None
    except Exception as e:  # LoadError, unsupported instruction: the message names the place
        raise EngineError(CUresult.CUDA_ERROR_INVALID_PTX, f"{type(e).__name__}: {e}") from None
    targeted = _apply_jit(context, loaded, jit)
    m = Module(context, loaded, name, jit)
    m.targeted_threads = targeted
    m.info_log = _load_log(name, loaded, jit)
    context.modules.append(m)
    if debug_port.attached() is not None:
        debug_port.notify("module_loaded", context.gpu, loaded.program, name)
    return m


def load_data(context: Any, image: Any, name: str = "<image>", options: JitOptions | None = None,
              fatbin_only: bool = False) -> Module:
    """mcModuleLoadData(Ex)/mcModuleLoadFatBinary: decode, parse, load; the
    option outputs (logs, wall time, targeted threads) are written on
    success and on failure."""
    jit = options if options is not None else JitOptions()
    t0 = time.perf_counter()
    try:
        if isinstance(image, LinkedImage):
            if not image.valid:
                raise EngineError(CUresult.CUDA_ERROR_INVALID_IMAGE,
                                  f"{image!r} was destroyed with its link state (mcLinkDestroy)")
            if options is None:   # the link options, less the link's own outputs
                jit = JitOptions().merged_with(image.options)
            m = load_ir(context, image.module, image.module.filename, jit)
        else:
            text = image_to_ptx(context, image, fatbin_only,
                                debug=bool(jit.get(CUjit_option.CU_JIT_GENERATE_DEBUG_INFO, 0)))
            m = load_ir(context, parse_ptx(text, name), name, jit)
            m.loaded.ptx_text = text   # kept for coredumps and the debugger (gpudbg core)
    except EngineError as e:
        jit.write_outputs("", f"error: {e.message}\n", (time.perf_counter() - t0) * 1e3)
        raise
    jit.write_outputs(m.info_log, "", (time.perf_counter() - t0) * 1e3, m.targeted_threads)
    return m


def read_file(path: Any) -> bytes:
    if not isinstance(path, (str, Path)):
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"path must be str or Path, not {path!r}")
    p = Path(path)
    try:
        return p.read_bytes()
    except FileNotFoundError:
        raise EngineError(CUresult.CUDA_ERROR_FILE_NOT_FOUND, f"{p}: no such file") from None
    except OSError as e:
        raise EngineError(CUresult.CUDA_ERROR_FILE_NOT_FOUND, f"{p}: {e.strerror}") from None


def load_file(context: Any, path: Any) -> Module:
    """mcModuleLoad: a .ptx file, a fatbin or a host object with a fatbin."""
    return load_data(context, read_file(path), str(path))


def function_by_symbol(context: Any, symbol: Any) -> Function:
    """mcGetFuncBySymbol: a symbol is a function handle of a loaded module,
    a kernel's code address (its device entry point), or a kernel name that
    exactly one module of the context defines."""
    mods = [m for m in context.modules if not m.unloaded]
    if isinstance(symbol, Function):
        if symbol.module.unloaded or symbol.module.context is not context:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                              f"{symbol!r} belongs to an unloaded module or another context")
        return symbol
    if isinstance(symbol, str):
        found = [m.functions[symbol] for m in mods if symbol in m.functions]
        if len(found) > 1:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                              f"kernel {symbol!r} is defined in {len(found)} loaded modules "
                              f"({', '.join(f.module.name for f in found)}); use mcModuleGetFunction")
    elif isinstance(symbol, (int, np.integer)) and not isinstance(symbol, bool):
        found = [f for m in mods for f in m.functions.values() if f.kernel.code_address == int(symbol)]
    else:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                          f"symbol must be a function handle, a kernel name or a code address, not {symbol!r}")
    if not found:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                          f"no kernel of a loaded module matches symbol {symbol!r}")
    return found[0]


def _dims(name: str, dims: Sequence[int]) -> tuple[int, int, int]:
    if dims.__class__ is tuple and len(dims) == 3:
        x, y, z = dims
        if x.__class__ is int and y.__class__ is int and z.__class__ is int:
            return dims     # what the runtime layers pass: already three plain ints
    out = []
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int):
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{name} dimensions must be ints, got {d!r}")
        out.append(d)
    return out[0], out[1], out[2]


def validate_launch(context: Any, function: Function, grid: Sequence[int], block: Sequence[int],
                    shared_bytes: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    m = context.device.model
    k = function.kernel
    g, b = _dims("grid", grid), _dims("block", block)
    if isinstance(shared_bytes, bool) or not isinstance(shared_bytes, int) or shared_bytes < 0:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, "sharedMemBytes must be a non-negative int")
    for axis, (n, lim) in enumerate(zip(g, m.max_grid_dims)):
        if not 1 <= n <= lim:
            raise EngineError(Cause.CONFIGURATION,
                              f"grid dimension {'xyz'[axis]}={n} is outside 1..{lim}")
    for axis, (n, lim) in enumerate(zip(b, m.max_block_dims)):
        if not 1 <= n <= lim:
            raise EngineError(Cause.CONFIGURATION,
                              f"block dimension {'xyz'[axis]}={n} is outside 1..{lim}")
    threads = b[0] * b[1] * b[2]
    limit = min(m.max_threads_per_block, k.max_threads_per_block or m.max_threads_per_block)
    if threads > limit:
        raise EngineError(Cause.CONFIGURATION,
                          f"{threads} threads per block exceed {function.name}'s limit of {limit}")
    shared = k.static_shared + shared_bytes
    max_dynamic = launch_config.max_dynamic_shared(function, m)   # mcFuncSetAttribute raises it
    if shared_bytes > max_dynamic:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                          f"{function.name} needs {shared} bytes of shared memory per block "
                          f"({k.static_shared} static + {shared_bytes} dynamic), the limit is "
                          f"{k.static_shared + max_dynamic} (mcFuncAttributeMaxDynamicSharedMemorySize "
                          f"= {max_dynamic})")
    if occupancy(m, threads, k.num_regs, shared) == 0:
        raise EngineError(CUresult.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                          f"{function.name} with {threads} threads of {k.num_regs} registers and "
                          f"{shared} bytes of shared memory cannot fit on one SM")
    problem = sim_launch_limits.local_memory_problem(   # local memory for every thread the device holds
        m, k, int(getattr(context, "limits", {}).get("stack_size", 0) or 0),
        sim_launch_limits.free_device_bytes(context.gpu))
    if problem is not None:
        raise EngineError(CUresult.CUDA_ERROR_OUT_OF_MEMORY, problem)
    return g, b


# launches whose host site a context remembers for its fault report
LAUNCH_SITES = 1024


def launch_cluster(context: Any, function: "Function", grid: Sequence[int], block: Sequence[int],
                   shared_bytes: int, cluster: Sequence[int] | None) -> tuple[int, int, int] | None:
    """The cluster shape a launch runs with: the one asked for, else the
    kernel's .reqnctapercluster (__cluster_dims__); CUDA_ERROR_INVALID_-
    CLUSTER_SIZE when it does not divide the grid, exceeds the portable
    size, disagrees with the kernel's, or cannot be resident in one GPC."""
    directives = getattr(function.kernel, "directives", None) or {}
    required = directives.get("reqnctapercluster")
    required = tuple(int(v) for v in (tuple(required) + (1, 1))[:3]) if required else None
    if cluster is not None:
        cluster = tuple(int(v) for v in cluster)
        if cluster == (0, 0, 0):
            cluster = None
    if cluster is not None and required is not None and cluster != required:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_CLUSTER_SIZE,
                          f"{function.name} is compiled for clusters of {required}, launched with {cluster}")
    cluster = cluster or required
    if cluster is None:
        if directives.get("explicitcluster"):
            raise EngineError(CUresult.CUDA_ERROR_INVALID_CLUSTER_SIZE,
                              f"{function.name} is declared .explicitcluster: launch it with a cluster dimension")
        return None
    problem = sim_cluster.check(tuple(grid), cluster)
    if problem is None and context.device.model.compute_capability < (9, 0):
        problem = "thread-block clusters need compute capability 9.0"
    if problem is None:
        per_sm = max(1, occupancy(context.device.model, block[0] * block[1] * block[2], function.kernel.num_regs,
                                  function.kernel.static_shared + int(shared_bytes)))
        if sim_cluster.clusters_per_wave(context.device.model.sm_count, per_sm, cluster) == 0:
            problem = f"a cluster of {sim_cluster.size(cluster)} blocks does not fit in one GPC"
    if problem is not None:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_CLUSTER_SIZE, f"launch of {function.name}: {problem}")
    return cluster


def launch(context: Any, function: Any, grid: Sequence[int], block: Sequence[int],
           shared_bytes: int, stream: Any, args: Sequence[Any] | None, extra: Any,
           cooperative: bool = False, cluster: Sequence[int] | None = None) -> int:
    """Validate, write the descriptor, push LAUNCH; returns the grid id.
    A cooperative launch is marked in the descriptor: the GPU gives it the
    grid workspace grid.sync() counts on while it runs (sim/executor.py)."""
    if function.__class__ is not Function and not isinstance(function, Function):
        raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE, f"{function!r} is not a function handle")
    module = function.module
    if module.unloaded or module.context is not context:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE,
                          f"{function!r} belongs to an unloaded module or another context")
    g, b, cluster = launch_check.validated(context, function, grid, block, shared_bytes, cluster)
    k = function.kernel
    if extra is not None:
        if args is not None:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, "pass either kernelParams or extra, not both")
        params = unpack_extra(k, extra, EXTRA_KEYS)
    else:
        params = pack_params(k, args if args is not None else ())
    gpu = context.gpu
    buffers = context.launch_buffers or launch_buffers.for_context(context)
    n = len(params)
    try:
        alloc = buffers.take(C.DESCRIPTOR_BYTES + n, function.launch_label)
    except OutOfMemory as e:
        raise EngineError(CUresult.CUDA_ERROR_OUT_OF_MEMORY, str(e)) from None
    grid_id = gpu.next_grid_id()
    data = alloc.data
    C.pack_descriptor_into(data, k.code_address, *g, *b, shared_bytes,  # DESCRIPTOR_FORMAT (3-tuples)
                           alloc.base + C.DESCRIPTOR_BYTES, n, grid_id,
                           threading.get_native_id() & 0xFFFFFFFF, 1 if cooperative else 0, *cluster)
    if n:
        data[C.DESCRIPTOR_BYTES:C.DESCRIPTOR_BYTES + n] = memoryview(params)
    tap = instrument.active()
    if tap is not None:
        tap.launch_enqueued(gpu, grid_id, function.name)
    fence = stream.submit(limits.launch_commands(context, stream, function) + [C.launch(alloc.base)])
    sites = context.launch_sites
    if len(sites) >= LAUNCH_SITES:
        sites.pop(next(iter(sites)), None)
    sites[grid_id] = host_site.capture()      # formatted only if a fault report shows it
    buffers.release_after(stream, fence, alloc)
    context.reap_after_launch()
    return grid_id
