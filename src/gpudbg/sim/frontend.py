"""The simulated GPU's front end (host interface + PBDMA): one device thread
that reads commands out of channel rings and executes them.

Scheduling: channels whose head command is runnable are served round-robin,
one command at a time; an unsatisfied SEM_ACQUIRE blocks only its own
channel. Every pointer update and semaphore write happens under the GPU's
condition variable, followed by notify_all, so host waiters (fences, ring
space) wake exactly when something changed; with nothing runnable the thread
sleeps on the same condition until a doorbell. Long work (a kernel, a big
copy) runs outside the lock so the host can keep submitting.

Errors: a KernelFault, a bad command or an illegal copy address stops the
whole channel group (context): pending commands are discarded, each
channel's tracking semaphore is set to the last value its discarded work
would have released, the error is recorded on the semaphores, and the
GPU's fault listeners are told. The front end never raises into the host.
"""
from __future__ import annotations

import threading
import traceback
from typing import Any

import numpy as np

from gpudbg.driver import commands as C
from gpudbg.driver.fence import ChannelError
from gpudbg.runtime.errors import mcError_t
from gpudbg.sim.faults import CUDBGException, FaultReport, KernelFault
from gpudbg.sim.memory.spaces import AccessFault

# CUDBGException kind -> the error a context reports (CUDA runtime naming).
FAULT_CODES: dict[CUDBGException, mcError_t] = {
    CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS: mcError_t.mcErrorIllegalAddress,
    CUDBGException.CUDBG_EXCEPTION_WARP_OUT_OF_RANGE_ADDRESS: mcError_t.mcErrorIllegalAddress,
    CUDBGException.CUDBG_EXCEPTION_DEVICE_ILLEGAL_ADDRESS: mcError_t.mcErrorIllegalAddress,
    CUDBGException.CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS: mcError_t.mcErrorIllegalAddress,
    CUDBGException.CUDBG_EXCEPTION_CLUSTER_OUT_OF_RANGE_ADDRESS: mcError_t.mcErrorIllegalAddress,
    CUDBGException.CUDBG_EXCEPTION_WARP_MISALIGNED_ADDRESS: mcError_t.mcErrorMisalignedAddress,
    CUDBGException.CUDBG_EXCEPTION_LANE_MISALIGNED_ADDRESS: mcError_t.mcErrorMisalignedAddress,
    CUDBGException.CUDBG_EXCEPTION_WARP_ILLEGAL_INSTRUCTION: mcError_t.mcErrorIllegalInstruction,
    CUDBGException.CUDBG_EXCEPTION_WARP_ASSERT: mcError_t.mcErrorAssert,
    CUDBGException.CUDBG_EXCEPTION_WARP_INVALID_ADDRESS_SPACE: mcError_t.mcErrorInvalidAddressSpace,
    CUDBGException.CUDBG_EXCEPTION_WARP_INVALID_PC: mcError_t.mcErrorInvalidPc,
    CUDBGException.CUDBG_EXCEPTION_WARP_HARDWARE_STACK_OVERFLOW: mcError_t.mcErrorHardwareStackError,
    CUDBGException.CUDBG_EXCEPTION_DEVICE_HARDWARE_STACK_OVERFLOW: mcError_t.mcErrorHardwareStackError,
}


def error_code_for(report: FaultReport) -> mcError_t:
    """The sticky context error a fault report becomes."""
    if report.hang is not None:
        return mcError_t.mcErrorLaunchTimeout
    return FAULT_CODES.get(report.kind, mcError_t.mcErrorLaunchFailure)


