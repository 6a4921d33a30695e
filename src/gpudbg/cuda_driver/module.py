"""Modules and functions in the driver API: cuModuleLoad(Data/DataEx/
FatBinary), cuModuleUnload, cuModuleGetFunction/Global/FunctionCount/
EnumerateFunctions/LoadingMode and the cuFunc* queries and settings.

The one idea: an image argument is an address, and this layer's only job
is to turn it into the image's bytes, exactly as long as the image says it
is (a fatbin's header, an ELF's section table, a NUL-terminated PTX
string, a wrapper's 24 bytes), then hand those bytes to the engine's
loader (driver/module.py load_data), which decodes every form. A cubin
reaches the loader as the ELF it is and gets its
CUDA_ERROR_NO_BINARY_FOR_GPU. JIT options arrive as C arrays
(CUjit_option codes, `void*` values); they become the engine's JitOptions
(driver/jit_options.py) with log buffers as views of the caller's memory,
and the outputs (filled log sizes, wall time as a float in its slot,
targeted threads) are written back into the caller's optionValues array.

CUkernel handles (library.py) are accepted wherever a CUfunction is taken
(`function_of`), as NVIDIA's driver does. Modules load eagerly, so every
function is always loaded (cuFuncIsLoaded, cuModuleGetLoadingMode).
It does not model texture or surface references (cuModuleGetTexRef).
"""
from __future__ import annotations

import struct
from typing import Any

from gpudbg import cabi
from gpudbg.cabi import handles
from gpudbg.cuda_driver._base import (HandleKind, R, current_context, entry, fail, handle_of, object_of,
                                      require_init)
from gpudbg.driver import fatbin as FB
from gpudbg.driver import launch_config as _cfg
from gpudbg.driver import module as _module
from gpudbg.driver.engine import get_engine
from gpudbg.driver.jit_options import JitOptions, parse_options
from gpudbg.driver.types import CUjit_option

__all__ = ["cuModuleLoad", "cuModuleLoadData", "cuModuleLoadDataEx", "cuModuleLoadFatBinary", "cuModuleUnload",
           "cuModuleGetFunction", "cuModuleGetGlobal_v2", "cuModuleGetGlobal", "cuModuleGetFunctionCount",
           "cuModuleEnumerateFunctions", "cuModuleGetLoadingMode", "cuFuncGetAttribute", "cuFuncSetAttribute",
           "cuFuncSetCacheConfig", "cuFuncSetSharedMemConfig", "cuFuncGetModule", "cuFuncGetName",
           "cuFuncGetParamInfo", "cuFuncIsLoaded", "cuFuncLoad"]

INVALID = R.CUDA_ERROR_INVALID_VALUE
O = CUjit_option
CU_MODULE_EAGER_LOADING = 0x1
CU_FUNCTION_LOADING_STATE_LOADED = 1
ELF_MAGIC = b"\x7fELF"
MAX_IMAGE = 1 << 30


def need(ptr: int, name: str) -> int:
    if not ptr:
        raise fail(INVALID, f"{name} is NULL")
    return int(ptr)


