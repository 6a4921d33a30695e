"""Memory, code and ELF-image entries of the cudbg facade.

Memory entries map one-to-one onto ``Session.read_memory`` /
``write_memory`` with the entry's memory space and coordinates; ``buf``
comes back as exactly ``sz`` bytes. Code entries (disassemble, adjusted
addresses, symbol lookup) read the loaded Program the Session names for an
address: every instruction is one 16-byte slot, so "previous/next address"
is plain arithmetic inside the module's code.

The one idea for ELF images: the image of a module is the cubin the
coredump writer builds (gpudbg.dump.coredump.cubin.build_cubin, as
snapshot._module_image does), from the module's code bytes read through
the Session's CODE space, so the debugger sees exactly the image a
coredump of the same program would carry. The module's handle is its code
base, which is also the ``handle`` of the ELF_IMAGE_LOADED event. Images
are built on demand and cached per handle (a module's code never changes
while it is loaded); the facade forgets a handle when the module unloads.
"""
from __future__ import annotations

from typing import Any

from gpudbg.debug.backend import MemorySpace
from gpudbg.debug.cudbg.enums import CUDBGAdjAddrAction, CUDBGElfImageType, CUDBGResult
from gpudbg.debug.cudbg.facade_state import CudbgError, Helpers, c_string
from gpudbg.debug.cudbg.layouts import CUDBGMemoryInfo, CUDBGLoadedFunctionInfo

R = CUDBGResult
A = CUDBGAdjAddrAction


def module_image(session: Any, dev: int, program: Any, relocated: bool) -> bytes:
    """The relocated (functions at their code addresses) or non-relocated (at their
    offsets in the module) cubin of a loaded Program."""
    from gpudbg.dump.coredump.cubin import build_cubin, program_functions
    props = session.device(dev)
    step = props.instruction_size
    code = session.read_memory(dev, MemorySpace.CODE, program.code_base, step * len(program.code)) \
        if program.code else b""
    funcs = program_functions(program, code, relocated, step)
    if not funcs:
        raise CudbgError(R.CUDBG_ERROR_INVALID_MODULE, f"module at 0x{program.code_base:x} has no code")
    files = dict(program.module.files) or None
    name = program.module.filename or "module"
    return build_cubin(funcs, props.sm_major * 10 + props.sm_minor, files, name)


