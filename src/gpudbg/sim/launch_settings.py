"""The environment settings a launch runs under, parsed once per change.

Every launch is checked twice against GPUDBG_INSTRUCTION_BUDGET,
GPUDBG_HANG_TIMEOUT, GPUDBG_SCHEDULE/GPUDBG_SEED, GPUDBG_ENGINE,
GPUDBG_THREADS and GPUDBG_COREDUMP_ON_EXCEPTION: on the host when it is enqueued (driver/limits.py, so that a
bad value refuses the call) and on the device when it starts
(sim/executor.py), where GPUDBG_DIFFERENTIAL and GPUDBG_ENGINE are read
again (native/differential.wanted, native/engine.mode_for). Read through `os.environ.get` that was a dozen Mapping
look-ups with key encoding per launch, a large share of an empty kernel's
cost.

The one idea: the settings are a pure function of those variables' raw
values. `current()` takes a snapshot of them (one dict look-up each on
os.environ's own store) and returns the settings parsed from the last
snapshot when it is equal; the parsers themselves (kernel_watch, watchdog,
schedule, native) stay the only place that knows a variable's syntax and
its error message. A change made through os.environ (or pytest's
monkeypatch) is seen at the next launch, exactly as before.

What it deliberately does not do: cache a refusal (with a bad value
`current()` is None and each caller runs its own checks, which refuse the
launch with the parsers' error in the order they always did), or see variables set behind os.environ's back
(os.putenv), which os.environ.get did not see either.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass

from gpudbg.driver.watchdog import ENV_TIMEOUT
from gpudbg.sim import kernel_watch, schedule
from gpudbg.sim.native import differential as native_differential
from gpudbg.sim.native import engine as native_engine
from gpudbg.sim.native import parallel as native_parallel

ENV_COREDUMP = "GPUDBG_COREDUMP_ON_EXCEPTION"     # (dump/coredump/writer.py parses it)
VARIABLES = (kernel_watch.ENV_BUDGET, ENV_TIMEOUT, schedule.ENV_SCHEDULE, schedule.ENV_SEED,
             native_engine.ENV_ENGINE, native_parallel.ENV_THREADS, ENV_COREDUMP,
             native_differential.ENV_DIFFERENTIAL)


@dataclass(frozen=True)
class LaunchSettings:
    budget: int | None        # GPUDBG_INSTRUCTION_BUDGET; None: unset
    timeout: float | None     # GPUDBG_HANG_TIMEOUT in seconds; None: off
    engine: str               # GPUDBG_ENGINE: auto, interp or native
    threads: int              # GPUDBG_THREADS
    schedule: bool            # GPUDBG_SCHEDULE is set (schedule.for_launch decides what it asks for)
    coredumps: bool           # GPUDBG_COREDUMP_ON_EXCEPTION is on: a fault's dump shows every register
    differential: bool        # GPUDBG_DIFFERENTIAL is on (or misspelt: differential.launch refuses it)


_lock = threading.Lock()
_last: tuple[tuple, LaunchSettings] | None = None
_keys: dict[int, tuple] = {}    # id(os.environ) -> its store's keys of VARIABLES


_store: tuple | None = None     # (os.environ, its store, the store's keys of VARIABLES), the last used


def snapshot() -> tuple:
    """The raw values of VARIABLES (None when unset), cheaply."""
    env = os.environ
    store = _store
    if store is not None and store[0] is env:
        return tuple(map(store[1].get, store[2]))
    return _snapshot_of(env)


def _snapshot_of(env) -> tuple:
    """snapshot() of a mapping seen for the first time (remembered when it is
    the os module's)."""
    global _store
    data = getattr(env, "_data", None)
    encode = getattr(env, "encodekey", None)
    if data is None or encode is None:      # not the os module's mapping (replaced by a test)
        return tuple(env.get(v) for v in VARIABLES)
    keys = _keys.get(id(env))
    if keys is None:
        keys = _keys[id(env)] = (env, tuple(encode(v) for v in VARIABLES))
    _store = (env, data, keys[1])
    return tuple(map(data.get, keys[1]))


def parse() -> LaunchSettings:
    """The settings from the environment now; the parsers' ValueError
    (LaunchSettingError, ScheduleError, EngineError, ThreadsError) for
    a bad value."""
    budget = kernel_watch.budget_from_environment()
    timeout = kernel_watch.timeout_from_environment()
    if os.environ.get(schedule.ENV_SCHEDULE) or os.environ.get(schedule.ENV_SEED):
        schedule.from_environment()
    return LaunchSettings(budget, timeout, native_engine.from_environment(), native_parallel.host_threads(),
                          bool(os.environ.get(schedule.ENV_SCHEDULE)), coredumps_on(),
                          native_differential.requested())


def coredumps_on() -> bool:
    """GPUDBG_COREDUMP_ON_EXCEPTION as the coredump writer reads it."""
    from gpudbg.dump.coredump.writer import on_exception_enabled
    return on_exception_enabled()


def current() -> LaunchSettings | None:
    """The settings in force, parsed again only when a variable changed;
    None when one is bad: the caller then runs its own checks, which
    refuse the launch with the error (and in the order) it always did."""
    global _last
    snap = snapshot()
    last = _last
    if last is not None and last[0] == snap:
        return last[1]
    try:
        settings = parse()
    except ValueError:
        return None
    if snapshot() == snap:      # not changed while it was parsed
        with _lock:
            _last = (snap, settings)
    return settings
