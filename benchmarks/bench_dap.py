"""DAP round trip on a big stopped grid: `stackTrace` + `scopes` +
`variables` (the three requests an editor sends at every stop and every
step), through the real protocol.

A 1M-thread grid (4096 blocks x 256 threads) of a -G kernel stops at a
breakpoint under `gpudbg dap` (a subprocess on stdio, framed messages
from a client in this process); the three requests are then sent back to
back, REPEAT times, and the median round trip is printed with the target.
The focus lane's Locals are what `variables` reads. Setup (compile,
launch, run to the breakpoint) is timed too, but separately.

    python benchmarks/bench_dap.py [--blocks 4096] [--threads 256] [--repeat 50]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpudbg.dap.framing import Reader, Writer

TARGET_MS = 100.0

HOST = r'''
import sys
import numpy as np
import gpudbg

SRC = r"""
extern "C" __global__ void big(float *out, float scale, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = i * scale;
    float y = x * x + 1.0f;  // BREAK
    if (i < n) out[i] = y;
}
"""
blocks, threads = int(sys.argv[1]), int(sys.argv[2])
module = gpudbg.compile(SRC, name="big.cu", options=["-G"])
out = gpudbg.zeros(blocks * threads, np.float32)
module.big[blocks, threads](out, np.float32(0.5), blocks * threads)
print(out.to_host()[:4])
'''


class Client:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "gpudbg", "dap"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)
        self.r, self.w = Reader(self.proc.stdout), Writer(self.proc.stdin)
        self.seq = 0

    def send(self, command: str, args: dict | None = None) -> int:
        self.seq += 1
        self.w.write({"seq": self.seq, "type": "request", "command": command, "arguments": args or {}})
        return self.seq

    def until(self, pred):
        while True:
            m = self.r.read()
            if m is None:
                raise SystemExit("the adapter ended early")
            if pred(m):
                return m

    def request(self, command: str, args: dict | None = None) -> dict:
        seq = self.send(command, args)
        m = self.until(lambda m: m.get("type") == "response" and m.get("request_seq") == seq)
        if not m["success"]:
            raise SystemExit(f"{command} failed: {m.get('message')}")
        return m.get("body") or {}

    def event(self, name: str) -> dict:
        return self.until(lambda m: m.get("type") == "event" and m.get("event") == name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=4096)
    ap.add_argument("--threads", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=50)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        host = Path(tmp) / "big_host.py"
        host.write_text(HOST)
        c = Client()
        t0 = time.perf_counter()
        c.request("initialize", {"adapterID": "gpudbg"})
        c.request("launch", {"program": str(host), "args": [str(a.blocks), str(a.threads)], "cwd": tmp})
        c.event("initialized")
        c.request("setBreakpoints", {"source": {"path": "big.cu"}, "breakpoints": [{"line": 5}]})
        c.request("configurationDone")
        stop = c.event("stopped")["body"]
        setup = time.perf_counter() - t0
        tid = stop["threadId"]
        times, nvars = [], 0
        for _ in range(a.repeat):
            t = time.perf_counter()
            frames = c.request("stackTrace", {"threadId": tid, "startFrame": 0, "levels": 20})["stackFrames"]
            scopes = c.request("scopes", {"frameId": frames[0]["id"]})["scopes"]
            nvars = len(c.request("variables", {"variablesReference": scopes[0]["variablesReference"]})["variables"])
            times.append(time.perf_counter() - t)
        t = time.perf_counter()
        threads = len(c.request("threads")["threads"])
        t_threads = (time.perf_counter() - t) * 1000
        c.request("disconnect", {"terminateDebuggee": True})
        c.proc.wait(timeout=120)
    ms = sorted(t * 1000 for t in times)
    grid = a.blocks * a.threads
    print(f"grid: {a.blocks} x {a.threads} = {grid} threads, stopped at big.cu:5 after {setup:.1f} s "
          f"(compile, launch, run to the breakpoint); {threads} warps in the thread list, {nvars} locals")
    print(f"stackTrace + scopes + variables round trip over {a.repeat} runs: median {statistics.median(ms):.1f} ms, "
          f"min {ms[0]:.1f} ms, max {ms[-1]:.1f} ms (target < {TARGET_MS:.0f} ms: "
          f"{'met' if statistics.median(ms) < TARGET_MS else 'NOT met'})")
    print(f"threads (the warp list an editor asks for at each stop): {t_threads:.1f} ms")


if __name__ == "__main__":
    main()
