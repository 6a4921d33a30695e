"""Launch settings parsed once per change of the environment
(sim/launch_settings.py): every change made through os.environ is seen by
the next launch, a bad value is never cached, and an unchanged environment
is not parsed again."""
from __future__ import annotations

import numpy as np
import pytest

import gpudbg
from gpudbg.sim import launch_settings
from gpudbg.sim.faults import HangKind

SPIN = r"""
extern "C" __global__ void spin(int *flag) {
    while (atomicAdd(flag, 0) == 0) { }
}
"""


@pytest.fixture
def fresh_device():
    gpudbg.Device(0).reset()      # no sticky error left by an earlier test
    yield
    gpudbg.Device(0).reset()      # nor by this one's budget fault


@pytest.fixture
def clean_env(monkeypatch):
    for name in launch_settings.VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_each_change_is_seen(clean_env):
    base = launch_settings.current()
    assert base.budget is None and base.threads == 1 and base.engine == "auto"
    clean_env.setenv("GPUDBG_HANG_TIMEOUT", "5")
    assert launch_settings.current().timeout == 5.0
    clean_env.setenv("GPUDBG_HANG_TIMEOUT", "7.5")
    assert launch_settings.current().timeout == 7.5
    clean_env.setenv("GPUDBG_THREADS", "2")
    clean_env.setenv("GPUDBG_INSTRUCTION_BUDGET", "1000")
    s = launch_settings.current()
    assert (s.timeout, s.threads, s.budget) == (7.5, 2, 1000)
    assert not s.coredumps
    clean_env.setenv("GPUDBG_COREDUMP_ON_EXCEPTION", "1")
    assert launch_settings.current().coredumps
    clean_env.delenv("GPUDBG_COREDUMP_ON_EXCEPTION")
    clean_env.delenv("GPUDBG_THREADS")
    clean_env.delenv("GPUDBG_INSTRUCTION_BUDGET")
    clean_env.delenv("GPUDBG_HANG_TIMEOUT")
    assert launch_settings.current() == base


def test_an_unchanged_environment_is_not_parsed_again(clean_env):
    first = launch_settings.current()
    calls = []
    real = launch_settings.parse
    clean_env.setattr(launch_settings, "parse", lambda: calls.append(1) or real())
    assert launch_settings.current() is first
    assert calls == []
    clean_env.setenv("GPUDBG_ENGINE", "interp")
    assert launch_settings.current().engine == "interp"
    assert calls == [1]
    assert launch_settings.current().engine == "interp"
    assert calls == [1]


@pytest.mark.parametrize("name,value", [("GPUDBG_THREADS", "many"), ("GPUDBG_ENGINE", "gpu"),
                                        ("GPUDBG_SCHEDULE", "sideways"), ("GPUDBG_INSTRUCTION_BUDGET", "0"),
                                        ("GPUDBG_HANG_TIMEOUT", "soon")])
def test_a_bad_value_is_never_cached(clean_env, name, value):
    assert launch_settings.current() is not None
    clean_env.setenv(name, value)
    assert launch_settings.current() is None
    assert launch_settings.current() is None        # parsed (and refused) again, not remembered
    clean_env.delenv(name)
    assert launch_settings.current() is not None


def test_a_budget_set_between_launches_stops_the_next(fresh_device, clean_env):
    m = gpudbg.compile(SPIN, name="spin_settings.cu")
    flag = gpudbg.to_device(np.ones(1, np.int32))
    m.spin[1, 32](flag)                              # finishes at once: the flag is set
    gpudbg.synchronize()
    clean_env.setenv("GPUDBG_HANG_TIMEOUT", "off")
    clean_env.setenv("GPUDBG_INSTRUCTION_BUDGET", "20000")
    flag.copy_from_host(np.zeros(1, np.int32))
    m.spin[1, 32](flag)
    with pytest.raises(gpudbg.KernelFaultError) as ei:
        gpudbg.synchronize()
    assert ei.value.report.hang is HangKind.INSTRUCTION_BUDGET


def test_the_schedule_follows_the_environment_and_configure(clean_env):
    from gpudbg.sim import executor, schedule
    from gpudbg.sim.gpu import SimGPU
    gpu = SimGPU()
    assert executor._launch_environment(gpu, None, launch_settings.current())[2] is None          # lowest pc
    clean_env.setenv("GPUDBG_SCHEDULE", "random")
    assert launch_settings.current().schedule
    assert isinstance(executor._launch_environment(gpu, None, launch_settings.current())[2], schedule.RandomSchedule)
    clean_env.delenv("GPUDBG_SCHEDULE")
    assert executor._launch_environment(gpu, None, launch_settings.current())[2] is None
    schedule.configure("random", 3)
    try:
        assert isinstance(executor._launch_environment(gpu, None, launch_settings.current())[2], schedule.RandomSchedule)
    finally:
        schedule.reset()
    assert executor._launch_environment(gpu, None, launch_settings.current())[2] is None


def test_the_differential_mode_and_the_engine_come_from_the_settings(clean_env):
    from gpudbg.sim.native import differential, engine
    assert not launch_settings.current().differential and not differential.wanted()
    clean_env.setenv("GPUDBG_DIFFERENTIAL", "1")
    assert launch_settings.current().differential and differential.wanted()
    clean_env.setenv("GPUDBG_DIFFERENTIAL", "sometimes")    # not a mode: the launch is handed over to refuse it
    assert differential.wanted()
    clean_env.delenv("GPUDBG_DIFFERENTIAL")
    assert not differential.wanted()
    clean_env.setenv("GPUDBG_ENGINE", "native")
    assert engine.for_launch() == "native"
    clean_env.setenv("GPUDBG_ENGINE", "interp")
    assert engine.for_launch() == "interp"


def test_an_engine_a_differential_launch_forces_is_never_cached(clean_env):
    from gpudbg.sim.native import engine
    clean_env.setenv("GPUDBG_ENGINE", "interp")
    with engine.force("native", full=True):
        assert engine.for_launch() == "native"
        clean_env.setenv("GPUDBG_THREADS", "1")      # a change parsed on the forced thread
        assert launch_settings.current().engine == "interp"
    assert engine.for_launch() == "interp"
