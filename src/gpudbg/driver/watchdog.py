"""Hang detection for host waits: a fence that never retires.

Every blocking host wait on fences (stream/event/device synchronize, a
synchronous copy) goes through `wait`. It waits on the GPU's condition as
before, but if the waited fences make no progress for GPUDBG_HANG_TIMEOUT
seconds (default 60; 0/off disables) while the GPU can make none either (no
engine executing a command, every non-empty channel's head waiting on a
semaphore or value: sim/frontend.py `blocked_heads`), nothing can ever
release them: that is a hang. Then, as a kernel's hang recovery does, it
latches the hang in the GPU's fault registers, writes a devcoredump when
dumping is on (dump/devcoredump/capture.py), and stops the waiting
channels' group with mcErrorLaunchTimeout, which becomes the context's
sticky error and wakes the waiter. The one idea is to judge progress by the
GPU's own counters: with copy engines and concurrent kernels several
commands execute at once, and any of them starting or retiring is progress
(`Frontend.progress_token`), so a long kernel or copy is never a hang here;
a kernel that runs too long is stopped by the executor's kernel watch
(sim/kernel_watch.py, one per running kernel) with the same
GPUDBG_HANG_TIMEOUT, after which a wait stuck behind it is judged again. It
does not detect a host callback that never returns while the GPU is busy
elsewhere, nor waits with an explicit timeout.
"""
from __future__ import annotations

import math
import operator
import os
import threading
import time
from typing import Any, Callable, Iterable

import numpy as np

from gpudbg.driver import commands as C
from gpudbg.driver.fence import ChannelError
from gpudbg.driver.status import CUresult

ENV_TIMEOUT = "GPUDBG_HANG_TIMEOUT"
DEFAULT_TIMEOUT_S = 60.0
_OFF = ("0", "off", "none", "inf", "infinity")
_CONDITIONS = {0: ">=", 1: "==", 2: "to share a bit with", 3: "to NOR to non-zero with"}


class HangTimeoutError(ValueError):
    """GPUDBG_HANG_TIMEOUT is not a number of seconds."""


def hang_timeout() -> float | None:
    """Seconds without progress that make a wait a hang; None: never."""
    raw = os.environ.get(ENV_TIMEOUT, "").strip().lower()
    if raw == "":
        return DEFAULT_TIMEOUT_S
    if raw in _OFF:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise HangTimeoutError(f"{ENV_TIMEOUT}={raw!r} is not a number of seconds "
                               f"(or 0/off to disable hang detection)") from None
    if math.isnan(value) or value < 0:
        raise HangTimeoutError(f"{ENV_TIMEOUT}={raw!r} must be a positive number of seconds")
    return None if value == 0 or math.isinf(value) else value


Entries = Iterable[tuple[Any, int]]   # (TrackingSemaphore, fence value)


def _channels(entries: Entries) -> list[Any]:
    out: list[Any] = []
    for sem, _v in entries:
        ch = getattr(sem, "channel", None)
        if ch is not None and ch not in out:
            out.append(ch)
    return out


_TOKEN = operator.methodcaller("progress_token")
_COMPLETED = operator.attrgetter("completed")


def _progress(frontends: tuple, semaphores: tuple) -> tuple:
    """What changes when the waited work moves (taken at every wake-up of a
    wait: the GPUs' front ends and the channels' semaphores, found once per wait)."""
    return tuple(map(_TOKEN, frontends)) + tuple(map(_COMPLETED, semaphores))


def wait(cv: threading.Condition, entries: Entries, reached: Callable[[], bool]) -> None:
    """Block until reached(); detect and break a hang on the way."""
    entries = tuple(entries)
    with cv:
        if reached():
            return
        limit = hang_timeout()
        channels = _channels(entries)
        if limit is None or not channels:
            cv.wait_for(reached)
            return
        frontends = tuple({id(ch.gpu): ch.gpu.frontend for ch in channels}.values())
        semaphores = tuple(ch.semaphore for ch in channels)
        token, since = _progress(frontends, semaphores), time.monotonic()
        while True:
            remaining = since + limit - time.monotonic()
            if remaining > 0:
                cv.wait(remaining)      # woken by every GPU state change, or at the deadline
            if reached():
                return
            now, current = time.monotonic(), _progress(frontends, semaphores)
            if current != token:
                token, since = current, now
            elif now - since >= limit and not declare_hang(entries, now - since):
                since = now   # the GPU can still move: keep waiting


