"""Context-independent loading in the driver API: cuLibraryLoadData/
LoadFromFile/Unload, cuLibraryGetKernel/Module/Global/Managed/KernelCount/
EnumerateKernels and the cuKernel* queries and settings.

The one idea: a CUlibrary is an image, not a module. The library keeps its
own copy of the image bytes (as NVIDIA's driver does unless told the
binary is preserved) and loads it into a context's module table the first
time something needs it there, once per context, as CUDA's lazy loading
does; a CUkernel is (library, kernel name) and becomes that context's
CUfunction on use. So one CUkernel works in every context, and numba can
pass it straight to cuLaunchKernelEx as the function (module.function_of
accepts it). Per-device kernel settings (cuKernelSetAttribute) are applied
to each context's function as it is loaded.

Where the library is loaded into a context: cuLibraryLoadData loads into
the current context at once if there is one (so a bad image fails there);
later uses load into the context they run in. Without any context the
image is only kept. It does not implement cuLibraryGetUnifiedFunction
(host-side unified functions) or the CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_
AND_DATA_TABLE option's tables.
"""
from __future__ import annotations

import threading
from typing import Any

from gpudbg import cabi
from gpudbg.cabi import handles
from gpudbg.cuda_driver._base import HandleKind, R, current_context, entry, fail, handle_of, object_of, require_init
from gpudbg.cuda_driver.module import (CJitOptions, check_cache_config, load_with_options, name_pointer, need,
                                       param_info, read_image)
from gpudbg.driver import launch_config as _cfg
from gpudbg.driver import module as _module

__all__ = ["cuLibraryLoadData", "cuLibraryLoadFromFile", "cuLibraryUnload", "cuLibraryGetKernel",
           "cuLibraryGetModule", "cuKernelGetFunction", "cuLibraryGetGlobal", "cuLibraryGetManaged",
           "cuLibraryGetKernelCount", "cuLibraryEnumerateKernels", "cuKernelGetAttribute", "cuKernelSetAttribute",
           "cuKernelSetCacheConfig", "cuKernelGetName", "cuKernelGetParamInfo", "cuKernelGetLibrary"]

INVALID = R.CUDA_ERROR_INVALID_VALUE
LIBRARY_OPTIONS = {0: "CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE", 1: "CU_LIBRARY_BINARY_IS_PRESERVED"}


class Library:
    """A loaded CUlibrary: its image and its module in each context."""

    def __init__(self, image: bytes, name: str, copts: CJitOptions):
        self.image = image
        self.name = name
        self.copts = copts
        self.lock = threading.RLock()
        self.modules: dict[int, Any] = {}          # context id -> Module
        self.kernels: dict[str, Kernel] = {}
        self.settings: dict[tuple[int, str, int], int] = {}   # (device, kernel, attribute) -> value
        self.unloaded = False

    def __repr__(self) -> str:
        return f"<CUlibrary {self.name}>"

    def module(self, ctx: Any) -> Any:
        """The library's module in `ctx`, loaded there on first use."""
        if self.unloaded:
            raise fail(R.CUDA_ERROR_INVALID_HANDLE, f"{self!r} was unloaded")
        with self.lock:
            m = self.modules.get(ctx.id)
            if m is None or m.unloaded:
                m = load_with_options(ctx, self.image, self.name, self.copts)
                self.modules[ctx.id] = m
                for (device, kname, attrib), value in self.settings.items():
                    if device == ctx.device.ordinal and kname in m.functions:
                        _cfg.set_attribute(m.functions[kname], attrib, value)
            return m

    def kernel(self, name: str, ctx: Any) -> "Kernel":
        self.module(ctx).get_function(name)      # CUDA_ERROR_NOT_FOUND names the kernels there are
        with self.lock:
            return self.kernels.setdefault(name, Kernel(self, name))

    def unload(self) -> None:
        with self.lock:
            for m in self.modules.values():
                if not m.unloaded and not m.context.destroyed:
                    m.unload()
            self.modules.clear()
            self.unloaded = True


class Kernel:
    """A CUkernel: a kernel of a library, in whichever context it is used."""

    def __init__(self, library: Library, name: str):
        self.library = library
        self.name = name

    def __repr__(self) -> str:
        return f"<CUkernel {self.name}>"

    def function(self, ctx: Any) -> Any:
        return self.library.module(ctx).get_function(self.name)


