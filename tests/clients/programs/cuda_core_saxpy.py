"""saxpy on cuda.core (NVRTC compiles, cuda.core loads and launches), with
pinned host buffers viewed by numpy through DLPack."""
import numpy as np
from cuda.core import Device, LaunchConfig, LegacyPinnedMemoryResource, Program, ProgramOptions, launch

SAXPY = """
template <typename T>
__global__ void saxpy(const T a, const T *x, const T *y, T *out, size_t n) {
    const unsigned tid = threadIdx.x + blockIdx.x * blockDim.x;
    for (size_t i = tid; i < n; i += gridDim.x * blockDim.x) out[i] = a * x[i] + y[i];
}
"""

dev = Device()
dev.set_current()
stream = dev.create_stream()
arch = "".join(f"{i}" for i in dev.compute_capability)
prog = Program(SAXPY, code_type="c++", options=ProgramOptions(std="c++17", arch=f"sm_{arch}"))
mod = prog.compile("ptx", name_expressions=("saxpy<float>",))
kernel = mod.get_kernel("saxpy<float>")

n = 1 << 12
nbytes = n * 4
pinned = LegacyPinnedMemoryResource()
host = [pinned.allocate(nbytes) for _ in range(3)]
hx, hy, hout = (np.from_dlpack(b).view(np.float32) for b in host)
rng = np.random.default_rng(0)
hx[:] = rng.random(n, dtype=np.float32)
hy[:] = rng.random(n, dtype=np.float32)
dx, dy, dout = (dev.memory_resource.allocate(nbytes, stream=stream) for _ in range(3))
dx.copy_from(host[0], stream=stream)
dy.copy_from(host[1], stream=stream)
config = LaunchConfig(grid=16, block=256)
launch(stream, config, kernel, np.float32(2.0), dx, dy, dout, np.uint64(n))
host[2].copy_from(dout, stream=stream)
stream.sync()
ok = np.allclose(hout, 2.0 * hx + hy)
print("cuda.core saxpy:", "PASSED" if ok else "FAILED")
raise SystemExit(0 if ok else 1)
