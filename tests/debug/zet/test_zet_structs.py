"""The zet structs against seed 001's "Public Members", and their construction rules."""
import dataclasses

import pytest
from zet_seed import parse_structs

from gpudbg.debug.zet import enums as E
from gpudbg.debug.zet import structs as S


def test_every_seed_struct_has_exact_fields_and_types():
    seed = parse_structs()
    assert len(seed) == 9
    assert list(seed) == list(S.SEED_STRUCTS)
    for cname, members in seed.items():
        cls = S.SEED_STRUCTS[cname]
        assert list(cls.C_FIELDS) == members, cname
        assert [f.name for f in dataclasses.fields(cls)] == [n for _, n in members], cname


def test_every_field_type_is_known():
    for cname, cls in S.STRUCTS.items():
        for ctype, name in cls.C_FIELDS:
            assert (ctype in ("uint32_t", "uint64_t") or ctype.endswith("*") or ctype in S.ENUM_CTYPES
                    or ctype in S.STRUCTS), f"{cname}.{name}: {ctype}"
    for ctype, cls in S.ENUM_CTYPES.items():
        assert E.ENUMS.get(ctype, E.FLAGS_TYPEDEFS.get(ctype)) is cls


def test_union_members_match_event_types():
    members = {n for _, n in S.zet_debug_event_info_t.C_FIELDS}
    assert set(S.EVENT_INFO_MEMBER) == set(E.zet_debug_event_type_t) - {E.ZET_DEBUG_EVENT_TYPE_FORCE_UINT32}
    assert {m for m in S.EVENT_INFO_MEMBER.values() if m} == members


def test_device_thread_wildcards():
    assert S.UINT32_MAX == 2**32 - 1
    assert S.ZE_DEVICE_THREAD_ALL == S.ze_device_thread_t(S.UINT32_MAX, S.UINT32_MAX, S.UINT32_MAX, S.UINT32_MAX)
    assert S.ZE_DEVICE_THREAD_ALL.is_all and not S.ZE_DEVICE_THREAD_ALL.is_single
    partial = S.ze_device_thread_t(0, S.ZE_DEVICE_THREAD_ALL_SUBSLICES, 1, 2)
    assert not partial.is_all and not partial.is_single
    assert S.ze_device_thread_t(0, 0, 0, 0).is_single
    with pytest.raises(S.ZetStructError, match="slice=-1 does not fit uint32_t"):
        S.ze_device_thread_t(-1, 0, 0, 0)
    with pytest.raises(S.ZetStructError, match="eu must be an integer, got str"):
        S.ze_device_thread_t(0, 0, "1", 0)


def test_event_union_discipline_and_ack():
    stop = S.zet_debug_event_info_thread_stopped_t(S.ze_device_thread_t(0, 1, 2, 3))
    ev = S.zet_debug_event_t(E.ZET_DEBUG_EVENT_TYPE_THREAD_STOPPED, E.ZET_DEBUG_EVENT_FLAG_NEED_ACK,
                             S.zet_debug_event_info_t(thread=stop))
    assert ev.needs_ack and ev.payload is stop and ev.type is E.ZET_DEBUG_EVENT_TYPE_THREAD_STOPPED
    bare = S.zet_debug_event_t(E.ZET_DEBUG_EVENT_TYPE_PROCESS_ENTRY)
    assert not bare.needs_ack and bare.payload is None and bare.flags == 0
    with pytest.raises(S.ZetStructError, match="ZET_DEBUG_EVENT_TYPE_DETACHED carries info.detached, not nothing"):
        S.zet_debug_event_t(E.ZET_DEBUG_EVENT_TYPE_DETACHED)
    with pytest.raises(S.ZetStructError, match="carries info.page_fault, not \\['thread'\\]"):
        S.zet_debug_event_t(E.ZET_DEBUG_EVENT_TYPE_PAGE_FAULT, 0, S.zet_debug_event_info_t(thread=stop))
    with pytest.raises(S.ZetStructError, match="union: set one member"):
        S.zet_debug_event_info_t(thread=stop, detached=S.zet_debug_event_info_detached_t())
    with pytest.raises(S.ZetStructError, match="thread must be a zet_debug_event_info_thread_stopped_t"):
        S.zet_debug_event_info_t(thread=S.ze_device_thread_t())
    with pytest.raises(S.ZetStructError, match="flags=0x2 has bits outside zet_debug_event_flag_t"):
        S.zet_debug_event_t(E.ZET_DEBUG_EVENT_TYPE_PROCESS_EXIT, 2)
    with pytest.raises(S.ZetStructError, match="type=0x9 is not a zet_debug_event_type_t value"):
        S.zet_debug_event_t(9)


