"""The fuzzing supervisor counts a target's results across chunks and
catches the failures a target cannot report itself: a crash (the child
dies by a signal) and a hang (the child overruns its chunk)."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fuzz import run as supervisor  # noqa: E402

FAKE = '''
import os, signal, time

def run(seconds, seed):
    mode = os.environ.get("FAKE_FUZZ_MODE", "ok")
    if mode == "crash" and seed == 2:
        os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "hang":
        time.sleep(60)
    return {"target": "fake", "inputs": 10 + seed, "escaped": [["ValueError", "boom", f"seed {seed}"]] if seed == 1 else []}
'''


def _fake(tmp_path, monkeypatch, mode):
    (tmp_path / "fakefuzz.py").write_text(FAKE)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("FAKE_FUZZ_MODE", mode)


def test_counts_are_merged_across_chunks(tmp_path, monkeypatch):
    _fake(tmp_path, monkeypatch, "ok")
    result = supervisor.supervise("fakefuzz", minutes=0.05, seed=1, chunk=1.0, grace=30)
    assert result["chunks"] >= 2 and result["inputs"] >= 23      # seeds 1, 2, ...
    assert len(result["escaped"]) == 1 and result["escaped"][0][0][0] == "ValueError"
    assert not result["crashes"] and not result["hangs"]


def test_a_crashing_child_is_counted_with_its_seed(tmp_path, monkeypatch):
    _fake(tmp_path, monkeypatch, "crash")
    result = supervisor.supervise("fakefuzz", minutes=0.05, seed=1, chunk=1.0, grace=30)
    assert [c["crash"] for c in result["crashes"]] == ["SIGSEGV"]
    assert result["crashes"][0]["seed"] == 2


def test_a_hanging_child_is_killed_and_counted(tmp_path, monkeypatch):
    _fake(tmp_path, monkeypatch, "hang")
    result = supervisor.supervise("fakefuzz", minutes=0.03, seed=1, chunk=1.5, grace=1.0)
    assert len(result["hangs"]) == 1 and result["hangs"][0]["seed"] == 1
    assert "hangs 1" in supervisor.summary(result)
