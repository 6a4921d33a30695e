"""The latest (non-deprecated) entries of seed 000's ``CUDBGAPI_st`` table, as data.

Each entry is the C function pointer's name, the CUDA version that
introduced it ("Since CUDA x.y", None where the header has no comment), and
its parameters as (C type, name, direction). Directions follow the C
signature (values and ``const`` pointers are inputs, other pointers
outputs) corrected by the header's parameter comments where a plain pointer
carries input (``lookupDeviceCodeSymbol.symName``, the texture ``coords``,
``setNotifyNewEventCallback.userData``) or both (``getGridAttributes.pairs``:
attributes in, values out). The facade turns OUT/INOUT parameters into
return values after the CUDBGResult.

The table keeps one entry per function family: an entry is dropped when its
comment says ``\\deprecated`` or when a later version of the same name
exists (``readWarpState127`` < ``readWarpState``; the unsuffixed name is
always the newest). Dropped entries are listed too, with their successor,
so the two lists together cover the whole header table (148 slots) and a
test can prove it. Entry order is the header's, which is the C struct's
slot order.
"""
from __future__ import annotations

from dataclasses import dataclass

from gpudbg.debug.signature import IN, INOUT, OUT, Direction  # noqa: F401  (part of this table's vocabulary)


@dataclass(frozen=True)
class Param:
    """One C parameter; ``type`` is normalized as ``base *`` (``const void *``, ``void **``)."""

    type: str
    name: str
    direction: Direction

    @property
    def is_pointer(self) -> bool:
        return self.type.endswith("*")


@dataclass(frozen=True)
class ApiEntry:
    """One slot of CUDBGAPI_st."""

    name: str
    since: str | None
    params: tuple[Param, ...]

    @property
    def inputs(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.direction is not OUT)

    @property
    def outputs(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.direction is not IN)

    def c_signature(self) -> str:
        """The declaration as the header spells it, modulo whitespace around ``*``."""
        args = ", ".join(f"{p.type}{'' if p.is_pointer else ' '}{p.name}" for p in self.params)
        return f"CUDBGResult (*{self.name})({args or 'void'});"


@dataclass(frozen=True)
class DroppedEntry:
    """A slot left out of the latest table: why, and what replaces it ("" for nothing)."""

    name: str
    reason: str
    successor: str


P = Param