def test_enum_fields_are_decoded():
    pf = S.zet_debug_event_info_page_fault_t(0x1000, 0xFFF, 1)
    assert pf.reason is E.ZET_DEBUG_PAGE_FAULT_REASON_MAPPING_ERROR
    assert S.zet_debug_event_info_detached_t(1).reason is E.ZET_DEBUG_DETACH_REASON_HOST_EXIT
    mod = S.zet_debug_event_info_module_t(0, 0x1000, 0x2000, 0x7000_0000)
    assert mod.format is E.ZET_MODULE_DEBUG_INFO_FORMAT_ELF_DWARF
    with pytest.raises(S.ZetStructError, match="moduleEnd 0x10 is below moduleBegin 0x20"):
        S.zet_debug_event_info_module_t(0, 0x20, 0x10, 0)
    with pytest.raises(S.ZetStructError, match="address=.* does not fit uint64_t"):
        S.zet_debug_event_info_page_fault_t(2**64, 0, 0)


def test_memory_space_desc():
    d = S.zet_debug_memory_space_desc_t(type=E.ZET_DEBUG_MEMORY_SPACE_TYPE_BARRIER, address=4)
    assert d.stype is E.ZET_STRUCTURE_TYPE_DEBUG_MEMORY_SPACE_DESC and d.pNext is None
    assert S.zet_debug_memory_space_desc_t(type=1).type is E.ZET_DEBUG_MEMORY_SPACE_TYPE_SLM
    with pytest.raises(S.ZetStructError, match="stype must be ZET_STRUCTURE_TYPE_DEBUG_MEMORY_SPACE_DESC"):
        S.zet_debug_memory_space_desc_t(stype=E.ZET_STRUCTURE_TYPE_DEBUG_REGSET_PROPERTIES)
    with pytest.raises(S.ZetStructError, match="pNext must be None"):
        S.zet_debug_memory_space_desc_t(pNext=object())
    with pytest.raises(S.ZetStructError, match="type=0x4 is not a zet_debug_memory_space_type_t"):
        S.zet_debug_memory_space_desc_t(type=4)
    with pytest.raises(S.ZetStructError, match="FORCE_UINT32 is not a memory space"):
        S.zet_debug_memory_space_desc_t(type=E.ZET_DEBUG_MEMORY_SPACE_TYPE_FORCE_UINT32)


def test_regset_properties():
    p = S.zet_debug_regset_properties_t(type=1, generalFlags=3, count=255, bitSize=32, byteSize=4)
    assert p.generalFlags == E.ZET_DEBUG_REGSET_FLAG_READABLE | E.ZET_DEBUG_REGSET_FLAG_WRITEABLE
    assert p.stype is E.ZET_STRUCTURE_TYPE_DEBUG_REGSET_PROPERTIES
    with pytest.raises(S.ZetStructError, match="byteSize 2 cannot hold a 32-bit register"):
        S.zet_debug_regset_properties_t(bitSize=32, byteSize=2)
    with pytest.raises(S.ZetStructError, match="generalFlags=0x4 has bits outside"):
        S.zet_debug_regset_properties_t(generalFlags=4)


def test_config():
    assert S.zet_debug_config_t(1234).pid == 1234
    with pytest.raises(S.ZetStructError, match="pid=4294967296 does not fit uint32_t"):
        S.zet_debug_config_t(2**32)
