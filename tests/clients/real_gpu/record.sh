#!/usr/bin/env bash
# Records how the test programs in ../programs behave on a real NVIDIA GPU
# (NVIDIA's own libcuda/libcudart), so the drop-in tests compare against
# measured behaviour: outputs, compute-sanitizer's report of oob.cu, the
# driver's error names/strings and device attributes. Run on a GPU machine
# from the repo root with OUT set to a folder for the results.
set -u
P=tests/clients/programs
mkdir -p "$OUT" /tmp/bin
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nvcc --version | tail -1
  for prog in vecadd reduce streams symbol oob; do
    nvcc -cudart shared -gencode arch=compute_80,code=compute_80 -o /tmp/bin/$prog $P/$prog.cu || echo "nvcc $prog failed"
    echo "== $prog"; /tmp/bin/$prog; echo "exit status $?"
  done
  for script in numba_kernels numba_oob cuda_python_saxpy cuda_core_saxpy; do
    echo "== $script.py"; timeout 120 python3 $P/$script.py 2>&1 | tail -5; echo "exit status ${PIPESTATUS[0]}"
  done
} > "$OUT/programs.txt" 2>&1
compute-sanitizer /tmp/bin/oob > "$OUT/sanitizer_oob_cu.txt" 2>&1; echo "exit status $?" >> "$OUT/sanitizer_oob_cu.txt"
timeout 180 compute-sanitizer python3 $P/numba_oob.py > "$OUT/sanitizer_numba_oob.txt" 2>&1; echo "exit status $?" >> "$OUT/sanitizer_numba_oob.txt"
python3 - > "$OUT/driver_facts.json" 2>"$OUT/driver_facts.err" <<'PY'
import json
from cuda.bindings import driver as d
d.cuInit(0)
errors = {}
for code in d.CUresult:
    _, name = d.cuGetErrorName(code)
    _, text = d.cuGetErrorString(code)
    errors[int(code)] = [name.decode() if name else None, text.decode() if text else None]
attrs = {}
for a in d.CUdevice_attribute:
    err, v = d.cuDeviceGetAttribute(a, 0)
    attrs[a.name] = int(v) if err == d.CUresult.CUDA_SUCCESS else f"error {int(err)}"
_, ver = d.cuDriverGetVersion()
print(json.dumps({"driver_version": ver, "errors": errors, "attributes": attrs}, indent=1))
PY
