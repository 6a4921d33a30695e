"""nvcc's registration ABI: what a CUDA C++ program's static constructors
call before main, and the lazy module loads it leads to.

`__cudaRegisterFatBinary(&wrapper)` receives the fatbin wrapper's address
(magic 0x466243B1); the returned `void**` handle is the address of a
pointer-sized buffer this module keeps (holding the wrapper address, as
NVIDIA's does). `__cudaRegisterFunction` maps a host stub address to its
kernel's (mangled) name, `__cudaRegisterVar`/`__cudaRegisterManagedVar` map
a host shadow variable's address to a module global. Nothing is loaded
then (no engine call runs inside the constructors): the fatbin is loaded
into the current device's primary context the first time something needs
it there (a launch, a symbol copy, cudaFuncGetAttributes,
__cudaInitModule), once per context, through mcModuleLoadData on the
wrapper's address. A context destroyed by cudaDeviceReset unloads it; the
next use loads it again.

Managed variables: once loaded, the host pointer nvcc reads the variable
through (`*hostVarPtrAddress`) is set to the global's address. The
engine does not allocate `.managed` globals in host-visible memory, so a
host dereference of that address faults; device use works.
Texture and surface references (`__cudaRegisterTexture/Surface`) are not
implemented: the simulator has no texture units.
"""
from __future__ import annotations

import ctypes
import dataclasses
import threading
from typing import Any

from gpudbg import cabi
from gpudbg.cuda_runtime._base import E, KERNEL_KIND, CudaFail, call, fail
from gpudbg.cabi import handles
from gpudbg.driver.engine import get_engine
from gpudbg.runtime import mc

__all__ = ["__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd", "__cudaUnregisterFatBinary",
           "__cudaRegisterFunction", "__cudaRegisterVar", "__cudaRegisterManagedVar", "__cudaInitModule"]

WRAPPER_MAGIC = 0x466243B1


@dataclasses.dataclass(eq=False)
class Variable:
    name: str
    size: int
    constant: bool
    managed: bool
    host_pointer_address: int = 0   # managed: where the program reads the variable's address


@dataclasses.dataclass(eq=False)
class Fatbin:
    """One registered fatbin (one translation unit of the program)."""

    wrapper: int
    handle_buffer: Any                                      # the void* the void** handle points at
    functions: dict[int, str] = dataclasses.field(default_factory=dict)
    variables: dict[int, Variable] = dataclasses.field(default_factory=dict)
    modules: dict[int, Any] = dataclasses.field(default_factory=dict)   # id(context) -> Module
    unregistered: bool = False

    @property
    def handle(self) -> int:
        return ctypes.addressof(self.handle_buffer)


@dataclasses.dataclass(eq=False)
class Kernel:
    """A cudaKernel_t: the registered kernel behind a host stub."""

    fatbin: Fatbin
    name: str
    stub: int


_lock = threading.RLock()
_fatbins: dict[int, Fatbin] = {}          # handle address -> Fatbin
_stubs: dict[int, tuple[Fatbin, str]] = {}
_shadows: dict[int, tuple[Fatbin, Variable]] = {}
_kernels: dict[int, Kernel] = {}         # stub -> Kernel (one cudaKernel_t per stub)


def _fatbin(handle: int) -> Fatbin:
    with _lock:
        fb = _fatbins.get(int(handle))
    if fb is None or fb.unregistered:
        raise ValueError(f"0x{int(handle):x} is not a registered fatbin handle")
    return fb


# ------------------------------------------------------------------ the ABI
def __cudaRegisterFatBinary(fatCubin: int) -> int:
    """Record the wrapper; returns the `void**` handle (an address)."""
    wrapper = int(fatCubin)
    buf = ctypes.c_void_p(wrapper)
    fb = Fatbin(wrapper, buf)
    with _lock:
        _fatbins[fb.handle] = fb
    return fb.handle


def __cudaRegisterFatBinaryEnd(fatCubinHandle: int) -> None:
    """Registration of the unit is complete; loading stays lazy."""
    _fatbin(fatCubinHandle)


def __cudaUnregisterFatBinary(fatCubinHandle: int) -> None:
    """At exit: forget the unit and unload its modules quietly (nothing
    once the engine's contexts are gone)."""
    with _lock:
        fb = _fatbins.get(int(fatCubinHandle))
        if fb is None or fb.unregistered:
            return
        fb.unregistered = True
        for stub in list(fb.functions):
            _stubs.pop(stub, None)
            _kernels.pop(stub, None)
        for shadow in list(fb.variables):
            _shadows.pop(shadow, None)
        modules, fb.modules = list(fb.modules.values()), {}
    for m in modules:
        try:
            if not m.unloaded and not m.context.destroyed:
                m.unload(sync=False)
        except Exception:   # exit-time cleanup never fails the program
            pass


