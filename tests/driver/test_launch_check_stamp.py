"""driver/launch_check.py's stamp: a remembered launch shape is validated
again after anything its outcome depends on changed (the context's stack
size limit, the function's mcFuncSetAttribute dynamic shared limit) and
only then."""
import pytest

from gpudbg.driver import module as driver_module
from gpudbg.runtime import mc

S = mc.mcError_t.mcSuccess
EMPTY = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry empty()\n{\n ret;\n}\n"


@pytest.fixture
def counted(real, monkeypatch):
    calls = []
    real_validate = driver_module.validate_launch

    def count(*a, **k):
        calls.append(a[2:5])
        return real_validate(*a, **k)
    monkeypatch.setattr(driver_module, "validate_launch", count)
    err, mod = mc.mcModuleLoadData(EMPTY)
    assert err == S
    return mc.mcModuleGetFunction(mod, "empty")[1], calls


def _launch(f, n=2):
    for _ in range(n):
        assert mc.mcLaunchKernel(f, 1, 32, [], 0, None) == (S,)


def test_a_changed_stack_limit_validates_again(counted):
    f, calls = counted
    _launch(f)
    assert len(calls) == 1
    assert mc.mcDeviceSetLimit(mc.mcLimit_t.mcLimitStackSize, 2048) == (S,)
    _launch(f)
    assert len(calls) == 2
    assert mc.mcDeviceSetLimit(mc.mcLimit_t.mcLimitStackSize, 2048) == (S,)   # the same value
    _launch(f)
    assert len(calls) == 2
    assert mc.mcDeviceSynchronize() == (S,)


def test_a_changed_function_attribute_validates_again(counted):
    f, calls = counted
    _launch(f)
    assert mc.mcFuncSetAttribute(f, mc.mcFuncAttribute.mcFuncAttributeMaxDynamicSharedMemorySize, 4096) == (S,)
    _launch(f)
    assert len(calls) == 2
    assert mc.mcDeviceSynchronize() == (S,)
