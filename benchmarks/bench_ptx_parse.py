"""PTX parser throughput on a generated 5000-line function.

Prints lines parsed per second and the ratio of the parser's time to a
reference measured in the same run: splitting the same text into lines and
running one regex over each (a floor no real parser can beat), so the figure
is comparable across noisy machines.

    python benchmarks/bench_ptx_parse.py [--lines N] [--repeat K]
"""
from __future__ import annotations

import argparse
import re

from gpudbg.ptx import parse
from timing import best_of

_WORD = re.compile(r"[%$.\w]+|\S")


def big_ptx(lines: int) -> str:
    out = [".version 8.0", ".target sm_80", ".address_size 64",
           ".visible .entry big(.param .u64 p)", "{", ".reg .b32 %r<100>;",
           ".reg .b64 %rd<10>;", ".reg .pred %p<4>;", "ld.param.u64 %rd1, [p];"]
    for i in range(lines):
        k = i % 90
        if i % 50 == 49:
            out.append(f"L{i // 50}:")
            continue
        out.append([
            f"add.s32 %r{k}, %r{k + 1}, %r{k + 2};",
            f"ld.global.v4.u32 {{%r{k}, %r{k + 1}, _, %r3}}, [%rd1+{i * 16}];",
            f"@%p1 bra L{i // 50};",
            "\t.loc 1 %d 3\n\tmov.u32 %%r1, %%tid.x; // comment" % i,
        ][i % 4])
    out += ["ret;", "}"]
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    text = big_ptx(args.lines)
    mod = parse(text)
    assert len(mod.functions["big"].instructions) > args.lines * 0.96
    t_parse = best_of(lambda: parse(text), args.repeat)
    t_ref = best_of(lambda: [_WORD.findall(line) for line in text.splitlines()], args.repeat)
    n = text.count("\n") + 1
    print(f"parse: {n} lines in {t_parse:.3f} s = {n / t_parse:,.0f} lines/s; "
          f"{t_parse / t_ref:.1f}x the time of a bare regex tokenization of the same text")


if __name__ == "__main__":
    main()
