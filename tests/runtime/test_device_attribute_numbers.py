"""mcDeviceAttribute_t is numbered as cudaDeviceAttr (checked by name
against cuda-bindings: 108/109 were once off by one), so the runtime can
read the engine's one CUdevice_attribute table by number."""
from cuda.bindings import runtime as cudart

from gpudbg.driver.device_attributes import attribute_values as engine_values
from gpudbg.runtime.types import attribute_values, mcDeviceAttribute_t
from gpudbg.sim.device_model import DeviceModel


def test_numbers_match_cuda_by_name():
    theirs = {a.name: int(a) for a in cudart.cudaDeviceAttr}
    removed_in_cuda_13 = {"cudaDevAttrCooperativeMultiDeviceLaunch"}
    for a in mcDeviceAttribute_t:
        name = "cuda" + a.name[2:].replace("Mc", "Cuda")
        if name in removed_in_cuda_13:
            continue
        assert name in theirs, name
        assert int(a) == theirs[name], (a.name, int(a), theirs[name])


def test_runtime_answers_are_the_engine_table():
    m = DeviceModel()
    facts = engine_values(m)
    assert {int(a): v for a, v in attribute_values(m).items()} == {int(a): facts[int(a)] for a in mcDeviceAttribute_t}
