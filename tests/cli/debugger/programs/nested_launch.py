import numpy as np
import gpudbg

SOURCE = r'''
extern "C" __global__ void leaf(int *out, int v) {
    out[threadIdx.x] = v;
}
extern "C" __global__ void middle(int *out, int v) {
    leaf<<<1, 4>>>(out, v + 1);
}
extern "C" __global__ void top(int *out) {
    middle<<<1, 1>>>(out, 10);
}
'''

mod = gpudbg.compile(SOURCE, options=["-G", "-rdc=true"], name="nested.cu")
out = gpudbg.to_device(np.zeros(4, np.int32))
mod.top[1, 1](out)
gpudbg.synchronize()
print(out.to_host().tolist())