def _library(handle: int) -> Library:
    lib = object_of(HandleKind.LIBRARY, int(handle))
    if lib.unloaded:
        raise fail(R.CUDA_ERROR_INVALID_HANDLE, f"CUlibrary 0x{int(handle):x} was unloaded")
    return lib


def _kernel(handle: int) -> Kernel:
    k = object_of(HandleKind.KERNEL, int(handle))
    if k.library.unloaded:
        raise fail(R.CUDA_ERROR_INVALID_HANDLE, f"CUkernel 0x{int(handle):x} belongs to an unloaded library")
    return k


def _context_on(device: int) -> Any:
    """The context a per-device kernel query uses: the current one if it is
    on `device`, else the device's active primary context."""
    engine = require_init()
    dev = engine.device(int(device))
    stack = engine.threads.stack
    if stack and not stack[-1].destroyed and stack[-1].device is dev:
        return current_context()
    if dev.primary_active:
        ctx = dev.primary_context()
        ctx.check()
        return ctx
    raise fail(R.CUDA_ERROR_INVALID_CONTEXT, f"no context on device {int(device)} to load the kernel into "
                                             f"(make one current or retain its primary context)")


def _library_options(numOptions: int, options: int) -> None:
    n = int(numOptions)
    codes = cabi.load_array(need(options, "libraryOptions"), "i32", n, "libraryOptions") if n else []
    for i, c in enumerate(codes):
        if c not in LIBRARY_OPTIONS:
            raise fail(INVALID, f"libraryOptions[{i}] = {c} is not a CUlibraryOption")


def _load(library: int, image: bytes, name: str, jitOptions: int, jitOptionsValues: int, numJitOptions: int,
          libraryOptions: int, numLibraryOptions: int) -> None:
    need(library, "library")
    require_init()
    _library_options(numLibraryOptions, libraryOptions)
    lib = Library(image, name, CJitOptions(numJitOptions, jitOptions, jitOptionsValues))
    engine = require_init()
    if engine.threads.stack:
        lib.module(current_context())
    cabi.store(library, "u64", handle_of(HandleKind.LIBRARY, lib), "library")


@entry
def cuLibraryLoadData(library: int, code: int, jitOptions: int, jitOptionsValues: int, numJitOptions: int,
                      libraryOptions: int, libraryOptionValues: int, numLibraryOptions: int) -> None:
    """A library from the image at `code` (PTX text, a fatbin or wrapper,
    an ELF, or cuLinkComplete's image); the bytes are copied."""
    need(code, "code")
    _load(library, read_image(code, "code"), "<library>", jitOptions, jitOptionsValues, numJitOptions,
          libraryOptions, numLibraryOptions)


@entry
def cuLibraryLoadFromFile(library: int, fileName: int, jitOptions: int, jitOptionsValues: int,
                          numJitOptions: int, libraryOptions: int, libraryOptionValues: int,
                          numLibraryOptions: int) -> None:
    path = cabi.c_string(need(fileName, "fileName"), "fileName")
    _load(library, _module.read_file(path), path, jitOptions, jitOptionsValues, numJitOptions,
          libraryOptions, numLibraryOptions)


@entry
def cuLibraryUnload(library: int) -> None:
    """Unloads the library's module from every context; its kernels' and
    its handles go stale."""
    require_init()
    lib = _library(library)
    lib.unload()
    handles.forget(HandleKind.LIBRARY, int(library))
    for k in lib.kernels.values():
        handles.forget(HandleKind.KERNEL, handle_of(HandleKind.KERNEL, k))


@entry
def cuLibraryGetKernel(pKernel: int, library: int, name: int) -> None:
    need(pKernel, "pKernel")
    kname = cabi.c_string(need(name, "name"), "name")
    ctx = current_context()
    cabi.store(pKernel, "u64", handle_of(HandleKind.KERNEL, _library(library).kernel(kname, ctx)))


@entry
def cuLibraryGetModule(pMod: int, library: int) -> None:
    """The library's module in the current context."""
    need(pMod, "pMod")
    ctx = current_context()
    cabi.store(pMod, "u64", handle_of(HandleKind.MODULE, _library(library).module(ctx)))


