"""Fuzz target: every public mc* function, and random call sequences.

Two phases alternate in rounds, on one or several threads:
- calls: a random public mc* function (found in gpudbg.runtime.mc) with
  random arguments: per parameter a value of the right kind (read from the
  function's annotated kinds: a live pointer, a stream, an enum member, a
  small size, a host array) or a wrong one (ints huge, negative or of 5000
  digits, floats, None, strings with NULs, bytes, numpy arrays of odd
  dtypes including object, strided and read-only ones, nested and
  self-referencing lists, infinite iterators, objects whose methods raise,
  stale handles of destroyed objects, callables that raise), sometimes with
  an argument too many or too few;
- sequences: valid alloc / memset / copy / launch / event / stream / free
  programs over a few buffers, each buffer used on its own stream (events
  order cross-stream copies), with a shadow model of every buffer's bytes.
Invariants: no exception escapes an mc* call ("escaped": function,
exception type, message), and the call convention holds; an
mcErrorUnknown that names a gpudbg bug is a violation; a sequence's data
reads back as its model says, and its calls succeed unless the context
holds a sticky device fault another thread's random calls caused (a
random call may fault the device as CUDA lets it, and the sticky error
is every thread's; a fault on the sequence's own streams is never
excused); with several threads a freed address is not reused as a
stale value (the allocator gives it to another thread); at each round's
end (all threads at a barrier) mcDeviceSynchronize succeeds unless the device really faulted (a
sticky error needs a kernel's fault report or a copy engine's memory
fault), the simulator recorded no internal error, every capture a thread
began can be ended, the context still works (a health check: load,
malloc, copy, launch, read back), and after mcDeviceReset the free device
memory (mcMemGetInfo) is back at its starting value; with one thread, once
a sequence freed what it made, free memory is what it was before it.
GPUDBG_HANG_TIMEOUT is HANG_SECONDS during a run, so a hang (a wait that
can never be satisfied) is reported in seconds.

Determinism: each thread draws from random.Random(f"{seed}:{index}"), so
one thread's calls are a function of the seed (timing can still change an
answer such as mcErrorNotReady); a time box only decides how many.
What it does not do: minimize, or survive a real crash (the supervisor
fuzz/run.py runs it in child processes for that); a hang is reported (the
round's barrier times out) but its thread cannot be stopped. The values
live in fuzz/_api_values.py.

    run(seconds, seed, threads=1) -> {"target": "api", "calls": N,
        "sequences": M, "escaped": [...], "violations": [...]}
"""
from __future__ import annotations

import collections
import inspect
import os
import random
import re
import tempfile
import threading
import time
from typing import Any, Callable

import numpy as np

from fuzz._api_values import (BIG, FREES, JIT_ARGS, OUTPUT_KINDS, PTX, Kinds, Pool, as_int, device_fault,
                               functions, jit_options, junk, tame, waited_on)

TARGET = "api"
MAX_RECORDED = 200
ROUND_CALLS = 150            # random calls per thread per round
HISTORY = 60                 # recent calls of each thread quoted with a round's violations
HANG_SECONDS = 10.0          # GPUDBG_HANG_TIMEOUT during a run: no valid call waits that long
SLOW_SECONDS = 5.0           # a call slower than this is reported under "slow"
BARRIER_SECONDS = 120.0      # a thread that does not reach the round's end by then is hung

# functions whose valid use can block a stream forever or tear down what
# other threads use: drawn less often (and see _api_values.tame)
RARE = {"mcDeviceReset": 0.05, "mcSetDevice": 0.3, "mcSetValidDevices": 0.3, "mcStreamBeginCapture": 0.3,
        "mcThreadExchangeStreamCaptureMode": 0.3}


# ---------------------------------------------------------------- results
class Findings:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls = 0
        self.sequences = 0
        self.escaped: list[dict] = []
        self.violations: list[dict] = []
        self.slow: list[dict] = []
        self._seen: set = set()

    def add(self, bucket: list, key: Any, item: dict) -> None:
        with self.lock:
            if key in self._seen or len(bucket) >= MAX_RECORDED:
                return
            self._seen.add(key)
            bucket.append(item)

    def escape(self, name: str, e: BaseException, args: str) -> None:
        self.add(self.escaped, ("e", name, type(e).__name__),
                 {"function": name, "exception": type(e).__name__, "message": _text(e)[:300], "args": args})

    def violate(self, kind: str, detail: str, key: Any = None, history: list | None = None) -> None:
        item = {"kind": kind, "detail": detail[:1200]}
        if history:
            item["recent calls"] = history
        self.add(self.violations, ("v", kind, key if key is not None else detail[:80]), item)


