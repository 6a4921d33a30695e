"""Result names, descriptions and the getErrorStringEx buffer contract."""
import re

from cudbg_seed import header_code
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudbg.debug.cudbg import errors
from gpudbg.debug.cudbg.enums import CUDBGResult

R = CUDBGResult


def seed_result_names():
    body = re.search(r"CUDBGResultNames\[\]\s*=\s*\{(.*?)\};", header_code(), re.S).group(1)
    return re.findall(r'"([^"]*)"', body)


def test_names_table_is_the_headers_array():
    assert list(errors.CUDBG_RESULT_NAMES) == seed_result_names()
    for code in R:
        assert errors.cudbgGetErrorString(code) == code.name


def test_out_of_range_codes_are_undefined_like_the_c_inline():
    assert errors.cudbgGetErrorString(len(seed_result_names())) == "*UNDEFINED*"
    assert errors.cudbgGetErrorString(-1) == "*UNDEFINED*"
    assert errors.cudbgGetErrorString(0xFFFFFFFF) == "*UNDEFINED*"


def test_every_code_has_a_human_description():
    assert set(errors.DESCRIPTIONS) == set(R)
    for code, text in errors.DESCRIPTIONS.items():
        assert text and text != code.name and "CUDBG_" not in text
    assert len(set(errors.DESCRIPTIONS.values())) == len(R)
    assert errors.describe(R.CUDBG_ERROR_INVALID_LANE) == "The specified lane cannot be found"
    assert errors.describe(999) == "Unknown CUDBGResult code 999"


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=126), max_size=80),
       st.integers(0, 120))
def test_fill_error_string_contract(message, bufsz):
    result, buf, msgsz = errors.fill_error_string(message, bufsz)
    assert msgsz == len(message) + 1
    if bufsz >= msgsz:
        assert result is R.CUDBG_SUCCESS
        assert buf == message.encode() + b"\0"
    else:
        assert result is R.CUDBG_ERROR_BUFFER_TOO_SMALL
        assert buf == b""


def test_fill_error_string_rejects_sizes_that_are_not_uint32():
    assert errors.fill_error_string("x", -1)[0] is R.CUDBG_ERROR_INVALID_ARGS
    assert errors.fill_error_string("x", 1 << 32)[0] is R.CUDBG_ERROR_INVALID_ARGS
    assert errors.fill_error_string("x", True)[0] is R.CUDBG_ERROR_INVALID_ARGS
    assert errors.fill_error_string("caf\u00e9", 10)[1] == b"caf?\0"


def test_last_error_size_then_copy_and_invalidation():
    last = errors.LastError()
    assert last.getErrorStringEx(1) == (R.CUDBG_SUCCESS, b"\0", 1)
    last.record("readRegister", R.CUDBG_ERROR_INVALID_LANE, "lane 40 >= 32")
    result, _, need = last.getErrorStringEx(0)
    assert result is R.CUDBG_ERROR_BUFFER_TOO_SMALL
    result, buf, size = last.getErrorStringEx(need)
    assert result is R.CUDBG_SUCCESS and size == need
    assert buf == b"readRegister: CUDBG_ERROR_INVALID_LANE: The specified lane cannot be found (lane 40 >= 32)\0"
    last.record("readPC", R.CUDBG_SUCCESS)
    assert last.getErrorStringEx(8) == (R.CUDBG_SUCCESS, b"\0", 1)
    last.record("readPC", R.CUDBG_ERROR_INVALID_WARP)
    assert last.message == "readPC: CUDBG_ERROR_INVALID_WARP: The specified warp cannot be found"
    last.clear()
    assert last.message == ""
