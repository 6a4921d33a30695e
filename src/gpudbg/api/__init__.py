"""The Pythonic layer: devices, arrays, modules and kernels over mc* calls.

Built only on the functions of gpudbg.runtime.mc, so it is one more client
of the runtime rather than a second path to the device: whatever a C-style
mc* program would see (ordering, sticky errors, fault reports) a Pythonic
program sees too, as typed exceptions.
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
