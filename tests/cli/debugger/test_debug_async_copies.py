"""Debugging a -G cuda::pipeline kernel (`gpudbg debug --batch`): at a
breakpoint after consumer_wait the waited tile is in shared memory and the
next tile's copy, issued but not waited for, is not yet visible; locals
print per thread."""
from __future__ import annotations

PIPE = r'''
#include <cuda/pipeline>
extern "C" __global__ void pipe2(const float* in, float* out, int tiles) {
  __shared__ float buf[2][32];
  auto pipe = cuda::make_pipeline();
  int t = threadIdx.x;
  pipe.producer_acquire();
  cuda::memcpy_async(&buf[0][t], &in[t], sizeof(float), pipe);
  pipe.producer_commit();
  for (int i = 0; i < tiles; ++i) {
    if (i + 1 < tiles) {
      pipe.producer_acquire();
      cuda::memcpy_async(&buf[(i + 1) & 1][t], &in[(i + 1) * 32 + t], sizeof(float), pipe);
      pipe.producer_commit();
    }
    pipe.consumer_wait();
    float v = buf[i & 1][t];  // USE
    out[i * 32 + t] = v + 1.0f;
    pipe.consumer_release();
  }
}
'''

BODY = '''
x = np.arange(96, dtype=np.float32) + 100
d_in = gpudbg.to_device(x)
d_out = gpudbg.zeros(96, np.float32)
module.pipe2[1, 32](d_in, d_out, 3)
print("checked", bool((d_out.to_host() == x + 1).all()))
'''


def test_in_flight_copy_is_invisible_at_a_breakpoint(gdb, host):
    from test_debug_batch import line_of
    prog = host(PIPE, BODY, name="pipe2.cu", options=("-G", "-std=c++17"))
    use = line_of(PIPE, "// USE")
    status, out, err = gdb(prog, f"break pipe2.cu:{use}", "run", "print i", "print buf", "cuda thread 5",
                           "next", "print v", "continue", "print i", "print buf", "delete", "continue")
    assert status == 0, err
    first, second = out.split("Continuing.")[0], out.split("Continuing.")[1]
    tile0 = ", ".join(str(100 + k) for k in range(32))
    # i = 0: tile 0 waited for; tile 1's copy is in flight, its slot still holds zeros
    assert "$1 = 0" in first and "{" + tile0 + ", 0 <repeats 32 times>}" in first
    assert "$3 = 105" in first                         # thread 5's v after `next`
    tile1 = ", ".join(str(132 + k) for k in range(32))
    assert "$4 = 1" in second and "{" + tile0 + ", " + tile1 + "}" in second
    assert "checked True" in out
