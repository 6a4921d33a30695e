"""LLVM through llvmlite: one place that turns an LLVM IR module into
callable machine code for this host.

The one idea: a module is optimized and emitted as an object file for
the host CPU, and that object file is what gets loaded into one
process-wide MCJIT engine; so the object bytes are a complete, cacheable
result of compilation (sim/native/code_cache.py keeps them on disk) and a
cached module loads without LLVM optimizing anything. Functions are
returned as ctypes function pointers that take the segment ABI of
sim/native/emit.py.

Two pipelines, chosen by the module's size (PIPELINES): a module of up to
QUICK_LINES lines of IR (every anchor kernel) gets the new pass manager's
-O3, whose non-trivial loop unswitching takes the checks that depend only
on the launch (a kernel parameter's bounds, which block-index formula the
block shape allows) out of the thread loop: saxpy 2^22 ran 16% faster than
at -O2, reduction 14%, matmul 7%, histogram 8% (CPU time, same run), for
0.15-0.37 s of cold compile per anchor kernel then; a larger one (a long
unrolled kernel) gets a short function pipeline of the passes our emitted
code needs (SROA for the register slots and access caches, InstCombine,
SimplifyCFG, GVN, ADCE), because -O2's time grows faster than the code while its extra passes find little in
straight-line segment code: on the benchmark's 1,224-instruction kernel
-O2 took 0.8-0.9 s before code generation, the short pipeline 0.1 s, and
its code ran as fast within this shared machine's noise (best of 7
launches of 2^18 threads: 0.104 s at -O2, 0.111 s quick).

The -O3 pipeline runs with LLVM's loop-unswitching threshold raised
(UNSWITCH_THRESHOLD, a process-wide LLVM option set with the target): a
segment's thread loop tests per thread what is fixed for the whole call
(an index array or none, whether the block shape lets a slot's block and
thread index come from a shift and a mask), and at LLVM's default of 50
only small loops got a copy per case. At 1,000, with those tests
emitted as branches (special.py), saxpy 2^22 ran 6% faster (18.6 ms per
launch against 19.7, alternating in one session) and reduction 2^22 9%
(34.1 against 37.3); the anchor kernels' LLVM time grew from 0.05-0.3 s
to 0.1-0.5 s.

QUICK_LINES is 4,500: the reduction's module grew to 4,054 lines with
the recomputed registers (remat.py) and the flag-skipping helper
(second_pass.next_flagged_group), and on the quick pipeline it ran 46 ms
per launch against 27 at -O3. Its cold compile is now 0.8 s of LLVM (it
was 0.54 s at 3,641 lines: each recomputed thread index adds a
block-shape branch that unswitching copies). The n-body step (4,677
lines) stays on the quick pipeline: -O3 took 0.53 s there for 5-10%.

What it deliberately does not do: unload code (modules live as long as the
process; a kernel's code is small and reused across launches) or compile
for any CPU but the host's (the object bytes are keyed by the CPU name and
features).
"""
from __future__ import annotations

import ctypes
import threading

import llvmlite
import llvmlite.binding as llvm

# i64 segment(i64* regs, i64* idx, i64 n, i64* env)
SEGMENT_SIGNATURE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                                     ctypes.c_int64, ctypes.c_void_p)

_lock = threading.Lock()
_state: dict = {}


def _target():
    """(target machine, engine) made once per process."""
    st = _state
    if not st:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        target = llvm.Target.from_default_triple()
        tm = target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                          features=llvm.get_host_cpu_features().flatten(),
                                          opt=2, reloc="pic", codemodel="default")
        llvm.set_option("", f"-unswitch-threshold={UNSWITCH_THRESHOLD}")
        backing = llvm.parse_assembly("")
        backing.triple = tm.triple
        st["tm"] = tm
        st["engine"] = llvm.create_mcjit_compiler(backing, tm)
    return st["tm"], st["engine"]


def host_key() -> str:
    """What compiled object code depends on besides the IR: llvmlite/LLVM
    versions and the host CPU (name and features)."""
    return "|".join((llvmlite.__version__, ".".join(map(str, llvm.llvm_version_info)),
                     llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()))


UNSWITCH_THRESHOLD = 1000   # SimpleLoopUnswitch's cost limit in the -O3 pipeline (module docstring)
QUICK_LINES = 4500      # a module with more lines of IR gets the quick pipeline
# the quick pipeline: function passes in order (llvmlite's add_<name>_pass)
QUICK_PASSES = ("sroa", "instruction_combine", "simplify_cfg", "new_gvn", "aggressive_dce",
                "simplify_cfg")
PIPELINES = ("O3", "quick")


def pipeline_for(ir_text: str) -> str:
    """The pipeline a module gets (see the module docstring)."""
    return "quick" if ir_text.count("\n") > QUICK_LINES else "O3"


def compile_object(ir_text: str) -> bytes:
    """Optimize and emit one module as host object code."""
    pipeline = pipeline_for(ir_text)
    with _lock:
        tm, _ = _target()
        mod = llvm.parse_assembly(ir_text)
        mod.triple = tm.triple
        mod.data_layout = str(tm.target_data)
        mod.verify()
        if pipeline == "O3":
            pto = llvm.create_pipeline_tuning_options(speed_level=3)
            pb = llvm.create_pass_builder(tm, pto)
            pb.getModulePassManager().run(mod, pb)
        else:
            pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=1))
            fpm = llvm.create_new_function_pass_manager()
            for name in QUICK_PASSES:
                getattr(fpm, f"add_{name}_pass")()
            for fn in mod.functions:
                if not fn.is_declaration:
                    fpm.run(fn, pb)
        return tm.emit_object(mod)


def load_object(obj: bytes, names: list[str]) -> dict[str, int]:
    """Load object code into the process's engine; the addresses of `names`."""
    with _lock:
        _, engine = _target()
        engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        engine.finalize_object()
        out = {}
        for name in names:
            addr = engine.get_function_address(name)
            if not addr:
                raise RuntimeError(f"native code: symbol {name} missing from the loaded object")
            out[name] = addr
        return out


def segment_function(address: int):
    """The ctypes callable of a segment at `address`."""
    return SEGMENT_SIGNATURE(address)
