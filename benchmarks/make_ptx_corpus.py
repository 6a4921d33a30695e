"""Regenerate the PTX corpus under tests/data/ptx_corpus from CUDA sources
with the local nvcc: each source compiled for sm_80 (sm_90 when it needs
it) plain and with -G, xz-compressed, plus MANIFEST.tsv (what was built
from what, with which options, and what did not compile).

    python benchmarks/make_ptx_corpus.py [--samples DIR --include DIR] [--out DIR]

Sources: this repository's own CUDA files (tests/data/ptx_corpus/src,
tests/sim/kernels, tests/ptx/fixtures, tests/clients/programs), which are
what is checked in; --samples adds the .cu files of a folder of yours
(e.g. a cuda-samples checkout, with --include pointing at its Common/
headers) to a corpus written elsewhere with --out, for a local report.
Needs nvcc; the tests only read the checked-in result.
"""
from __future__ import annotations

import argparse
import lzma
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "data" / "ptx_corpus"
OWN = [("own", CORPUS / "src"), ("sim", REPO / "tests" / "sim" / "kernels"),
       ("ptxfix", REPO / "tests" / "ptx" / "fixtures"), ("client", REPO / "tests" / "clients" / "programs")]
#: sources that only compile for a newer architecture
ARCH = {"cluster": "sm_90"}
BUILDS = {"plain": [], "G": ["-G"]}
#: -G builds left out: CUB's device algorithms give 1-2.4 MB of -G PTX per
#: source (12 MB in all), which the CI load test cannot parse in its time
SKIP = {("G", "own__cub_"): "skipped: -G PTX of CUB device algorithms is too large for the CI load test"}


def compile_one(nvcc: str, src: Path, arch: str, extra: list[str],
                includes: list[Path] = ()) -> tuple[str | None, str, list[str]]:
    """(PTX text or None, error, options used); retries with -rdc=true
    (device-side launches and extern device symbols need it)."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "k.ptx"
        err = ""
        for rdc in ([], ["-rdc=true"]):
            opts = [f"-arch={arch}", "-ptx", *extra, *rdc, *[f"-I{d}" for d in includes], "-I", str(src.parent)]
            r = subprocess.run([nvcc, *opts, str(src), "-o", str(out)], capture_output=True, text=True,
                               timeout=900)
            if r.returncode == 0:
                return out.read_text(), "", [f"-arch={arch}", "-ptx", *extra, *rdc]
            err = (r.stderr.strip().splitlines() or ["nvcc failed"])[0]
        return None, err, []


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=Path, help="a folder of .cu files of yours to add (not committed here)")
    ap.add_argument("--include", type=Path, action="append", default=[], help="an include folder for them")
    ap.add_argument("--out", type=Path, default=CORPUS)
    ap.add_argument("--only", help="rebuild only sources whose stem contains this; keep the rest")
    a = ap.parse_args(argv)
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        print("nvcc is not on PATH", file=sys.stderr)
        return 2
    groups = list(OWN) + ([("samples", a.samples)] if a.samples else [])
    rows = []
    manifest = a.out / "MANIFEST.tsv"
    if a.only and manifest.exists():
        rows = [r for r in manifest.read_text().splitlines()[1:] if a.only not in r.split("\t")[1]]
    for build in BUILDS:
        (a.out / build).mkdir(parents=True, exist_ok=True)
        for old in (a.out / build).glob("*.ptx.xz"):
            if not a.only or a.only in old.name:
                old.unlink()
    for prefix, folder in groups:
        for src in sorted(folder.glob("*.cu")):
            if a.only and a.only not in src.stem:
                continue
            arch = next((v for k, v in ARCH.items() if k in src.stem), "sm_80")
            for build, extra in BUILDS.items():
                name = f"{prefix}__{src.stem}"
                skip = next((why for (b, stem), why in SKIP.items() if b == build and name.startswith(stem)), None)
                if skip:
                    rows.append(f"{build}\t{name}\t{src.relative_to(folder.parent)}\t-\t{skip}")
                    continue
                text, err, opts = compile_one(nvcc, src, arch, extra, a.include)
                if text is None:
                    rows.append(f"{build}\t{name}\t{src.relative_to(folder.parent)}\t-\tFAILED: {err}")
                    print(f"{build} {name}: does not compile: {err}", file=sys.stderr)
                    continue
                (a.out / build / f"{name}.ptx.xz").write_bytes(lzma.compress(text.encode(), preset=9))
                rows.append(f"{build}\t{name}\t{src.relative_to(folder.parent)}\t{' '.join(opts)}\tok")
    rows.sort(key=lambda r: (r.split("\t")[0], r.split("\t")[1]))
    manifest.write_text("# build\tname\tsource\tnvcc options\tstatus\n" + "\n".join(rows) + "\n")
    print(f"{sum(r.endswith('ok') for r in rows)} PTX files written, "
          f"{sum('FAILED' in r for r in rows)} builds failed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