class Frontend:
    def __init__(self, gpu: Any):
        self.gpu = gpu
        self.cv: threading.Condition = gpu.cv
        self.channels: list[Any] = []
        self._rr = 0
        self.busy: Any = None          # channel whose command is executing
        self._killing: set[int] = set()  # groups being reset: schedule nothing from them
        self._stop = False
        self._thread: threading.Thread | None = None
        self.commands_executed = 0

    # ------------------------------------------------------------ lifecycle
    def start(self) -> None:
        with self.cv:
            if self._thread is not None:
                return
            self._stop = False
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name=f"gpudbg-gpu{self.gpu.ordinal}-frontend")
            self._thread.start()

    def stop(self) -> None:
        with self.cv:
            self._stop = True
            self.cv.notify_all()
            t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join()
        with self.cv:
            self._thread = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def attach(self, channel: Any) -> None:
        with self.cv:
            self.channels.append(channel)
            self.cv.notify_all()
        self.start()

    def detach(self, channel: Any) -> None:
        with self.cv:
            self.cv.wait_for(lambda: self.busy is not channel)
            if channel in self.channels:
                self.channels.remove(channel)
            self.cv.notify_all()

    # ------------------------------------------------------------ scheduling
    def _run(self) -> None:
        while True:
            with self.cv:
                pick = None
                while pick is None:
                    if self._stop:
                        return
                    pick = self._pick()
                    if pick is None:
                        self.cv.wait()
                channel, offset, cmd = pick
                if cmd.opcode in (C.Opcode.SEM_RELEASE, C.Opcode.SEM_ACQUIRE, C.Opcode.NOP,
                                  C.Opcode.HOST_NOTIFY):
                    error = self._execute_quick(channel, cmd)
                    self._retire(channel, offset, cmd, error)
                    continue
                self.busy = channel
                self.cv.notify_all()
            error = self._execute_slow(channel, cmd)
            with self.cv:
                self.busy = None
                self._retire(channel, offset, cmd, error)

    def _retire(self, channel: Any, offset: int, cmd: C.Command, error: ChannelError | None) -> None:
        """Advance get past a finished command (caller holds cv)."""
        self.commands_executed += 1
        if error is not None:
            self.fault_group(channel.group, error)
        else:
            channel.ring.get = (offset + cmd.size_words) % channel.ring.size
        self.cv.notify_all()

    def _pick(self) -> tuple[Any, int, C.Command] | None:
        """The next runnable head command, round-robin (caller holds cv)."""
        n = len(self.channels)
        for k in range(n):
            ch = self.channels[(self._rr + k) % n]
            ring = ch.ring
            if ring.empty() or ch.group in self._killing:
                continue
            if ch.semaphore.error is not None:
                self._discard(ch)   # late pushes to a dead channel retire at once
                self.cv.notify_all()
                continue
            try:
                cmd = ring.decode_at(ring.get)
            except C.CommandDecodeError as e:
                self.fault_group(ch.group, ChannelError(mcError_t.mcErrorLaunchFailure, str(e)))
                self.cv.notify_all()
                continue
            if cmd.opcode is C.Opcode.SEM_ACQUIRE and not self._acquired(ch, cmd):
                continue
            self._rr = (self._rr + k + 1) % n
            return ch, ring.get, cmd
        return None

    def _acquired(self, channel: Any, cmd: C.Command) -> bool:
        try:
            return self._read_u64(cmd.address) >= cmd.value
        except AccessFault:
            return True  # executing it reports the fault

    # ------------------------------------------------------------ execution
    def _read_u64(self, address: int) -> int:
        return int(self.gpu.memory.view(address, 8).view(np.uint64)[0])

    def _execute_quick(self, channel: Any, cmd: C.Command) -> ChannelError | None:
        try:
            if cmd.opcode is C.Opcode.SEM_RELEASE:
                self.gpu.memory.view(cmd.address, 8).view(np.uint64)[0] = cmd.value
            elif cmd.opcode is C.Opcode.SEM_ACQUIRE:
                self._read_u64(cmd.address)
            elif cmd.opcode is C.Opcode.HOST_NOTIFY:
                self.gpu.notifications.append((channel.id, cmd.token))
            return None
        except AccessFault as f:
            return ChannelError(mcError_t.mcErrorIllegalAddress,
                                f"{cmd.opcode.name} on {channel.name}: {f.message}")

    def _execute_slow(self, channel: Any, cmd: C.Command) -> ChannelError | None:
        mem = self.gpu.memory
        try:
            if cmd.opcode is C.Opcode.COPY:
                mem.copy(cmd.dst, cmd.src, cmd.size)
            elif cmd.opcode is C.Opcode.MEMSET:
                mem.fill(cmd.dst, cmd.value, cmd.element_size, cmd.count)
            elif cmd.opcode is C.Opcode.LAUNCH:
                self._launch(cmd.descriptor)
            return None
        except KernelFault as kf:
            return ChannelError(error_code_for(kf.report), kf.report.format(), kf.report)
        except AccessFault as f:
            return ChannelError(mcError_t.mcErrorIllegalAddress,
                                f"{cmd.opcode.name} on {channel.name}: {f.message}")
        except Exception as e:  # a simulator bug must not hang or kill the host
            self.gpu.internal_errors.append(e)
            return ChannelError(mcError_t.mcErrorLaunchFailure,
                                f"internal simulator error executing {cmd!r} on {channel.name}: "
                                f"{type(e).__name__}: {e}\n{traceback.format_exc()}")

    def _launch(self, descriptor_address: int) -> None:
        mem = self.gpu.memory
        d = C.decode_descriptor(bytes(mem.view(descriptor_address, C.DESCRIPTOR_BYTES)))
        function = self.gpu.functions.get(d["code_address"])
        if function is None:
            raise AccessFault(CUDBGException.CUDBG_EXCEPTION_WARP_INVALID_PC, self._code_space(),
                              -1, d["code_address"], 0,
                              f"launch of unknown code address 0x{d['code_address']:x}")
        params = bytes(mem.view(d["param_address"], d["param_size"])) if d["param_size"] else b""
        stats = self.gpu.executor(self.gpu, function, (d["grid_x"], d["grid_y"], d["grid_z"]),
                                  (d["block_x"], d["block_y"], d["block_z"]), d["shared_bytes"],
                                  params, d["grid_id"])
        self.gpu.last_launch_stats = stats

    @staticmethod
    def _code_space():
        from gpudbg.sim.memory.spaces import Space
        return Space.CODE

    # ------------------------------------------------------------ errors
    def _discard(self, channel: Any) -> None:
        """Drop pending commands, releasing what they would have released to
        the channel's own semaphore (caller holds cv)."""
        ring, sem = channel.ring, channel.semaphore
        last = sem.completed
        off = ring.get
        while off != ring.put:
            try:
                cmd = ring.decode_at(off)
            except C.CommandDecodeError:
                break
            if cmd.opcode is C.Opcode.SEM_RELEASE and cmd.address == sem.address:
                last = max(last, cmd.value)
            off = (off + cmd.size_words) % ring.size
        ring.get = ring.put
        last = max(last, sem.issued)
        sem._word[0] = last

    def fault_group(self, group: int, error: ChannelError) -> None:
        """Stop every channel of a group (caller holds cv)."""
        for ch in self.channels:
            if ch.group == group:
                if ch.semaphore.error is None:
                    ch.semaphore.error = error
                self._discard(ch)
        for listener in list(self.gpu.fault_listeners):
            try:
                listener(group, error)
            except Exception as e:
                self.gpu.internal_errors.append(e)
        self.cv.notify_all()

    def kill_group(self, group: int, error: ChannelError) -> None:
        """Reset: wait for the group's in-flight command, then discard its
        pending work (no fault listeners: nothing faulted)."""
        with self.cv:
            self._killing.add(group)
            try:
                self.cv.wait_for(lambda: self.busy is None or self.busy.group != group)
            finally:
                self._killing.discard(group)
            for ch in self.channels:
                if ch.group == group:
                    if ch.semaphore.error is None:
                        ch.semaphore.error = error
                    self._discard(ch)
            self.cv.notify_all()
