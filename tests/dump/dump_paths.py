"""Where the real Adreno dumps live (tests/data/msm, with their licence note)."""
from pathlib import Path

import pytest

MSM_DIR = Path(__file__).resolve().parents[1] / "data" / "msm"


def msm_file(name: str) -> Path:
    path = MSM_DIR / name
    if not path.is_file():
        pytest.fail(f"test data missing: {path} (tests/data/msm)")
    return path
