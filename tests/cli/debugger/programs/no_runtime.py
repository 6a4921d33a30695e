"""A libcudart implementation with no exports (GPUDBG_NATIVE_IMPL_CUDART):
every runtime call of a native program answers 801 (cudaErrorNotSupported),
so a test sees the debugger's process story (start, exit, exit status)
whatever state gpudbg's real runtime layer is in."""
