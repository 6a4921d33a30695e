"""Seed 002 §2.12: modules and linking.

Images are PTX text, a fatbinary (or nvcc's fatbin wrapper struct), a host
ELF object with a `.nv_fatbin` section, a linked image from mcLinkComplete,
or a pointer (int) to pinned host or device memory holding one of these.
JIT options follow C: parallel `options`/`optionValues` lists, outputs
written back into `optionValues` (a list) and into log buffers (bytearray
or numpy arrays). The annotated kinds check the arguments (_args.py: images,
paths without NULs, names, handles), then each function makes one driver call.
"""
from __future__ import annotations

from typing import Any

from gpudbg.driver import module as _module
from gpudbg.driver.jit_options import check_input_type, parse_options
from gpudbg.driver.linker import LinkState
from gpudbg.runtime.api._args import (Count, DeviceFunction, Enum, FinishedLinkState, FunctionOrNull, Image,
                                      JitInputType, JitOptionCodes, JitOptionValues, KernelSymbol, Name, Path,
                                      Size, UnloadModule, mcLinkState, mcModule_t)
from gpudbg.runtime.api._base import _api, _ctx
from gpudbg.runtime.types import mcFunction_attribute
from gpudbg.runtime.errors import McError, mcError_t


def _loaded(module: Any) -> Any:
    if not isinstance(module, _module.Module) or module.unloaded:
        raise McError(mcError_t.mcErrorInvalidValue, f"{module!r} is not a loaded module")
    return module


def _function(f: Any) -> Any:
    if not isinstance(f, _module.Function):
        raise McError(mcError_t.mcErrorInvalidDeviceFunction, f"{f!r} is not a function handle")
    if f.module.unloaded:
        raise McError(mcError_t.mcErrorInvalidDeviceFunction, f"{f!r} belongs to an unloaded module")
    return f


def _state(state: Any, code: mcError_t = mcError_t.mcErrorInvalidHandle) -> LinkState:
    if not isinstance(state, LinkState) or state.destroyed:
        raise McError(code, f"{state!r} is not a live mcLinkState_t")
    return state


# ------------------------------------------------------------------ loading
@_api(1)
def mcModuleLoadData(image: Image, *, name: Name = "<image>") -> Any:
    """Seed 002 §2.12.3.12: PTX text (str or NUL-terminated bytes), a
    fatbin or fatbin wrapper, a host ELF object, a linked image, or a
    pointer to one of these. `name` (a gpudbg extension, keyword only) is
    the file name reports and PTX errors give the image."""
    if not isinstance(name, str) or not name:
        raise McError(mcError_t.mcErrorInvalidValue, f"name must be a non-empty str, got {name!r}")
    return _module.load_data(_ctx(), image, name)


@_api(1)
def mcModuleLoadDataEx(image: Image, numOptions: Count = 0, options: JitOptionCodes = None,
                       optionValues: JitOptionValues = None) -> Any:
    """Seed 002 §2.12.3.13: mcModuleLoadData with JIT options (mcJitOption,
    CUjit_option numbering); options the simulator cannot act on are named
    in the info log; bad option values give mcErrorInvalidValue."""
    ctx = _ctx()
    return _module.load_data(ctx, image, options=parse_options(numOptions, options, optionValues))


@_api(1)
def mcModuleLoad(fname: Path) -> Any:
    """Seed 002 §2.12.3.11: a .ptx file, a fatbin file or a host object
    with a fatbin, by path."""
    ctx = _ctx()
    return _module.load_file(ctx, fname)


@_api(1)
def mcModuleLoadFatBinary(fatbin: Image) -> Any:
    """Seed 002 §2.12.3.14: a fatbinary (magic 0xBA55ED50) or nvcc's wrapper
    (magic 0x466243B1) pointing at one; the newest PTX entry for an arch the
    device runs is loaded. SASS-only images: mcErrorNoKernelImageForDevice;
    compressed entries: mcErrorInvalidImage (not supported yet)."""
    return _module.load_data(_ctx(), fatbin, "<fatbin>", fatbin_only=True)


@_api(0)
def mcModuleUnload(module: UnloadModule) -> None:
    """Seed 002 §2.12.3.15: mcErrorNotFound for an unknown or unloaded module."""
    ctx = _ctx()
    if not isinstance(module, _module.Module) or module.context is not ctx:
        raise McError(mcError_t.mcErrorNotFound, f"{module!r} is not a module of this context")
    module.unload()


# ------------------------------------------------------------------ handles
@_api(1)
def mcModuleGetFunction(module: mcModule_t, kname: Name) -> Any:
    """Seed 002 §2.12.3.9: mcErrorNotFound when there is no such kernel."""
    _ctx()
    return _loaded(module).get_function(kname)


