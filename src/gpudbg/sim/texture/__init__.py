"""The simulated texture unit: images (CUDA arrays, linear and pitched
memory seen as images), texture and surface descriptors, the handle table
the device resolves 64-bit texture/surface object values through, and the
sampler (addressing, point and fixed-point linear filtering, read modes).

The one idea: texel storage is ordinary device memory (the driver allocates
an array as an allocation of kind ARRAY), so every texel fetch is a checked
gather through the global address space (a freed array faults like any
use-after-free) and the debugger reads an array with `x` like any memory.
The layout is plain row-major (x fastest, then y, z, layer/face): real
hardware tiles arrays opaquely, which no program can observe except through
the copy APIs, which use the same layout.

It does not model texture caches, block-compressed or YUV formats, or
multisampled images.
"""