class MemoryEntries(Helpers):
    _modules: dict[tuple[int, int], Any]
    _image_cache: dict[tuple[int, int, bool], bytes]

    # ------------------------------------------------------------- memory
    def _read(self, dev: int, space: MemorySpace, addr: int, sz: int, sm=None, wp=None, ln=None) -> tuple:
        data = self.session.read_memory(dev, space, addr, sz, sm=sm, wp=wp, ln=ln)
        if len(data) != sz:
            raise CudbgError(R.CUDBG_ERROR_MEMORY_MAPPING_FAILED,
                             f"{space.value} read of {sz} bytes at 0x{addr:x} returned {len(data)}")
        return (bytes(data),)

    def _write(self, dev: int, space: MemorySpace, addr: int, buf: bytes, sz: int, sm=None, wp=None, ln=None) -> tuple:
        if len(buf) < sz:
            raise CudbgError(R.CUDBG_ERROR_INVALID_ARGS, f"sz={sz} but the buffer holds {len(buf)} bytes")
        self.session.write_memory(dev, space, addr, buf[:sz], sm=sm, wp=wp, ln=ln)
        return ()

    def readCodeMemory(self, dev, addr, sz) -> tuple:
        self._props(dev)
        return self._read(dev, MemorySpace.CODE, addr, sz)

    def readConstMemory129(self, dev, addr, sz) -> tuple:
        self._props(dev)
        return self._read(dev, MemorySpace.CONST, addr, sz)

    def readParamMemory(self, dev, sm, wp, addr, sz) -> tuple:
        self._warp(dev, sm, wp)
        return self._read(dev, MemorySpace.PARAM, addr, sz, sm, wp)

    def readSharedMemory(self, dev, sm, wp, addr, sz) -> tuple:
        self._warp(dev, sm, wp)
        return self._read(dev, MemorySpace.SHARED, addr, sz, sm, wp)

    def readLocalMemory(self, dev, sm, wp, ln, addr, sz) -> tuple:
        self._lane(dev, sm, wp, ln)
        return self._read(dev, MemorySpace.LOCAL, addr, sz, sm, wp, ln)

    def readGenericMemory(self, dev, sm, wp, ln, addr, sz) -> tuple:
        self._lane(dev, sm, wp, ln)
        return self._read(dev, MemorySpace.GENERIC, addr, sz, sm, wp, ln)

    def writeParamMemory(self, dev, sm, wp, addr, buf, sz) -> tuple:
        self._warp(dev, sm, wp)
        return self._write(dev, MemorySpace.PARAM, addr, buf, sz, sm, wp)

    def writeSharedMemory(self, dev, sm, wp, addr, buf, sz) -> tuple:
        self._warp(dev, sm, wp)
        return self._write(dev, MemorySpace.SHARED, addr, buf, sz, sm, wp)

    def writeLocalMemory(self, dev, sm, wp, ln, addr, buf, sz) -> tuple:
        self._lane(dev, sm, wp, ln)
        return self._write(dev, MemorySpace.LOCAL, addr, buf, sz, sm, wp, ln)

    def writeGenericMemory(self, dev, sm, wp, ln, addr, buf, sz) -> tuple:
        self._lane(dev, sm, wp, ln)
        return self._write(dev, MemorySpace.GENERIC, addr, buf, sz, sm, wp, ln)

    def _global_device(self, addr: int, sz: int) -> int:
        """The one device on which [addr, addr+sz) is readable global memory."""
        found, last = [], None
        for dev in range(len(self.session.devices())):
            try:
                self.session.read_memory(dev, MemorySpace.GLOBAL, addr, sz)
            except Exception as e:  # noqa: BLE001  (a miss on this device; the last one is reported)
                last = e
                continue
            found.append(dev)
        if not found:
            if last is not None:
                raise last
            raise CudbgError(R.CUDBG_ERROR_NO_DEVICE_AVAILABLE, "no device")
        if len(found) > 1:
            raise CudbgError(R.CUDBG_ERROR_AMBIGUOUS_MEMORY_ADDRESS,
                             f"0x{addr:x} is mapped on devices {found}")
        return found[0]

    def readGlobalMemory(self, addr, sz) -> tuple:
        """Global addresses carry no device: the one device that maps them answers."""
        return self._read(self._global_device(addr, sz), MemorySpace.GLOBAL, addr, sz)

    def writeGlobalMemory(self, addr, buf, sz) -> tuple:
        return self._write(self._global_device(addr, sz), MemorySpace.GLOBAL, addr, buf, sz)

    # ------------------------------------------------------------- host memory
    def _regions(self, kinds: tuple[str, ...]) -> list[tuple[int, Any]]:
        """(device, MemoryRegion) of every device's allocations of these kinds."""
        return [(dev, r) for dev in range(len(self.session.devices()))
                for r in self.session.allocations(dev) if r.kind.value in kinds]

    def _host_region(self, addr: int, sz: int) -> tuple[int, Any]:
        for dev, r in self._regions(("host pinned", "host registered", "managed")):
            if r.host_address is not None and r.host_address <= addr and addr + sz <= r.host_address + r.size:
                return dev, r
        raise CudbgError(R.CUDBG_ERROR_MEMORY_MAPPING_FAILED,
                         f"[0x{addr:x}, 0x{addr + sz:x}) is not in pinned or registered host memory")

    def readPinnedMemory(self, addr, sz) -> tuple:
        """Page-locked host memory, at its host address (the unified address space maps it there)."""
        dev, r = self._host_region(addr, sz)
        return self._read(dev, MemorySpace.GLOBAL, r.base + (addr - r.host_address), sz)

    def writePinnedMemory(self, addr, buf, sz) -> tuple:
        dev, r = self._host_region(addr, sz)
        return self._write(dev, MemorySpace.GLOBAL, r.base + (addr - r.host_address), buf, sz)

    def getHostAddrFromDeviceAddr(self, dev, device_addr) -> tuple:
        """Only host memory mapped for the device has a host address."""
        self._props(dev)
        for r in self.session.allocations(dev):
            if r.base <= device_addr < r.base + r.size:
                if r.host_address is None:
                    raise CudbgError(R.CUDBG_ERROR_INVALID_ARGS,
                                     f"0x{device_addr:x} is {r.kind.value} memory, which has no host address")
                return (r.host_address + (device_addr - r.base),)
        raise CudbgError(R.CUDBG_ERROR_INVALID_ARGS, f"0x{device_addr:x} is in no allocation of device {dev}")

    def getManagedMemoryRegionInfo(self, startAddress, memoryInfo_size) -> tuple:
        """The managed regions in address order, from the one holding startAddress
        (0: from the lowest); at most memoryInfo_size of them."""
        regions = sorted({(r.base, r.size) for _dev, r in self._regions(("managed",))})
        if startAddress:
            first = next((i for i, (b, n) in enumerate(regions) if b <= startAddress < b + n), None)
            if first is None:
                raise CudbgError(R.CUDBG_ERROR_INVALID_ADDRESS,
                                 f"0x{startAddress:x} is in no managed memory region")
            regions = regions[first:]
        out = tuple(CUDBGMemoryInfo(b, n) for b, n in regions[:memoryInfo_size])
        return (out, len(out))

    # ------------------------------------------------------------- code
    def _program(self, dev: int, addr: int, code: CUDBGResult = R.CUDBG_ERROR_INVALID_ADDRESS) -> Any:
        self._props(dev)
        program = self.session.program_at(dev, addr)
        if program is None:
            raise CudbgError(code, f"0x{addr:x} is not in the code of a module loaded on device {dev}")
        return program

    def _programs(self, dev: int) -> list[Any]:
        """Modules on ``dev``: those the backend lists, those seen as ELF_IMAGE_LOADED and those of live grids."""
        out = {id(p): p for (d, _h), p in self._modules.items() if d == dev}
        for grid in self.session.grids(dev):
            p = self.session.program_at(dev, grid.entry_address)
            if p is not None:
                out.setdefault(id(p), p)
        for p in self.session.backend.programs(dev):
            out.setdefault(id(p), p)
        return list(out.values())

    def disassemble(self, dev, addr, sz) -> tuple:
        """The PTX text of the instruction at ``addr``; instSize is the 16-byte slot."""
        program = self._program(dev, addr, R.CUDBG_ERROR_INVALID_ARGS)
        pc = program.pc_of_address(addr)
        if pc is None:
            raise CudbgError(R.CUDBG_ERROR_INVALID_ARGS, f"0x{addr:x} is not an instruction boundary")
        text = " ".join(program.code[pc].inst.text.split())
        return (self._props(dev).instruction_size, c_string(text, sz, "the instruction"))

    def getAdjustedCodeAddress(self, devId, address, adjAction) -> tuple:
        step = self._props(devId).instruction_size
        program = self._program(devId, address - address % step)   # code bases are slot-aligned
        pc = (address - program.code_base) // step
        pc += {A.CUDBG_ADJ_PREVIOUS_ADDRESS: -1, A.CUDBG_ADJ_CURRENT_ADDRESS: 0, A.CUDBG_ADJ_NEXT_ADDRESS: 1}[adjAction]
        if not 0 <= pc < len(program.code):
            raise CudbgError(R.CUDBG_ERROR_INVALID_ADDRESS,
                             f"no {adjAction.name.split('_')[2].lower()} instruction for 0x{address:x}")
        return (program.code_address(pc),)

    def isDeviceCodeAddress(self, addr) -> tuple:
        return (any(self.session.program_at(dev, addr) is not None
                    for dev in range(len(self.session.devices()))),)

    def lookupDeviceCodeSymbol(self, symName) -> tuple:
        """The entry address of the device function ``symName`` in any loaded module."""
        for dev in range(len(self.session.devices())):
            for program in self._programs(dev):
                info = program.functions.get(symName)
                if info is not None and info.builtin is None and info.end_pc > info.entry_pc:
                    return (True, program.code_address(info.entry_pc))
        return (False, 0)

    # ------------------------------------------------------------- ELF images
    def _image(self, dev: int, program: Any, relocated: bool) -> bytes:
        key = (dev, program.code_base, relocated)
        image = self._image_cache.get(key)
        if image is None:
            image = self._image_cache[key] = module_image(self.session, dev, program, relocated)
        return image

    def _module(self, dev: int, handle: int) -> Any:
        program = self._modules.get((dev, handle))
        if program is None:
            program = self._program(dev, handle, R.CUDBG_ERROR_INVALID_ARGS)
            if program.code_base != handle:
                raise CudbgError(R.CUDBG_ERROR_INVALID_ARGS, f"0x{handle:x} is not an ELF image handle")
        return program

    def getElfImage(self, dev, sm, wp, relocated) -> tuple:
        """The image of the module of the warp's kernel, and its size."""
        grid = self._warp_grid(dev, sm, wp)
        image = self._image(dev, self._program(dev, grid.entry_address, R.CUDBG_ERROR_INVALID_GRID), relocated)
        return (image, len(image))

    def getElfImageByHandle(self, devId, handle, type, size) -> tuple:
        """``size`` must hold the image (the size of the ELF_IMAGE_LOADED event)."""
        image = self._image(devId, self._module(devId, handle), type is CUDBGElfImageType.CUDBG_ELF_IMAGE_TYPE_RELOCATED)
        if size < len(image):
            raise CudbgError(R.CUDBG_ERROR_INVALID_ARGS, f"the image has {len(image)} bytes, size is {size}")
        return (image,)

    def getLoadedFunctionInfo(self, devId, handle, startIndex, numEntries) -> tuple:
        """Section index and address of the module's functions, in section order. All
        functions are loaded with their module (no lazy loading)."""
        from gpudbg.dump.coredump.elf import read_elf
        image = self._image(devId, self._module(devId, handle), True)
        texts = [s for s in read_elf(image, expect_ident=False).sections if s.name.startswith(".text.")]
        if startIndex + numEntries > len(texts):
            raise CudbgError(R.CUDBG_ERROR_INVALID_ARGS, f"entries {startIndex}..{startIndex + numEntries - 1} "
                             f"asked, the module has {len(texts)} functions")
        return (tuple(CUDBGLoadedFunctionInfo(s.index, s.addr) for s in texts[startIndex:startIndex + numEntries]),)
