"""Drop-in native libraries: libcuda.so.1 and libcudart.so.13 whose every
export calls gpudbg's Python implementation of that function.

The one idea: the exports and their C ABI are data (tables/, generated once
from NVIDIA's CUDA 13 headers by gen_exports), from which one-line C stubs are
generated (csrc/gen_*.c); a small hand-written C bridge (csrc/bridge.c) finds
or starts a Python interpreter through dlsym and calls
gpudbg.native.bridge.entry(library, name). Built with the system C compiler
at install time (build.py, setup.py's hook); no CUDA toolkit and no libpython
at build time. It does not implement CUDA: gpudbg.cuda_driver.exports and
gpudbg.cuda_runtime.exports do. A third library, libnvJitLink.so.13
(csrc/nvjitlink.c), exports no nvJitLink function on purpose: loaded first,
it makes numba-cuda and cuda.core link PTX through the driver's cuLink*.

Use: point a program at `library_dir()` (LD_LIBRARY_PATH, or load
libcuda.so.1 from it with ctypes before cuda.bindings does).
"""
from __future__ import annotations

from pathlib import Path

__all__ = ["library_dir"]


def library_dir(rebuild_if_stale: bool = True) -> Path:
    """The directory holding libcuda.so.1 and libcudart.so.13 (see build.py)."""
    from gpudbg.native.build import library_dir as _library_dir
    return _library_dir(rebuild_if_stale)