@_api(2)
def mcModuleGetGlobal(hmod: mcModule_t, name: Name) -> tuple[int, int]:
    """Seed 002 §2.12.3.10: (device pointer, size in bytes)."""
    _ctx()
    return _loaded(hmod).get_global(name)


@_api(1)
def mcFuncGetAttribute(attrib: Enum(mcFunction_attribute), hfunc: DeviceFunction) -> int:
    """Seed 002 §2.12.3.1: one mcFunction_attribute (CUfunction_attribute
    numbering). MAX_THREADS_PER_BLOCK is the limit a launch enforces (the
    seed's "512 unless launch bounds" default would contradict the launches
    the simulator accepts, so the real limit is reported)."""
    _ctx()
    return _function(hfunc).get_attribute(attrib)


@_api(1)
def mcFuncGetModule(f: FunctionOrNull) -> Any:
    """Seed 002 §2.12.3.2: the module a function handle belongs to."""
    _ctx()
    if f.module.unloaded:
        raise McError(mcError_t.mcErrorInvalidResourceHandle, f"{f!r} belongs to an unloaded module")
    return f.module


@_api(1)
def mcGetFuncBySymbol(symbolPtr: KernelSymbol) -> Any:
    """Seed 002 §2.12.3.3: in a Python program a kernel's "symbol" is its
    function handle, its name (which exactly one loaded module of the
    current context must define) or its code address (the device entry
    point, as a host stub would map to); anything else: mcErrorInvalidValue."""
    return _module.function_by_symbol(_ctx(), symbolPtr)


# ------------------------------------------------------------------ linker
@_api(1)
def mcLinkCreate(numOptions: Count = 0, options: JitOptionCodes = None,
                 optionValues: JitOptionValues = None) -> LinkState:
    """Seed 002 §2.12.3.7: a pending link; outputs of its options (logs,
    wall time) are written when mcLinkComplete runs."""
    ctx = _ctx()
    return LinkState(ctx, parse_options(numOptions, options, optionValues))


@_api(0)
def mcLinkAddData(state: mcLinkState, type: JitInputType, data: Image, size: Size, name: Name = "",
                  numOptions: Count = 0, options: JitOptionCodes = None, optionValues: JitOptionValues = None) -> None:
    """Seed 002 §2.12.3.4: add PTX, a fatbin, a host object or a library
    (mcJitInputType); the input is parsed now, so a bad one fails here
    (mcErrorInvalidKernelFile / mcErrorInvalidImage); a cubin is SASS for
    a real GPU: mcErrorNoBinaryForGpu."""
    _ctx()
    st = _state(state)
    kind = check_input_type(type)
    st.add_data(kind, data, size, name, parse_options(numOptions, options, optionValues))


@_api(0)
def mcLinkAddFile(state: mcLinkState, type: JitInputType, path: Path, numOptions: Count = 0,
                  options: JitOptionCodes = None, optionValues: JitOptionValues = None) -> None:
    """Seed 002 §2.12.3.5: mcLinkAddData on a file's contents (its path is
    the input's name in link errors and in line info)."""
    _ctx()
    st = _state(state)
    kind = check_input_type(type)
    jit = parse_options(numOptions, options, optionValues)
    data = _module.read_file(path)
    st.add_data(kind, data, len(data), str(path), jit)


@_api(2)
def mcLinkComplete(state: FinishedLinkState) -> tuple[Any, int]:
    """Seed 002 §2.12.3.6: (linked image, its size). The image belongs to
    the state: load it with mcModuleLoadData before mcLinkDestroy. Duplicate
    strong definitions: mcErrorDuplicateVariableName; an unresolved
    .extern: mcErrorSymbolNotFound; both name the symbol and the inputs."""
    _ctx()
    image = _state(state, mcError_t.mcErrorInvalidValue).complete()
    return image, image.size


@_api(0)
def mcLinkDestroy(state: FinishedLinkState) -> None:
    """Seed 002 §2.12.3.8: frees the state and the image it owns."""
    _state(state, mcError_t.mcErrorInvalidValue).destroy()


__all__ = ['mcModuleLoadData', 'mcModuleLoadDataEx', 'mcModuleLoad', 'mcModuleLoadFatBinary',
           'mcModuleUnload', 'mcModuleGetFunction', 'mcModuleGetGlobal', 'mcFuncGetAttribute',
           'mcFuncGetModule', 'mcGetFuncBySymbol', 'mcLinkCreate', 'mcLinkAddData', 'mcLinkAddFile',
           'mcLinkComplete', 'mcLinkDestroy']
