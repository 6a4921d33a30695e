"""How much of seed 002's runtime API gpudbg implements, per section.

    python -m gpudbg.runtime.coverage

A function counts as implemented when `gpudbg.runtime.mc` has it and it is
not one of the functions marked with `not_supported` (listed with their
reasons). The table of the seed's functions is data
(`gpudbg.runtime.seed_functions`), so the report cannot drift from the seed.
"""
from __future__ import annotations

from dataclasses import dataclass

from gpudbg.runtime import mc
from gpudbg.runtime.api._base import NOT_SUPPORTED
from gpudbg.runtime.seed_functions import SECTIONS


@dataclass(frozen=True)
class SectionCoverage:
    section: str
    title: str
    total: int
    implemented: tuple[str, ...]
    not_supported: tuple[str, ...]
    missing: tuple[str, ...]


def coverage() -> list[SectionCoverage]:
    rows = []
    for sec, (title, names) in SECTIONS.items():
        present = [n for n in names if callable(getattr(mc, n, None))]
        ns = tuple(n for n in present if n in NOT_SUPPORTED)
        rows.append(SectionCoverage(sec, title, len(names),
                                    tuple(n for n in present if n not in NOT_SUPPORTED), ns,
                                    tuple(n for n in names if n not in present)))
    return rows


def report() -> str:
    rows = coverage()
    lines = [f"{'section':8} {'title':34} {'implemented':>11} {'not supp.':>9} {'missing':>7}"]
    for r in rows:
        lines.append(f"{r.section:8} {r.title:34} {len(r.implemented):5d}/{r.total:<5d} "
                     f"{len(r.not_supported):9d} {len(r.missing):7d}")
    total = sum(r.total for r in rows)
    impl = sum(len(r.implemented) for r in rows)
    ns = sum(len(r.not_supported) for r in rows)
    lines.append(f"{'all':8} {'':34} {impl:5d}/{total:<5d} {ns:9d} {total - impl - ns:7d}")
    for r in rows:
        for n in r.not_supported:
            lines.append(f"not supported: {n} ({r.section}): {NOT_SUPPORTED[n]}")
        for n in r.missing:
            lines.append(f"missing: {n} ({r.section})")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
