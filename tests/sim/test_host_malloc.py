"""The host allocator's fixed thresholds (sim/host_malloc.py): set on
glibc, left alone when the user's environment configures malloc."""
from __future__ import annotations

import ctypes
import platform

import pytest

from gpudbg.sim import host_malloc


def _has_mallopt() -> bool:
    try:
        ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not _has_mallopt(), reason="not glibc")
def test_glibc_takes_the_thresholds(monkeypatch):
    for name in host_malloc._USER_SETTINGS + ("GLIBC_TUNABLES",):
        monkeypatch.delenv(name, raising=False)
    assert host_malloc._apply() is True


@pytest.mark.parametrize("name, value", [("MALLOC_MMAP_THRESHOLD_", "65536"), ("MALLOC_TRIM_THRESHOLD_", "0"),
                                         ("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=1")])
def test_the_users_malloc_settings_win(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    assert host_malloc._apply() is False


def test_other_tunables_do_not_stop_it(monkeypatch):
    for name in host_malloc._USER_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.cpu.hwcaps=-AVX512F")
    assert host_malloc._apply() is _has_mallopt()


def test_tune_decides_once_per_process():
    first = host_malloc.tune()
    assert host_malloc.tune() is first
