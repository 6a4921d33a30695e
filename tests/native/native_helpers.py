"""Helpers of the drop-in library tests: the environment that points the
bridge at this directory's stand-in implementation modules, and subprocess
runs that cannot hang."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TIMEOUT = 120


def fake_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("GPUDBG_NATIVE_TRACE", None)
    env["GPUDBG_NATIVE_IMPL_CUDA"] = "native_fake_driver"
    env["GPUDBG_NATIVE_IMPL_CUDART"] = "native_fake_runtime"
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), *filter(None, [env.get("PYTHONPATH")])])
    env.update(extra)
    return env


def run(cmd: list[str], env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT, **kw)


def run_python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run([sys.executable, "-c", code], env=env)
