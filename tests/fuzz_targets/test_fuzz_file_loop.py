"""The loop shared by the file fuzz targets (fuzz/_files.py): it records
each escaping exception once per (type, place) with a reproducer, counts
outcomes, flags slow inputs and stops an input that hangs."""
from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fuzz import _files as F  # noqa: E402


def _gen(rng):
    n = rng.randrange(4)
    return bytes([n]), f"byte {n}"


def _check(data: bytes) -> str:
    n = data[0]
    if n == 1:
        raise KeyError("boom")
    if n == 2:
        raise ValueError("bang")
    return "fine"


def test_escapes_are_recorded_once_per_place_with_a_reproducer():
    r = F.fuzz_loop("demo", 0.3, 5, _gen, _check)
    assert r["inputs"] > 10 and r["target"] == "demo" and r["seed"] == 5
    kinds = sorted(e[0] for e in r["escaped"])
    assert kinds == ["KeyError", "ValueError"]
    for kind, message, repro in r["escaped"]:
        assert "[at test_fuzz_file_loop.py:" in message
        assert repro.startswith("python -m fuzz.demo --seed 5 --input ")
        index = int(repro.split("--input ")[1].split()[0])
        data, _ = _gen(F.input_rng("demo", 5, index))
        assert {1: "KeyError", 2: "ValueError"}[data[0]] == kind
    assert r["outcomes"]["fine"] > 0


def test_slow_and_hanging_inputs(monkeypatch):
    monkeypatch.setattr(F, "SLOW_SECONDS", 0.05)
    monkeypatch.setattr(F, "HANG_SECONDS", 0.3)

    def check(data: bytes) -> str:
        time.sleep(0.1 if data[0] == 0 else 0)
        if data[0] == 3:
            while True:
                time.sleep(0.01)
        return "ok"

    r = F.fuzz_loop("demo", 0.5, 1, _gen, check)
    assert r["escaped"] == []
    assert any(text.startswith("TIMED OUT ") for _, text in r["slow"])
    assert any(not text.startswith("TIMED OUT ") and took >= 0.05 for took, text in r["slow"])


def test_mutators_keep_their_description_honest():
    rng = F.input_rng("m", 1, 1)
    data = b".version 8.0\nadd.s32 %r1, %r2, 17;\n"
    out, what = F.replace_number(rng, data)
    assert out != data and "replaced by" in what
    out, what = F.truncate(rng, data)
    assert data.startswith(out) and what.startswith("truncated at byte ")
