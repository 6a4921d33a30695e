"""libcuda.so.1 / libcudart.so.13 loaded with ctypes into a Python process
(a Python host, like numba or cuda-python): calls reach the implementation
module named by GPUDBG_NATIVE_IMPL_*, unimplemented names answer 801,
exceptions 999, cuGetProcAddress is answered in C, threads do not deadlock,
and calls made after the interpreter finalized answer 4 without crashing.
Each case runs in a child python with a timeout."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from native_helpers import HERE, fake_env, run, run_python
from test_native_tables import recorded_lookups

PRELUDE = """
import ctypes, json, sys, threading
cuda = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
cudart = ctypes.CDLL(sys.argv[1] + "/libcudart.so.13")
out = {}
"""


def child(code: str, libdir: Path, **env: str) -> dict:
    proc = run([sys.executable, "-c", PRELUDE + code + "\nprint(json.dumps(out))", str(libdir)], env=fake_env(**env))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]) | {"stderr": proc.stderr}


def test_calls_reach_the_implementation_module(libdir: Path) -> None:
    out = child("""
v = ctypes.c_int(-1)
out["version"] = [cuda.cuDriverGetVersion(ctypes.byref(v)), v.value]
out["init"] = [cuda.cuInit(0), cuda.cuInit(3)]
p = ctypes.c_uint64()
out["alloc"] = [cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(1 << 40)), p.value]
out["launch"] = cuda.cuLaunchKernel(None, 1, 2, 3, 4, 5, 6, 7, None, None, None)
out["launch_ptsz"] = cuda.cuLaunchKernel_ptsz(None, 1, 1, 1, 1, 1, 1, 0, None, None, None)
out["memset"] = cuda.cuMemsetD8_v2(ctypes.c_uint64(2**64 - 1), ctypes.c_ubyte(255), ctypes.c_size_t(9))
import native_fake_driver
out["calls"] = native_fake_driver.calls
out["unimplemented"] = [cuda.cuStreamCreate(None, 0), cuda.cuStreamCreate(None, 0)]
out["exception"] = [cuda.cuCtxSynchronize(), cuda.cuCtxSynchronize()]
buf = ctypes.create_string_buffer(4096)
out["missing"] = [cuda.gpudbg_native_missing(buf, 4096), buf.value.decode()]
class Desc(ctypes.Structure):
    _fields_ = [("x", ctypes.c_int), ("y", ctypes.c_int), ("z", ctypes.c_int), ("w", ctypes.c_int), ("f", ctypes.c_int)]
cudart.cudaCreateChannelDesc.restype = Desc
d = cudart.cudaCreateChannelDesc(1, 2, 3, 4, 5)
out["desc"] = [d.x, d.y, d.z, d.w, d.f]
cudart.cudaGetErrorString.restype = ctypes.c_char_p
out["errstr"] = cudart.cudaGetErrorString(7).decode()
out["rt_unimplemented"] = [cudart.cudaMalloc(None, 0), cudart.cudaGetExportTable(None, None)]
""", libdir)
    assert out["version"] == [0, 13000]
    assert out["init"] == [0, 1]
    assert out["alloc"] == [0, 0x7F0000000000 + (1 << 40)]
    assert out["launch"] == 1 + 2 + 3 + 4 + 5 + 6 + 7
    assert out["launch_ptsz"] == 7
    assert out["memset"] == 0                                       # None -> 0
    assert ["cuMemsetD8_v2", 2**64 - 1, 255, 9] in out["calls"]     # pointers/u64 arrive unsigned
    assert ["cuLaunchKernel", 0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 0] in out["calls"]
    assert out["unimplemented"] == [801, 801]
    assert out["exception"] == [999, 999]
    assert out["stderr"].count("RuntimeError: this fake") == 1              # traceback printed once
    assert out["missing"] == [1, "cuStreamCreate 2\n"]
    assert out["desc"] == [1, 2, 3, 4, 5]
    assert out["errstr"] == "fake error 7"
    assert out["rt_unimplemented"] == [801, 801]


def test_cu_get_proc_address_in_c(libdir: Path) -> None:
    lookups = recorded_lookups()
    out = child(f"""
lookups = {lookups!r}
def addr(name):
    return ctypes.cast(getattr(cuda, name), ctypes.c_void_p).value
def gpa(name, version, flags):
    fn, st = ctypes.c_void_p(), ctypes.c_int(-1)
    rc = cuda.cuGetProcAddress_v2(name.encode(), ctypes.byref(fn), version, ctypes.c_uint64(flags), ctypes.byref(st))
    return rc, fn.value, st.value
bad = []
for name, version, flags, symbol in lookups:
    rc, fn, st = gpa(name, version, flags)
    want = (0, addr(symbol), 0) if symbol else (500, None, st if st in (1, 2) else -1)
    if (rc, fn, st) != want:
        bad.append([name, version, flags, symbol, rc, st])
