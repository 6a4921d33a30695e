"""The zet enums against seed 001, enumerator by enumerator, and Level Zero's value rules."""
import enum
import re

import pytest
from zet_seed import enum_titles, parse_enums, seed_text

from gpudbg.debug.zet import enums as E


def expected_values(cname, members):
    """Level Zero's rule: FORCE_UINT32 closes at 0x7fffffff; bit sets take ZE_BIT(i), others i."""
    out = {}
    for i, name in enumerate(members):
        if name.endswith("_FORCE_UINT32"):
            out[name] = 0x7FFFFFFF
        else:
            out[name] = 1 << i if cname.endswith("_flag_t") else i
    return out


def test_every_seed_enum_has_exact_members_in_order_and_values():
    seed = parse_enums()
    assert len(seed) == len(re.findall(r"^enum \w+#$", seed_text(), re.M)) == 6
    assert list(seed) == list(E.SEED_ENUMS), "seed order"
    for cname, members in seed.items():
        cls = E.SEED_ENUMS[cname]
        assert list(cls.__members__) == members, cname
        ours = {n: int(m) for n, m in cls.__members__.items()}
        assert ours == expected_values(cname, members), cname


def test_flag_enums_are_flags_under_their_flags_typedef():
    titles = enum_titles()
    for cname, title in titles.items():
        cls = E.SEED_ENUMS[cname]
        if cname.endswith("_flag_t"):
            assert title == cname.replace("_flag_t", "_flags_t")
            assert issubclass(cls, enum.IntFlag) and E.FLAGS_TYPEDEFS[title] is cls
        else:
            assert title == cname and not issubclass(cls, enum.Flag)
    assert set(E.FLAGS_TYPEDEFS) == {t for c, t in titles.items() if t != c}


def test_memory_spaces_and_key_values():
    assert [m.name.rsplit("_", 1)[-1] for m in E.zet_debug_memory_space_type_t][:4] == \
        ["DEFAULT", "SLM", "ELF", "BARRIER"]
    assert E.ZET_DEBUG_EVENT_FLAG_NEED_ACK == 1
    assert E.ZET_DEBUG_REGSET_FLAG_READABLE | E.ZET_DEBUG_REGSET_FLAG_WRITEABLE == 3
    assert E.ZET_DEBUG_EVENT_TYPE_PAGE_FAULT == 8
    assert E.ZET_STRUCTURE_TYPE_DEBUG_MEMORY_SPACE_DESC == 7 and E.ZET_STRUCTURE_TYPE_DEBUG_REGSET_PROPERTIES == 8


def test_result_codes_named_by_the_seed_exist():
    named = set(re.findall(r"\bZE_RESULT_\w+", seed_text()))
    assert named >= {"ZE_RESULT_SUCCESS", "ZE_RESULT_NOT_READY"}
    assert named <= set(E.ze_result_t.__members__)


# Level Zero's result bands (upper 16 bits) start at these values and count up by one.
BAND_STARTS = {0x0000: 0x00000000, 0x7000: 0x70000001, 0x7001: 0x70010000, 0x7002: 0x70020000,
               0x7800: 0x78000001, 0x7FF0: 0x7FF00001}


def test_result_codes_follow_level_zero_bands():
    assert E.ZE_RESULT_SUCCESS == 0 and E.ZE_RESULT_NOT_READY == 1
    assert E.ZE_RESULT_ERROR_DEVICE_LOST == 0x70000001
    assert E.ZE_RESULT_ERROR_UNINITIALIZED == 0x78000001
    assert E.ZE_RESULT_ERROR_INVALID_ARGUMENT == 0x78000004
    assert E.ZE_RESULT_ERROR_UNKNOWN == 0x7FFFFFFE and E.ZE_RESULT_FORCE_UINT32 == 0x7FFFFFFF
    bands = {}
    for m in E.ze_result_t:
        if m < 0x7FFFFFFE:
            bands.setdefault(int(m) >> 16, []).append(int(m))
    assert set(bands) == set(BAND_STARTS)
    for key, values in bands.items():
        assert values == list(range(BAND_STARTS[key], BAND_STARTS[key] + len(values))), f"band {key:#x}"
    assert all(m.name.startswith("ZE_RESULT_EXP_") for m in E.ze_result_t if m >> 16 == 0x7FF0)


def test_all_values_fit_uint32_and_flat_names():
    for cname, cls in E.ENUMS.items():
        for m in cls:
            assert 0 <= int(m) <= 0xFFFFFFFF, f"{cname}.{m.name}"
    assert E.FLAT["ZE_RESULT_NOT_READY"] is E.ze_result_t.ZE_RESULT_NOT_READY
    assert E.ZET_DEBUG_MEMORY_SPACE_TYPE_SLM is E.zet_debug_memory_space_type_t.ZET_DEBUG_MEMORY_SPACE_TYPE_SLM
    assert len(E.FLAT) == sum(len(c.__members__) for c in E.ENUMS.values())


def test_result_name():
    assert E.result_name(0x70000001) == "ZE_RESULT_ERROR_DEVICE_LOST"
    with pytest.raises(ValueError, match="0x12345 is not a ze_result_t value"):
        E.result_name(0x12345)


def test_print_counts():
    seed_members = sum(len(m) for m in parse_enums().values())
    print(f"\nzet enums: {len(E.SEED_ENUMS)} from seed 001 ({seed_members} enumerators), "
          f"{len(E.ENUMS) - len(E.SEED_ENUMS)} borrowed; ze_result_t has {len(E.ze_result_t)} codes")
    assert seed_members == 27
