"""Adreno PM4 type-3/type-7 opcode names, as data.

The names and numbers follow Mesa's freedreno register database
(src/freedreno/registers/adreno/adreno_pm4.xml, enum
adreno_pm4_type3_packets), including its per-generation variants, because
the same opcode number was recycled for different packets from a5xx on
(0x32 is CP_COND_INDIRECT_BUFFER_PFD on a3xx and CP_LOAD_STATE6_GEOM on
a6xx). Each row is (opcode, name, first generation, last generation), None
meaning unbounded; lookup picks the row valid for the dump's GPU core.
This is a lookup table only: no payload field layouts.
"""
from __future__ import annotations

Row = tuple[int, str, "int | None", "int | None"]

OPCODES: tuple[Row, ...] = (
    (0x48, "CP_ME_INIT", None, None),
    (0x10, "CP_NOP", None, None),
    (0x1c, "CP_PREEMPT_ENABLE", 5, 5),
    (0x1e, "CP_PREEMPT_TOKEN", 5, 5),
    (0x3f, "CP_INDIRECT_BUFFER", None, None),
    (0x57, "CP_INDIRECT_BUFFER_CHAIN", 5, None),
    (0x37, "CP_INDIRECT_BUFFER_PFD", None, None),
    (0x26, "CP_WAIT_FOR_IDLE", None, None),
    (0x3c, "CP_WAIT_REG_MEM", None, None),
    (0x52, "CP_WAIT_REG_EQ", None, None),
    (0x53, "CP_WAIT_REG_GTE", 2, 4),
    (0x5c, "CP_WAIT_UNTIL_READ", 2, 4),
    (0x5d, "CP_WAIT_IB_PFD_COMPLETE", 2, 4),
    (0x21, "CP_REG_RMW", None, None),
    (0x2f, "CP_SET_BIN_DATA", 2, 4),
    (0x2f, "CP_SET_BIN_DATA5", 5, None),
    (0x3e, "CP_REG_TO_MEM", None, None),
    (0x3d, "CP_MEM_WRITE", None, None),
    (0x4f, "CP_MEM_WRITE_CNTR", None, None),
    (0x44, "CP_COND_EXEC", None, None),
    (0x45, "CP_COND_WRITE", 2, 4),
    (0x45, "CP_COND_WRITE5", 5, None),
    (0x46, "CP_EVENT_WRITE", 2, 6),
    (0x46, "CP_EVENT_WRITE7", 7, None),
    (0x58, "CP_EVENT_WRITE_SHD", 2, 2),
    (0x59, "CP_EVENT_WRITE_CFL", 2, 2),
    (0x5b, "CP_EVENT_WRITE_ZPD", 2, 2),
    (0x31, "CP_RUN_OPENCL", None, None),
    (0x22, "CP_DRAW_INDX", None, None),
    (0x36, "CP_DRAW_INDX_2", 2, 4),
    (0x34, "CP_DRAW_INDX_BIN", 2, 4),
    (0x35, "CP_DRAW_INDX_2_BIN", 2, 4),
    (0x23, "CP_VIZ_QUERY", 2, 4),
    (0x25, "CP_SET_STATE", None, None),
    (0x2d, "CP_SET_CONSTANT", 2, 2),
    (0x27, "CP_IM_LOAD", 2, 2),
    (0x2b, "CP_IM_LOAD_IMMEDIATE", 2, 2),
    (0x2e, "CP_LOAD_CONSTANT_CONTEXT", 2, 2),
    (0x3b, "CP_INVALIDATE_STATE", None, None),
    (0x4a, "CP_SET_SHADER_BASES", 2, 4),
    (0x50, "CP_SET_BIN_MASK", 2, 4),
    (0x51, "CP_SET_BIN_SELECT", 2, 4),
    (0x5e, "CP_CONTEXT_UPDATE", None, None),
    (0x40, "CP_INTERRUPT", None, None),
    (0x2c, "CP_IM_STORE", 2, 2),
    (0x4b, "CP_SET_DRAW_INIT_FLAGS", None, None),
    (0x5f, "CP_SET_PROTECTED_MODE", None, None),
    (0x6f, "CP_BOOTSTRAP_UCODE", None, None),
    (0x30, "CP_LOAD_STATE", 3, 3),
    (0x30, "CP_LOAD_STATE4", 4, 5),
    (0x3a, "CP_COND_INDIRECT_BUFFER_PFE", 3, 5),
    (0x32, "CP_COND_INDIRECT_BUFFER_PFD", 3, 3),
    (0x4c, "CP_SET_BIN", 2, 2),
    (0x71, "CP_TEST_TWO_MEMS", None, None),
    (0x78, "CP_REG_WR_NO_CTXT", None, None),
    (0x11, "CP_RECORD_PFP_TIMESTAMP", None, None),
    (0x66, "CP_SET_SECURE_MODE", None, None),
    (0x13, "CP_WAIT_FOR_ME", None, None),
    (0x43, "CP_SET_DRAW_STATE", 4, None),
    (0x38, "CP_DRAW_INDX_OFFSET", None, None),
    (0x28, "CP_DRAW_INDIRECT", 4, None),
    (0x29, "CP_DRAW_INDX_INDIRECT", 4, None),
    (0x2a, "CP_DRAW_INDIRECT_MULTI", 6, None),
    (0x24, "CP_DRAW_AUTO", None, None),
    (0x19, "CP_DRAW_PRED_ENABLE_GLOBAL", None, None),
    (0x1a, "CP_DRAW_PRED_ENABLE_LOCAL", None, None),
    (0x4e, "CP_DRAW_PRED_SET", None, None),
    (0x74, "CP_WIDE_REG_WRITE", 4, 4),
    (0x4d, "CP_SCRATCH_TO_REG", None, None),
    (0x4a, "CP_REG_TO_SCRATCH", 5, None),
    (0x12, "CP_WAIT_MEM_WRITES", None, None),
    (0x47, "CP_COND_REG_EXEC", None, None),
    (0x42, "CP_MEM_TO_REG", None, None),
    (0x41, "CP_EXEC_CS_INDIRECT", 4, None),
    (0x33, "CP_EXEC_CS", None, None),
    (0x50, "CP_PERFCOUNTER_ACTION", 5, 5),
    (0x53, "CP_SMMU_TABLE_UPDATE", 5, None),
    (0x65, "CP_SET_MARKER", 6, None),
    (0x56, "CP_SET_PSEUDO_REG", 6, None),
    (0x5c, "CP_CONTEXT_REG_BUNCH", 5, None),
    (0x1d, "CP_SKIP_IB2_ENABLE_GLOBAL", 5, None),
    (0x23, "CP_SKIP_IB2_ENABLE_LOCAL", 5, None),
    (0x35, "CP_SET_SUBDRAW_SIZE", 5, None),
    (0x62, "CP_WHERE_AM_I", 5, None),
    (0x64, "CP_SET_VISIBILITY_OVERRIDE", 5, None),
    (0x69, "CP_PREEMPT_ENABLE_GLOBAL", 5, 5),
    (0x6a, "CP_PREEMPT_ENABLE_LOCAL", 5, 5),
    (0x6b, "CP_CONTEXT_SWITCH_YIELD", 5, None),
    (0x6c, "CP_SET_RENDER_MODE", 5, 5),
    (0x6e, "CP_COMPUTE_CHECKPOINT", 5, 5),
    (0x73, "CP_MEM_TO_MEM", 5, None),
    (0x2c, "CP_BLIT", 5, None),
    (0x39, "CP_REG_TEST", 5, None),
    (0x63, "CP_SET_MODE", 6, None),
    (0x32, "CP_LOAD_STATE6_GEOM", 6, None),
    (0x34, "CP_LOAD_STATE6_FRAG", 6, None),
    (0x36, "CP_LOAD_STATE6", 6, None),
    (0x4c, "CP_SCRATCH_WRITE", 6, None),
    (0x74, "CP_REG_TO_MEM_OFFSET_MEM", 6, None),
    (0x72, "CP_REG_TO_MEM_OFFSET_REG", 6, None),
    (0x14, "CP_WAIT_MEM_GTE", 6, 6),
    (0x70, "CP_WAIT_TWO_REGS", 6, 6),
    (0x75, "CP_MEMCPY", 6, None),
    (0x2e, "CP_SET_BIN_DATA5_OFFSET", 6, None),
    (0x2d, "CP_SET_UNK_BIN_DATA", 7, None),
    (0x54, "CP_CONTEXT_SWITCH", 6, 6),
    (0x55, "CP_SET_AMBLE", 6, None),
    (0x6d, "CP_REG_WRITE", 6, 6),
    (0x50, "CP_START_BIN", 6, None),
    (0x51, "CP_END_BIN", 6, None),
    (0x6c, "CP_PREEMPT_DISABLE", 6, 6),
    (0x14, "CP_WAIT_TIMESTAMP", 7, None),
    (0x15, "CP_GLOBAL_TIMESTAMP", 7, None),
    (0x16, "CP_LOCAL_TIMESTAMP", 7, None),
    (0x17, "CP_THREAD_CONTROL", 7, None),
    (0x18, "CP_RESOURCE_LIST", 7, None),
    (0x1b, "CP_BV_BR_COUNT_OPS", 7, None),
    (0x1c, "CP_MODIFY_TIMESTAMP", 7, None),
    (0x5d, "CP_NON_CONTEXT_REG_BUNCH", 7, None),
    (0x49, "CP_MEM_TO_SCRATCH_MEM", 7, None),
    (0x7f, "CP_FIXED_STRIDE_DRAW_TABLE", 7, None),
    (0x1f, "CP_RESET_CONTEXT_STATE", 7, None),
    (0x3a, "CP_CCHE_INVALIDATE", 7, None),
    (0x6c, "CP_SCOPE_CNTL", 7, None),
    (0x27, "CP_SKIP_IB_MODE", 7, None),
    (0x58, "CP_MEMORY_MAP_UPDATE", 8, None),
    (0x59, "CP_BARRIER", 8, None),
)

# Opcodes whose payload starts with a 64-bit (a5xx+) or 32-bit target
# address followed by a size in dwords: the indirect buffer calls.
INDIRECT_BUFFER_NAMES = frozenset({
    "CP_INDIRECT_BUFFER", "CP_INDIRECT_BUFFER_PFD", "CP_INDIRECT_BUFFER_CHAIN",
})


def _applies(row: Row, gen: int) -> bool:
    _, _, first, last = row
    return (first is None or gen >= first) and (last is None or gen <= last)


def _build() -> dict[int, dict[int, str]]:
    table: dict[int, dict[int, str]] = {}
    for gen in range(2, 9):
        names: dict[int, str] = {}
        for row in OPCODES:
            if _applies(row, gen):
                names.setdefault(row[0], row[1])
        table[gen] = names
    return table


_BY_GEN = _build()


def opcode_name(opcode: int, gen: int) -> str | None:
    """The packet name for `opcode` on Adreno generation `gen` (2..8)."""
    return _BY_GEN[min(max(gen, 2), 8)].get(opcode)


def opcode_number(name: str, gen: int) -> int | None:
    for op, n in _BY_GEN[min(max(gen, 2), 8)].items():
        if n == name:
            return op
    return None
