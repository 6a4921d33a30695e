"""Load rate of a PTX corpus: how many modules the simulator's loader
accepts (parse, translate every instruction, lay out the kernels), and for
each one it refuses, the first unsupported instruction or feature.

    python -m gpudbg.sim.corpus_load [PATHS ...] [--json]

Defaults to the checked-in corpus (tests/data/ptx_corpus/{plain,G}), one
rate per build folder. Loading only: nothing is executed, so it is fast
enough for CI and says nothing about whether kernels compute correctly.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from gpudbg.ptx.corpus import corpus_files, read_ptx
from gpudbg.ptx.errors import PTXParseError
from gpudbg.ptx.parser import parse
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.loader import load_module
from gpudbg.sim.program import LoadError

DEFAULT_CORPUS = Path(__file__).resolve().parents[3] / "tests" / "data" / "ptx_corpus"
_QUOTED = re.compile(r"(?:instruction|register|identifier|feature|directive|type|operand)s? '([^']+)'")


@dataclass(frozen=True)
class LoadResult:
    path: str
    ok: bool
    kernels: int = 0
    feature: str = ""       # what made it fail: an opcode, a register, a directive
    message: str = ""


def failure_feature(message: str) -> str:
    """The instruction or feature a loader/parser message names: a quoted
    name after 'instruction', 'register', ... or else the opcode of the
    instruction text the message ends with ('<loc>: <why> in kernel k:
    <instruction>')."""
    m = _QUOTED.search(message)
    if m:
        return m.group(1)
    tail = message.rsplit(": ", 1)[-1].strip()
    word = tail.split()[0] if tail.split() else ""
    return word.lstrip("@!%").rstrip(";") if word else ""


def load_one(path: Path, gpu: SimGPU, name: str | None = None) -> LoadResult:
    name = name or str(path)
    try:
        module = parse(read_ptx(path), name)
    except PTXParseError as e:
        return LoadResult(name, False, feature=failure_feature(str(e)), message=f"parse: {e}")
    try:
        loaded = load_module(gpu, module)
    except LoadError as e:
        return LoadResult(name, False, feature=failure_feature(str(e)), message=str(e))
    n = len(loaded.functions)
    loaded.unload()
    return LoadResult(name, True, kernels=n)


def load_rate(paths: list[Path], root: Path | None = None) -> list[LoadResult]:
    gpu = SimGPU()
    out = []
    for p in corpus_files(paths):
        rel = str(p.relative_to(root)) if root is not None and p.is_relative_to(root) else str(p)
        out.append(load_one(p, gpu, rel))
    return out


def summary(results: list[LoadResult]) -> dict:
    ok = sum(r.ok for r in results)
    return {"modules": len(results), "loaded": ok, "rate": ok / len(results) if results else 0.0,
            "failures_by_feature": dict(Counter(r.feature for r in results if not r.ok).most_common())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gpudbg.sim.corpus_load", description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", type=Path, help="PTX files or folders (default: the test corpus builds)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    a = ap.parse_args(argv)
    groups = [(str(p), [p]) for p in a.paths] if a.paths else \
        [(b, [DEFAULT_CORPUS / b]) for b in ("plain", "G") if (DEFAULT_CORPUS / b).is_dir()]
    if not groups:
        print(f"no corpus at {DEFAULT_CORPUS}; name PTX files or folders", file=sys.stderr)
        return 2
    report = {}
    for label, paths in groups:
        try:
            results = load_rate(paths, DEFAULT_CORPUS)
        except (FileNotFoundError, ValueError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        report[label] = {"summary": summary(results), "results": [asdict(r) for r in results]}
    if a.json:
        print(json.dumps(report, indent=1))
        return 0
    for label, rep in report.items():
        s = rep["summary"]
        print(f"{label}: {s['loaded']}/{s['modules']} modules load ({100 * s['rate']:.1f}%)")
        for feature, n in s["failures_by_feature"].items():
            print(f"  {n:3d} fail first on {feature}")
        for r in rep["results"]:
            if not r["ok"]:
                print(f"    {r['path']}: {r['message'][:160]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
