"""Host program of the DAP pause test: a kernel that waits for a flag
nobody sets, so it runs until the debugger pauses (and then kills) it."""
import numpy as np

import gpudbg

SRC = r"""
extern "C" __global__ void spin(volatile int *flag) {
    while (*flag == 0) {  // SPIN
    }
}
"""

module = gpudbg.compile(SRC, name="spin.cu")
flag = gpudbg.zeros(1, np.int32)
print("spinning", flush=True)
module.spin[1, 32](flag)
gpudbg.Device().synchronize()
