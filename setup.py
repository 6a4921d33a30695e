"""setuptools hook: builds gpudbg's drop-in native libraries (libcuda.so.1,
libcudart.so.13) with the system C compiler during `pip install` (regular
wheels and PEP 660 editable installs alike); everything else is declared in
pyproject.toml. The build logic is src/gpudbg/native/build.py, loaded by path
because gpudbg is not importable yet."""
from __future__ import annotations

import importlib.util
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = Path(__file__).resolve().parent


def _native_build():
    spec = importlib.util.spec_from_file_location("_gpudbg_native_build", ROOT / "src/gpudbg/native/build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildPyWithNative(build_py):
    """build_py, then cc: into the source tree for an editable install, else into build_lib."""

    def run(self) -> None:
        super().run()
        native = _native_build()
        if getattr(self, "editable_mode", False):
            native.build(native.LIB)
        else:
            native.build(Path(self.build_lib) / "gpudbg" / "native" / "lib")


class BinaryDistribution(Distribution):
    """The wheel holds shared libraries (and the path of the Python that built them)."""

    def has_ext_modules(self) -> bool:
        return True


setup(cmdclass={"build_py": BuildPyWithNative}, distclass=BinaryDistribution)
