"""The mc* runtime layer (seed 002) over the driver engine.

`errors` and `types` are plain vocabulary that lower layers may import;
`mc` (the functions) is imported lazily on first attribute access so that
importing the error enum from the driver does not pull the driver back in.
"""
from __future__ import annotations

from typing import Any

from gpudbg.runtime.errors import McError, mcError_t

__all__ = ["McError", "mcError_t", "mc"]


def __getattr__(name: str) -> Any:
    if name == "mc":
        import importlib
        return importlib.import_module("gpudbg.runtime.mc")
    raise AttributeError(f"module 'gpudbg.runtime' has no attribute {name!r}")
