"""The fuzzing supervisor: long runs of gpudbg's fuzz targets, each in
child processes, so that a crash (a signal) or a hang is caught and
counted instead of ending the run.

    python -m fuzz.run --target api --minutes 30 [--seed 1] [--json out.json]
    python -m fuzz.run --target all --minutes 30      # every target side by side

A target is a module fuzz/<name>.py with `run(seconds, seed) -> dict` (the
counts of its inputs or calls and lists of "escaped" exceptions and
invariant "violations"). The supervisor runs it in chunks of --chunk
seconds, one child process per chunk with the next seed (so every chunk is
reproducible: `python -m fuzz.run --child api --seconds 60 --seed 17`),
kills a child that overruns its chunk by --grace seconds (a hang) and
records a child that died by a signal (a crash). What it does not do:
minimize failing inputs; each target reports a reproducer description.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ("api", "ptx", "devcoredump", "coredump")
RESULT_TAG = "FUZZ-RESULT "
COUNT_KEYS = ("inputs", "calls", "sequences")
LIST_KEYS = ("escaped", "violations", "slow")


def module_of(target: str) -> str:
    """fuzz.<target> for the project's targets; any other dotted module name
    is taken as is (the supervisor's own tests use one)."""
    return f"fuzz.{target}" if target in TARGETS else target


def run_child(target: str, seconds: float, seed: int, threads: int = 1) -> int:
    """In the child: run one chunk and print its result on a tagged line."""
    module = importlib.import_module(module_of(target))
    result = module.run(seconds, seed, threads=threads) if threads > 1 else module.run(seconds, seed)
    print(RESULT_TAG + json.dumps(result, default=str), flush=True)
    return 0


def _chunk(target: str, seconds: float, seed: int, grace: float, threads: int = 1) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "fuzz.run", "--child", target, "--seconds", str(seconds), "--seed", str(seed),
           "--threads", str(threads)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    try:
        p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=seconds + grace)
    except subprocess.TimeoutExpired as e:
        return {"hang": True, "seed": seed, "tail": (e.stderr or "")[-2000:] if isinstance(e.stderr, str) else ""}
    if p.returncode < 0:
        name = signal.Signals(-p.returncode).name if -p.returncode in signal.Signals._value2member_map_ else str(p.returncode)
        return {"crash": name, "seed": seed, "tail": p.stderr[-2000:]}
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith(RESULT_TAG)]
    if p.returncode != 0 or not lines:
        return {"error": f"exit status {p.returncode}", "seed": seed, "tail": p.stderr[-2000:]}
    return json.loads(lines[-1][len(RESULT_TAG):])


def supervise(target: str, minutes: float, seed: int, chunk: float, grace: float,
              threads: int = 1) -> dict[str, Any]:
    """Run `target` for `minutes` in chunks; the merged counts."""
    total: dict[str, Any] = {"target": target, "chunks": 0, "seconds": 0.0, "crashes": [], "hangs": [],
                             "errors": [], **{k: 0 for k in COUNT_KEYS}, **{k: [] for k in LIST_KEYS}}
    start = time.monotonic()
    deadline = start + minutes * 60
    while True:
        left = deadline - time.monotonic()
        if left < 1:
            break
        got = _chunk(target, min(chunk, left), seed, grace, threads)
        total["chunks"] += 1
        if got.get("hang"):
            total["hangs"].append(got)
        elif got.get("crash"):
            total["crashes"].append(got)
        elif got.get("error"):
            total["errors"].append(got)
        else:
            for k in COUNT_KEYS:
                total[k] += int(got.get(k, 0) or 0)
            for k in LIST_KEYS:
                total[k] += [dict(item, seed=seed) if isinstance(item, dict) else [item, seed]
                             for item in got.get(k, [])]
        seed += 1
    total["seconds"] = round(time.monotonic() - start, 1)
    return total


def summary(result: dict[str, Any]) -> str:
    work = ", ".join(f"{result[k]} {k}" for k in COUNT_KEYS if result.get(k))
    bad = {k: len(result[k]) for k in ("escaped", "violations", "crashes", "hangs", "errors", "slow")}
    return (f"{result['target']:12} {result['seconds']:7.0f} s {result['chunks']:4d} chunks  {work}  "
            + "  ".join(f"{k} {v}" for k, v in bad.items()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="all", choices=[*TARGETS, "all"])
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--chunk", type=float, default=60.0, help="seconds per child process")
    ap.add_argument("--grace", type=float, default=120.0, help="seconds past its chunk before a child is a hang")
    ap.add_argument("--json", metavar="FILE", help="write the merged results as JSON")
    ap.add_argument("--threads", type=int, default=1,
                    help="host threads calling at once (targets that support it: api)")
    ap.add_argument("--child", metavar="TARGET", help=argparse.SUPPRESS)
    ap.add_argument("--seconds", type=float, default=60.0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return run_child(args.child, args.seconds, args.seed, args.threads)
    targets = TARGETS if args.target == "all" else (args.target,)
    results: dict[str, dict[str, Any]] = {}

    def one(t: str) -> None:
        results[t] = supervise(t, args.minutes, args.seed, args.chunk, args.grace,
                               args.threads if t == "api" else 1)
        print(summary(results[t]), flush=True)

    threads = [threading.Thread(target=one, args=(t,)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str) + "\n")
    clean = all(not (r["escaped"] or r["violations"] or r["crashes"] or r["hangs"] or r["errors"])
                for r in results.values())
    print("no escaped exception, violation, crash or hang" if clean else "FINDINGS: see above")
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