@entry
def cuKernelGetFunction(pFunc: int, kernel: int) -> None:
    """The kernel's CUfunction in the current context."""
    need(pFunc, "pFunc")
    ctx = current_context()
    cabi.store(pFunc, "u64", handle_of(HandleKind.FUNCTION, _kernel(kernel).function(ctx)))


def _global(dptr: int, nbytes: int, library: int, name: int, managed: bool) -> None:
    gname = cabi.c_string(need(name, "name"), "name")
    ctx = current_context()
    m = _library(library).module(ctx)
    address, size = m.get_global(gname)
    if managed:
        decl = m.loaded.ir.globals.get(gname)
        if decl is None or not getattr(decl, "managed", False):
            raise fail(R.CUDA_ERROR_NOT_FOUND, f"{gname} is not a __managed__ variable of {m.name}")
    if dptr:
        cabi.store(dptr, "u64", address, "dptr")
    if nbytes:
        cabi.store(nbytes, "u64", size, "bytes")


@entry
def cuLibraryGetGlobal(dptr: int, bytes_: int, library: int, name: int) -> None:
    """A global's address and size in the current context's copy."""
    _global(dptr, bytes_, library, name, False)


@entry
def cuLibraryGetManaged(dptr: int, bytes_: int, library: int, name: int) -> None:
    """A __managed__ variable's address (host and device) and size."""
    _global(dptr, bytes_, library, name, True)


def _kernel_names(library: int) -> list[str]:
    lib = _library(library)
    return list(lib.module(current_context()).functions)


@entry
def cuLibraryGetKernelCount(count: int, lib: int) -> None:
    need(count, "count")
    cabi.store(count, "u32", len(_kernel_names(lib)))


@entry
def cuLibraryEnumerateKernels(kernels: int, numKernels: int, lib: int) -> None:
    need(kernels, "kernels")
    names = _kernel_names(lib)
    n = int(numKernels)
    if n > len(names):
        raise fail(INVALID, f"numKernels {n} exceeds the library's {len(names)} kernels")
    library = _library(lib)
    ctx = current_context()
    for i, name in enumerate(names[:n]):
        cabi.store(kernels + 8 * i, "u64", handle_of(HandleKind.KERNEL, library.kernel(name, ctx)), "kernels")


@entry
def cuKernelGetAttribute(pi: int, attrib: int, kernel: int, dev: int) -> None:
    """A CUfunction_attribute of the kernel as loaded for device `dev`."""
    need(pi, "pi")
    ctx = _context_on(dev)
    cabi.store(pi, "i32", _kernel(kernel).function(ctx).get_attribute(int(attrib)))


@entry
def cuKernelSetAttribute(attrib: int, val: int, kernel: int, dev: int) -> None:
    """Set on the kernel for device `dev`: in every context of that device
    it is loaded in now, and in those it is loaded in later."""
    engine = require_init()
    device = engine.device(int(dev))
    k = _kernel(kernel)
    lib = k.library
    with lib.lock:
        targets = [m for m in lib.modules.values() if not m.unloaded and m.context.device is device]
        if not targets:
            targets = [lib.module(_context_on(dev))]
        for m in targets:
            _cfg.set_attribute(m.get_function(k.name), int(attrib), int(val))
        lib.settings[(device.ordinal, k.name, int(attrib))] = int(val)


@entry
def cuKernelSetCacheConfig(kernel: int, config: int, dev: int) -> None:
    """A preference, validated; the simulated SM has one fixed split."""
    require_init().device(int(dev))
    _kernel(kernel)
    check_cache_config(config)


@entry
def cuKernelGetName(name: int, hfunc: int) -> None:
    need(name, "name")
    require_init()
    cabi.store(name, "u64", name_pointer(_kernel(hfunc).name))


@entry
def cuKernelGetParamInfo(kernel: int, paramIndex: int, paramOffset: int, paramSize: int) -> None:
    param_info(_kernel(kernel).function(current_context()), paramIndex, paramOffset, paramSize)


@entry
def cuKernelGetLibrary(pLib: int, kernel: int) -> None:
    need(pLib, "pLib")
    require_init()
    cabi.store(pLib, "u64", handle_of(HandleKind.LIBRARY, _kernel(kernel).library))