# ------------------------------------------------------------------ images by address
def _elf_size(address: int) -> int:
    """The bytes of an ELF64 image: up to the end of its furthest section
    contents, section header table or program header table."""
    head = FB.read_process_memory(address, 64)
    if head[4] != 2 or head[5] != 1:
        raise fail(R.CUDA_ERROR_INVALID_IMAGE, f"ELF image at 0x{address:x} is not a little-endian ELF64 object")
    phoff, shoff = struct.unpack_from("<QQ", head, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", head, 0x36)
    end = max(64, shoff + shnum * shentsize, phoff + phnum * phentsize)
    if shnum and shentsize >= 40:
        table = FB.read_process_memory(address + shoff, shnum * shentsize)
        for i in range(shnum):
            sh_type, = struct.unpack_from("<I", table, i * shentsize + 4)
            offset, size = struct.unpack_from("<QQ", table, i * shentsize + 0x18)
            if sh_type != 8:                       # SHT_NOBITS occupies no file bytes
                end = max(end, offset + size)
    if end > MAX_IMAGE:
        raise fail(R.CUDA_ERROR_INVALID_IMAGE, f"ELF image at 0x{address:x} claims {end} bytes")
    return end


def read_image(address: int, what: str = "image") -> bytes:
    """The bytes of the image at `address`: engine memory (pinned host or
    device) to the end of its allocation, else the process's own memory,
    as long as the image's own header says."""
    need(address, what)
    info = get_engine().uva.resolve(address)
    if info is not None:
        with info.gpu.cv:
            return bytes(info.gpu.memory.read(info.address, info.remaining))
    try:
        if FB.read_process_memory(address, 4) == ELF_MAGIC:
            return FB.read_process_memory(address, _elf_size(address))
        return FB.image_at(address)
    except FB.UnreadableMemory as e:
        raise fail(INVALID, f"{what} 0x{address:x}: {e}") from None
    except FB.FatbinError as e:
        raise fail(R.CUDA_ERROR_INVALID_IMAGE, f"{what} 0x{address:x}: {e}") from None


# ------------------------------------------------------------------ JIT options from C
_LOG_PAIRS = ((O.CU_JIT_INFO_LOG_BUFFER, O.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES),
              (O.CU_JIT_ERROR_LOG_BUFFER, O.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES))
_STRING_LISTS = {O.CU_JIT_GLOBAL_SYMBOL_NAMES: O.CU_JIT_GLOBAL_SYMBOL_COUNT,
                 O.CU_JIT_REFERENCED_KERNEL_NAMES: O.CU_JIT_REFERENCED_KERNEL_COUNT,
                 O.CU_JIT_REFERENCED_VARIABLE_NAMES: O.CU_JIT_REFERENCED_VARIABLE_COUNT}


class CJitOptions:
    """JIT options read from (numOptions, CUjit_option *options, void
    **optionValues); `write_back` stores the outputs into the C array."""

    def __init__(self, num: int, options: int, values: int):
        self.values_ptr = int(values)
        num = int(num)
        if num == 0:
            self.codes: list[int] = []
            self.jit = JitOptions()
            self.holder: list[Any] = []
            return
        self.codes = cabi.load_array(need(options, "options"), "i32", num, "options")
        raw = cabi.load_array(need(values, "optionValues"), "u64", num, "optionValues")
        by_code = dict(zip(self.codes, raw))
        self.holder = []
        for code, v in zip(self.codes, raw):
            self.holder.append(self._value(code, v, by_code))
        self.jit = parse_options(num, self.codes, self.holder)

    @staticmethod
    def _value(code: int, v: int, by_code: dict[int, int]) -> Any:
        for buf_opt, size_opt in _LOG_PAIRS:
            if code == buf_opt:
                size = by_code.get(int(size_opt), 0) & 0xFFFFFFFF
                return cabi.host_view(v, size, str(O(code).name)) if v and size else bytearray()
        if code in _STRING_LISTS:
            count = by_code.get(int(_STRING_LISTS[O(code)]), 0) & 0xFFFFFFFF
            ptrs = cabi.load_array(v, "u64", count, O(code).name) if count else []
            return [cabi.c_string(p, f"{O(code).name} entry") for p in ptrs]
        if code == O.CU_JIT_GLOBAL_SYMBOL_ADDRESSES:
            count = by_code.get(int(O.CU_JIT_GLOBAL_SYMBOL_COUNT), 0) & 0xFFFFFFFF
            return cabi.load_array(v, "u64", count, "CU_JIT_GLOBAL_SYMBOL_ADDRESSES") if count else []
        return v & 0xFFFFFFFF

    def write_back(self) -> None:
        """Outputs the engine put into the holder list, into optionValues."""
        for i, code in enumerate(self.codes):
            slot = self.values_ptr + 8 * i
            if code == O.CU_JIT_WALL_TIME:
                value = self.holder[i]
                cabi.store(slot, "f32", float(value) if isinstance(value, float) else 0.0)
            elif code in (O.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, O.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                          O.CU_JIT_THREADS_PER_BLOCK):
                cabi.store(slot, "u64", int(self.holder[i]))


def load_with_options(ctx: Any, image: Any, name: str, copts: CJitOptions | None = None,
                      fatbin_only: bool = False) -> Any:
    """Load `image` (bytes, or a linked-image container, see linker.py) into
    `ctx`; the options' outputs are written back whether it loads or not."""
    from gpudbg.cuda_driver import linker
    try:
        if linker.is_container(image):
            return linker.load_container(ctx, image, copts.jit if copts else None)
        return _module.load_data(ctx, image, name, copts.jit if copts else None, fatbin_only=fatbin_only)
    finally:
        if copts is not None:
            copts.write_back()


# ------------------------------------------------------------------ handles
def module_of(hmod: int) -> Any:
    m = object_of(HandleKind.MODULE, int(hmod))
    if m.unloaded:
        raise fail(R.CUDA_ERROR_INVALID_HANDLE, f"CUmodule 0x{int(hmod):x} was unloaded")
    return m


def function_of(hfunc: int, ctx: Any = None) -> Any:
    """The engine Function a CUfunction names, or a CUkernel's function in
    `ctx` (the current context when not given)."""
    number = int(hfunc)
    if not number:
        raise fail(R.CUDA_ERROR_INVALID_HANDLE, "CUfunction is NULL")
    kind = handles.kind_of(number)
    if kind == HandleKind.KERNEL:
        f = handles.lookup(HandleKind.KERNEL, number).function(ctx if ctx is not None else current_context())
    elif kind == HandleKind.FUNCTION:
        f = handles.lookup(HandleKind.FUNCTION, number)
    else:
        raise fail(R.CUDA_ERROR_INVALID_HANDLE, f"0x{number:x} is not a CUfunction or CUkernel handle")
    if f.module.unloaded:
        raise fail(R.CUDA_ERROR_INVALID_HANDLE, f"CUfunction 0x{number:x} belongs to an unloaded module")
    return f


def _new_module(out: int, m: Any) -> None:
    cabi.store(out, "u64", handle_of(HandleKind.MODULE, m), "module")


# ------------------------------------------------------------------ loading
@entry
def cuModuleLoad(module: int, fname: int) -> None:
    """A .ptx file, a fatbin or a host object holding one, by path."""
    need(module, "module")
    path = cabi.c_string(need(fname, "fname"), "fname")
    ctx = current_context()
    _new_module(module, load_with_options(ctx, _module.read_file(path), path))


@entry
def cuModuleLoadData(module: int, image: int) -> None:
    """PTX text, a fatbin, a fatbin wrapper or an ELF at `image`."""
    need(module, "module")
    ctx = current_context()
    _new_module(module, load_with_options(ctx, read_image(image), "<image>"))


@entry
def cuModuleLoadDataEx(module: int, image: int, numOptions: int, options: int, optionValues: int) -> None:
    """cuModuleLoadData with JIT options (outputs written to optionValues)."""
    need(module, "module")
    ctx = current_context()
    copts = CJitOptions(numOptions, options, optionValues)
    data = read_image(image)
    _new_module(module, load_with_options(ctx, data, "<image>", copts))


@entry
def cuModuleLoadFatBinary(module: int, fatCubin: int) -> None:
    """A fatbin (or nvcc's wrapper of one); anything else is
    CUDA_ERROR_INVALID_IMAGE."""
    need(module, "module")
    ctx = current_context()
    _new_module(module, load_with_options(ctx, read_image(fatCubin, "fatCubin"), "<fatbin>", fatbin_only=True))


@entry
def cuModuleUnload(hmod: int) -> None:
    """Waits for the module's queued kernels, then frees it; its handle
    and its functions' handles go stale."""
    ctx = current_context()
    m = module_of(hmod)
    if m.context is not ctx and ctx.destroyed:
        raise fail(R.CUDA_ERROR_INVALID_CONTEXT, "the module's context was destroyed")
    functions = list(m.functions.values())
    m.unload()
    handles.forget(HandleKind.MODULE, int(hmod))
    for f in functions:
        handles.forget(HandleKind.FUNCTION, handle_of(HandleKind.FUNCTION, f))


@entry
def cuModuleGetFunction(hfunc: int, hmod: int, name: int) -> None:
    need(hfunc, "hfunc")
    kname = cabi.c_string(need(name, "name"), "name")
    current_context()
    f = module_of(hmod).get_function(kname)
    cabi.store(hfunc, "u64", handle_of(HandleKind.FUNCTION, f))


def _get_global(dptr: int, nbytes: int, hmod: int, name: int, ptr_kind: str, size_kind: str) -> None:
    gname = cabi.c_string(need(name, "name"), "name")
    current_context()
    address, size = module_of(hmod).get_global(gname)
    if ptr_kind == "u32" and (address >= 1 << 32 or size >= 1 << 32):
        raise fail(INVALID, f"global {gname} at 0x{address:x} does not fit the 32-bit cuModuleGetGlobal "
                            f"(use cuModuleGetGlobal_v2)")
    if dptr:
        cabi.store(dptr, ptr_kind, address, "dptr")
    if nbytes:
        cabi.store(nbytes, size_kind, size, "bytes")


@entry
def cuModuleGetGlobal_v2(dptr: int, bytes_: int, hmod: int, name: int) -> None:
    """The device address and size of a global; either output may be NULL."""
    _get_global(dptr, bytes_, hmod, name, "u64", "u64")


@entry
def cuModuleGetGlobal(dptr: int, bytes_: int, hmod: int, name: int) -> None:
    """The CUDA 3.1 form: 32-bit CUdeviceptr and size."""
    _get_global(dptr, bytes_, hmod, name, "u32", "u32")


@entry
def cuModuleGetFunctionCount(count: int, mod: int) -> None:
    need(count, "count")
    require_init()
    cabi.store(count, "u32", len(module_of(mod).functions))


@entry
def cuModuleEnumerateFunctions(functions: int, numFunctions: int, mod: int) -> None:
    """The first numFunctions functions of the module, in definition order."""
    need(functions, "functions")
    require_init()
    fs = list(module_of(mod).functions.values())
    n = int(numFunctions)
    if n > len(fs):
        raise fail(INVALID, f"numFunctions {n} exceeds the module's {len(fs)} functions")
    for i, f in enumerate(fs[:n]):
        cabi.store(functions + 8 * i, "u64", handle_of(HandleKind.FUNCTION, f), "functions")


@entry
def cuModuleGetLoadingMode(mode: int) -> None:
    """CU_MODULE_EAGER_LOADING: the engine loads every kernel at module load."""
    need(mode, "mode")
    require_init()
    cabi.store(mode, "i32", CU_MODULE_EAGER_LOADING)


# ------------------------------------------------------------------ functions
@entry
def cuFuncGetAttribute(pi: int, attrib: int, hfunc: int) -> None:
    need(pi, "pi")
    require_init()
    cabi.store(pi, "i32", function_of(hfunc).get_attribute(int(attrib)))


@entry
def cuFuncSetAttribute(hfunc: int, attrib: int, value: int) -> None:
    """CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (launches honour it)
    or CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT (a hint)."""
    require_init()
    _cfg.set_attribute(function_of(hfunc), int(attrib), int(value))


def check_cache_config(config: int) -> None:
    if int(config) not in range(4):
        raise fail(INVALID, f"{int(config)} is not a CUfunc_cache (0..3)")


@entry
def cuFuncSetCacheConfig(hfunc: int, config: int) -> None:
    """A preference, validated; the simulated SM has one fixed split."""
    require_init()
    function_of(hfunc)
    check_cache_config(config)


@entry
def cuFuncSetSharedMemConfig(hfunc: int, config: int) -> None:
    """Bank size preference (deprecated in CUDA), validated and ignored."""
    require_init()
    function_of(hfunc)
    if int(config) not in range(3):
        raise fail(INVALID, f"{int(config)} is not a CUsharedconfig (0..2)")


@entry
def cuFuncGetModule(hmod: int, hfunc: int) -> None:
    need(hmod, "hmod")
    require_init()
    cabi.store(hmod, "u64", handle_of(HandleKind.MODULE, function_of(hfunc).module))


def name_pointer(name: str) -> int:
    """A `const char*` to `name` that stays valid for the process."""
    return cabi.lasting_c_string(name)


@entry
def cuFuncGetName(name: int, hfunc: int) -> None:
    """The kernel's (mangled) name."""
    need(name, "name")
    require_init()
    cabi.store(name, "u64", name_pointer(function_of(hfunc).name))


def param_info(f: Any, index: int, offset_out: int, size_out: int) -> None:
    params = f.kernel.params
    i = int(index)
    if not 0 <= i < len(params):
        raise fail(INVALID, f"{f.name} has {len(params)} parameters; paramIndex {i} is out of range")
    if offset_out:
        cabi.store(offset_out, "u64", params[i].offset, "paramOffset")
    if size_out:
        cabi.store(size_out, "u64", params[i].size, "paramSize")


@entry
def cuFuncGetParamInfo(func: int, paramIndex: int, paramOffset: int, paramSize: int) -> None:
    """Offset and size of a parameter in the kernel's parameter buffer."""
    require_init()
    param_info(function_of(func), paramIndex, paramOffset, paramSize)


@entry
def cuFuncIsLoaded(state: int, function: int) -> None:
    need(state, "state")
    require_init()
    function_of(function)
    cabi.store(state, "i32", CU_FUNCTION_LOADING_STATE_LOADED)


@entry
def cuFuncLoad(function: int) -> None:
    """Nothing to do: modules load every function eagerly."""
    require_init()
    function_of(function)
