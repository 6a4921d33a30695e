"""How much of the drop-in libraries' export tables has a Python implementation.

`python -m gpudbg.native.coverage [--missing] [--library cuda|cudart]` prints
`libcuda.so.1: N/M exported functions implemented` (and the same for
libcudart.so.13), where M counts every name of the generated export table and
N those the implementation module (gpudbg.native.bridge.module_name) has as an
attribute, plus the few libcuda implements in C (cuGetProcAddress*,
cuGetExportTable). `--missing` lists the others. Table-driven: the export
tables decide what exists; it does not call anything.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from gpudbg.native import bridge
from gpudbg.native.tables import C_IMPLEMENTED, LIBRARIES, exports


@dataclass(frozen=True)
class Coverage:
    """One library's figure: its soname, implemented and missing export names."""
    soname: str
    implemented: tuple[str, ...]
    missing: tuple[str, ...]

    @property
    def total(self) -> int:
        return len(self.implemented) + len(self.missing)

    def headline(self) -> str:
        return f"{self.soname}: {len(self.implemented)}/{self.total} exported functions implemented"


def coverage(library: str) -> Coverage:
    """The coverage of `library` ("cuda" or "cudart")."""
    done, missing = [], []
    for e in exports(library):
        if e.name in C_IMPLEMENTED[library] or bridge.entry(library, e.name) is not None:
            done.append(e.name)
        else:
            missing.append(e.name)
    return Coverage(LIBRARIES[library][0], tuple(done), tuple(missing))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--missing", action="store_true", help="list the exports without an implementation")
    ap.add_argument("--library", choices=sorted(LIBRARIES), action="append",
                    help="only this library (repeatable; default: both)")
    args = ap.parse_args(argv)
    for library in args.library or ("cuda", "cudart"):
        cov = coverage(library)
        print(cov.headline())
        if args.missing:
            for name in cov.missing:
                print(f"  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
