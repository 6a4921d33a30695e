"""Fixtures of the drop-in library tests: the built libraries (built if stale) and a C compiler."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def libdir() -> Path:
    from gpudbg.native.build import library_dir
    return library_dir()


@pytest.fixture(scope="session")
def cc() -> str:
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        pytest.skip("no C compiler")
    return compiler
