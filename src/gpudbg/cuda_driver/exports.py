"""Every cu* export that is implemented, gathered from this package's
modules by name: the table gpudbg.native.bridge looks names up in, and
what the libcuda coverage command counts.

A module contributes the names in its `__all__` (exact libcuda.so.1
export names, versioned and per-thread variants included).
"""
from __future__ import annotations

import importlib

MODULES = ("errors", "device", "context", "memory", "mempool", "copies", "pointer", "module", "library",
           "linker", "launch", "occupancy", "stream", "event", "arrays", "textures", "tensor_maps")

for _name in MODULES:
    _module = importlib.import_module(f"gpudbg.cuda_driver.{_name}")
    for _export in getattr(_module, "__all__", ()):
        globals()[_export] = getattr(_module, _export)
