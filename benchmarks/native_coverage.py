"""How much of real PTX the native engine compiles: every straight-line
instruction of the PTX corpus (tests/data/ptx_corpus, plain and -G builds)
and of the test fixtures (tests/sim/kernels/*.ptx), probed for a native
lowering one by one, and the forms that stay interpreted, most frequent
first, each with an example and its file.

    python benchmarks/native_coverage.py [--kinds iubp*] [--top 40]

--kinds picks instructions by the kind of their first type modifier (i
signed, u unsigned, b bits, p predicate, f float, * none), as the
lowerings are keyed (sim/native/emit.lower). Memory and control
instructions are counted like any other. It measures coverage by form,
not time: a probe is a trial emission, so the figures do not depend on the
machine.
"""
from __future__ import annotations

import argparse
import collections
import lzma
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def sources() -> list[Path]:
    corpus = ROOT / "tests" / "data" / "ptx_corpus"
    return sorted(corpus.glob("plain/*.ptx.xz")) + sorted(corpus.glob("G/*.ptx.xz")) + \
        sorted((ROOT / "tests" / "sim" / "kernels").glob("*.ptx"))


def _text(path: Path) -> str:
    return lzma.open(path, "rt").read() if path.suffix == ".xz" else path.read_text()


def census(kinds: str) -> tuple[int, int, int, collections.Counter, dict]:
    """(files loaded, instructions considered, interpreted, count per
    interpreted form, an example per form)."""
    from gpudbg.ptx import parse
    from gpudbg.sim.gpu import SimGPU
    from gpudbg.sim.loader import load_module
    from gpudbg.sim.native.emit import probe, type_kind
    from gpudbg.sim.native.segments import SegmentPlan
    gpu = SimGPU()
    loaded = total = 0
    left: collections.Counter = collections.Counter()
    example: dict = {}
    for path in sources():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                program = load_module(gpu, parse(_text(path), path.name)).program
        except Exception:          # a module the simulator does not load is the loader's figure
            continue
        loaded += 1
        for c in program.code:
            if c.built.run is None or type_kind(c.inst) not in kinds:
                continue
            total += 1
            if probe(program, c, SegmentPlan.empty()) is None:
                form = c.inst.full_opcode
                left[form] += 1
                example.setdefault(form, (path.name, c.inst.text))
    return loaded, total, sum(left.values()), left, example


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kinds", default="iubp*", help="first-type kinds to count (default: iubp*)")
    ap.add_argument("--top", type=int, default=40, help="interpreted forms to list")
    args = ap.parse_args()
    loaded, total, interpreted, left, example = census(args.kinds)
    share = 100.0 * (total - interpreted) / max(total, 1)
    print(f"{loaded} modules, {total} straight-line instructions of kinds {args.kinds!r}: "
          f"{total - interpreted} native ({share:.1f}%), {interpreted} interpreted")
    for form, count in left.most_common(args.top):
        name, text = example[form]
        print(f"{count:6d}  {form:48s} {text[:60]:60s} {name}")


if __name__ == "__main__":
    main()
