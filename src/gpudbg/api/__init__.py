"""The Pythonic layer: devices, arrays, modules and kernels over mc* calls.

Built on the functions of gpudbg.runtime.mc, so it is one more client of
the runtime rather than a second path to the device: whatever a C-style
mc* program would see (ordering, sticky errors, fault reports) a Pythonic
program sees too, as typed exceptions. Array operations are kernels it
generates and launches like any other (codegen.py). It reads below the
runtime only where mc* has no call for the fact, each in one place: the
allocation a foreign pointer lies in (interop.py, what cuPointerGetAttribute
answers), a kernel's parameter sizes (arguments.py, cuFuncGetParamInfo's
answer), the CUstream numbers the driver API hands out (interop.py) and the
host time of an event's record (events.py).
"""
from gpudbg.api.device import Device, Stream, synchronize
from gpudbg.api.errors import DEVICE_FAULT_CODES, GPUError, KernelFaultError
from gpudbg.api.events import Event
from gpudbg.api.interop import asarray, from_dlpack
from gpudbg.api.memory import DeviceArray, device_array, to_device, zeros
from gpudbg.api.module import Kernel, Module
from gpudbg.api.textures import CudaArray, Surface, Texture

__all__ = ["Device", "Stream", "Event", "synchronize", "GPUError", "KernelFaultError", "DEVICE_FAULT_CODES",
           "DeviceArray", "device_array", "to_device", "zeros", "asarray", "from_dlpack", "Kernel", "Module",
           "CudaArray", "Texture", "Surface"]