LATEST_ENTRIES: tuple[ApiEntry, ...] = (
    ApiEntry("initialize", "3.0", ()),
    ApiEntry("finalize", "3.0", ()),
    ApiEntry("suspendDevice", "3.0", (P("uint32_t", "dev", IN),)),
    ApiEntry("resumeDevice", "3.0", (P("uint32_t", "dev", IN),)),
    ApiEntry("readThreadIdx", "3.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN), P("CuDim3 *", "threadIdx", OUT))),
    ApiEntry("readBrokenWarps", "3.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint64_t *", "brokenWarpsMask", OUT))),
    ApiEntry("readValidWarps", "3.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint64_t *", "validWarpsMask", OUT))),
    ApiEntry("readValidLanes", "3.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t *", "validLanesMask", OUT))),
    ApiEntry("readActiveLanes", "3.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t *", "activeLanesMask", OUT))),
    ApiEntry("readCodeMemory", "3.0", (P("uint32_t", "dev", IN), P("uint64_t", "addr", IN),
        P("void *", "buf", OUT), P("uint32_t", "sz", IN))),
    ApiEntry("readConstMemory129", "3.0", (P("uint32_t", "dev", IN), P("uint64_t", "addr", IN),
        P("void *", "buf", OUT), P("uint32_t", "sz", IN))),
    ApiEntry("readParamMemory", "3.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint64_t", "addr", IN), P("void *", "buf", OUT),
        P("uint32_t", "sz", IN))),
    ApiEntry("readSharedMemory", "3.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint64_t", "addr", IN), P("void *", "buf", OUT),
        P("uint32_t", "sz", IN))),
    ApiEntry("readLocalMemory", "3.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN), P("uint64_t", "addr", IN),
        P("void *", "buf", OUT), P("uint32_t", "sz", IN))),
    ApiEntry("readRegister", "3.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN), P("uint32_t", "regno", IN),
        P("uint32_t *", "val", OUT))),
    ApiEntry("readPC", "3.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN), P("uint64_t *", "pc", OUT))),
    ApiEntry("readVirtualPC", "3.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN), P("uint64_t *", "pc", OUT))),
    ApiEntry("readLaneStatus", "3.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN), P("bool *", "error", OUT))),
    ApiEntry("writeParamMemory", "3.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint64_t", "addr", IN), P("const void *", "buf", IN),
        P("uint32_t", "sz", IN))),
    ApiEntry("writeSharedMemory", "3.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint64_t", "addr", IN), P("const void *", "buf", IN),
        P("uint32_t", "sz", IN))),
    ApiEntry("writeLocalMemory", "3.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN), P("uint64_t", "addr", IN),
        P("const void *", "buf", IN), P("uint32_t", "sz", IN))),
    ApiEntry("writeRegister", "3.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN), P("uint32_t", "regno", IN),
        P("uint32_t", "val", IN))),
    ApiEntry("getBlockDim", "3.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("CuDim3 *", "blockDim", OUT))),
    ApiEntry("getTID", "3.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t *", "tid", OUT))),
    ApiEntry("getDeviceType", "3.0", (P("uint32_t", "dev", IN), P("char *", "buf", OUT),
        P("uint32_t", "sz", IN))),
    ApiEntry("getSmType", "3.0", (P("uint32_t", "dev", IN), P("char *", "buf", OUT),
        P("uint32_t", "sz", IN))),
    ApiEntry("getNumDevices", "3.0", (P("uint32_t *", "numDev", OUT),)),
    ApiEntry("getNumSMs", "3.0", (P("uint32_t", "dev", IN), P("uint32_t *", "numSMs", OUT))),
    ApiEntry("getNumWarps", "3.0", (P("uint32_t", "dev", IN), P("uint32_t *", "numWarps", OUT))),
    ApiEntry("getNumLanes", "3.0", (P("uint32_t", "dev", IN), P("uint32_t *", "numLanes", OUT))),
    ApiEntry("getNumRegisters", "3.0", (P("uint32_t", "dev", IN), P("uint32_t *", "numRegs", OUT))),
    ApiEntry("disassemble", "3.0", (P("uint32_t", "dev", IN), P("uint64_t", "addr", IN),
        P("uint32_t *", "instSize", OUT), P("char *", "buf", OUT), P("uint32_t", "sz", IN))),
    ApiEntry("lookupDeviceCodeSymbol", "3.0", (P("char *", "symName", IN),
        P("bool *", "symFound", OUT), P("uintptr_t *", "symAddr", OUT))),
    ApiEntry("getGridAttribute", "3.1", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("CUDBGAttribute", "attr", IN), P("uint64_t *", "value", OUT))),
    ApiEntry("getGridAttributes", "3.1", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("CUDBGAttributeValuePair *", "pairs", INOUT),
        P("uint32_t", "numPairs", IN))),
    ApiEntry("readLaneException", "3.1", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN),
        P("CUDBGException_t *", "exception", OUT))),
    ApiEntry("readPinnedMemory", "3.2", (P("uint64_t", "addr", IN), P("void *", "buf", OUT),
        P("uint32_t", "sz", IN))),
    ApiEntry("writePinnedMemory", "3.2", (P("uint64_t", "addr", IN), P("const void *", "buf", IN),
        P("uint32_t", "sz", IN))),
    ApiEntry("setBreakpoint", "3.2", (P("uint32_t", "dev", IN), P("uint64_t", "addr", IN))),
    ApiEntry("unsetBreakpoint", "3.2", (P("uint32_t", "dev", IN), P("uint64_t", "addr", IN))),
    ApiEntry("readTextureMemory", None, (P("uint32_t", "devId", IN), P("uint32_t", "vsm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "id", IN), P("uint32_t", "dim", IN),
        P("uint32_t *", "coords", IN), P("void *", "buf", OUT), P("uint32_t", "sz", IN))),
    ApiEntry("readBlockIdx", "4.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("CuDim3 *", "blockIdx", OUT))),
    ApiEntry("getGridDim", "4.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("CuDim3 *", "gridDim", OUT))),
    ApiEntry("readCallDepth", "4.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN), P("uint32_t *", "depth", OUT))),
    ApiEntry("readReturnAddress", "4.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN), P("uint32_t", "level", IN),
        P("uint64_t *", "ra", OUT))),
    ApiEntry("readVirtualReturnAddress", "4.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN), P("uint32_t", "level", IN),
        P("uint64_t *", "ra", OUT))),
    ApiEntry("getElfImage", "4.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("bool", "relocated", IN), P("void **", "elfImage", OUT),
        P("uint64_t *", "size", OUT))),
    ApiEntry("getHostAddrFromDeviceAddr", "4.1", (P("uint32_t", "dev", IN),
        P("uint64_t", "device_addr", IN), P("uint64_t *", "host_addr", OUT))),
    ApiEntry("readSyscallCallDepth", "4.1", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN), P("uint32_t *", "depth", OUT))),
    ApiEntry("readTextureMemoryBindless", None, (P("uint32_t", "devId", IN),
        P("uint32_t", "vsm", IN), P("uint32_t", "wp", IN), P("uint32_t", "texSymtabIndex", IN),
        P("uint32_t", "dim", IN), P("uint32_t *", "coords", IN), P("void *", "buf", OUT),
        P("uint32_t", "sz", IN))),
    ApiEntry("clearAttachState", "5.0", ()),
    ApiEntry("memcheckReadErrorAddress", "5.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN), P("uint64_t *", "address", OUT),
        P("ptxStorageKind *", "storage", OUT))),
    ApiEntry("acknowledgeSyncEvents", "5.0", ()),
    ApiEntry("initializeAttachStub", "5.0", ()),
    ApiEntry("getNextSyncEvent55", "5.5", (P("CUDBGEvent55 *", "event", OUT),)),
    ApiEntry("getNextAsyncEvent55", "5.5", (P("CUDBGEvent55 *", "event", OUT),)),
    ApiEntry("readGridId", "5.5", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint64_t *", "gridId64", OUT))),
    ApiEntry("getGridStatus", "5.5", (P("uint32_t", "dev", IN), P("uint64_t", "gridId64", IN),
        P("CUDBGGridStatus *", "status", OUT))),
    ApiEntry("setKernelLaunchNotificationMode", "5.5", (
        P("CUDBGKernelLaunchNotifyMode", "mode", IN),)),
    ApiEntry("getDevicePCIBusInfo", None, (P("uint32_t", "devId", IN),
        P("uint32_t *", "pciBusId", OUT), P("uint32_t *", "pciDevId", OUT))),
    ApiEntry("getAdjustedCodeAddress", "5.5", (P("uint32_t", "devId", IN),
        P("uint64_t", "address", IN), P("uint64_t *", "adjustedAddress", OUT),
        P("CUDBGAdjAddrAction", "adjAction", IN))),
    ApiEntry("readErrorPC", "6.0", (P("uint32_t", "devId", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint64_t *", "errorPC", OUT), P("bool *", "errorPCValid", OUT))),
    ApiEntry("getNextEvent", "6.0", (P("CUDBGEventQueueType", "type", IN),
        P("CUDBGEvent *", "event", OUT))),
    ApiEntry("getElfImageByHandle", "6.0", (P("uint32_t", "devId", IN),
        P("uint64_t", "handle", IN), P("CUDBGElfImageType", "type", IN),
        P("void *", "elfImage", OUT), P("uint64_t", "size", IN))),
    ApiEntry("resumeWarpsUntilPC", "6.0", (P("uint32_t", "devId", IN), P("uint32_t", "sm", IN),
        P("uint64_t", "warpMask", IN), P("uint64_t", "virtPC", IN))),
    ApiEntry("readRegisterRange", "6.0", (P("uint32_t", "devId", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN), P("uint32_t", "index", IN),
        P("uint32_t", "registers_size", IN), P("uint32_t *", "registers", OUT))),
    ApiEntry("readGenericMemory", "6.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN), P("uint64_t", "addr", IN),
        P("void *", "buf", OUT), P("uint32_t", "sz", IN))),
    ApiEntry("writeGenericMemory", "6.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN), P("uint64_t", "addr", IN),
        P("const void *", "buf", IN), P("uint32_t", "sz", IN))),
    ApiEntry("readGlobalMemory", "6.0", (P("uint64_t", "addr", IN), P("void *", "buf", OUT),
        P("uint32_t", "sz", IN))),
    ApiEntry("writeGlobalMemory", "6.0", (P("uint64_t", "addr", IN), P("const void *", "buf", IN),
        P("uint32_t", "sz", IN))),
    ApiEntry("getManagedMemoryRegionInfo", "6.0", (P("uint64_t", "startAddress", IN),
        P("CUDBGMemoryInfo *", "memoryInfo", OUT), P("uint32_t", "memoryInfo_size", IN),
        P("uint32_t *", "numEntries", OUT))),
    ApiEntry("isDeviceCodeAddress", "3.0", (P("uintptr_t", "addr", IN),
        P("bool *", "isDeviceAddress", OUT))),
    ApiEntry("requestCleanupOnDetach", "6.0", (P("uint32_t", "appResumeFlag", IN),)),
    ApiEntry("readPredicates", "6.5", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN), P("uint32_t", "predicates_size", IN),
        P("uint32_t *", "predicates", OUT))),
    ApiEntry("writePredicates", "6.5", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN), P("uint32_t", "predicates_size", IN),
        P("const uint32_t *", "predicates", IN))),
    ApiEntry("getNumPredicates", "6.5", (P("uint32_t", "dev", IN),
        P("uint32_t *", "numPredicates", OUT))),
    ApiEntry("readCCRegister", "6.5", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN), P("uint32_t *", "val", OUT))),
    ApiEntry("writeCCRegister", "6.5", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN), P("uint32_t", "val", IN))),
    ApiEntry("getDeviceName", "6.5", (P("uint32_t", "dev", IN), P("char *", "buf", OUT),
        P("uint32_t", "sz", IN))),
    ApiEntry("readDeviceExceptionState", "9.0", (P("uint32_t", "devId", IN),
        P("uint64_t *", "mask", OUT), P("uint32_t", "numWords", IN))),
    ApiEntry("getNumUniformRegisters", "10.0", (P("uint32_t", "dev", IN),
        P("uint32_t *", "numRegs", OUT))),
    ApiEntry("readUniformRegisterRange", "10.0", (P("uint32_t", "devId", IN),
        P("uint32_t", "sm", IN), P("uint32_t", "wp", IN), P("uint32_t", "regno", IN),
        P("uint32_t", "registers_size", IN), P("uint32_t *", "registers", OUT))),
    ApiEntry("writeUniformRegister", "10.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "regno", IN), P("uint32_t", "val", IN))),
    ApiEntry("getNumUniformPredicates", "10.0", (P("uint32_t", "dev", IN),
        P("uint32_t *", "numPredicates", OUT))),
    ApiEntry("readUniformPredicates", "10.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "predicates_size", IN),
        P("uint32_t *", "predicates", OUT))),
    ApiEntry("writeUniformPredicates", "10.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "predicates_size", IN),
        P("const uint32_t *", "predicates", IN))),
    ApiEntry("readClusterIdx", "12.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("CuDim3 *", "clusterIdx", OUT))),
    ApiEntry("getErrorStringEx", "12.2", (P("char *", "buf", OUT), P("uint32_t", "bufSz", IN),
        P("uint32_t *", "msgSz", OUT))),
    ApiEntry("getLoadedFunctionInfo", "11.8", (P("uint32_t", "devId", IN),
        P("uint64_t", "handle", IN), P("CUDBGLoadedFunctionInfo *", "info", OUT),
        P("uint32_t", "startIndex", IN), P("uint32_t", "numEntries", IN))),
    ApiEntry("generateCoredump", "12.3", (P("const char *", "filename", IN),
        P("CUDBGCoredumpGenerationFlags", "flags", IN))),
    ApiEntry("getDeviceInfoSizes", "12.4", (P("uint32_t", "dev", IN),
        P("CUDBGDeviceInfoSizes *", "sizes", OUT))),
    ApiEntry("getDeviceInfo", "12.4", (P("uint32_t", "dev", IN),
        P("CUDBGDeviceInfoQueryType_t", "type", IN), P("void *", "buffer", OUT),
        P("uint32_t", "length", IN), P("uint32_t *", "dataLength", OUT))),
    ApiEntry("getConstBankAddress", "12.4", (P("uint32_t", "dev", IN),
        P("uint64_t", "gridId64", IN), P("uint32_t", "bank", IN), P("uint64_t *", "address", OUT),
        P("uint32_t *", "size", OUT))),
    ApiEntry("singleStepWarp", "7.5", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "laneHint", IN), P("uint32_t", "nsteps", IN),
        P("uint32_t", "flags", IN), P("uint64_t *", "warpMask", OUT))),
    ApiEntry("readAllVirtualReturnAddresses", "12.5", (P("uint32_t", "dev", IN),
        P("uint32_t", "sm", IN), P("uint32_t", "wp", IN), P("uint32_t", "ln", IN),
        P("uint64_t *", "addrs", OUT), P("uint32_t", "numAddrs", IN),
        P("uint32_t *", "callDepth", OUT), P("uint32_t *", "syscallCallDepth", OUT))),
    ApiEntry("getSupportedDebuggerCapabilities", "12.5", (
        P("CUDBGCapabilityFlags *", "capabilities", OUT),)),
    ApiEntry("readSmException", "12.5", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("CUDBGException_t *", "exception", OUT), P("uint64_t *", "errorPC", OUT),
        P("bool *", "errorPCValid", OUT))),
    ApiEntry("executeInternalCommand", "12.6", (P("const char *", "command", IN),
        P("char *", "resultBuffer", OUT), P("uint32_t", "sizeInBytes", IN))),
    ApiEntry("getGridInfo", "12.7", (P("uint32_t", "dev", IN), P("uint64_t", "gridId64", IN),
        P("CUDBGGridInfo *", "gridInfo", OUT))),
    ApiEntry("getClusterDim", "12.7", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("CuDim3 *", "clusterDim", OUT))),
    ApiEntry("getClusterExceptionTargetBlock", "12.7", (P("uint32_t", "dev", IN),
        P("uint32_t", "sm", IN), P("uint32_t", "wp", IN), P("CuDim3 *", "blockIdx", OUT),
        P("bool *", "blockIdxValid", OUT))),
    ApiEntry("readWarpResources", "12.8", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("CUDBGWarpResources *", "resources", OUT))),
    ApiEntry("getCbuWarpState", "12.9", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint64_t", "warpMask", IN), P("CUDBGCbuWarpState *", "warpStates", OUT),
        P("uint32_t", "numWarpStates", IN))),
    ApiEntry("readWarpState", "12.9", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("CUDBGWarpState *", "state", OUT))),
    ApiEntry("consumeCudaLogs", "12.9", (P("CUDBGCudaLogMessage *", "logMessages", OUT),
        P("uint32_t", "numMessages", IN), P("uint32_t *", "numConsumed", OUT))),
    ApiEntry("readCPUCallStack", "12.9", (P("uint32_t", "dev", IN), P("uint64_t", "gridId64", IN),
        P("uint64_t *", "addrs", OUT), P("uint32_t", "numAddrs", IN),
        P("uint32_t *", "totalNumAddrs", OUT))),
    ApiEntry("getCudaExceptionString", "13.0", (P("uint32_t", "dev", IN), P("uint32_t", "sm", IN),
        P("uint32_t", "wp", IN), P("uint32_t", "ln", IN), P("char *", "buf", OUT),
        P("uint32_t", "bufSz", IN), P("uint32_t *", "msgSz", OUT))),
    ApiEntry("setNotifyNewEventCallback", "13.0", (
        P("CUDBGNotifyNewEventCallback", "callback", IN), P("void *", "userData", IN))),
)

