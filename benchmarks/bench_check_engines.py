"""`gpudbg check` on the interpreter beside the default engine (auto), in
one run: what running compiled code under each sanitizer tool gains
(README, Engines: what runs natively under which tool).

Kernel times (default): the four anchor kernels of benchmarks/bench_sim.py
(saxpy, reduction, tiled matmul, histogram) launched in this process on a
loaded module under each tool's session, GPUDBG_ENGINE=interp against
auto (compiled in an untimed first round), rounds interleaved and the best
round kept; both engines must report the same number of errors (0).

With --cli, whole `gpudbg check` commands on the examples instead (process
start, NVRTC and the program's own numpy work included), best of
`repeat`, after one untimed auto run per example that fills the native
code cache, the report's ========= lines compared.

    python benchmarks/bench_check_engines.py [--repeat 3] [--tools initcheck,synccheck] [--cli [--small]]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ("memcheck", "initcheck", "racecheck", "synccheck")
# example -> argument: sizes where the kernel, not the process, dominates
EXAMPLES = {"matmul.py": "512", "reduction.py": str(1 << 22), "saxpy.py": str(1 << 22)}
SMALL = {"matmul.py": "256", "reduction.py": str(1 << 20), "saxpy.py": str(1 << 20)}


def check(tool: str, example: str, arg: str, engine: str) -> tuple[float, list[str]]:
    """Seconds of one `gpudbg check` and its report's ========= lines."""
    env = dict(os.environ, GPUDBG_ENGINE=engine)
    start = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "gpudbg", "check", "--tool", tool, str(ROOT / "examples" / example),
                        arg], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    took = time.perf_counter() - start
    if r.returncode not in (0, 1):
        raise SystemExit(f"gpudbg check --tool {tool} {example} {arg} failed ({r.returncode}):\n{r.stderr}")
    return took, [ln for ln in r.stdout.splitlines() if ln.startswith("=========")]


def kernel_times(tools: list[str], repeat: int) -> None:
    """The anchor kernels in this process under each tool, both engines."""
    import bench_sim
    from gpudbg.sanitizer.config import CheckConfig
    from gpudbg.sanitizer.findings import ToolName
    from gpudbg.sanitizer.report import Reporter
    from gpudbg.sanitizer.session import SanitizerSession
    cases = {"saxpy 2^20": bench_sim.case_saxpy, "reduction 2^20": bench_sim.case_reduction,
             "matmul 256": bench_sim.case_matmul, "histogram 2^20": bench_sim.case_histogram}

    def timed(tool: str, engine: str, case) -> tuple[float, int]:
        os.environ["GPUDBG_ENGINE"] = engine
        reporter = Reporter(print_limit=0, write=lambda _text: None)
        session = SanitizerSession(CheckConfig(tool=ToolName(tool)), reporter).start()
        try:
            t, _t_np = case(1)
        finally:
            session.finish()
        return t, reporter.errors

    print("kernel wall time, best round (other work on the machine inflates both engines alike)")
    print(f"{'tool':10} {'kernel':16} {'interp s':>9} {'auto s':>9} {'speedup':>8}  errors (interp/auto)")
    old = os.environ.get("GPUDBG_ENGINE")
    try:
        for tool in tools:
            for name, case in cases.items():
                timed(tool, "auto", case)       # compiles the program (auto: 65,536 threads or more)
                best = {"interp": float("inf"), "auto": float("inf")}
                errors = {"interp": 0, "auto": 0}
                for _round in range(repeat):    # interleaved: a burst of other work disturbs both alike
                    for engine in best:
                        t, found = timed(tool, engine, case)
                        best[engine] = min(best[engine], t)
                        errors[engine] += found
                print(f"{tool:10} {name:16} {best['interp']:9.3f} {best['auto']:9.3f} "
                      f"{best['interp'] / best['auto']:7.2f}x  {errors['interp']}/{errors['auto']}", flush=True)
    finally:
        if old is None:
            os.environ.pop("GPUDBG_ENGINE", None)
        else:
            os.environ["GPUDBG_ENGINE"] = old


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--cli", action="store_true", help="whole gpudbg check commands on the examples")
    ap.add_argument("--small", action="store_true", help="with --cli: the examples' default sizes")
    args = ap.parse_args(argv)
    tools = [t for t in args.tools.split(",") if t]
    if not args.cli:
        kernel_times(tools, args.repeat)
        return 0
    examples = SMALL if args.small else EXAMPLES
    for example, arg in examples.items():
        check("synccheck", example, arg, "auto")          # compile once: the cache is warm for every tool
    print(f"{'tool':10} {'example':22} {'interp s':>9} {'auto s':>9} {'speedup':>8}  same report")
    for tool in tools:
        for example, arg in examples.items():
            best = {}
            reports = {}
            for engine in ("interp", "auto"):
                times = []
                for _ in range(args.repeat):
                    t, lines = check(tool, example, arg, engine)
                    times.append(t)
                    reports[engine] = lines
                best[engine] = min(times)
            same = reports["interp"] == reports["auto"]
            print(f"{tool:10} {example + ' ' + arg:22} {best['interp']:9.2f} {best['auto']:9.2f} "
                  f"{best['interp'] / best['auto']:7.2f}x  {'yes' if same else 'NO'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
