"""How the simulated GPU executes each command it reads from a channel
ring: the method handlers behind the front end's scheduler (frontend.py),
as PBDMA methods and engine work are on a GPU.

Quick commands (semaphores, notifications, stream memory operations,
timestamps, launch limits) run on the scheduling thread; long ones (a
LAUNCH, which runs its grid through the GPU's executor, a copy or memset
on a copy engine, pool map/unmap) on the thread that took the job. The
one idea: a handler never raises into the scheduler. Every failure, a
kernel fault, an illegal address, an aborted launch or a simulator bug,
comes back as the ChannelError that becomes the context's sticky error
(FAULT_CODES names it as the CUDA runtime does). What it does not do:
pick, retire or discard commands, or fault a channel group; that is the
scheduler's job (frontend.py), which mixes this class in.
"""
from __future__ import annotations

import traceback
from typing import Any

import numpy as np

from gpudbg.driver import commands as C
from gpudbg.driver.fence import ChannelError
from gpudbg.driver.status import CUresult
from gpudbg.sim import copy_engine, debug_port, launch_limits, timing
from gpudbg.sim.debug_port import LaunchAborted
from gpudbg.sim.engines import Job, current_job
from gpudbg.sim.faults import CUDBGException, FaultReport, KernelFault
from gpudbg.sim.memory.spaces import AccessFault, AccessType

_LAUNCH = C.Opcode.LAUNCH
_DESCRIPTOR_BYTES = C.DESCRIPTOR_BYTES
_descriptor_fields = C.descriptor_fields

# CUDBGException kind -> the error a context reports (CUDA runtime naming).
FAULT_CODES: dict[CUDBGException, CUresult] = {
    CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS: CUresult.CUDA_ERROR_ILLEGAL_ADDRESS,
    CUDBGException.CUDBG_EXCEPTION_WARP_OUT_OF_RANGE_ADDRESS: CUresult.CUDA_ERROR_ILLEGAL_ADDRESS,
    CUDBGException.CUDBG_EXCEPTION_DEVICE_ILLEGAL_ADDRESS: CUresult.CUDA_ERROR_ILLEGAL_ADDRESS,
    CUDBGException.CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS: CUresult.CUDA_ERROR_ILLEGAL_ADDRESS,
    CUDBGException.CUDBG_EXCEPTION_CLUSTER_OUT_OF_RANGE_ADDRESS: CUresult.CUDA_ERROR_ILLEGAL_ADDRESS,
    CUDBGException.CUDBG_EXCEPTION_WARP_MISALIGNED_ADDRESS: CUresult.CUDA_ERROR_MISALIGNED_ADDRESS,
    CUDBGException.CUDBG_EXCEPTION_LANE_MISALIGNED_ADDRESS: CUresult.CUDA_ERROR_MISALIGNED_ADDRESS,
    CUDBGException.CUDBG_EXCEPTION_WARP_ILLEGAL_INSTRUCTION: CUresult.CUDA_ERROR_ILLEGAL_INSTRUCTION,
    CUDBGException.CUDBG_EXCEPTION_WARP_ASSERT: CUresult.CUDA_ERROR_ASSERT,
    CUDBGException.CUDBG_EXCEPTION_WARP_INVALID_ADDRESS_SPACE: CUresult.CUDA_ERROR_INVALID_ADDRESS_SPACE,
    CUDBGException.CUDBG_EXCEPTION_WARP_INVALID_PC: CUresult.CUDA_ERROR_INVALID_PC,
    CUDBGException.CUDBG_EXCEPTION_WARP_HARDWARE_STACK_OVERFLOW: CUresult.CUDA_ERROR_HARDWARE_STACK_ERROR,
    CUDBGException.CUDBG_EXCEPTION_DEVICE_HARDWARE_STACK_OVERFLOW: CUresult.CUDA_ERROR_HARDWARE_STACK_ERROR,
}

# WAIT_VALUE flags, as CUDA's CU_STREAM_WAIT_VALUE_*.
WAIT_VALUE_GEQ, WAIT_VALUE_EQ, WAIT_VALUE_AND, WAIT_VALUE_NOR = 0, 1, 2, 3
WAIT_VALUE_FLUSH = 1 << 30


def _memop_problem(cmd: C.Command) -> str:
    """Why a WAIT_VALUE/WRITE_VALUE cannot execute ('' when it can)."""
    if cmd.width not in (4, 8):
        return f"width {cmd.width} is not 4 or 8"
    if cmd.address % cmd.width:
        return f"address 0x{cmd.address:x} is not {cmd.width}-byte aligned"
    if cmd.opcode is C.Opcode.WAIT_VALUE and (cmd.flags & ~WAIT_VALUE_FLUSH) > WAIT_VALUE_NOR:
        return f"flags 0x{cmd.flags:x} name no wait condition"
    if cmd.opcode is C.Opcode.WRITE_VALUE and cmd.flags > 1:
        return f"flags 0x{cmd.flags:x} are not DEFAULT or NO_MEMORY_BARRIER"
    return ""


