"""Short, fixed-seed runs of the file fuzz targets (fuzz/ptx.py,
fuzz/devcoredump.py, fuzz/coredump.py): nothing escapes the readers but
their own errors, no input is slow, and each run covers both outcomes
(refused and accepted). Long runs: `python -m fuzz.run --target ptx`."""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SECONDS = 3.0
TARGETS = {"ptx": ("parse error", "loaded"), "devcoredump": ("refused", "shown"),
           "coredump": ("refused", "opened")}


@pytest.fixture(autouse=True)
def _fresh_device():
    yield
    import gpudbg
    gpudbg.Device(0).reset()


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_short_run_lets_nothing_escape(target):
    result = importlib.import_module(f"fuzz.{target}").run(SECONDS, 20260)
    assert result["target"] == target and result["inputs"] >= 10
    assert result["escaped"] == [], result["escaped"]
    assert result["slow"] == [], result["slow"]
    for outcome in TARGETS[target]:
        assert result["outcomes"].get(outcome, 0) > 0, result["outcomes"]


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_inputs_are_rebuilt_from_seed_and_index_alone(target):
    module = importlib.import_module(f"fuzz.{target}")
    for index in (0, 7, 1234):
        data, what = module.generate_for(99, index)
        assert module.generate_for(99, index) == (data, what)
        assert isinstance(data, bytes) and what
    assert module.generate_for(99, 1) != module.generate_for(100, 1)
