"""What one process does in the code cache's multi-process tests: run a
kernel under the native engine with a given cache directory and say how
many modules it compiled (LLVM), how many it found on disk and how many
times it planned segments (a warm load plans nothing).

Run by multiprocessing (spawn: a fresh interpreter, so nothing is already
loaded in-process) or as a script. `store_barrier` makes every compiling
process finish compiling before any of them writes its entry, so the
writers really race on the same file.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

KERNEL = """.version 8.0
.target sm_80
.address_size 64
.visible .entry scale(.param .u64 x, .param .u32 k)
{{
    .reg .b32 %r<6>; .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [x];
    ld.param.u32 %r1, [k];
    mov.u32 %r2, %tid.x;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u32 %r3, [%rd3];
    mul.lo.u32 %r4, %r3, %r1;
    add.u32 %r5, %r4, {salt};
    st.global.u32 [%rd3], %r5;
    ret;
}}
"""


def kernel(salt: int) -> str:
    """A small kernel whose program key differs per salt (a fresh entry)."""
    return KERNEL.format(salt=salt)


def run_native(cache_dir: str, salt: int, store_barrier=None) -> dict:
    """Run kernel(salt) natively; counts of compiles and disk hits, the
    result's correctness and the number of compiled segments."""
    saved = {k: os.environ.get(k) for k in ("GPUDBG_CACHE_DIR", "GPUDBG_ENGINE", "GPUDBG_NATIVE_CACHE")}
    os.environ["GPUDBG_CACHE_DIR"] = cache_dir
    os.environ["GPUDBG_ENGINE"] = "native"
    os.environ.pop("GPUDBG_NATIVE_CACHE", None)
    try:
        return _counted_run(salt, store_barrier)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _counted_run(salt: int, store_barrier) -> dict:
    import numpy as np

    from gpudbg.sim.native import code_cache, jit, segments
    from engines_pair import run

    counts = {"compiled": 0, "hits": 0, "planned": 0}
    compile_object, load, store = jit.compile_object, code_cache.load, code_cache.store
    plan_segments = segments.plan_segments

    def counting_plan(program, *a, **k):
        counts["planned"] += 1
        return plan_segments(program, *a, **k)

    def counting_compile(ir_text):
        counts["compiled"] += 1
        return compile_object(ir_text)

    def counting_load(key):
        got = load(key)
        counts["hits"] += got is not None
        return got

    def waiting_store(key, payload):
        if store_barrier is not None:
            store_barrier.wait(timeout=300)
        return store(key, payload)

    jit.compile_object, code_cache.load, code_cache.store = counting_compile, counting_load, waiting_store
    segments.plan_segments = counting_plan
    try:
        x = np.arange(64, dtype=np.uint32)
        r = run(kernel(salt), "scale", (1,), (64,), [x, 3])
    finally:
        jit.compile_object, code_cache.load, code_cache.store = compile_object, load, store
        segments.plan_segments = plan_segments
    counts["correct"] = bool(np.array_equal(r[0], x * 3 + salt))
    counts["segments"] = int(r.module.program.native_segments)
    return counts


def _queue_run(queue, cache_dir, salt, barrier):
    try:
        queue.put(run_native(cache_dir, salt, barrier))
    except BaseException as e:       # the parent reports the child's failure
        queue.put({"error": f"{type(e).__name__}: {e}"})


if __name__ == "__main__":
    import json
    print(json.dumps(run_native(sys.argv[1], int(sys.argv[2]))))
