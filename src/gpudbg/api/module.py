"""Modules and kernels of the Pythonic layer over mcModule* calls.

A Module wraps an mcModule_t from mcModuleLoadData/mcModuleLoad; a Kernel an
mcFunction_t. Launching converts only what Python cannot say in the runtime's
terms (DeviceArray to its pointer, dims to triples); each value is then
matched to the kernel's PTX parameter type by the runtime itself, so the two
layers can never disagree about argument packing. Launches are asynchronous:
a fault is raised as KernelFaultError by the next synchronizing call.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

from gpudbg.api import arguments
from gpudbg.api.device import Stream, current_ordinal, generation, on_device, stream_handle
from gpudbg.api.errors import GPUError, call, error_for
from gpudbg.api.memory import DeviceArray
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t

Dims = int | Sequence[int]


def dim3(name: str, value: Any) -> tuple[int, int, int]:
    """An int or 1-3 ints as an (x, y, z) triple."""
    if value.__class__ is int:        # the common case, without the isinstance tests
        return (value, 1, 1)
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return (int(value), 1, 1)
    try:
        dims = tuple(value)
    except TypeError:
        raise TypeError(f"{name} must be an int or a tuple of 1 to 3 ints, not {value!r}") from None
    if not 1 <= len(dims) <= 3 or any(isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer))
                                      for d in dims):
        raise TypeError(f"{name} must be an int or a tuple of 1 to 3 ints, not {value!r}")
    return tuple(int(d) for d in dims) + (1,) * (3 - len(dims))  # type: ignore[return-value]


def kernel_argument(kernel: str, index: int, value: Any) -> Any:
    """The value mcLaunchKernel receives for one Python argument
    (without the kernel's parameter sizes; see arguments.py)."""
    return arguments.convert(kernel, index, value)


def _stream_handle(stream: Any) -> Any:
    return stream_handle(stream)


class Kernel:
    """A __global__ function of a loaded module: `kernel[grid, block](*args)`
    or `kernel.launch(grid, block, args)`."""

    def __init__(self, module: "Module", name: str, handle: Any):
        self.module = module
        self.name = name
        self.handle = handle

    def launch(self, grid: Dims, block: Dims, args: Sequence[Any] = (), shared_mem: int = 0,
               stream: Stream | int | None = None) -> None:
        """Queue one launch; raises GPUError for a bad configuration or
        arguments, KernelFaultError if an earlier launch already faulted."""
        module = self.module
        module._check_live()
        # plain ints go on as they are (the runtime's Dim3 takes them as (n, 1, 1)); anything
        # else is checked here, as a TypeError naming the argument
        g = grid if grid.__class__ is int else dim3("grid", grid)
        b = block if block.__class__ is int else dim3("block", block)
        if shared_mem.__class__ is not int:
            if isinstance(shared_mem, bool) or not isinstance(shared_mem, (int, np.integer)):
                raise TypeError(f"shared_mem must be an int number of bytes, not {shared_mem!r}")
            shared_mem = int(shared_mem)
        if args.__class__ is not tuple and (isinstance(args, (str, bytes)) or not isinstance(args, Sequence)):
            raise TypeError(f"args must be a sequence of kernel arguments, not {type(args).__name__}")
        params = arguments.convert_all(self.name, self.handle, args) if args else []
        handle = None if stream is None else _stream_handle(stream)
        device = module.device
        if module._sole_device or current_ordinal() == device:   # the common case, without on_device
            err = mc.mcLaunchKernel(self.handle, g, b, params, shared_mem, handle)[0]
            if err:                        # call(mc.mcLaunchKernel, ...), without its generic unpacking
                raise error_for(mcError_t(err), "mcLaunchKernel")
        else:
            with on_device(device):
                call(mc.mcLaunchKernel, self.handle, g, b, params, shared_mem, handle)
        for a in args:
            if isinstance(a, DeviceArray):
                a._last_stream = stream     # its producer stream, for __cuda_array_interface__

    def __getitem__(self, config: Any) -> "_Configured":
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise TypeError("launch configuration is kernel[grid, block] or "
                            "kernel[grid, block, stream] or kernel[grid, block, stream, shared_mem]")
        grid, block, *rest = config
        stream = rest[0] if rest else None
        shared = rest[1] if len(rest) > 1 else 0
        return _Configured(self, grid, block, stream, shared)

    def __call__(self, *args: Any) -> None:
        raise TypeError(f"kernel {self.name} needs a launch configuration: {self.name}[grid, block](...)")

    def __repr__(self) -> str:
        return f"<gpudbg.Kernel {self.name} of {self.module.name}>"


class _Configured:
    """A kernel bound to a launch configuration, called with the arguments."""

    def __init__(self, kernel: Kernel, grid: Any, block: Any, stream: Any, shared_mem: Any):
        self.kernel, self.grid, self.block = kernel, grid, block
        self.stream, self.shared_mem = stream, shared_mem

    def __call__(self, *args: Any, stream: Any = None) -> None:
        if stream is not None and self.stream is not None:
            raise TypeError(f"{self.kernel.name}: the stream is given twice (in [grid, block, stream] "
                            f"and as stream=)")
        self.kernel.launch(self.grid, self.block, args, self.shared_mem,
                           self.stream if stream is None else stream)


class Module:
    """A loaded PTX module on the device that was current when it loaded."""

    def __init__(self, handle: Any, name: str, ptx: str | None = None, source: str | None = None):
        self.handle = handle
        self.name = name
        self.ptx = ptx
        self.source = source
        self.device = current_ordinal()
        self._token = generation(self.device)
        # the engine's only device (its device count is fixed while this module's token is valid):
        # then the current device is always this one, and a launch need not ask
        self._sole_device = call(mc.mcGetDeviceCount) == 1
        self.unloaded = False
        self._kernels: dict[str, Kernel] = {}
        from gpudbg.compiler import lowered_names
        # name expression -> mangled name, from gpudbg.compile(..., name_expressions=[...])
        self.lowered: dict[str, str] = lowered_names(ptx) if ptx else {}

    @classmethod
    def from_ptx(cls, ptx: str | bytes, name: str = "<ptx>", source: str | None = None) -> "Module":
        """Load PTX text (mcModuleLoadData)."""
        handle = call(mc.mcModuleLoadData, ptx, name=_ptx_name(name))
        text = ptx.decode(errors="replace") if isinstance(ptx, (bytes, bytearray)) else ptx
        return cls(handle, name, text, source)

    @classmethod
    def load(cls, path: str | Path) -> "Module":
        """Load a .ptx file (mcModuleLoad)."""
        handle = call(mc.mcModuleLoad, str(path))
        return cls(handle, str(path))

    def _check_live(self) -> None:
        if self.unloaded:
            raise ValueError(f"module {self.name} was unloaded")
        if self._token is not generation(self.device):
            raise ValueError(f"module {self.name} belongs to a device context that was reset")

    def get_function(self, name: str) -> Kernel:
        """The kernel `name` (a name expression given to gpudbg.compile, such
        as "foo<float>", or the symbol's own name); GPUError(mcErrorNotFound)
        if there is none."""
        if not isinstance(name, str):
            raise TypeError(f"kernel name must be a str, not {type(name).__name__}")
        self._check_live()
        k = self._kernels.get(name)
        if k is None:
            symbol = self.lowered.get(name, name)
            if symbol == name and "<" in name and self.lowered:
                known = ", ".join(sorted(self.lowered))
                raise GPUError(mcError_t.mcErrorNotFound, f"module {self.name} has no kernel {name!r}; "
                                                          f"its name expressions are: {known}")
            with on_device(self.device):
                handle = call(mc.mcModuleGetFunction, self.handle, symbol)
            k = self._kernels[name] = Kernel(self, name, handle)
        return k

    get_kernel = get_function

    def __getitem__(self, name: str) -> Kernel:
        return self.get_function(name)

    def __getattr__(self, name: str) -> Kernel:
        if name.startswith("_") or "_kernels" not in self.__dict__:
            raise AttributeError(name)
        try:
            return self.get_function(name)
        except GPUError as e:
            if e.code is mcError_t.mcErrorNotFound:
                raise AttributeError(f"module {self.name} has no kernel {name!r}") from e
            raise

    def get_global(self, name: str, dtype: Any = np.uint8) -> DeviceArray:
        """A module-scope __device__/__constant__ variable as a DeviceArray
        view (not owned: it lives as long as the module)."""
        if not isinstance(name, str):
            raise TypeError(f"global name must be a str, not {type(name).__name__}")
        self._check_live()
        with on_device(self.device):
            symbol = self.lowered.get(name) or self.lowered.get("&" + name) or name   # a name expression
            ptr, size = call(mc.mcModuleGetGlobal, self.handle, symbol)
        dt = np.dtype(dtype)
        if size % dt.itemsize:
            raise ValueError(f"global {name} has {size} bytes, not a whole number of {dt} items")
        return DeviceArray(ptr, (size // dt.itemsize,), dt, owner=False, device=self.device)

    def unload(self) -> None:
        if self.unloaded:
            return
        self.unloaded = True
        if self._token is not generation(self.device):
            return
        with on_device(self.device):
            call(mc.mcModuleUnload, self.handle)

    def __enter__(self) -> "Module":
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        try:
            self.unload()
        except GPUError:
            if exc_type is None:
                raise

    def __repr__(self) -> str:
        return f"<gpudbg.Module {self.name} on device {self.device}>"


def _ptx_name(name: str) -> str:
    """The PTX image's file name for reports: kernel.cu -> kernel.ptx."""
    if name.startswith("<"):
        return name
    stem, dot, ext = name.rpartition(".")
    return f"{stem}.ptx" if dot and ext in ("cu", "cuh", "cpp") else f"{name}.ptx" if not name.endswith(".ptx") else name
