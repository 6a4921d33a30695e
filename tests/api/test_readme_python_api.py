"""The README's Python API example runs as printed and computes what numpy
computes for the same steps."""
from __future__ import annotations

import io
import contextlib
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parents[2] / "README.md"


def _example() -> str:
    text = README.read_text()
    after = text[text.index("<!-- python-api-example -->"):]
    return after.split("```python\n", 1)[1].split("```", 1)[0]


def test_readme_python_api_example():
    out = io.StringIO()
    scope: dict = {}
    with contextlib.redirect_stdout(out):
        exec(compile(_example(), str(README), "exec"), scope)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = a[:, ::-2]
    a[0] = -1
    np.testing.assert_array_equal(scope["c"].to_host(), (b * 2 + 1) // 3 % 5)
    np.testing.assert_array_equal(scope["flat"].to_host(), np.clip(a.ravel(), 0, 8))
    assert scope["start"].elapsed_time(scope["end"]) > 0
    assert "(3, 4) (2, 0)" in out.getvalue()