def error_code_for(report: FaultReport) -> CUresult:
    """The sticky context error a fault report becomes."""
    if report.hang is not None:
        return CUresult.CUDA_ERROR_LAUNCH_TIMEOUT
    return FAULT_CODES.get(report.kind, CUresult.CUDA_ERROR_LAUNCH_FAILED)


class CommandExecution:
    """The front end's command handlers (mixed into sim/frontend.Frontend,
    whose `gpu`, `cv` and `_executor` they use)."""

    gpu: Any
    cv: Any
    _executor: tuple[Any, Any]

    def _read_u64(self, address: int) -> int:
        return int(self.gpu.memory.view(address, 8).view(np.uint64)[0])

    def _execute_quick(self, channel: Any, cmd: C.Command) -> ChannelError | None:
        try:
            if cmd.opcode is C.Opcode.SEM_RELEASE:
                sem = channel.semaphore
                fields = cmd.fields          # (Command's attribute access is a Python-level __getattr__)
                if fields["address"] == sem.address and not sem.released:
                    sem._word[0] = fields["value"]     # the fence closing every push: its own live word
                else:
                    self.gpu.memory.view(fields["address"], 8).view(np.uint64)[0] = fields["value"]
            elif cmd.opcode is C.Opcode.SEM_ACQUIRE:
                self._read_u64(cmd.address)
            elif cmd.opcode is C.Opcode.HOST_NOTIFY:
                self.gpu.notifications.append((channel.id, cmd.token))
            elif cmd.opcode in (C.Opcode.WAIT_VALUE, C.Opcode.WRITE_VALUE):
                bad = _memop_problem(cmd)
                if bad:
                    return ChannelError(CUresult.CUDA_ERROR_LAUNCH_FAILED,
                                        f"bad {cmd.opcode.name} on {channel.name}: {bad}")
                if cmd.opcode is C.Opcode.WAIT_VALUE:
                    self._read_value(cmd.address, cmd.width)   # a fault is reported here
                else:
                    self._write_value(cmd.address, cmd.value, cmd.width)
            elif cmd.opcode is C.Opcode.TIMESTAMP:
                self.gpu.memory.view(cmd.address, 8).view(np.uint64)[0] = timing.now(self.gpu)
                timing.record_host_time(self.gpu, cmd.address)
            elif cmd.opcode is C.Opcode.SET_LAUNCH_LIMITS:
                launch_limits.program(channel, launch_limits.LaunchLimits(
                    cmd.stack_size, cmd.printf_fifo_size, cmd.malloc_heap_size, cmd.pending_launch_count))
            return None
        except AccessFault as f:
            return ChannelError(CUresult.CUDA_ERROR_ILLEGAL_ADDRESS,
                                f"{cmd.opcode.name} on {channel.name}: {f.message}")

    def _execute_slow(self, channel: Any, cmd: C.Command, job: Job | None = None) -> ChannelError | None:
        """A long command (or pool map/unmap); `job`: the one executing it,
        when the caller has it."""
        try:
            if cmd.opcode is _LAUNCH:
                launch_limits.apply(self.gpu, channel)
                self._launch(cmd.fields["descriptor"], job)
                return None
            mem = self.gpu.memory
            if cmd.opcode is C.Opcode.COPY:
                mem.copy(cmd.dst, cmd.src, cmd.size)
            elif cmd.opcode is C.Opcode.MEMSET:
                mem.fill(cmd.dst, cmd.value, cmd.element_size, cmd.count)
            elif cmd.opcode in (C.Opcode.COPY_2D, C.Opcode.MEMSET_2D):
                copy_engine.execute(self.gpu, cmd)
            elif cmd.opcode in (C.Opcode.POOL_ALLOC, C.Opcode.POOL_FREE):
                self._pool_command(cmd)
            return None
        except KernelFault as kf:
            from gpudbg.dump.coredump import on_kernel_fault
            on_kernel_fault(self.gpu, kf)  # GPUDBG_COREDUMP_ON_EXCEPTION: dump before the wave is reused
            from gpudbg.dump.devcoredump.capture import on_device_fault
            on_device_fault(self.gpu, channel, kf.report)  # latch fault registers; GPUDBG_DEVCOREDUMP_DIR
            return ChannelError(error_code_for(kf.report), kf.report.format(), kf.report)
        except LaunchAborted as e:
            return ChannelError(CUresult.CUDA_ERROR_LAUNCH_FAILED, f"{cmd.opcode.name} on {channel.name}: {e}")
        except AccessFault as f:
            return ChannelError(CUresult.CUDA_ERROR_ILLEGAL_ADDRESS,
                                f"{cmd.opcode.name} on {channel.name}: {f.message}")
        except Exception as e:  # a simulator bug must not hang or kill the host
            self.gpu.internal_errors.append(e)
            message = (f"internal simulator error executing {cmd!r} on {channel.name}: "
                       f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
            debug_port.notify("internal_error", self.gpu, message)
            return ChannelError(CUresult.CUDA_ERROR_LAUNCH_FAILED, message)

    # ------------------------------------------------------------ stream memory ops
    def _read_value(self, address: int, width: int) -> int:
        dt = np.uint32 if width == 4 else np.uint64
        return int(self.gpu.memory.view(address, width).view(dt)[0])

    def _write_value(self, address: int, value: int, width: int) -> None:
        dt = np.uint32 if width == 4 else np.uint64
        self.gpu.memory.view(address, width, AccessType.WRITE).view(dt)[0] = value & ((1 << (8 * width)) - 1)

    def _value_ready(self, cmd: C.Command) -> bool:
        """CU_STREAM_WAIT_VALUE_* semantics: GEQ is a cyclic (wrapping,
        signed-difference) comparison; EQ, AND (any common bit), NOR
        (~(*addr | value) != 0) on the 32- or 64-bit word."""
        if _memop_problem(cmd):
            return True  # executing it reports the bad command
        try:
            cur = self._read_value(cmd.address, cmd.width)
        except AccessFault:
            return True  # executing it reports the fault
        bits = 8 * cmd.width
        mask = (1 << bits) - 1
        value = cmd.value & mask
        op = cmd.flags & ~WAIT_VALUE_FLUSH
        if op == WAIT_VALUE_GEQ:
            return ((cur - value) & mask) < (1 << (bits - 1))
        if op == WAIT_VALUE_EQ:
            return cur == value
        if op == WAIT_VALUE_AND:
            return (cur & value) != 0
        return (~(cur | value) & mask) != 0

    def _pool_command(self, cmd: C.Command) -> None:
        """Stream-ordered allocation takes effect here, when the GPU reaches it:
        the block is mapped from its backed pool reservation, and a free
        unmaps it, remembered as freed so a later access is use-after-free."""
        with self.cv:
            try:
                if cmd.opcode is C.Opcode.POOL_ALLOC:
                    self.gpu.memory.map_backed(cmd.address, cmd.size, label="stream-ordered allocation")
                else:
                    self.gpu.memory.unmap(cmd.address, remember_freed=True)
            except ValueError as e:
                raise AccessFault(CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS,
                                  self._code_space().GLOBAL, -1, cmd.address, 0, str(e)) from None

    def _resolve_executor(self, run: Any) -> Any:
        """What a launch calls for the GPU's executor `run`: launch_grid
        itself for sim/gpu.py's default (which only imports it: the executor
        module imports what imports this one), else `run`; remembered for
        the next launch (a test may replace the executor at any time)."""
        from gpudbg.sim import gpu as sim_gpu
        if run is sim_gpu._default_executor:
            from gpudbg.sim.executor import launch_grid
            self._executor = (run, launch_grid)
        else:
            self._executor = (run, run)
        return self._executor[1]

    def _launch(self, descriptor_address: int, job: Job | None = None) -> None:
        gpu = self.gpu
        mem = gpu.memory
        # Without the GPU's lock: the allocation table is read as one consistent
        # snapshot (GlobalMemory.find), and the driver frees or reuses a launch
        # block only after this LAUNCH's fence retired. A descriptor that does
        # not lie inside one allocation is refused by mem.view, precisely.
        a = mem.find(descriptor_address)
        if a is None or descriptor_address + _DESCRIPTOR_BYTES > a.base + a.size:
            mem.view(descriptor_address, C.DESCRIPTOR_BYTES)
        (code_address, gx, gy, gz, bx, by, bz, shared, param_address, param_size, grid_id, host_tid,
         cooperative, cx, cy, cz) = _descriptor_fields(a.data, descriptor_address - a.base)
        params = bytes(mem.view(param_address, param_size)) if param_size else b""
        function = gpu.functions.get(code_address)
        if function is None:
            raise AccessFault(CUDBGException.CUDBG_EXCEPTION_WARP_INVALID_PC, self._code_space(),
                              -1, code_address, 0, f"launch of unknown code address 0x{code_address:x}")
        gpu.launch_host_tid = host_tid   # who launched it, for the debugger
        if job is None:
            job = current_job()
        if job is not None:
            job.host_tid = host_tid
        run = gpu.executor
        resolved = self._executor
        run = resolved[1] if run is resolved[0] else self._resolve_executor(run)
        if cooperative or cx:
            extra: dict = {}
            if cooperative:
                extra["cooperative"] = True
            if cx:
                extra["cluster"] = (cx, cy, cz)
            gpu.last_launch_stats = run(gpu, function, (gx, gy, gz), (bx, by, bz), shared, params, grid_id,
                                        **extra)
        else:
            gpu.last_launch_stats = run(gpu, function, (gx, gy, gz), (bx, by, bz), shared, params, grid_id)

    @staticmethod
    def _code_space():
        from gpudbg.sim.memory.spaces import Space
        return Space.CODE
