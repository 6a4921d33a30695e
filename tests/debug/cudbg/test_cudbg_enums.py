"""The enums module against the header text, enumerator by enumerator."""
import enum

import pytest
from cudbg_seed import count_typedef_enums, parse_enums
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudbg.debug.cudbg import enums
from gpudbg.dump.coredump import snapshot
from gpudbg.sim import faults


def test_every_seed_enum_is_defined_with_exact_members_and_values():
    seed = parse_enums()
    assert len(seed) == count_typedef_enums() == 29
    missing = sorted(set(seed) - set(enums.ENUMS))
    assert not missing, f"enums of seed 000 not in gpudbg.debug.cudbg.enums: {missing}"
    for cname, members in seed.items():
        cls = enums.ENUMS[cname]
        ours = {name: int(m.value) for name, m in cls.__members__.items()}
        assert ours == dict(members), f"{cname} differs from the header"


def test_no_enum_beyond_the_header():
    assert set(enums.ENUMS) == set(parse_enums())


def test_member_count_printed():
    total = sum(len(cls.__members__) for cls in enums.ENUMS.values())
    assert total == sum(len(m) for m in parse_enums().values())
    print(f"\ncudbg enums: {len(enums.ENUMS)} enums, {total} members")


def test_shared_enums_are_reused_not_duplicated():
    assert enums.CUDBGException_t is faults.CUDBGException
    assert enums.ENUMS["CUDBGException_t"] is faults.CUDBGException
    assert enums.CUDBGCoredumpGenerationFlags is snapshot.CUDBGCoredumpGenerationFlags


def test_every_value_is_uint32_sized():
    for cname, cls in enums.ENUMS.items():
        for member in cls:
            assert 0 <= int(member) <= 0xFFFFFFFF, f"{cname}.{member.name}"


def test_flag_enums_combine_and_flat_names_exist():
    lw = enums.CUDBG_COREDUMP_LIGHTWEIGHT_FLAGS
    assert lw == (enums.CUDBG_COREDUMP_SKIP_NONRELOCATED_ELF_IMAGES | enums.CUDBG_COREDUMP_SKIP_GLOBAL_MEMORY
                  | enums.CUDBG_COREDUMP_SKIP_SHARED_MEMORY | enums.CUDBG_COREDUMP_SKIP_LOCAL_MEMORY
                  | enums.CUDBG_COREDUMP_SKIP_CONSTBANK_MEMORY)
    assert issubclass(enums.CUDBGCapabilityFlags, enum.IntFlag)
    assert enums.CUDBG_ERROR_NOT_SUPPORTED is enums.CUDBGResult.CUDBG_ERROR_NOT_SUPPORTED
    assert enums.REG_CLASS_UREG_FULL == 0xB and enums.ptxURegStorage == 16
    assert len(enums.FLAT) == sum(len(c.__members__) for c in enums.ENUMS.values())


@settings(max_examples=50, deadline=None)
@given(st.sets(st.integers(0, 31)))
def test_attribute_mask_round_trips(positions):
    mask = enums.attribute_mask(positions)
    assert enums.attributes_in(mask) == sorted(positions)


def test_attribute_mask_rejects_bad_positions():
    with pytest.raises(ValueError, match="32-bit"):
        enums.attribute_mask([32])
    with pytest.raises(ValueError, match="32 bits"):
        enums.attributes_in(1 << 32)
