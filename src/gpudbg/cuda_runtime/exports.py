"""Every cuda*/__cuda* export that is implemented, gathered from this
package's modules by name: the table gpudbg.native.bridge looks
libcudart.so.13's names up in, and what its coverage command counts.

A module contributes the names in its `__all__` (exact libcudart.so.13
export names, _ptsz/_ptds variants included).
"""
from __future__ import annotations

import importlib

MODULES = ("errors", "registration", "launch", "device", "memory", "copies", "streams", "graphs", "textures")

for _name in MODULES:
    _module = importlib.import_module(f"gpudbg.cuda_runtime.{_name}")
    for _export in getattr(_module, "__all__", ()):
        globals()[_export] = getattr(_module, _export)
