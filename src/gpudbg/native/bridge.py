"""Python side of the drop-in libraries' bridge (the C side is csrc/bridge.c).

The contract: for every exported C function, the C stub calls
`entry(library, name)` once ("cuda" for libcuda.so.1, "cudart" for
libcudart.so.13) and caches the callable it returns. That callable is the
attribute named exactly like the exported symbol (`cuMemAlloc_v2`,
`cuLaunchKernel_ptsz`, `__cudaRegisterFatBinary`) of the implementation
module: `gpudbg.cuda_driver.exports` / `gpudbg.cuda_runtime.exports`, or the
module named by `GPUDBG_NATIVE_IMPL_CUDA` / `GPUDBG_NATIVE_IMPL_CUDART`.
It is called with the C arguments converted positionally (integers, enums and
pointers -> int; float/double -> float; structs by value -> bytes) and returns
an int (None means 0), or bytes for a struct returned by value. A missing
module or attribute means "unimplemented" (the C side answers 801).

It does not implement any CUDA function itself.
"""
from __future__ import annotations

import importlib
import os
import sys
import traceback
from types import ModuleType
from typing import Any, Callable

IMPLEMENTATIONS = {"cuda": "gpudbg.cuda_driver.exports", "cudart": "gpudbg.cuda_runtime.exports"}
ENV = {"cuda": "GPUDBG_NATIVE_IMPL_CUDA", "cudart": "GPUDBG_NATIVE_IMPL_CUDART"}

_modules: dict[str, ModuleType | None] = {}
_reported: set[tuple[str, str]] = set()


def module_name(library: str) -> str:
    """The implementation module of `library` ("cuda" or "cudart")."""
    return os.environ.get(ENV[library]) or IMPLEMENTATIONS[library]


STARTUP_ENV = "GPUDBG_NATIVE_STARTUP"
_started = False


def _run_startup_hook() -> None:
    """Run the `module:function` named by GPUDBG_NATIVE_STARTUP once, before
    the first implementation is used: how a tool that started this program
    (gpudbg run/check) gets its hooks into the program's own process. The
    variable is removed so the program's children do not inherit it."""
    global _started
    if _started:
        return
    _started = True
    spec = os.environ.pop(STARTUP_ENV, "")
    if not spec:
        return
    module, _, function = spec.partition(":")
    try:
        getattr(importlib.import_module(module), function or "main")()
    except Exception:
        print(f"gpudbg: the startup hook {spec!r} failed:", file=sys.stderr)
        traceback.print_exc()


def implementation(library: str) -> ModuleType | None:
    """The imported implementation module, or None when it does not exist
    (a module that exists but fails to import is reported once on stderr)."""
    _run_startup_hook()
    if library not in _modules:
        name = module_name(library)
        try:
            _modules[library] = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name is None or not name.startswith(e.name):
                traceback.print_exc()
            _modules[library] = None
        except Exception:
            print(f"gpudbg: cannot import {name}; its exports are unimplemented:", file=sys.stderr)
            traceback.print_exc()
            _modules[library] = None
    return _modules[library]


def entry(library: str, name: str) -> Callable[..., Any] | None:
    """The callable implementing export `name` of `library`, or None."""
    module = implementation(library)
    fn = getattr(module, name, None) if module is not None else None
    return fn if callable(fn) else None


def report_exception(library: str, name: str, etype: Any, value: Any, tb: Any) -> None:
    """Print the traceback of an exception escaping `name`, once per export."""
    if (library, name) in _reported:
        return
    _reported.add((library, name))
    print(f"gpudbg: exception in the Python implementation of {name} ({library}); "
          f"it returns CUDA_ERROR_UNKNOWN (999):", file=sys.stderr)
    if isinstance(value, BaseException):
        traceback.print_exception(type(value), value, tb if tb is not None else value.__traceback__)
    else:
        print(f"{etype}: {value}", file=sys.stderr)
    sys.stderr.flush()


def at_exit() -> None:
    """An embedded interpreter's end (the host program exits; it is never
    finalized): run Python's atexit functions and flush the streams."""
    import atexit

    from gpudbg.sim.native import shutdown
    # exit() may already have run LLVM's static destructors (llvmlite was
    # loaded after this library registered its exit hook): no native
    # compile or call from here on; what still runs is interpreted
    shutdown.close()
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