def _text(e: BaseException) -> str:
    try:
        return str(e)
    except Exception:
        return "(unprintable)"


def _short(v: Any) -> str:
    from gpudbg.runtime.api._args import show
    return show(v)


# ---------------------------------------------------------------- one worker thread
class Worker:
    def __init__(self, index: int, seed: int, run: "Run") -> None:
        from gpudbg.driver.event import Event
        from gpudbg.driver.graph import Graph, GraphExec
        from gpudbg.driver.linker import LinkState
        from gpudbg.driver.mempool import ImportedPool, MemPool
        from gpudbg.driver.module import Function, Module
        from gpudbg.driver.stream import Stream
        self.index = index
        self.rng = random.Random(f"{seed}:{index}")
        self.run = run
        self.pool = Pool(run.tmpdir, private_addresses=run.threads == 1)
        self.ptx_path = run.ptx_path
        self.handle_kinds = [(Stream, "stream"), (Event, "event"), (Module, "module"), (Function, "function"),
                             (LinkState, "link"), (MemPool, "pool"), (ImportedPool, "pool"), (Graph, "graph"),
                             (GraphExec, "exec")]
        self.current = ""          # the call in progress (for hang reports)
        self.history: collections.deque = collections.deque(maxlen=HISTORY)   # recent calls, for reports
        self.callback = lambda *a: None
        self.wait_word = 0
        self.capture_stream: Any = None

    # ---------------------------------------------------------- calling
    def call(self, name: str, fn: Callable, args: list, kwargs: dict | None = None) -> tuple | None:
        """One mc* call, checked for escapes and the convention."""
        from gpudbg.runtime import mc
        from gpudbg.runtime.errors import mcError_t
        self.current = name
        f = self.run.findings
        t0 = time.monotonic()
        try:
            out = fn(*args, **(kwargs or {}))
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:
            f.escape(name, e, ", ".join(_short(a) for a in args))
            return None
        finally:
            took = time.monotonic() - t0
            with f.lock:
                f.calls += 1
            if took > SLOW_SECONDS:
                f.add(f.slow, ("s", name), {"function": name, "seconds": round(took, 1),
                                            "args": ", ".join(_short(a) for a in args)})
            self.current = ""
        self.history.append(f"{name}({', '.join(_short(a) for a in args)[:200]}) -> "
                            f"{_short(out[0]) if isinstance(out, tuple) and out else _short(out)}")
        if not isinstance(out, tuple) or not out or not isinstance(out[0], (int, np.integer)):
            f.violate("convention", f"{name} returned {_short(out)}, not (err, *outputs)", name)
            return None
        if int(out[0]) == mcError_t.mcErrorUnknown and name not in ("mcGetErrorName", "mcGetErrorString",
                                                                      "mcGetLastError", "mcPeekAtLastError"):
            msg = mc.last_error_message()
            if "gpudbg bug" in msg:
                f.violate("internal error", f"{name}({', '.join(_short(a) for a in args)}): {msg}",
                          (name, msg.split("(", 1)[-1][:60]))
        return out

    # ---------------------------------------------------------- random calls
    def random_call(self, funcs: list, kinds: Kinds) -> None:
        rng, pool = self.rng, self.pool
        name, fn, plan = rng.choice(funcs)
        if name in RARE and rng.random() > RARE[name]:
            return
        if self.run.threads > 1 and name in ("mcDeviceReset", "mcSetValidDevices"):
            return
        right = rng.random() < 0.85          # mostly valid, with a wrong value or two
        if plan is not None:
            params = [(p.name, p.kind) for p in plan.params]
        else:
            params = [(p, None) for p in inspect.signature(fn).parameters]
        args = []
        for pname, kind in params:
            good = kind is not None and (rng.random() < 0.8 if right else rng.random() < 0.3)
            args.append(kinds.value(rng, kind, pname, pool, self) if good else junk(rng, pool))
        r = rng.random()
        if r < 0.03:
            args.append(junk(rng, pool))
        elif r < 0.06 and args:
            args.pop()
        if name in JIT_ARGS and rng.random() < 0.5:
            i = JIT_ARGS[name]
            if len(args) >= i + 3:
                args[i:i + 3] = jit_options(rng)
        args = tame(name, args, pool, self)
        if args is None:
            return
        out = self.call(name, fn, args)
        if out is not None and int(out[0]) == 0:
            self.keep(name, args, out)

    def keep(self, name: str, args: list, out: tuple) -> None:
        from gpudbg.runtime import mc
        pool = self.pool
        kind = OUTPUT_KINDS.get(name)
        if kind is not None and len(out) > 1:
            value = out[1]
            size = as_int(args[0]) if args else 0
            if kind in ("dptr", "hptr", "mptr", "aptr") and size > BIG:
                free = {"hptr": mc.mcFreeHost, "aptr": mc.mcFreeAsync}.get(kind, mc.mcFree)
                self.call(free.__name__, free, [value])
                return
            if kind == "vmm" or kind == "va":
                return
            pool.put(kind, value)
        if name in FREES and args:
            pool.retire(args[0])
        if name == "mcHostRegister" and args:
            pool.registered.append(args[0])
        if name == "mcStreamBeginCapture" and args:
            pool.put("capturing", args[0])

    # ---------------------------------------------------------- sequences
    def sequence(self) -> None:
        """A valid program over a few buffers with a shadow model of their bytes."""
        from gpudbg.runtime import mc
        rng, f = self.rng, self.run.findings
        H2D, D2H = int(mc.mcMemcpyKind.mcMemcpyHostToDevice), int(mc.mcMemcpyKind.mcMemcpyDeviceToHost)
        D2D = int(mc.mcMemcpyKind.mcMemcpyDeviceToDevice)
        streams, bufs, events = [], [], []
        alone = self.run.threads == 1
        before = mc.mcMemGetInfo()[1] if alone else None
        module = fn = None

        def ok(name: str, *args: Any) -> tuple | None:
            out = self.call(name, getattr(mc, name), list(args))
            if out is None:
                return None
            if int(out[0]) != 0:
                raise _SequenceFailed(name, int(out[0]), mc.last_error_message())
            return out

        try:
            module = ok("mcModuleLoadData", PTX)[1]          # its own: no other call knows it
            fn = ok("mcModuleGetFunction", module, "fill")[1]
            for _ in range(rng.randrange(1, 3)):
                streams.append(ok("mcStreamCreateWithFlags", rng.choice((0, 1)))[1])
            for _ in range(rng.randrange(1, 4)):
                size = rng.choice((256, 512, 1024))
                ptr = ok(rng.choice(("mcMalloc", "mcMalloc", "mcMallocManaged")), size)[1]
                bufs.append([ptr, np.zeros(size, np.uint8), rng.choice(streams + [None])])
            for _ in range(rng.randrange(3, 12)):
                op = rng.randrange(6)
                b = rng.choice(bufs)
                ptr, model, s = b
                if op == 0:
                    v = rng.randrange(256)
                    ok("mcMemsetAsync", ptr, v, len(model), s)
                    model[:] = v
                elif op == 1:
                    data = np.frombuffer(rng.randbytes(len(model)), np.uint8).copy()
                    ok("mcMemcpyAsync", ptr, data, len(model), H2D, s)
                    model[:] = data
                elif op == 2:
                    v = rng.randrange(1 << 32)
                    n = len(model) // 4
                    ok("mcLaunchKernel", fn, n // 32, 32, [ptr, v], 0, s)
                    model[:n * 4] = np.frombuffer(np.full(n, v, np.uint32).tobytes(), np.uint8)
                elif op == 3:
                    src = rng.choice(bufs)
                    n = min(len(src[1]), len(model))
                    e = ok("mcEventCreateWithFlags", rng.choice((0, 2)))[1]
                    events.append(e)
                    ok("mcEventRecord", e, src[2])
                    ok("mcStreamWaitEvent", s, e, 0)
                    ok("mcMemcpyAsync", ptr, src[0], n, D2D, s)
                    back = ok("mcEventCreateWithFlags", 2)[1]      # src's later work waits for the copy
                    events.append(back)
                    ok("mcEventRecord", back, s)
                    ok("mcStreamWaitEvent", src[2], back, 0)
                    if src is not b:
                        model[:n] = src[1][:n]
                elif op == 4:
                    ok("mcLaunchHostFunc", s if s is not None else 0, self.callback, None)
                else:
                    host = np.zeros(len(model), np.uint8)
                    ok("mcMemcpyAsync", host, ptr, len(model), D2H, s)
                    ok("mcStreamSynchronize", s)
                    if not np.array_equal(host, model):
                        f.violate("data", f"a sequence read back other bytes than it wrote "
                                          f"({int(np.count_nonzero(host != model))} of {len(model)} differ)")
            ok("mcDeviceSynchronize")
            for ptr, model, _s in bufs:
                host = np.zeros(len(model), np.uint8)
                ok("mcMemcpy", host, ptr, len(model), D2H)
                if not np.array_equal(host, model):
                    f.violate("data", f"after synchronizing, a buffer holds other bytes than the program "
                                      f"wrote ({int(np.count_nonzero(host != model))} of {len(model)} differ)")
        except _SequenceFailed as e:
            if not self.run.sticky_is_legit(e, streams):
                f.violate("sequence", f"{e.name} failed with {e.code} in a valid sequence: {e.message}",
                          (e.name, e.code))
        finally:
            for ptr, _m, _s in bufs:
                self.call("mcFree", mc.mcFree, [ptr])
            for e in events:
                self.call("mcEventDestroy", mc.mcEventDestroy, [e])
            for s in streams:
                self.call("mcStreamDestroy", mc.mcStreamDestroy, [s])
            if module is not None:
                self.call("mcModuleUnload", mc.mcModuleUnload, [module])
            if alone and mc.mcDeviceSynchronize()[0] == 0:
                after = mc.mcMemGetInfo()[1]
                if after != before:
                    f.violate("memory accounting", f"free device memory is {after} after a sequence freed "
                                                   f"everything it made, it was {before} before", "sequence")
            with f.lock:
                f.sequences += 1

    def end_captures(self) -> None:
        """End every capture this thread may have begun (on either device),
        as a program must before it synchronizes."""
        from gpudbg.runtime import mc
        from gpudbg.runtime.stream_types import mcStreamCaptureStatus as St
        self.call("mcThreadExchangeStreamCaptureMode", mc.mcThreadExchangeStreamCaptureMode, [0])
        streams = [0, 1, 2, self.capture_stream] + list(self.pool.live.get("stream", [])) \
            + list(self.pool.live.get("capturing", []))
        for d in range(self.run.devices):
            self.call("mcSetDevice", mc.mcSetDevice, [d])
            for s in streams:
                out = self.call("mcStreamIsCapturing", mc.mcStreamIsCapturing, [s]) or (1,)
                if out[0] == 0 and out[1] is not St.mcStreamCaptureStatusNone:
                    self.call("mcStreamEndCapture", mc.mcStreamEndCapture, [s])
        self.call("mcSetDevice", mc.mcSetDevice, [0])
        from gpudbg.driver import capture
        me = threading.get_ident()
        with capture._lock:
            left = [c for c in capture._active if c.thread == me and c.origin.context.sticky is None
                    and not c.origin.context.destroyed    # a faulted context cannot end anything
                    and c.status is capture.Status.CU_STREAM_CAPTURE_STATUS_ACTIVE]   # (one that blocks calls)
        if left:
            self.run.findings.violate("capture left active", f"{left[0]!r} is still active after "
                                      f"mcStreamEndCapture on every stream of this thread", "capture left",
                                      [f"[{self.index}] {h}" for h in self.history])

    # ---------------------------------------------------------- the loop
    def loop(self, deadline: float, funcs: list, kinds: Kinds) -> None:
        try:
            while True:
                go = self.run.barrier_wait(self)
                if not go:
                    return
                self.sequence()
                n = ROUND_CALLS if time.monotonic() < deadline else 0
                for _ in range(n):
                    self.random_call(funcs, kinds)
                    if time.monotonic() > deadline:
                        break
                self.end_captures()
        except threading.BrokenBarrierError:
            return


class _SequenceFailed(Exception):
    def __init__(self, name: str, code: int, message: str) -> None:
        super().__init__(name)
        self.name, self.code, self.message = name, code, message


# ---------------------------------------------------------------- the run and its rounds
class Run:
    def __init__(self, seconds: float, seed: int, threads: int) -> None:
        self.seconds, self.seed, self.threads = seconds, seed, threads
        self.findings = Findings()
        self.tmp = tempfile.TemporaryDirectory(prefix="gpudbg-fuzz-api-")
        self.tmpdir = self.tmp.name
        self.ptx_path = os.path.join(self.tmpdir, "fill.ptx")
        with open(self.ptx_path, "w") as fh:
            fh.write(PTX)
        self.baseline: list[int] = []
        self.workers: list[Worker] = []
        self.stop = False
        self.barrier = threading.Barrier(threads, action=self.round_end, timeout=BARRIER_SECONDS)
        self.deadline = 0.0

    def sticky_is_legit(self, e: _SequenceFailed, own_streams: list) -> bool:
        """Whether a sequence call failed only because the context holds a
        sticky error from a device fault that another thread's random calls
        caused. Sticky errors are the context's, so every thread gets them;
        and a random call may fault the device as CUDA lets it: a kernel
        out of bounds, or a copy engine or pool command touching a
        stream-ordered block before its allocation or after its free ran
        in stream order ("must not be accessed until the allocation
        operation completes", cuMemAllocAsync). The same faults round_end
        accepts (device_fault). A fault of a command on one of the
        sequence's own streams is never excused: those touch only the
        sequence's live buffers."""
        from gpudbg.driver.engine import get_engine
        sticky = get_engine().current_context().sticky
        if sticky is None or sticky.message not in e.message or not device_fault(sticky.message):
            return False
        on = re.match(r"[A-Z0-9_]+ on (\S+): ", sticky.message)       # "MEMSET on ctx3.s7: ..."
        return on is None or on.group(1) not in {s.channel.name for s in own_streams}

    def _free(self) -> list[int]:
        from gpudbg.runtime import mc
        out = []
        for d in range(self.devices):
            mc.mcSetDevice(d)
            out.append(mc.mcMemGetInfo()[1])
        mc.mcSetDevice(0)
        return out

    def _load(self) -> None:
        """Each thread's module (random calls may unload it) and wait word."""
        from gpudbg.runtime import mc
        for w in self.workers:
            err, m = mc.mcModuleLoadData(PTX)
            if err == 0:
                w.pool.put("module", m)
                w.pool.put("function", mc.mcModuleGetFunction(m, "fill")[1])
            err, w.capture_stream = mc.mcStreamCreateWithFlags(1)     # never in a pool either
            err, w.wait_word = mc.mcMallocHost(8)     # never in a pool: nothing writes it, it stays 0
            mc.host_view(w.wait_word, 8)[:] = 0

    def health(self, device: int) -> str | None:
        """Why the current context does not work (None when it does)."""
        from gpudbg.runtime import mc
        err, m = mc.mcModuleLoadData(PTX)
        if err:
            return f"mcModuleLoadData: {err!r} {mc.last_error_message()}"
        fn = mc.mcModuleGetFunction(m, "fill")[1]
        err, p = mc.mcMalloc(256)
        if err:
            return f"mcMalloc: {err!r} {mc.last_error_message()}"
        host = np.zeros(64, np.uint32)
        steps = ((mc.mcMemcpy, (p, np.arange(64, dtype=np.uint32), 256, 1)), (mc.mcLaunchKernel, (fn, 1, 32, [p, 9])),
                 (mc.mcDeviceSynchronize, ()), (mc.mcMemcpy, (host, p, 256, 2)), (mc.mcFree, (p,)),
                 (mc.mcModuleUnload, (m,)))
        for call, args in steps:
            err = call(*args)[0]
            if err:
                return f"{call.__name__}: {err!r} {mc.last_error_message()}"
        if not (host[:32] == 9).all() or not (host[32:] == np.arange(32, 64)).all():
            return "the health check's kernel did not write what it should"
        return None

    def round_end(self) -> None:
        """All threads stopped: check the invariants, reset, decide whether to go on."""
        from gpudbg.driver.engine import get_engine
        from gpudbg.runtime import mc
        f = self.findings
        try:
            sticky, failed = [], []
            for d in range(self.devices):
                mc.mcSetDevice(d)
                err = mc.mcDeviceSynchronize()[0]
                if not err:
                    continue
                msg = mc.last_error_message()
                if mc.mcMalloc(1)[0] == err:           # every call fails alike: a sticky error
                    sticky.append(d)
                    if not device_fault(msg):
                        f.violate("sticky error without a device fault",
                                  f"device {d}: {err!r}: {msg} {waited_on(msg)}", err, self.recent())
                else:
                    failed.append((d, err, msg))
            for d in sticky:                            # a broken context may block the others (a capture)
                mc.mcSetDevice(d)
                mc.mcDeviceReset()
            for d, err, msg in failed:
                mc.mcSetDevice(d)
                again = mc.mcDeviceSynchronize()[0]
                if again:
                    f.violate("synchronize failed", f"device {d}: mcDeviceSynchronize gave {again!r} without "
                                                    f"a sticky error: {mc.last_error_message()}", again,
                              self.recent())
            for d in range(self.devices):
                mc.mcSetDevice(d)
                if d not in sticky:
                    why = self.health(d)
                    if why is not None:
                        f.violate("context broken by non-sticky errors", f"device {d}: {why}", why[:40],
                                  self.recent())
                gpu = get_engine().current_device().gpu
                if getattr(gpu, "internal_errors", None):
                    f.violate("internal simulator error", f"device {d}: {_text(gpu.internal_errors[0])[:300]}",
                              type(gpu.internal_errors[0]).__name__, self.recent())
                    gpu.internal_errors.clear()
                mc.mcDeviceReset()
            free = self._free()
            if self.baseline and free != self.baseline:
                f.violate("memory accounting", f"free device memory after a reset is {free}, it was "
                                               f"{self.baseline} at the start; still allocated: "
                                               f"{self._leftovers()}", tuple(free), self.recent())
                self.baseline = free
            for w in self.workers:
                w.pool.retire_all()
            self._load()
        except BaseException as e:      # the checks themselves must never take the run down
            f.escape("round end", e, "")
        if time.monotonic() >= self.deadline:
            self.stop = True

    def _leftovers(self) -> list[str]:
        """The charged allocations live on the devices (after a reset: a leak)."""
        from gpudbg.driver.engine import get_engine
        out = []
        for dev in get_engine().devices:
            if dev.gpu_started:
                out += [f"dev{dev.ordinal}: {a.kind.value} {a.size} B '{a.label}'"
                        for a in dev.gpu.memory.allocations() if getattr(a, "charged", False)]
        return out[:20]

    def recent(self) -> list[str]:
        return [f"[{w.index}] {h}" for w in self.workers for h in w.history]

    def barrier_wait(self, w: Worker) -> bool:
        self.barrier.wait()
        return not self.stop


def run(seconds: float, seed: int, threads: int = 1) -> dict:
    """Fuzz the mc* API for about `seconds` (see the module docstring)."""
    hang_env = os.environ.get("GPUDBG_HANG_TIMEOUT")
    os.environ["GPUDBG_HANG_TIMEOUT"] = hang_env or str(HANG_SECONDS)   # a hang shows in seconds, not a minute
    try:
        return _run(seconds, seed, threads)
    finally:
        if hang_env is None:
            os.environ.pop("GPUDBG_HANG_TIMEOUT", None)


def _run(seconds: float, seed: int, threads: int) -> dict:
    from gpudbg.driver.engine import reset_engine
    from gpudbg.runtime import mc
    reset_engine(num_devices=2)
    r = Run(seconds, seed, max(1, int(threads)))
    r.devices = mc.mcGetDeviceCount()[1] or 1
    start = time.monotonic()
    r.deadline = start + seconds
    for d in range(r.devices):
        mc.mcSetDevice(d)
        mc.mcDeviceReset()
    r.baseline = r._free()
    funcs = functions()
    kinds = Kinds()
    r.workers = [Worker(i, seed, r) for i in range(r.threads)]
    r._load()
    ts = [threading.Thread(target=w.loop, args=(r.deadline, funcs, kinds), daemon=True,
                           name=f"fuzz-api-{w.index}") for w in r.workers]
    for t in ts:
        t.start()
    for t in ts:
        t.join(max(1.0, r.deadline - time.monotonic()) + BARRIER_SECONDS + 30)
    hung = [w for w, t in zip(r.workers, ts) if t.is_alive()]
    for w in hung:
        r.findings.violate("hang", f"thread {w.index} did not finish (in {w.current or 'between calls'})",
                           w.current)
    if not hung:
        r.tmp.cleanup()
        reset_engine()
    f = r.findings
    return {"target": TARGET, "calls": f.calls, "sequences": f.sequences, "escaped": f.escaped,
            "violations": f.violations, "slow": f.slow, "seconds": round(time.monotonic() - start, 1), "seed": seed,
            "threads": r.threads, "functions": len(funcs)}


if __name__ == "__main__":
    import argparse
    import json
    ap = argparse.ArgumentParser(description="fuzz the mc* API")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    print(json.dumps(run(a.seconds, a.seed, a.threads), indent=2, default=str))
