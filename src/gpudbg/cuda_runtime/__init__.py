"""The CUDA runtime API at the C ABI (what the drop-in libcudart.so.13
calls): nvcc's registration and launch ABI and the cuda* functions, each
over its mc* twin in gpudbg.runtime. `exports` gathers them by export name.
"""
