"""The folder tree is the layering: a lower layer never imports a higher
one (DESIGN.md). Checked on the source, so a violation fails at once."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "gpudbg"

# layer -> packages it must never import
FORBIDDEN = {
    "driver": ("gpudbg.runtime", "gpudbg.api", "gpudbg.cuda_driver", "gpudbg.cuda_runtime", "gpudbg.native",
               "gpudbg.cli", "gpudbg.sanitizer"),
    "sim": ("gpudbg.runtime", "gpudbg.api", "gpudbg.cuda_driver", "gpudbg.cuda_runtime", "gpudbg.native",
            "gpudbg.cli", "gpudbg.sanitizer"),
    "ptx": ("gpudbg.runtime", "gpudbg.api", "gpudbg.driver", "gpudbg.sim", "gpudbg.cli", "gpudbg.sanitizer"),
    "cuda_driver": ("gpudbg.runtime", "gpudbg.api", "gpudbg.cuda_runtime", "gpudbg.cli", "gpudbg.sanitizer"),
    # analysis tools sit beside the debugger: over the device and API layers, under the CLI
    "sanitizer": ("gpudbg.cli", "gpudbg.debug"),
}


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_nothing_above_it(layer):
    bad = []
    for path in sorted((SRC / layer).rglob("*.py")):
        for line, name in _imports(path):
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN[layer]):
                bad.append(f"{path.relative_to(SRC)}:{line} imports {name}")
    assert not bad, "\n".join(bad)
