"""What each `gpudbg check` tool costs, against memcheck, on the four
anchor kernels (saxpy, reduction, tiled matmul, histogram of
benchmarks/bench_sim.py), all measured in the same run.

Columns: the kernel's time with no tool at all (the simulator's own checks,
what memcheck cost before the sanitizer existed), then memcheck's time and
each tool's time as a ratio to memcheck's. Targets (issue 10): racecheck
and initcheck at most 3x memcheck, synccheck at most 1.3x, and memcheck
itself within 10% of the tool-less run.

    python benchmarks/bench_tools.py [--repeat N]
"""
from __future__ import annotations

import argparse

import bench_sim
from gpudbg.sanitizer.config import CheckConfig
from gpudbg.sanitizer.findings import ToolName
from gpudbg.sanitizer.report import Reporter
from gpudbg.sanitizer.session import SanitizerSession

TARGETS = {ToolName.MEMCHECK: 1.10, ToolName.RACECHECK: 3.0, ToolName.INITCHECK: 3.0,
           ToolName.SYNCCHECK: 1.3}
CASES = {"saxpy": bench_sim.case_saxpy, "reduction": bench_sim.case_reduction,
         "matmul": bench_sim.case_matmul, "histogram": bench_sim.case_histogram}


def timed_under(tool: ToolName | None, case, repeat: int) -> tuple[float, int]:
    """The case's best time with `tool`'s session installed (None: no
    session), and how many errors the tool reported (a clean kernel: 0)."""
    session = None
    reporter = Reporter(print_limit=0, write=lambda _text: None)
    if tool is not None:
        session = SanitizerSession(CheckConfig(tool=tool), reporter).start()
    try:
        t_sim, _t_np = case(repeat)
    finally:
        if session is not None:
            session.finish()
    return t_sim, reporter.errors


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="interleaved rounds (best of)")
    args = ap.parse_args()
    tools = list(TARGETS)
    print(f"{'kernel':10} {'no tool s':>10} {'memcheck s':>11} "
          + " ".join(f"{t.value + '/mc':>13}" for t in tools))
    worst = {t: 0.0 for t in tools}
    errors = 0
    for name, case in CASES.items():
        case(1)                          # warm up: compile, first-touch of the launch resources
        # rounds interleave the configurations, so a burst of other work on
        # the machine disturbs all of them alike; each keeps its best round
        best: dict = {}
        for _round in range(args.repeat):
            for tool in [None, *tools]:
                t, found = timed_under(tool, case, 1)
                best[tool] = min(best.get(tool, float("inf")), t)
                errors += found
        plain = best[None]
        times = {tool: best[tool] for tool in tools}
        mc = times[ToolName.MEMCHECK]
        ratios = {t: (times[t] / plain if t is ToolName.MEMCHECK else times[t] / mc) for t in tools}
        for t in tools:
            worst[t] = max(worst[t], ratios[t])
        print(f"{name:10} {plain:10.3f} {mc:11.3f} " + " ".join(f"{ratios[t]:12.2f}x" for t in tools))
    print("(memcheck/mc column: memcheck's time over the no-tool time)")
    ok = errors == 0
    for t in tools:
        met = worst[t] <= TARGETS[t]
        ok &= met
        print(f"{t.value:10} worst {worst[t]:.2f}x, target <= {TARGETS[t]:.2f}x: {'met' if met else 'MISSED'}")
    if errors:
        print(f"the tools reported {errors} errors on clean kernels")
    print("all targets met" if ok else "some targets missed")


if __name__ == "__main__":
    main()
