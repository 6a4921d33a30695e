"""Seed 002 §2.12: modules and linking."""
from __future__ import annotations

from typing import Any

from gpudbg.driver import module as _module
from gpudbg.runtime.api._base import _api, _ctx
from gpudbg.runtime.errors import DriverError, mcError_t


# ------------------------------------------------------------------ 2.12 modules, 2.4 launch
@_api(1)
def mcModuleLoadData(image: Any) -> Any:
    """Seed 002 §2.12.3.12: PTX text (str or bytes, NUL-terminated allowed)."""
    return _module.load_data(_ctx(), image)


@_api(1)
def mcModuleLoad(fname: Any) -> Any:
    """Seed 002 §2.12.3.11: a .ptx file."""
    return _module.load_file(_ctx(), fname)


@_api(0)
def mcModuleUnload(module: Any) -> None:
    """Seed 002 §2.12.3.15: mcErrorNotFound for an unknown or unloaded module."""
    ctx = _ctx()
    if not isinstance(module, _module.Module) or module.context is not ctx:
        raise DriverError(mcError_t.mcErrorNotFound, f"{module!r} is not a module of this context")
    module.unload()


@_api(1)
def mcModuleGetFunction(module: Any, name: str) -> Any:
    """Seed 002 §2.12.3.9: mcErrorNotFound when there is no such kernel."""
    _ctx()
    if not isinstance(module, _module.Module) or module.unloaded:
        raise DriverError(mcError_t.mcErrorInvalidValue, f"{module!r} is not a loaded module")
    return module.get_function(name)


@_api(2)
def mcModuleGetGlobal(module: Any, name: str) -> tuple[int, int]:
    """Seed 002 §2.12.3.10: (device pointer, size in bytes)."""
    _ctx()
    if not isinstance(module, _module.Module) or module.unloaded:
        raise DriverError(mcError_t.mcErrorInvalidValue, f"{module!r} is not a loaded module")
    return module.get_global(name)


__all__ = ['mcModuleLoadData', 'mcModuleLoad', 'mcModuleUnload', 'mcModuleGetFunction', 'mcModuleGetGlobal']