def __cudaRegisterFunction(fatCubinHandle: int, hostFun: int, deviceFun: int, deviceName: int,
                           thread_limit: int, tid: int, bid: int, bDim: int, gDim: int, wSize: int) -> None:
    """Map the host stub `hostFun` to the kernel named `deviceFun`."""
    fb = _fatbin(fatCubinHandle)
    name = cabi.c_string(deviceFun or deviceName, "deviceFun")
    with _lock:
        fb.functions[int(hostFun)] = name
        _stubs[int(hostFun)] = (fb, name)
        _kernels.pop(int(hostFun), None)


def __cudaRegisterVar(fatCubinHandle: int, hostVar: int, deviceAddress: int, deviceName: int, ext: int,
                      size: int, constant: int, global_: int) -> None:
    """Map the host shadow at `hostVar` to the module global `deviceAddress`
    (its name in the PTX)."""
    fb = _fatbin(fatCubinHandle)
    name = cabi.c_string(deviceAddress or deviceName, "deviceAddress")
    var = Variable(name, int(size), bool(constant), False)
    with _lock:
        fb.variables[int(hostVar)] = var
        _shadows[int(hostVar)] = (fb, var)


def __cudaRegisterManagedVar(fatCubinHandle: int, hostVarPtrAddress: int, deviceAddress: int,
                             deviceName: int, ext: int, size: int, constant: int, global_: int) -> None:
    """A `__managed__` variable: like __cudaRegisterVar, keyed by the
    address of the host pointer, which is set to the variable's address
    when the module loads."""
    fb = _fatbin(fatCubinHandle)
    name = cabi.c_string(deviceAddress or deviceName, "deviceAddress")
    var = Variable(name, int(size), bool(constant), True, int(hostVarPtrAddress))
    with _lock:
        fb.variables[int(hostVarPtrAddress)] = var
        _shadows[int(hostVarPtrAddress)] = (fb, var)


def __cudaInitModule(fatCubinHandle: int) -> int:
    """Load the unit into the current context now; 1 on success, else 0."""
    try:
        module_of(_fatbin(fatCubinHandle))
    except (CudaFail, ValueError):
        return 0
    return 1


# ------------------------------------------------------------------ lazy loading
def module_of(fb: Fatbin) -> Any:
    """The unit's module in the calling thread's current context, loaded
    on first use there."""
    ctx = get_engine().current_context()
    with _lock:
        m = fb.modules.get(id(ctx))
        if m is not None and not m.unloaded and m.context is ctx:
            return m
        m = call(mc.mcModuleLoadData, fb.wrapper)
        fb.modules[id(ctx)] = m
        for var in fb.variables.values():
            if var.managed and var.name in m.loaded.globals:
                cabi.store(var.host_pointer_address, "u64", m.loaded.globals[var.name][0], "managed host pointer")
        return m


def function_of_stub(stub: int) -> Any:
    """The mcFunction_t of the kernel registered for host stub `stub`, in
    the current context (cudaErrorInvalidDeviceFunction if none is)."""
    with _lock:
        found = _stubs.get(int(stub))
    if found is None:
        raise fail(E.mcErrorInvalidDeviceFunction,
                   f"0x{int(stub):x} is not the host stub of a registered kernel (__cudaRegisterFunction)")
    fb, name = found
    return call(mc.mcModuleGetFunction, module_of(fb), name)


def kernel_of_stub(stub: int) -> int:
    """The cudaKernel_t handle of a registered host stub."""
    with _lock:
        found = _stubs.get(int(stub))
        if found is None:
            raise fail(E.mcErrorInvalidDeviceFunction,
                       f"0x{int(stub):x} is not the host stub of a registered kernel (__cudaRegisterFunction)")
        k = _kernels.get(int(stub))
        if k is None:
            k = _kernels[int(stub)] = Kernel(found[0], found[1], int(stub))
    return handles.handle(KERNEL_KIND, k)


def function_of(func: int) -> Any:
    """`const void *func` of the runtime API: a host stub, or a cudaKernel_t."""
    func = int(func)
    if not func:
        raise fail(E.mcErrorInvalidDeviceFunction, "func is NULL")
    if handles.kind_of(func) == KERNEL_KIND:
        k = handles.lookup(KERNEL_KIND, func)
        if k.fatbin.unregistered:
            raise fail(E.mcErrorInvalidDeviceFunction, f"cudaKernel_t 0x{func:x} belongs to an unregistered fatbin")
        return call(mc.mcModuleGetFunction, module_of(k.fatbin), k.name)
    return function_of_stub(func)


def symbol_of(shadow: int) -> tuple[Any, str]:
    """The (module, name) symbol mc* takes for a registered host shadow
    address (cudaErrorInvalidSymbol if it is none)."""
    with _lock:
        found = _shadows.get(int(shadow))
    if found is None:
        raise fail(E.mcErrorInvalidSymbol,
                   f"0x{int(shadow):x} is not the host shadow of a registered __device__/__constant__ "
                   f"variable (__cudaRegisterVar)")
    fb, var = found
    return module_of(fb), var.name
