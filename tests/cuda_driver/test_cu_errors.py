import ctypes

import pytest

from gpudbg.cuda_driver.errors import DESCRIPTIONS, cuGetErrorName, cuGetErrorString
from gpudbg.driver.status import CUresult


def _get(fn, code):
    p = ctypes.c_void_p()
    r = fn(code, ctypes.addressof(p))
    return r, (ctypes.string_at(p.value).decode() if p.value else None), p.value


@pytest.mark.parametrize("code,text", [(0, "no error"), (1, "invalid argument"), (2, "out of memory"),
                                       (3, "initialization error"), (201, "invalid device context"),
                                       (700, "an illegal memory access was encountered"),
                                       (999, "unknown error")])
def test_strings_are_the_real_drivers(code, text):
    assert _get(cuGetErrorString, code)[:2] == (0, text)


def test_names_are_the_enumerator_names_for_every_code():
    for code in CUresult:
        assert _get(cuGetErrorName, int(code))[:2] == (0, code.name)
        assert _get(cuGetErrorString, int(code))[1] == DESCRIPTIONS[code]


def test_the_string_outlives_the_call_and_is_stable():
    _, _, first = _get(cuGetErrorString, 400)
    _get(cuGetErrorString, 1)
    assert _get(cuGetErrorString, 400)[2] == first
    assert ctypes.string_at(first) == b"invalid resource handle"


def test_unknown_code_and_null_pointer():
    r, text, ptr = _get(cuGetErrorName, 12345)
    assert (r, ptr) == (1, None)
    assert _get(cuGetErrorString, -3)[0] == 1
    assert cuGetErrorString(1, 0) == 1


def test_works_before_cuinit(fresh):
    assert _get(cuGetErrorName, 3)[:2] == (0, "CUDA_ERROR_NOT_INITIALIZED")


def test_exports_gathers_every_module_name():
    from gpudbg.cuda_driver import context, copies, device, errors, exports, memory, pointer
    for module in (errors, device, context, memory, copies, pointer):
        for name in module.__all__:
            assert getattr(exports, name) is getattr(module, name)
            fn = getattr(module, name)
            assert fn.cu_entry or getattr(fn, "__wrapped__", None), name
            assert fn.__name__ == name, (name, fn.__name__)
