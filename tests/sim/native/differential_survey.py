"""Run every kernel of PTX corpus modules under GPUDBG_DIFFERENTIAL with
synthetic arguments (test_differential_corpus_launches.py does it in CI
for the smaller modules) and print, per module, its size, the time taken
and the launches compared, skipped (by reason) or mismatched, with each
mismatch's message.

    python tests/sim/native/differential_survey.py [PATH.ptx.xz ...]   (default: the whole plain corpus)
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpudbg.sim.native import differential  # noqa: E402
from gpudbg.sim.native.differential_state import DifferentialMismatch  # noqa: E402
from test_differential_corpus_launches import CORPUS, launch_every_kernel  # noqa: E402


def main(argv: list[str]) -> int:
    os.environ.setdefault(differential.ENV_DIFFERENTIAL, "1")
    paths = [Path(a) for a in argv] or sorted(CORPUS.glob("*.ptx.xz"))
    total: dict = {}
    bad = 0
    for path in paths:
        t0 = time.monotonic()
        try:
            got = launch_every_kernel(path)
        except DifferentialMismatch as e:
            bad += 1
            print(f"{path.name}: MISMATCH {e}", flush=True)
            continue
        for k, v in got.items():
            total[k] = total.get(k, 0) + v
        print(f"{path.name}: {time.monotonic() - t0:.1f} s {dict(got)}", flush=True)
    print(f"total: {total}, modules with a mismatch: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
