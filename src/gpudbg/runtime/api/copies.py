"""Seed 002 §2.10: memory copies, with the synchronization rules of
chapter 1.2.
"""
from __future__ import annotations

from typing import Any

from gpudbg.driver import transfer as _transfer
from gpudbg.runtime.api._base import _api, _ctx
from gpudbg.runtime.types import (
    mcMemcpyKind,
)


# ------------------------------------------------------------------ 2.10 memcpy
@_api(0)
def mcMemcpy(dst: Any, src: Any, count: int, kind: Any) -> None:
    """Seed 002 §2.10.3.3 with the synchronization rules of §1.2.1.1."""
    ctx = _ctx()
    _transfer.memcpy(ctx, dst, src, count, kind, ctx.legacy, is_async=False)


@_api(0)
def mcMemcpyAsync(dst: Any, src: Any, count: int, kind: Any, stream: Any = None) -> None:
    """Seed 002 §2.10.3.11 with the rules of §1.2.1.2."""
    ctx = _ctx()
    _transfer.memcpy(ctx, dst, src, count, kind, ctx.stream(stream), is_async=True)


@_api(0)
def mcMemcpyHtoD(dst: int, src: Any, count: int) -> None:
    """Seed 002 §2.10.3.18."""
    ctx = _ctx()
    _transfer.memcpy(ctx, dst, src, count, mcMemcpyKind.mcMemcpyHostToDevice, ctx.legacy, False)


@_api(0)
def mcMemcpyDtoH(dst: Any, src: int, count: int) -> None:
    """Seed 002 §2.10.3.14."""
    ctx = _ctx()
    _transfer.memcpy(ctx, dst, src, count, mcMemcpyKind.mcMemcpyDeviceToHost, ctx.legacy, False)


@_api(0)
def mcMemcpyDtoD(dst: int, src: int, count: int) -> None:
    """Seed 002 §2.10.3.12."""
    ctx = _ctx()
    _transfer.memcpy(ctx, dst, src, count, mcMemcpyKind.mcMemcpyDeviceToDevice, ctx.legacy, False)


__all__ = ['mcMemcpy', 'mcMemcpyAsync', 'mcMemcpyHtoD', 'mcMemcpyDtoH', 'mcMemcpyDtoD']
