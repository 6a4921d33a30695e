"""gpudbg: run, debug and sanitize CUDA/PTX programs on a simulated GPU.

The top-level names are the Pythonic API (compile, Device, DeviceArray,
Module, Kernel, ...) and `mc`, the CUDA-runtime-like mc* module. They are
resolved lazily (PEP 562) so that importing one layer, say gpudbg.ptx, does
not start the driver, and so lower layers can import from the package
without import cycles.
"""
from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "compile": ("gpudbg.compiler", "compile"),
    "compile_ptx": ("gpudbg.compiler", "compile_ptx"),
    "CompileError": ("gpudbg.compiler", "CompileError"),
    "CompilerUnavailableError": ("gpudbg.compiler", "CompilerUnavailableError"),
    "Device": ("gpudbg.api", "Device"),
    "Stream": ("gpudbg.api", "Stream"),
    "synchronize": ("gpudbg.api", "synchronize"),
    "DeviceArray": ("gpudbg.api", "DeviceArray"),
    "to_device": ("gpudbg.api", "to_device"),
    "device_array": ("gpudbg.api", "device_array"),
    "zeros": ("gpudbg.api", "zeros"),
    "asarray": ("gpudbg.api", "asarray"),
    "from_dlpack": ("gpudbg.api", "from_dlpack"),
    "Event": ("gpudbg.api", "Event"),
    "Module": ("gpudbg.api", "Module"),
    "Kernel": ("gpudbg.api", "Kernel"),
    "CudaArray": ("gpudbg.api", "CudaArray"),
    "Texture": ("gpudbg.api", "Texture"),
    "Surface": ("gpudbg.api", "Surface"),
    "GPUError": ("gpudbg.api", "GPUError"),
    "KernelFaultError": ("gpudbg.api", "KernelFaultError"),
    "mcError_t": ("gpudbg.runtime.errors", "mcError_t"),
    "mc": ("gpudbg.runtime.mc", None),
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module 'gpudbg' has no attribute {name!r}")
    module = importlib.import_module(target[0])
    value = module if target[1] is None else getattr(module, target[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
