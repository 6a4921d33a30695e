"""zetDebugReadMemory / zetDebugWriteMemory: the four zet memory spaces on
the Session's spaces, plus the ELF space's module images.

- DEFAULT: addresses as the thread sees them, i.e. the generic address space
  (global, and the shared and local windows) of the thread's first valid
  channel (Session GENERIC at that lane). With the 'all' thread, which the
  spec allows for this space only, device addresses: code where a loaded
  module's code lies (so a tool can read the instructions at a MODULE_LOAD's
  ``load`` address), global memory everywhere else.
- SLM: offsets into the shared memory of the thread's block (Session SHARED).
- ELF: a read-only space the facade lays out itself: each module, when its
  MODULE_LOAD is read, gets a relocated ELF image (the coredump writer's
  cubin: one ``.text.<function>`` section at the function's code address,
  symbols, and a ``.debug_line`` of the PTX ``.loc`` lines) at a fresh
  page-aligned address; the event's ``[moduleBegin, moduleEnd)`` is that
  range. Addresses are never reused, so an image stays readable after its
  module unloads.
- BARRIER: a read-only snapshot of the barrier state of the thread's block
  (layout below), built from the Session's warp and lane views.

BARRIER layout (little-endian, 4-byte fields; ``desc.address`` is an offset)::

    0x00  version        (1)
    0x04  warps          W: resident warps of the block
    0x08  threads        valid threads of the block
    0x0c  arrived        threads waiting at a barrier
    0x10  warps_arrived  warps waiting at a barrier
    0x14  lanes          channels per warp (the width of the masks below)
    0x18 + 16*i, for each warp of the block in (SM, warp slot) order:
          +0 warp slot   +4 valid-lane mask   +8 arrived-lane mask
          +12 flags: bit 0 the warp waits at a barrier, bit 1 it is the
              thread the read was made for

The views do not say which of the 16 named barriers a warp waits at, so
arrival is reported for whichever barrier the block is at.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from gpudbg.debug.backend import MemorySpace
from gpudbg.debug.zet.enums import zet_debug_memory_space_type_t, zet_module_debug_info_format_t
from gpudbg.debug.zet.facade_core import (
    R,
    ZetError,
    check_handle,
    check_thread,
    first_valid_lane,
    single_stopped_thread,
    zet_api,
    zet_debug_session_handle_t,
)
from gpudbg.debug.zet.mapping import WarpSlot
from gpudbg.debug.zet.structs import (
    UINT64_MAX,
    ze_device_thread_t,
    zet_debug_event_info_module_t,
    zet_debug_memory_space_desc_t,
)

S = zet_debug_memory_space_type_t
ELF_SPACE_BASE = 0x1000_0000
ELF_ALIGN = 4096
BARRIER_VERSION = 1
BARRIER_HEADER = struct.Struct("<6I")
BARRIER_WARP = struct.Struct("<4I")
BARRIER_FLAG_AT_BARRIER = 1 << 0
BARRIER_FLAG_THIS_THREAD = 1 << 1


@dataclass(frozen=True)
class ElfImage:
    begin: int          # address in the ELF space
    data: bytes
    load: int           # the module's code base on the device
    name: str
    program: Any

    @property
    def end(self) -> int:
        return self.begin + len(self.data)


# ------------------------------------------------------------------ ELF space

def module_info(h: zet_debug_session_handle_t, program: Any, name: str | None,
                build: bool = True) -> zet_debug_event_info_module_t:
    """The MODULE_LOAD/UNLOAD payload of ``program``, laying out its ELF image on first sight.

    An unload never builds (the module's code is already freed when the driver reports it):
    a module the facade never saw loaded reports an empty image at its code address."""
    with h.lock:
        img = next((i for i in h.elf_images.values() if i.program is program), None)
        if img is None and build:
            try:
                data = _build_elf(h, program, name)
            except Exception as e:   # an image the Session cannot read must not lose the event
                if getattr(e, "code", None) is None:
                    raise
                data = b""
            img = ElfImage(ELF_SPACE_BASE + h.elf_next, data, int(program.code_base), name or "module", program)
            h.elf_next += -(-max(len(data), 1) // ELF_ALIGN) * ELF_ALIGN
            h.elf_images[img.begin] = img
    fmt = zet_module_debug_info_format_t.ZET_MODULE_DEBUG_INFO_FORMAT_ELF_DWARF
    if img is None:
        return zet_debug_event_info_module_t(fmt, 0, 0, int(program.code_base))
    return zet_debug_event_info_module_t(fmt, img.begin, img.end, img.load)


def _build_elf(h: zet_debug_session_handle_t, program: Any, name: str | None) -> bytes:
    from gpudbg.dump.coredump.cubin import CodeFunction, build_cubin

    ninst = len(program.code)
    code = bytes(h.session.read_memory(h.device, MemorySpace.CODE, program.code_base, 16 * ninst)) if ninst else b""
    funcs = []
    for info in program.function_list:
        if info.builtin is not None or info.end_pc <= info.entry_pc:
            continue
        lines = tuple((c.inst.line_info.file_index, c.inst.line_info.line) if c.inst.line_info is not None else None
                      for c in program.code[info.entry_pc:info.end_pc])
        funcs.append(CodeFunction(info.name, program.code_address(info.entry_pc),
                                  code[16 * info.entry_pc:16 * info.end_pc], lines))
    if not funcs:
        return b""
    props = h.session.device(h.device)
    unit = name or getattr(program.module, "filename", None) or "module"
    return build_cubin(funcs, props.sm_major * 10 + props.sm_minor, dict(program.module.files) or None, unit)


def _read_elf(h: zet_debug_session_handle_t, address: int, size: int) -> bytes:
    with h.lock:
        images = list(h.elf_images.values())
    for img in images:
        if img.begin <= address and address + size <= img.end:
            return img.data[address - img.begin:address - img.begin + size]
    spans = ", ".join(f"[{i.begin:#x}, {i.end:#x}) {i.name}" for i in images) or "none yet"
    raise ZetError(R.ZE_RESULT_ERROR_NOT_AVAILABLE,
                   f"ELF space [{address:#x}, {address + size:#x}) is not inside one module image (images: {spans})")


# ------------------------------------------------------------------ BARRIER space

def barrier_state(h: zet_debug_session_handle_t, slot: WarpSlot) -> bytes:
    """The BARRIER space of the block that warp ``slot`` belongs to (layout in the module docstring)."""
    s, dev = h.session, h.device
    me = s.warp(dev, slot.sm, slot.warp)
    block = sorted((w for w in s.warps(dev) if w.grid_id == me.grid_id and w.block_idx == me.block_idx
                    and w.sm == me.sm), key=lambda w: w.wp)
    if h.mapping.lanes > 32:
        raise ZetError(R.ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
                       f"the BARRIER layout holds 32-lane masks; this device has {h.mapping.lanes} lanes")
    body, threads, arrived, warps_arrived = b"", 0, 0, 0
    for w in block:
        at = 0
        for lane in w.lanes:
            if lane.at_barrier:
                at |= 1 << lane.ln
        flags = (BARRIER_FLAG_AT_BARRIER if w.at_barrier or at else 0) | (
            BARRIER_FLAG_THIS_THREAD if w.wp == slot.warp else 0)
        threads += int(w.valid_mask).bit_count()
        arrived += at.bit_count()
        warps_arrived += bool(flags & BARRIER_FLAG_AT_BARRIER)
        body += BARRIER_WARP.pack(w.wp, int(w.valid_mask), at, flags)
    head = BARRIER_HEADER.pack(BARRIER_VERSION, len(block), threads, arrived, warps_arrived, h.mapping.lanes)
    return head + body


def decode_barrier_state(data: bytes) -> dict[str, Any]:
    """The BARRIER layout read back into a dict (for tools and tests)."""
    if len(data) < BARRIER_HEADER.size:
        raise ValueError(f"a BARRIER image has at least {BARRIER_HEADER.size} bytes, got {len(data)}")
    version, warps, threads, arrived, warps_arrived, lanes = BARRIER_HEADER.unpack_from(data)
    need = BARRIER_HEADER.size + warps * BARRIER_WARP.size
    if len(data) < need:
        raise ValueError(f"a BARRIER image with {warps} warps has {need} bytes, got {len(data)}")
    entries = [dict(zip(("warp", "valid_mask", "arrived_mask", "flags"),
                        BARRIER_WARP.unpack_from(data, BARRIER_HEADER.size + i * BARRIER_WARP.size)))
               for i in range(warps)]
    return {"version": version, "warps": entries, "threads": threads, "arrived": arrived,
            "warps_arrived": warps_arrived, "lanes": lanes}


# ------------------------------------------------------------------ the calls

def _check_desc(desc: Any, size: Any) -> zet_debug_memory_space_desc_t:
    if desc is None:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_NULL_POINTER, "desc is null")
    if not isinstance(desc, zet_debug_memory_space_desc_t):
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_ARGUMENT,
                       f"desc must be a zet_debug_memory_space_desc_t, got {type(desc).__name__}")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_SIZE, f"size must be a size_t byte count, got {size!r}")
    if desc.address + size > UINT64_MAX + 1:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_SIZE,
                       f"[{desc.address:#x}, +{size}) runs past the end of the 64-bit address space")
    return desc


def _default_target(h: zet_debug_session_handle_t, thread: ze_device_thread_t, address: int,
                    what: str) -> tuple[MemorySpace, dict[str, int]]:
    if thread.is_all:
        space = MemorySpace.CODE if h.session.program_at(h.device, address) is not None else MemorySpace.GLOBAL
        return space, {}
    slot = single_stopped_thread(h, thread, what)
    return MemorySpace.GENERIC, {"sm": slot.sm, "wp": slot.warp, "ln": first_valid_lane(h.session, h.device, slot)}


@zet_api("zetDebugReadMemory")
def zetDebugReadMemory(hDebug: zet_debug_session_handle_t, thread: ze_device_thread_t,
                       desc: zet_debug_memory_space_desc_t, size: int, buffer: Any = None) -> tuple:
    """``size`` bytes at ``desc.address`` in space ``desc.type`` as ``thread`` sees them.
    Returns the bytes; a writable ``buffer`` (the C in,out argument) is filled too."""
    h = check_handle(hDebug)
    check_thread(h, thread)
    desc = _check_desc(desc, size)
    if buffer is not None:
        try:
            view = memoryview(buffer).cast("B")
        except TypeError:
            raise ZetError(R.ZE_RESULT_ERROR_INVALID_ARGUMENT,
                           f"buffer must be a writable bytes-like object, got {type(buffer).__name__}") from None
        if view.readonly or len(view) < size:
            raise ZetError(R.ZE_RESULT_ERROR_INVALID_SIZE,
                           f"buffer must be writable and hold {size} bytes (has {len(view)}, "
                           f"{'read-only' if view.readonly else 'writable'})")
    s, dev, kind = h.session, h.device, desc.type
    if kind is S.ZET_DEBUG_MEMORY_SPACE_TYPE_DEFAULT:
        space, where = _default_target(h, thread, desc.address, "a DEFAULT-space read")
        data = bytes(s.read_memory(dev, space, desc.address, size, **where))
    elif kind is S.ZET_DEBUG_MEMORY_SPACE_TYPE_SLM:
        slot = single_stopped_thread(h, thread, "an SLM read")
        data = bytes(s.read_memory(dev, MemorySpace.SHARED, desc.address, size, sm=slot.sm, wp=slot.warp))
    elif kind is S.ZET_DEBUG_MEMORY_SPACE_TYPE_ELF:
        data = _read_elf(h, desc.address, size)
    else:
        slot = single_stopped_thread(h, thread, "a BARRIER read")
        image = barrier_state(h, slot)
        if desc.address + size > len(image):
            raise ZetError(R.ZE_RESULT_ERROR_NOT_AVAILABLE,
                           f"BARRIER [{desc.address:#x}, +{size}) is past the block's {len(image)}-byte state")
        data = image[desc.address:desc.address + size]
    if len(data) != size:
        raise ZetError(R.ZE_RESULT_ERROR_UNKNOWN, f"read {len(data)} bytes instead of {size}")
    if buffer is not None:
        view[:size] = data
    return (data,)


@zet_api("zetDebugWriteMemory")
def zetDebugWriteMemory(hDebug: zet_debug_session_handle_t, thread: ze_device_thread_t,
                        desc: zet_debug_memory_space_desc_t, size: int, buffer: Any) -> tuple:
    """Write the first ``size`` bytes of ``buffer`` at ``desc.address``; ELF and BARRIER are read-only."""
    h = check_handle(hDebug)
    check_thread(h, thread)
    desc = _check_desc(desc, size)
    if buffer is None:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_NULL_POINTER, "buffer is null")
    try:
        data = bytes(memoryview(buffer).cast("B"))
    except TypeError:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_ARGUMENT,
                       f"buffer must be a bytes-like object, got {type(buffer).__name__}") from None
    if len(data) < size:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_SIZE, f"buffer holds {len(data)} bytes, size is {size}")
    data = data[:size]
    s, dev, kind = h.session, h.device, desc.type
    if kind is S.ZET_DEBUG_MEMORY_SPACE_TYPE_DEFAULT:
        space, where = _default_target(h, thread, desc.address, "a DEFAULT-space write")
        s.write_memory(dev, space, desc.address, data, **where)
    elif kind is S.ZET_DEBUG_MEMORY_SPACE_TYPE_SLM:
        slot = single_stopped_thread(h, thread, "an SLM write")
        s.write_memory(dev, MemorySpace.SHARED, desc.address, data, sm=slot.sm, wp=slot.warp)
    else:
        raise ZetError(R.ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
                       f"{kind.name} is read-only: it describes the module images and barrier state, "
                       "which a write cannot change")
    return ()
