"""The CUDA driver API (`cu*`) over the engine, at the C ABI level.

Every function here is named exactly as the libcuda.so.1 export it
implements (cuMemAlloc_v2, cuLaunchKernel_ptsz, ...), takes the C arguments
as Python ints (pointers are addresses in this process, see gpudbg.cabi)
and returns a CUresult. The drop-in libcuda.so.1 (gpudbg.native) calls them;
cuda-python's `cuda.bindings.driver` is the Pythonic face over that library.
`gpudbg.cuda_driver.exports` gathers them all.
"""