SUPERSEDED_ENTRIES: tuple[DroppedEntry, ...] = (
    DroppedEntry("singleStepWarp40", "deprecated in CUDA 4.1", "singleStepWarp"),
    DroppedEntry("setBreakpoint31", "deprecated in CUDA 3.2", "setBreakpoint"),
    DroppedEntry("unsetBreakpoint31", "deprecated in CUDA 3.2", "unsetBreakpoint"),
    DroppedEntry("readGridId50", "deprecated in CUDA 5.5", "readGridId"),
    DroppedEntry("readBlockIdx32", "deprecated in CUDA 4.0", "readBlockIdx"),
    DroppedEntry("readGlobalMemory31", "deprecated in CUDA 3.2", "readGlobalMemory"),
    DroppedEntry("writeGlobalMemory31", "deprecated in CUDA 3.2", "writeGlobalMemory"),
    DroppedEntry("getGridDim32", "deprecated in CUDA 4.0", "getGridDim"),
    DroppedEntry("getElfImage32", "deprecated in CUDA 4.0", "getElfImage"),
    DroppedEntry("getPhysicalRegister30", "deprecated in CUDA 3.1", ""),
    DroppedEntry("isDeviceCodeAddress55", "deprecated in CUDA 6.0", "isDeviceCodeAddress"),
    DroppedEntry("setNotifyNewEventCallback31", "deprecated in CUDA 3.2", "setNotifyNewEventCallback"),
    DroppedEntry("getNextEvent30", "deprecated in CUDA 3.1", "getNextEvent"),
    DroppedEntry("acknowledgeEvent30", "deprecated in CUDA 3.1", "acknowledgeSyncEvents"),
    DroppedEntry("getPhysicalRegister40", "deprecated in CUDA 4.1", ""),
    DroppedEntry("getNextEvent32", "deprecated in CUDA 4.0", "getNextEvent"),
    DroppedEntry("acknowledgeEvents42", "deprecated in CUDA 5.0", "acknowledgeSyncEvents"),
    DroppedEntry("readCallDepth32", "deprecated in CUDA 4.0", "readCallDepth"),
    DroppedEntry("readReturnAddress32", "deprecated in CUDA 4.0", "readReturnAddress"),
    DroppedEntry("readVirtualReturnAddress32", "deprecated in CUDA 4.0", "readVirtualReturnAddress"),
    DroppedEntry("readGlobalMemory55", "deprecated in CUDA 6.0", "readGlobalMemory"),
    DroppedEntry("writeGlobalMemory55", "deprecated in CUDA 6.0", "writeGlobalMemory"),
    DroppedEntry("setNotifyNewEventCallback40", "deprecated in CUDA 4.1", "setNotifyNewEventCallback"),
    DroppedEntry("getNextEvent42", "deprecated in CUDA 5.0", "getNextEvent"),
    DroppedEntry("singleStepWarp41", "deprecated in CUDA 7.5", "singleStepWarp"),
    DroppedEntry("setNotifyNewEventCallback41", "superseded", "setNotifyNewEventCallback"),
    DroppedEntry("getNextSyncEvent50", "deprecated in CUDA 5.5", "getNextSyncEvent55"),
    DroppedEntry("getNextAsyncEvent50", "deprecated in CUDA 5.5", "getNextAsyncEvent55"),
    DroppedEntry("requestCleanupOnDetach55", "deprecated in CUDA 6.0", "requestCleanupOnDetach"),
    DroppedEntry("getGridStatus50", "deprecated in CUDA 5.5", "getGridStatus"),
    DroppedEntry("getGridInfo55", "superseded", "getGridInfo"),
    DroppedEntry("readDeviceExceptionState80", "superseded", "readDeviceExceptionState"),
    DroppedEntry("readWarpState60", "superseded", "readWarpState"),
    DroppedEntry("singleStepWarp65", "superseded", "singleStepWarp"),
    DroppedEntry("getLoadedFunctionInfo118", "superseded", "getLoadedFunctionInfo"),
    DroppedEntry("getGridInfo120", "superseded", "getGridInfo"),
    DroppedEntry("getClusterDim120", "superseded", "getClusterDim"),
    DroppedEntry("readWarpState120", "superseded", "readWarpState"),
    DroppedEntry("getConstBankAddress123", "superseded", "getConstBankAddress"),
    DroppedEntry("readWarpState127", "superseded", "readWarpState"),
)


LATEST_BY_NAME: dict[str, ApiEntry] = {e.name: e for e in LATEST_ENTRIES}
HEADER_TABLE_SIZE = len(LATEST_ENTRIES) + len(SUPERSEDED_ENTRIES)


def entry(name: str) -> ApiEntry:
    """The latest entry called ``name``; a dropped name says what replaced it."""
    try:
        return LATEST_BY_NAME[name]
    except KeyError:
        for dropped in SUPERSEDED_ENTRIES:
            if dropped.name == name:
                instead = f"; use {dropped.successor}" if dropped.successor else ""
                raise KeyError(f"CUDBGAPI_st.{name} is not a latest entry ({dropped.reason}{instead})") from None
        raise KeyError(f"CUDBGAPI_st has no entry named {name!r}") from None
