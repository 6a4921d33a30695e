import numpy as np
import gpudbg

SOURCE = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void __cluster_dims__(2, 1, 1) swap(int* out) {
    __shared__ int buf[32];
    cg::cluster_group cl = cg::this_cluster();
    unsigned rank = cl.block_rank();
    buf[threadIdx.x] = rank * 100 + threadIdx.x;
    cl.sync();
    int v = cl.map_shared_rank(buf, rank ^ 1)[threadIdx.x];
    cl.sync();
    out[blockIdx.x * 32 + threadIdx.x] = v;
}
'''

mod = gpudbg.compile(SOURCE, options=["-G", "-arch=compute_90"], name="swap.cu")
out = gpudbg.to_device(np.zeros(4 * 32, np.int32))
mod.swap[4, 32](out)
gpudbg.synchronize()
print(out.to_host()[::32].tolist())
