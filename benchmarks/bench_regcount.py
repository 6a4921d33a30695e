"""Register counts: gpudbg's allocator (gpudbg.ptx.regalloc) against ptxas.

    python benchmarks/bench_regcount.py [PTX files or folders ...]
        [--store tests/data/ptx_corpus/ptxas_sm80.tsv] [--stored] [--worst N]

With ptxas on PATH it runs `ptxas -arch=sm_XX -v` on every PTX (plain
builds; `-G` PTX is compiled by ptxas at -O0 and is not compared) and prints
per kernel ours vs ptxas, the fraction within 25% and the worst cases;
`--store` writes the measured ptxas figures as a table the test suite
checks against without ptxas. `--stored` compares against that table
instead of running ptxas. Defaults to the corpus under
tests/data/ptx_corpus/plain.
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from gpudbg.ptx.corpus import corpus_files, read_ptx, read_register_table  # noqa: E402
from gpudbg.ptx.parser import parse  # noqa: E402
from gpudbg.ptx.regalloc import register_counts  # noqa: E402
from gpudbg.sim.device_model import DeviceModel, occupancy  # noqa: E402

DEFAULT_TABLE = REPO / "tests" / "data" / "ptx_corpus" / "ptxas_sm80.tsv"
_COMPILING = re.compile(r"Compiling entry function '([^']+)' for 'sm_(\d+)'")
_USED = re.compile(r"Used (\d+) registers")
_VERSION = re.compile(r"^\.version\s+\d+\.\d+", re.M)
_TARGET = re.compile(r"^\.target\s+(sm_\d+a?)", re.M)


def ptxas_counts(text: str, ptxas: str) -> dict[str, int]:
    """ptxas -v's 'Used N registers' per entry function. The PTX's
    .version is lowered to what this ptxas accepts (nvcc 13 writes 9.0;
    newer NVRTC 9.x PTX uses nothing 9.0 lacks in our corpus)."""
    m = _TARGET.search(text)
    arch = m.group(1) if m else "sm_80"
    text = _VERSION.sub(".version 9.0", text, count=1)
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "k.ptx"
        src.write_text(text)
        cmd = [ptxas, f"-arch={arch}", "-v", str(src), "-o", str(Path(d) / "k.cubin")]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if r.returncode != 0 and "Unresolved extern function" in r.stderr:
            # -rdc PTX (device-side launches) links later: compile it relocatable
            r = subprocess.run(cmd + ["-c"], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "ptxas failed")
    out: dict[str, int] = {}
    current = None
    for line in r.stderr.splitlines():
        m = _COMPILING.search(line)
        if m:
            current = m.group(1)
            continue
        m = _USED.search(line)
        if m and current is not None:
            out[current] = int(m.group(1))
            current = None
    return out


def compare(pairs: list[tuple[str, str, int, int]]) -> dict:
    """Summary of (file, kernel, ours, ptxas) rows."""
    within = [p for p in pairs if abs(p[2] - p[3]) <= 0.25 * p[3]]
    return {"kernels": len(pairs), "within": len(within),
            "fraction": len(within) / len(pairs) if pairs else 0.0,
            "over": sum(1 for p in pairs if p[2] > p[3]), "under": sum(1 for p in pairs if p[2] < p[3])}


def ours_for(paths: list[Path], root: Path) -> dict[tuple[str, str], int]:
    out = {}
    for p in paths:
        rel = str(p.relative_to(root)) if p.is_relative_to(root) else str(p)
        try:
            module = parse(read_ptx(p), rel)
        except Exception as e:   # noqa: BLE001 - report and go on
            print(f"# {rel}: not parsed: {e}", file=sys.stderr)
            continue
        for k, n in register_counts(module).items():
            out[(rel, k)] = n
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", type=Path)
    ap.add_argument("--store", type=Path, help="write the ptxas figures to this table")
    ap.add_argument("--stored", action="store_true", help="compare with the stored table, no ptxas")
    ap.add_argument("--table", type=Path, default=DEFAULT_TABLE)
    ap.add_argument("--worst", type=int, default=15)
    ap.add_argument("--all", action="store_true", help="print every kernel")
    a = ap.parse_args(argv)
    root = a.table.parent
    paths = corpus_files(a.paths or [root / "plain"])
    ours = ours_for(paths, root)
    if a.stored:
        theirs = read_register_table(a.table)
    else:
        ptxas = shutil.which("ptxas")
        if ptxas is None:
            print("ptxas is not on PATH: use --stored to compare with the stored figures", file=sys.stderr)
            return 2
        theirs = {}
        for p in paths:
            rel = str(p.relative_to(root)) if p.is_relative_to(root) else str(p)
            try:
                for k, n in ptxas_counts(read_ptx(p), ptxas).items():
                    theirs[(rel, k)] = n
            except Exception as e:   # noqa: BLE001
                print(f"# {rel}: ptxas: {e}", file=sys.stderr)
        if a.store:
            rows = [f"{f}\t{k}\t{n}" for (f, k), n in sorted(theirs.items())]
            a.store.write_text("# file\tkernel\tptxas -arch=sm_80 -v registers (CUDA 13.0 ptxas)\n"
                               + "\n".join(rows) + "\n")
    pairs = [(f, k, ours[(f, k)], theirs[(f, k)]) for (f, k) in sorted(theirs) if (f, k) in ours]
    s = compare(pairs)
    if a.all:
        for f, k, o, t in pairs:
            print(f"{o:4d} {t:4d}  {f} {k}")
    print(f"kernels compared: {s['kernels']}, within 25% of ptxas: {s['within']} "
          f"({100 * s['fraction']:.1f}%), above: {s['over']}, below: {s['under']}")
    model = DeviceModel()
    over = [(k, n) for _, k, o, t in pairs for n in range(32, 1025, 32)
            if occupancy(model, n, o, 0) > occupancy(model, n, t, 0)]
    print(f"(kernel, block size 32..1024) pairs given more blocks per SM than ptxas's count allows: "
          f"{len(over)} of {32 * len(pairs)}")
    worst = sorted(pairs, key=lambda p: -abs(p[2] - p[3]) / p[3])[:a.worst]
    if worst:
        print("worst (ours, ptxas, file, kernel):")
        for f, k, o, t in worst:
            print(f"  {o:4d} {t:4d}  {f}  {k[:90]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