out["bad"] = bad
out["ptds"] = gpa("cuMemcpyHtoD", 13000, 2)[1] == addr("cuMemcpyHtoD_v2_ptds")
out["legacy"] = gpa("cuMemcpyHtoD", 13000, 1)[1] == addr("cuMemcpyHtoD_v2")
out["ptsz"] = gpa("cuLaunchKernel", 13000, 2)[1] == addr("cuLaunchKernel_ptsz")
out["too_old"] = gpa("cuLogsCurrent", 12000, 0)
out["unknown"] = gpa("cuNoSuchThing", 13000, 0)
fn = ctypes.c_void_p()
out["v1"] = [cuda.cuGetProcAddress(b"cuInit", ctypes.byref(fn), 13000, ctypes.c_uint64(0)), fn.value == addr("cuInit")]
out["null"] = cuda.cuGetProcAddress_v2(None, ctypes.byref(fn), 13000, ctypes.c_uint64(0), None)
rc, f, st = gpa("cuStreamCreate", 13000, 0)
out["stub_of_unimplemented"] = [rc, ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint)(f)(None, 0)]
rc, f, st = gpa("cuDriverGetVersion", 13000, 0)
v = ctypes.c_int()
out["resolved_call"] = [ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(f)(ctypes.addressof(v)), v.value]
table = ctypes.c_void_p(1)
out["export_table"] = [cuda.cuGetExportTable(ctypes.byref(table), None), table.value]
""", libdir)
    assert out["bad"] == []
    assert out["ptds"] and out["legacy"] and out["ptsz"]
    assert out["too_old"] == [500, None, 2]
    assert out["unknown"] == [500, None, 1]
    assert out["v1"] == [0, True]
    assert out["null"] == 1
    assert out["stub_of_unimplemented"] == [0, 801]
    assert out["resolved_call"] == [0, 13000]
    assert out["export_table"] == [801, None]


def test_threads_do_not_deadlock(libdir: Path) -> None:
    out = child("""
names = []
def work(i):
    buf = ctypes.create_string_buffer(64)
    for _ in range(50):
        assert cuda.cuDeviceGetName(buf, 64, i) == 0
    names.append(buf.value.decode())
threads = [threading.Thread(target=work, args=(i,), name=f"T{i}") for i in range(4)]
for t in threads: t.start()
for t in threads: t.join(60)
out["names"] = sorted(names)
""", libdir)
    assert out["names"] == [f"gpudbg fake {i} on T{i}" for i in range(4)]


def test_registration_in_a_python_host_is_direct(libdir: Path) -> None:
    out = child("""
wrapper = (ctypes.c_uint32 * 4)(0x466243B1, 1, 0, 0)
cudart.__cudaRegisterFatBinary.restype = ctypes.c_void_p
h = cudart.__cudaRegisterFatBinary(ctypes.byref(wrapper))
cudart.__cudaRegisterFunction(ctypes.c_void_p(h), None, b"k", b"k", -1, None, None, None, None, None)
cudart.__cudaRegisterFatBinaryEnd(ctypes.c_void_p(h))
import native_fake_runtime
out["registered"] = native_fake_runtime.registered
out["cell_holds_handle"] = ctypes.c_void_p.from_address(h).value == native_fake_runtime.HANDLE
""", libdir)
    assert out["registered"] == [["fatbin", 0x466243B1], ["function", "k", -1], ["end"]]
    assert out["cell_holds_handle"]


def test_calls_after_finalization_answer_deinitialized(libdir: Path, cc: str, tmp_path: Path) -> None:
    helper = tmp_path / "liblate.so"
    build = run([cc, "-shared", "-fPIC", "-o", str(helper), str(HERE / "late_caller.c"), f"-L{libdir}",
                 f"-Wl,-rpath,{libdir}", "-lcuda"])
    assert build.returncode == 0, build.stderr
    code = f"""
import ctypes, sys
cuda = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
v = ctypes.c_int()
print("python:", cuda.cuDriverGetVersion(ctypes.byref(v)), v.value, flush=True)
late = ctypes.CDLL({str(helper)!r})
late.arm()
"""
    proc = run([sys.executable, "-c", code, str(libdir)], env=fake_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "python: 0 13000",
        "thread_local destructor: cuDriverGetVersion 4",     # after Py_FinalizeEx (Py_AtExit hook)
        "atexit: cuDriverGetVersion 4",
        "destructor: cuDriverGetVersion 4",
    ]


def test_a_missing_implementation_module_means_unimplemented(libdir: Path) -> None:
    out = child("""
v = ctypes.c_int(-1)
out["rc"] = [cuda.cuDriverGetVersion(ctypes.byref(v)), v.value, cudart.cudaGetDeviceCount(ctypes.byref(v))]
""", libdir, GPUDBG_NATIVE_IMPL_CUDA="no_such_module_anywhere", GPUDBG_NATIVE_IMPL_CUDART="no_such_module_either")
    assert out["rc"] == [801, -1, 801]
    assert "Traceback" not in out["stderr"]


def test_the_bridge_entry_contract() -> None:
    proc = run_python("""
import os
os.environ["GPUDBG_NATIVE_IMPL_CUDA"] = "native_fake_driver"
from gpudbg.native import bridge
assert bridge.entry("cuda", "cuInit").__name__ == "cuInit"
assert bridge.entry("cuda", "cuNoSuch") is None
assert bridge.entry("cuda", "calls") is None          # not callable
assert bridge.module_name("cudart") == "gpudbg.cuda_runtime.exports" or os.environ.get("GPUDBG_NATIVE_IMPL_CUDART")
print("ok")
""", env={k: v for k, v in fake_env().items() if k != "GPUDBG_NATIVE_IMPL_CUDART"})
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_cuda_bindings_finds_and_uses_the_drop_in_driver(libdir: Path) -> None:
    pytest.importorskip("cuda.bindings.driver")
    code = """
from cuda.bindings import driver
print(driver.cuInit(0)[0].value, *(int(x) for x in driver.cuDriverGetVersion()))
print(driver.cuStreamCreate(0)[0].value)
"""
    env = fake_env(LD_LIBRARY_PATH=os.pathsep.join(filter(None, [str(libdir), os.environ.get("LD_LIBRARY_PATH")])))
    proc = run_python(code, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0", "0", "13000", "801"]