def _read(gpu: Any, address: int, width: int) -> int | None:
    try:
        return int(gpu.memory.view(address, width).view(np.uint32 if width == 4 else np.uint64)[0])
    except Exception:   # an unmapped word: the command will fault when it runs
        return None


def _owner(gpu: Any, address: int) -> Any:
    for ch in gpu.frontend.channels:
        if ch.semaphore.address == address:
            return ch
    return None


def describe_blocked(gpu: Any, channel: Any, offset: int, cmd: C.Command) -> str:
    """What a blocked head waits for, in words."""
    where = f"{cmd.opcode.name} at ring word {offset} (iova 0x{channel.ring.base + 4 * offset:x})"
    if cmd.opcode is C.Opcode.WAIT_VALUE:
        cur = _read(gpu, cmd.address, cmd.width)
        cond = _CONDITIONS.get(cmd.flags & ~(1 << 30), f"flags 0x{cmd.flags:x}")
        return (f"{where}, waiting for the {cmd.width}-byte word at 0x{cmd.address:x} to be {cond} "
                f"{cmd.value} (it holds {cur})")
    cur = _read(gpu, cmd.address, 8)
    owner = _owner(gpu, cmd.address)
    whose = f", the fence of channel {owner.name}" if owner is not None else ""
    return f"{where}, waiting for semaphore 0x{cmd.address:x}{whose} to reach {cmd.value} (it holds {cur})"


def _chain(gpu: Any, channel: Any, heads: dict[int, tuple[Any, int, C.Command]]) -> list[str]:
    """Follow SEM_ACQUIREs on other channels' fences to the root waiter."""
    out, seen = [], {id(channel)}
    ch = channel
    while True:
        _c, _off, cmd = heads[id(ch)]
        nxt = _owner(gpu, cmd.address) if cmd.opcode is C.Opcode.SEM_ACQUIRE else None
        if nxt is None or id(nxt) in seen or id(nxt) not in heads:
            return out
        seen.add(id(nxt))
        out.append(f"channel {nxt.name} (ring {gpu.frontend.channels.index(nxt)}) is blocked at "
                   + describe_blocked(gpu, *heads[id(nxt)]))
        ch = nxt


def declare_hang(entries: Entries, waited_s: float) -> bool:
    """If every channel is blocked, break the hang of the waited fences
    (caller holds the GPU's cv); False when the GPU can still progress."""
    stuck = [ch for ch in _channels((s, v) for s, v in entries if not s.reached(v))]
    if not stuck:
        return False
    gpu = stuck[0].gpu
    blocked = gpu.frontend.blocked_heads()
    if not blocked:
        return False
    heads = {id(ch): (ch, off, cmd) for ch, off, cmd in blocked}
    hung = [ch for ch in stuck if ch.gpu is gpu and id(ch) in heads]
    if not hung:
        return False
    from gpudbg.dump.devcoredump.capture import on_hang

    first = hung[0]
    _c, off, cmd = heads[id(first)]
    path, dump_error = on_hang(gpu, first, off, cmd)
    ring = gpu.frontend.channels.index(first)
    parts = [f"GPU hang: fence {first.semaphore.issued} of channel {first.name} (ring {ring}) has not "
             f"retired after {waited_s:.1f} s without progress (retired fence "
             f"{first.semaphore.completed}); every channel is blocked; the channel is blocked at "
             + describe_blocked(gpu, first, off, cmd)]
    parts += _chain(gpu, first, heads)
    if path is not None:
        parts.append(f"devcoredump: {path}")
    elif dump_error is not None:
        parts.append(f"devcoredump failed: {dump_error}")
    error = ChannelError(CUresult.CUDA_ERROR_LAUNCH_TIMEOUT, "; ".join(parts))
    from gpudbg.sim import debug_port
    debug_port.notify("timeout", gpu, error.message)
    for group in dict.fromkeys(ch.group for ch in hung):
        gpu.frontend.fault_group(group, error)
    return True
