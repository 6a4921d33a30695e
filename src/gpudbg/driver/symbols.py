"""Device symbols for mcGetSymbolAddress/Size and mcMemcpyTo/FromSymbol.

A C program names a symbol by the host shadow address that the compiler
registered for a `__device__` or `__constant__` variable; a Python program
has no such shadow, so a symbol is named the way the registration table
would find it: by the variable's name, looked up in every module loaded in
the current context (ambiguous when two modules define it: the program must
then say which, with a `(module, name)` pair). Lookups never fall back to
another context, as registered symbols are per context in the CUDA runtime.
"""
from __future__ import annotations

from typing import Any

from gpudbg.driver.status import Cause, CUresult, EngineError

INVALID_SYMBOL = Cause.SYMBOL


def resolve(ctx: Any, symbol: Any) -> tuple[int, int]:
    """(device address, size in bytes) of a global or constant variable."""
    from gpudbg.driver.module import Module

    if isinstance(symbol, tuple) and len(symbol) == 2 and isinstance(symbol[0], Module):
        module, name = symbol
        if module.unloaded or module.context is not ctx:
            raise EngineError(INVALID_SYMBOL, f"{module!r} is not a loaded module of the current context")
        if not isinstance(name, str) or name not in module.loaded.globals:
            raise EngineError(INVALID_SYMBOL, f"module {module.name} has no global or constant "
                                              f"variable {name!r}")
        return tuple(module.loaded.globals[name])  # type: ignore[return-value]
    if not isinstance(symbol, str) or not symbol:
        raise EngineError(INVALID_SYMBOL, f"a symbol is a variable name or a (module, name) pair, "
                                          f"not {symbol!r}")
    hits = [m for m in ctx.modules if not m.unloaded and symbol in m.loaded.globals]
    if not hits:
        raise EngineError(INVALID_SYMBOL, f"no module loaded in the current context defines a "
                                          f"__device__ or __constant__ variable {symbol!r}")
    if len(hits) > 1:
        names = ", ".join(m.name for m in hits)
        raise EngineError(INVALID_SYMBOL, f"symbol {symbol!r} is ambiguous: defined by modules "
                                          f"{names}; pass (module, {symbol!r})")
    return tuple(hits[0].loaded.globals[symbol])  # type: ignore[return-value]


def span(ctx: Any, symbol: Any, count: Any, offset: Any) -> int:
    """The device address of [offset, offset+count) inside a symbol."""
    address, size = resolve(ctx, symbol)
    for name, v in (("sizeBytes", count), ("offset", offset)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{name} must be a non-negative int, got {v!r}")
    if offset + count > size:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                          f"{count} bytes at offset {offset} run past the end of the {size}-byte symbol")
    return address + offset
