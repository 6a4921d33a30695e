"""Seed 002 §2.11: memset, with the rules of chapter 1.2.2."""
from __future__ import annotations

from typing import Any

from gpudbg.driver import transfer as _transfer
from gpudbg.runtime.api._base import _api, _ctx, _int


# ------------------------------------------------------------------ 2.11 memset
def _memset(ptr: Any, value: Any, count: Any, size: int, stream: Any, is_async: bool) -> None:
    ctx = _ctx()
    s = ctx.legacy if stream is None and not is_async else ctx.stream(stream)
    _transfer.memset(ctx, ptr, value, size, _int("count", count), s, is_async)


@_api(0)
def mcMemset(ptr: int, value: int, count: int) -> None:
    """Seed 002 §2.11.3.1: bytes; asynchronous unless pinned/managed (§1.2.2)."""
    _memset(ptr, value, count, 1, None, False)


@_api(0)
def mcMemsetAsync(ptr: int, value: int, count: int, stream: Any = None) -> None:
    """Seed 002 §2.11.3.6."""
    _memset(ptr, value, count, 1, stream, True)


@_api(0)
def mcMemsetD8(ptr: int, value: int, count: int) -> None:
    """Seed 002 §2.11.3.17."""
    _memset(ptr, value, count, 1, None, False)


@_api(0)
def mcMemsetD16(ptr: int, value: int, count: int) -> None:
    """Seed 002 §2.11.3.7: 2-byte aligned destination."""
    _memset(ptr, value, count, 2, None, False)


@_api(0)
def mcMemsetD32(ptr: int, value: int, count: int) -> None:
    """Seed 002 §2.11.3.15: 4-byte aligned destination."""
    _memset(ptr, value, count, 4, None, False)


@_api(0)
def mcMemsetD8Async(ptr: int, value: int, count: int, stream: Any = None) -> None:
    """Seed 002 §2.11.3.18."""
    _memset(ptr, value, count, 1, stream, True)


@_api(0)
def mcMemsetD16Async(ptr: int, value: int, count: int, stream: Any = None) -> None:
    """Seed 002 §2.11.3.8."""
    _memset(ptr, value, count, 2, stream, True)


@_api(0)
def mcMemsetD32Async(ptr: int, value: int, count: int, stream: Any = None) -> None:
    """Seed 002 §2.11.3.16."""
    _memset(ptr, value, count, 4, stream, True)


__all__ = ['mcMemset', 'mcMemsetAsync', 'mcMemsetD8', 'mcMemsetD16', 'mcMemsetD32', 'mcMemsetD8Async', 'mcMemsetD16Async', 'mcMemsetD32Async']
