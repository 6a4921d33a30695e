"""How much of seed 000's latest CUDBGAPI_st the cudbg facade implements.

    python -m gpudbg.debug.cudbg.coverage

The denominator is api_table.LATEST_ENTRIES (the non-deprecated slots of
the header's table); an entry counts as implemented when the assembled
CUDBGAPI class has a real implementation for it rather than the
unsupported stand-in, whose code and reason are listed. Both sides come
from the same data the class is built from, so the report cannot drift.
"""
from __future__ import annotations

from dataclasses import dataclass

from gpudbg.debug.cudbg.api_table import LATEST_ENTRIES
from gpudbg.debug.cudbg.facade import UNSUPPORTED, implemented_entries


@dataclass(frozen=True)
class Coverage:
    total: int
    implemented: tuple[str, ...]
    unsupported: tuple[str, ...]

    @property
    def fraction(self) -> float:
        return len(self.implemented) / self.total

    def headline(self) -> str:
        return (f"cudbg facade coverage: {len(self.implemented)}/{self.total} latest CUDBGAPI_st "
                f"entries implemented ({100 * self.fraction:.0f}%)")


def coverage() -> Coverage:
    done = tuple(implemented_entries())
    rest = tuple(e.name for e in LATEST_ENTRIES if e.name not in done)
    return Coverage(len(LATEST_ENTRIES), done, rest)


def report() -> str:
    cov = coverage()
    lines = [cov.headline(), "", "not implemented (result code: reason):"]
    for name in cov.unsupported:
        code, reason = UNSUPPORTED[name]
        lines.append(f"  {name}  {code.name}: {reason}")
    return "\n".join(lines)


def main() -> None:
    print(report())


if __name__ == "__main__":
    main()
