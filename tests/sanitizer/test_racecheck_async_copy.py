"""racecheck on asynchronous copies, end to end through `gpudbg check`: a
kernel that forgets cp.async's wait reads stale shared memory, and the copy
landing later races that read (reported against the copy's source line);
with the wait the same kernel is clean."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = r'''
import sys
import numpy as np
import gpudbg

SOURCE = r"""
#include <cuda_pipeline_primitives.h>
extern "C" __global__ void forgotten_wait(const int* in, int* out, int wait) {
  __shared__ int s[128];
  int t = threadIdx.x;
  s[t] = -1;
  __syncthreads();
  __pipeline_memcpy_async(&s[t], &in[t], sizeof(int));
  __pipeline_commit();
  if (wait) __pipeline_wait_prior(0);
  __syncthreads();
  out[t] = s[(t + 1) % 128];
}
"""
m = gpudbg.compile(SOURCE, name="forgotten_wait.cu")
x = np.arange(128, dtype=np.int32) + 100
d_in = gpudbg.to_device(x)
d_out = gpudbg.zeros(128, np.int32)
m.forgotten_wait[1, 128](d_in, d_out, int(sys.argv[1]))
out = d_out.to_host()
print("stale" if (out == -1).all() else "fresh" if (out == np.roll(x, -1)).all() else "mixed")
'''


def _check(tmp_path: Path, wait: int) -> subprocess.CompletedProcess:
    prog = tmp_path / "forgotten_wait.py"
    prog.write_text(PROGRAM)
    return subprocess.run([sys.executable, "-m", "gpudbg", "check", "--tool", "racecheck", str(prog), str(wait)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=dict(os.environ))


def test_forgotten_wait_is_stale_and_a_reported_race(tmp_path):
    r = _check(tmp_path, 0)
    assert "stale" in r.stdout
    assert r.returncode == 1, r.stdout + r.stderr
    out = r.stdout
    assert "Race reported between Read access" in out
    assert "in forgotten_wait.cu:12:forgotten_wait" in out          # the read after the barrier
    assert "cuda_pipeline_helpers.h" in out and "Write access" in out  # the copy, inlined from the header
    assert "[128 hazards]" in out
    assert "RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)" in out


def test_the_wait_fixes_it(tmp_path):
    r = _check(tmp_path, 1)
    assert "fresh" in r.stdout
    assert r.returncode == 0, r.stdout + r.stderr
    assert "RACECHECK SUMMARY: 0 hazards displayed" in r.stdout


CLEAN = r'''
import sys
import numpy as np
import gpudbg

src = open(sys.argv[1]).read()
m = gpudbg.compile(src, name="async_copy.cu", options=["-std=c++17"])
x = np.arange(96 * 6, dtype=np.int32)
d_in, d_out = gpudbg.to_device(x), gpudbg.zeros(x.size, np.int32)
m.barrier_producer_consumer[1, 128](d_in, d_out, 6)
ok = np.array_equal(d_out.to_host(), ((x.reshape(6, 96)[:, ::-1] + 1) * 3).ravel())
xf = np.arange(64 * 3 * 2, dtype=np.float32)
d_in, d_out = gpudbg.to_device(xf), gpudbg.zeros(xf.size, np.float32)
m.pipeline_double_buffer[2, 64](d_in, d_out, 3)
ok &= np.array_equal(d_out.to_host(), (xf.reshape(-1, 64)[:, ::-1] * 2 + 1).ravel())
xi = np.arange(2 * 128 * 4, dtype=np.int32)
d_in, d_out = gpudbg.to_device(xi), gpudbg.zeros(xi.size, np.int32)
m.memcpy_async_barrier[2, 128](d_in, d_out)
ok &= np.array_equal(d_out.to_host().reshape(2, 128, 4), xi.reshape(2, 128, 4)[:, ::-1, ::-1])
print("results", "ok" if ok else "WRONG")
'''


def test_correct_barrier_and_pipeline_programs_have_no_hazards(tmp_path):
    # an mbarrier phase orders the accesses on both sides of it for racecheck
    prog = tmp_path / "clean.py"
    prog.write_text(CLEAN)
    r = subprocess.run([sys.executable, "-m", "gpudbg", "check", "--tool", "racecheck", str(prog),
                        str(ROOT / "tests" / "sim" / "kernels" / "async_copy.cu")],
                       cwd=ROOT, capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert "results ok" in r.stdout, r.stdout + r.stderr
    assert r.returncode == 0 and "RACECHECK SUMMARY: 0 hazards displayed" in r.stdout, r.stdout
