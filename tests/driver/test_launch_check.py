"""driver/launch_check.py: a launch shape that passed validation is not
validated again while nothing it depends on changed, and is validated (and
refused) again once something did: the kernel's dynamic shared limit, the
device memory its local memory needs; arguments that are not plain ints
never take the remembered path."""
import numpy as np
import pytest

from gpudbg.driver import launch_check
from gpudbg.driver import module as driver_module
from gpudbg.driver.engine import get_engine
from gpudbg.runtime import mc

S = mc.mcError_t.mcSuccess
E = mc.mcError_t

FILL = """.version 8.0
.target sm_80
.address_size 64
.visible .entry fill(.param .u64 p)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, %tid.x;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd2, %rd2, %rd3;
    st.global.u32 [%rd2], %r1;
    ret;
}
"""


@pytest.fixture
def fill(real):
    err, mod = mc.mcModuleLoadData(FILL)
    assert err == S
    f = mc.mcModuleGetFunction(mod, "fill")[1]
    err, out = mc.mcMalloc(256 * 4)
    assert err == S
    yield f, out
    mc.mcFree(out)
    mc.mcModuleUnload(mod)


@pytest.fixture
def validations(monkeypatch):
    calls = []
    real_validate = driver_module.validate_launch

    def counted(*a, **k):
        calls.append(a[2:5])
        return real_validate(*a, **k)
    monkeypatch.setattr(driver_module, "validate_launch", counted)
    return calls


def test_a_shape_that_passed_is_validated_once(fill, validations):
    f, out = fill
    for _ in range(5):
        assert mc.mcLaunchKernel(f, 1, 64, [out], 0, None) == (S,)
    assert mc.mcLaunchKernel(f, 1, 128, [out], 0, None) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    assert validations == [((1, 1, 1), (64, 1, 1), 0), ((1, 1, 1), (128, 1, 1), 0)]


def test_a_lowered_dynamic_shared_limit_refuses_a_shape_that_passed(fill):
    f, out = fill
    A = mc.mcFuncAttribute
    big = 100 * 1024
    assert mc.mcFuncSetAttribute(f, A.mcFuncAttributeMaxDynamicSharedMemorySize, big) == (S,)
    assert mc.mcLaunchKernel(f, 1, 64, [out], big, None) == (S,)
    assert mc.mcLaunchKernel(f, 1, 64, [out], big, None) == (S,)
    assert mc.mcFuncSetAttribute(f, A.mcFuncAttributeMaxDynamicSharedMemorySize, 1024) == (S,)
    assert mc.mcLaunchKernel(f, 1, 64, [out], big, None) == (E.mcErrorInvalidValue,)
    assert mc.mcDeviceSynchronize() == (S,)


def test_arguments_that_are_not_plain_ints_are_always_validated(fill):
    f, out = fill
    ctx = get_engine().current_context()
    fn = f if isinstance(f, driver_module.Function) else None
    if fn is None:
        pytest.skip("the runtime's function handle is not the driver's Function")
    assert launch_check.validated(ctx, fn, (1, 1, 1), (64, 1, 1), 0, None) == ((1, 1, 1), (64, 1, 1), (0, 0, 0))
    with pytest.raises(driver_module.EngineError, match="grid dimensions must be ints"):
        launch_check.validated(ctx, fn, (True, 1, 1), (64, 1, 1), 0, None)
    with pytest.raises(driver_module.EngineError, match="sharedMemBytes"):
        launch_check.validated(ctx, fn, (1, 1, 1), (64, 1, 1), False, None)


def test_local_memory_is_checked_against_free_memory_on_every_launch(fill, monkeypatch):
    f, out = fill
    ctx = get_engine().current_context()
    if not isinstance(f, driver_module.Function):
        pytest.skip("the runtime's function handle is not the driver's Function")
    assert launch_check.validated(ctx, f, (1, 1, 1), (64, 1, 1), 0, None)
    shape = f.launch_shapes[((1, 1, 1), (64, 1, 1), 0, None)]
    assert shape.local_reserve == 0                   # this kernel needs no local memory: ...
    monkeypatch.setattr(shape, "local_reserve", 1 << 62)   # ... as if it needed more than is free
    calls = []
    real_validate = driver_module.validate_launch
    monkeypatch.setattr(driver_module, "validate_launch", lambda *a: calls.append(a) or real_validate(*a))
    launch_check.validated(ctx, f, (1, 1, 1), (64, 1, 1), 0, None)
    assert len(calls) == 1                            # the full check ran again, to say why (or pass)
