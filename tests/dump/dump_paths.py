"""Where the shared real Adreno dumps live, found relative to this file."""
from pathlib import Path

import pytest

MSM_DIR = Path(__file__).resolve().parents[3] / "shared" / "testdata" / "msm"


def msm_file(name: str) -> Path:
    path = MSM_DIR / name
    if not path.is_file():
        pytest.fail(f"shared test data missing: {path} (expected the shared/ folder beside the repo, "
                    "with testdata/msm/ from the project's shared files)")
    return path
