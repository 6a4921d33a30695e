"""The simulated GPU's front end (host interface + PBDMA): one scheduler
thread that reads commands out of channel rings, executes the quick ones
itself and hands the long ones to the engines (sim/engines.py).

Scheduling: channels whose head command is runnable are served by stream
priority (a channel's `priority`, lower number first), round-robin among
equal priorities; an unsatisfied SEM_ACQUIRE or WAIT_VALUE blocks only its
own channel. Quick commands (semaphores, notifications, stream memory
operations, timestamps, launch limits, pool map/unmap) execute on the
scheduler thread under the GPU's condition. A long command (a kernel on the
COMPUTE engine; a copy or memset on a COPY engine) becomes a Job on a
worker thread; its channel is not picked again until the job retires
(stream order), while every other channel keeps going: a copy, a
mcStreamWriteValue32 or a kernel on stream B runs while a kernel of stream
A spins waiting for it, as on a GPU with copy engines and concurrent
kernels (how grids share the SMs: sim/sm_pool.py). A head whose engine
class has no free worker waits. A blocked WAIT_VALUE is re-checked after
every command and doorbell, and also every VALUE_POLL_S, since a host store
(or a running kernel) changes memory without ringing a doorbell. Executed
work advances the device clock by sim/timing.py's cost model; TIMESTAMP
stores it. Every pointer update and semaphore write happens under the GPU's
condition variable, followed by notify_all, so host waiters (fences) wake
exactly when something changed; with nothing runnable the scheduler sleeps
on the same condition. A host waiting for ring space waits on its channel's
own condition instead and is woken by name (`wake_writer`): when half the
ring is free, when a discard empties it, or when the channel's head stalls
(driver/channel.py says why).

Errors: a KernelFault, a bad command or an illegal copy address stops the
whole channel group (context): pending commands are discarded, each
channel's tracking semaphore is set to the last value its discarded work
would have released, the error is recorded on the semaphores, the group's
other running jobs are told to abort (a kernel stops at its next watch
check), and the GPU's fault listeners are told. The front end never raises
into the host.
"""
from __future__ import annotations

import threading
import traceback
from typing import Any

import numpy as np

from gpudbg.driver import commands as C
from gpudbg.driver.fence import ChannelError
from gpudbg.driver.status import CUresult
from gpudbg.sim import launch_limits, timing
from gpudbg.sim import copy_engine
from gpudbg.sim.engines import (ENGINE_OF, MAX_CONCURRENT_KERNELS, DeviceThreads, Engine, EngineKind, Job,
                               current_job)
from gpudbg.sim.memory.spaces import AccessType
from gpudbg.sim import debug_port
from gpudbg.sim.debug_port import LaunchAborted
from gpudbg.sim.faults import CUDBGException, FaultReport, KernelFault
from gpudbg.sim.memory.spaces import AccessFault

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


QUICK_OPCODES = frozenset({C.Opcode.SEM_RELEASE, C.Opcode.SEM_ACQUIRE, C.Opcode.NOP, C.Opcode.HOST_NOTIFY,
                           C.Opcode.WAIT_VALUE, C.Opcode.WRITE_VALUE, C.Opcode.TIMESTAMP,
                           C.Opcode.SET_LAUNCH_LIMITS})
_LAUNCH = C.Opcode.LAUNCH
_DESCRIPTOR_BYTES = C.DESCRIPTOR_BYTES
_descriptor_fields = C.descriptor_fields
_LAUNCH_CYCLES = timing.LAUNCH_COMMAND_CYCLES
_OWN_FENCE = C.Command(C.Opcode.SEM_RELEASE, {})   # what _advance retires for a fence it did not decode
_NAMES = {op: op.name for op in C.Opcode}    # Enum's .name is a Python-level property
_SIZE_WORDS = {op: 1 + C.payload_words(op) for op in C.FORMATS}    # Command.size_words, without its property
# WAIT_VALUE flags, as CUDA's CU_STREAM_WAIT_VALUE_*.
WAIT_VALUE_GEQ, WAIT_VALUE_EQ, WAIT_VALUE_AND, WAIT_VALUE_NOR = 0, 1, 2, 3
WAIT_VALUE_FLUSH = 1 << 30
VALUE_POLL_S = 0.002   # re-check interval of blocked WAIT_VALUEs (direct host_view writes)


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


class Frontend:
    def __init__(self, gpu: Any):
        self.gpu = gpu
        self.cv: threading.Condition = gpu.cv
        self.channels: list[Any] = []
        self._rr = 0
        self.executing: dict[Any, Job] = {}   # channel -> its head, running on an engine
        self._killing: set[int] = set()  # groups being reset: schedule nothing from them
        self._stop = False
        self._started = False
        self.commands_executed = 0
        self._value_blocked = False    # a WAIT_VALUE head was unsatisfied at the last pick
        self.engines = {EngineKind.COPY: Engine(EngineKind.COPY, self._copy_engines),
                        EngineKind.COMPUTE: Engine(EngineKind.COMPUTE, self._kernel_slots)}
        self.threads = DeviceThreads(self.cv, f"gpudbg-gpu{gpu.ordinal}", self._lead, self._work)
        self._executor: tuple[Any, Any] = (None, None)   # (the GPU's executor, what _launch calls for it)

    def _copy_engines(self) -> int:
        return max(1, int(getattr(self.gpu.model, "async_engine_count", 1) or 1))

    @staticmethod
    def _kernel_slots() -> int:
        return MAX_CONCURRENT_KERNELS

    @property
    def busy(self) -> Any:
        """A channel whose command is executing (the first), or None."""
        return next(iter(self.executing), None)

    def is_executing(self, channel: Any) -> bool:
        return channel in self.executing

    def progress_token(self) -> tuple:
        """Changes whenever a command retires or an engine starts or ends a
        job (caller holds cv): the hang watchdog's notion of progress."""
        return (self.commands_executed, tuple(sorted(id(j) for j in self.executing.values())))

    # ------------------------------------------------------------ lifecycle
    def start(self) -> None:
        with self.cv:
            if self._started:
                return
            self._stop = False
            self._started = True
            self.threads.start()

    def stop(self) -> None:
        """Stop scheduling, abort running kernels and wait for every thread."""
        with self.cv:
            self._stop = True
            for job in self.executing.values():
                if job.abort is None:
                    job.abort = "the device was shut down"
            self.cv.notify_all()
            threads = self.threads.stop()
        me = threading.current_thread()
        for t in threads:
            if t is not me:
                t.join()
        with self.cv:
            self._started = False

    @property
    def running(self) -> bool:
        return self._started and not self._stop and self.threads.alive

    def attach(self, channel: Any) -> None:
        with self.cv:
            self.channels.append(channel)
            self.cv.notify_all()
        self.start()

    def detach(self, channel: Any) -> None:
        with self.cv:
            self.cv.wait_for(lambda: channel not in self.executing)
            if channel in self.channels:
                self.channels.remove(channel)
            self.cv.notify_all()

    # ------------------------------------------------------------ scheduling
    def _lead(self) -> Job | None:
        """The scheduling loop, run by the leading device thread: quick
        commands execute here; the first long one is returned as a Job for
        this thread to execute, after another thread was made leader. None
        when the GPU stops."""
        with self.cv:
            while True:
                pick = None
                while pick is None:
                    if self._stop:
                        return None
                    pick = self._pick()
                    if pick is None:
                        # A blocked WAIT_VALUE may be released by a direct host
                        # write to pinned memory or by a running kernel, which
                        # ring no doorbell: re-check it after a bounded poll
                        # interval (mc* writes and retiring commands notify).
                        self.cv.wait(VALUE_POLL_S if self._value_blocked else None)
                channel, offset, cmd = pick
                kind = ENGINE_OF.get(cmd.opcode)
                if kind is None:
                    error = self._execute_inline(channel, cmd)
                    self._retire(channel, offset, cmd, error)
                    continue
                job = Job(channel, offset, cmd, kind)
                self.executing[channel] = job
                self.engines[kind].running += 1
                if self._value_blocked or self._others_queued(channel):
                    self.threads.promote()
                else:
                    self.threads.vacate()    # a doorbell (`rung`) or this job's end fills it
                self.cv.notify_all()
                return job

    def _others_queued(self, channel: Any) -> bool:
        """Whether a channel other than `channel` has commands that no engine
        runs yet (caller holds cv): then a leader must stay to schedule them."""
        executing = self.executing
        return any(not ch.ring.empty() and ch is not channel and ch not in executing
                   for ch in self.channels)

    def rung(self, channel: Any = None) -> None:
        """A push advanced `channel`'s put (caller holds cv): with the leader's
        post vacant, promote one to schedule it (the job running may be one
        that waits for this very push). A push to the channel whose command
        runs now needs nobody: no command of it can start before that job
        ends, and the job's thread then goes on with it (_follow_on) or
        leads again; a leader promoted for it would only wake at every
        notify, find nothing to pick and sleep again (a thread hand-off per
        launch of a stream of launches)."""
        if channel is not None and channel in self.executing:
            return
        self.threads.fill()

    def _execute_inline(self, channel: Any, cmd: C.Command) -> ChannelError | None:
        """A command no engine runs, on the scheduler thread: the quick ones,
        and pool map/unmap (charged in the clock like long work)."""
        if cmd.opcode in QUICK_OPCODES:
            return self._execute_quick(channel, cmd)
        return self._execute_slow(channel, cmd)

    def _work(self, job: Job) -> None:
        """A device thread executes a job off the lock, retires it, and goes
        on with its channel's next commands while they need no waiting: the
        quick ones run here and a next command for the same engine stays on
        this thread (no hand-off between the kernels of one stream). The
        lock is held once per command: its retirement, the quick commands
        after it and the pick of the next are one critical section, so one
        notify_all at its end wakes whoever waits on any of them."""
        cv = self.cv
        lock = getattr(cv, "_lock", cv)     # the condition's own lock: its with-statement is two Python calls
        channel = job.channel
        while True:
            cmd = job.cmd
            error = self._execute_slow(channel, cmd, job)
            with lock:
                self._advance(channel, job.offset, cmd, error)
                nxt = self._follow_on(job) if error is None else None
                if nxt is None:
                    self.executing.pop(channel, None)
                    self.engines[job.kind].running -= 1
                    cv.notify_all()
                    return
                cv.notify_all()
                job.offset, job.cmd = nxt

    def _follow_on(self, job: Job) -> tuple[int, C.Command] | None:
        """After `job` retired (caller holds cv and notifies after): run its
        channel's ready quick commands, and return the next command if it is
        for the same engine; None hands the channel back to the scheduler."""
        ch = job.channel
        killing = self._killing
        # (what is set under cv stays as it is while the caller holds it;
        # a fault of a quick command run here sets the semaphore's error)
        if self._stop or job.abort is not None or killing and ch.group in killing:
            return None
        ring = ch.ring
        kind = job.kind
        sem = ch.semaphore
        fence_head = ch.fence_head
        peek = ring.peek
        while ring.put != ring.get and sem.error is None:
            offset = ring.get
            if peek(offset) == fence_head[0] and not sem.released:     # a SEM_RELEASE ...
                value = ring.release_value_at(offset, fence_head)
                if value is not None:
                    # ... the fence closing every push, known by its words: _execute_quick's
                    # write of its own live word, without decoding a Command for it
                    sem._word[0] = value
                    self._advance(ch, offset, _OWN_FENCE, None)
                    continue
            try:
                cmd = ring.decode_at(offset)
            except C.CommandDecodeError:
                return None
            op = cmd.opcode
            if ENGINE_OF.get(op) is kind:
                return offset, cmd
            # (a SEM_RELEASE, the fence after every push, never waits)
            if op not in QUICK_OPCODES or op is not C.Opcode.SEM_RELEASE and self.waiting(ch, cmd):
                return None
            self._advance(ch, offset, cmd, self._execute_quick(ch, cmd))
        return None

    def _retire(self, channel: Any, offset: int, cmd: C.Command, error: ChannelError | None) -> None:
        """Advance get past a finished command and wake waiters (caller holds cv)."""
        self._advance(channel, offset, cmd, error)
        self.cv.notify_all()

    def _advance(self, channel: Any, offset: int, cmd: C.Command, error: ChannelError | None) -> None:
        """_retire without the notify, for a caller that notifies once for
        several commands before it lets go of cv."""
        self.commands_executed += 1
        if error is None:
            op = cmd.opcode
            if op is _LAUNCH:
                timing.advance(self.gpu, _LAUNCH_CYCLES)    # timing.charge of a LAUNCH
            elif op not in QUICK_OPCODES:
                timing.charge(self.gpu, _NAMES[op], cmd.fields)
            if channel.semaphore.error is not None:
                self._discard(channel)   # its group failed while the command ran: nothing after it runs
                return
            ring = channel.ring
            size = ring.size
            ring.get = get = (offset + _SIZE_WORDS[op]) % size
            want = channel.room_wanted
            if want and size - 1 - (ring.put - get) % size >= want:   # ring.free()
                channel.wake_writer()    # a host waiting for room: half the ring is free now
        elif channel.group in self._killing:
            self._discard(channel)   # a reset aborted it: nothing faulted
        else:
            self.fault_group(channel.group, error)

    def _pick(self) -> tuple[Any, int, C.Command] | None:
        """The next runnable head command (caller holds cv): the channel of
        highest stream priority (lowest number) among runnable ones,
        round-robin among equals. A channel with a command on an engine,
        or whose head needs an engine with no free worker, waits."""
        if getattr(self.gpu, "differential_hold", False):   # a launch compared under both engines runs alone (sim/native/differential.py)
            return None
        n = len(self.channels)
        best: tuple[int, int, Any, int, C.Command] | None = None
        self._value_blocked = False
        executing = self.executing
        for k in range(n):
            ch = self.channels[(self._rr + k) % n]
            ring = ch.ring
            if ring.empty() or ch.group in self._killing or ch in executing:
                continue
            if ch.semaphore.error is not None:
                self._discard(ch)   # late pushes to a dead channel retire at once
                self.cv.notify_all()
                continue
            try:
                cmd = ring.decode_at(ring.get)
            except C.CommandDecodeError as e:
                self.fault_group(ch.group, ChannelError(CUresult.CUDA_ERROR_LAUNCH_FAILED, str(e)))
                self.cv.notify_all()
                continue
            if cmd.opcode is C.Opcode.SEM_ACQUIRE and not self._acquired(ch, cmd):
                self._stalled(ch)
                continue
            if cmd.opcode is C.Opcode.WAIT_VALUE and not self._value_ready(cmd):
                self._value_blocked = True
                self._stalled(ch)
                continue
            kind = ENGINE_OF.get(cmd.opcode)
            if kind is not None and not self.engines[kind].free():
                self._stalled(ch)
                continue
            prio = getattr(ch, "priority", 0)
            if best is None or prio < best[0]:
                best = (prio, k, ch, ring.get, cmd)
        if best is None:
            return None
        _prio, k, ch, offset, cmd = best
        self._rr = (self._rr + k + 1) % n
        return ch, offset, cmd

    @staticmethod
    def _stalled(channel: Any) -> None:
        """`channel`'s head cannot start now (caller holds cv): a host
        waiting for the ring to drain to its wake threshold takes the room
        there is, since the work that would release the head may be its own
        next push or store (driver/channel.py)."""
        if channel.room_wanted and channel.ring.free() >= channel.room_needed:
            channel.wake_writer()

    def _acquired(self, channel: Any, cmd: C.Command) -> bool:
        try:
            return self._read_u64(cmd.address) >= cmd.value
        except AccessFault:
            return True  # executing it reports the fault

    def waiting(self, channel: Any, cmd: C.Command) -> bool:
        """Whether `cmd`, the head of `channel`, waits on a semaphore or
        value that is not there yet (caller holds cv)."""
        if cmd.opcode is C.Opcode.SEM_ACQUIRE:
            return not self._acquired(channel, cmd)
        return cmd.opcode is C.Opcode.WAIT_VALUE and not self._value_ready(cmd)

    def held_back(self) -> bool:
        """Whether a channel that no engine runs has a head command that
        could start now but for the differential hold (caller holds cv):
        work a compared launch may be waiting for."""
        executing = self.executing
        for ch in self.channels:
            ring = ch.ring
            if ring.empty() or ch in executing or ch.group in self._killing or ch.semaphore.error is not None:
                continue
            try:
                cmd = ring.decode_at(ring.get)
            except C.CommandDecodeError:
                continue
            if not self.waiting(ch, cmd):
                return True
        return False

    def blocked_heads(self) -> list[tuple[Any, int, C.Command]] | None:
        """For hang detection (caller holds cv): (channel, rptr, head) of every
        channel whose head waits, or None when the GPU can make progress (any
        engine executing a command, or a head that can run)."""
        if self.executing:
            return None
        out = []
        for ch in self.channels:
            ring = ch.ring
            if ring.empty() or ch.group in self._killing:
                continue
            if ch.semaphore.error is not None:
                return None
            try:
                cmd = ring.decode_at(ring.get)
            except C.CommandDecodeError:
                return None
            if not self.waiting(ch, cmd):
                return None
            out.append((ch, ring.get, cmd))
        return out

    # ------------------------------------------------------------ execution
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
        if channel.room_wanted:
            channel.wake_writer()    # the ring is empty: a host waiting for room writes (and is discarded)

    def _abort_group(self, group: int, reason: str) -> None:
        """Tell the group's running jobs to stop (caller holds cv)."""
        for ch, job in self.executing.items():
            if ch.group == group and job.abort is None:
                job.abort = reason

    def fault_group(self, group: int, error: ChannelError) -> None:
        """Stop every channel of a group (caller holds cv); its kernels still
        running on other channels are aborted."""
        for ch in self.channels:
            if ch.group == group:
                if ch.semaphore.error is None:
                    ch.semaphore.error = error
                self._discard(ch)
        self._abort_group(group, "its context failed: " + error.message.split("\n", 1)[0])
        for listener in list(self.gpu.fault_listeners):
            try:
                listener(group, error)
            except Exception as e:
                self.gpu.internal_errors.append(e)
        self.cv.notify_all()

    def kill_group(self, group: int, error: ChannelError) -> None:
        """Reset: stop the group's running commands (kernels abort at their
        next check; copies finish), then discard its pending work (no fault
        listeners: nothing faulted)."""
        with self.cv:
            self._killing.add(group)
            try:
                self._abort_group(group, "its context was reset")
                self.cv.wait_for(lambda: not any(ch.group == group for ch in self.executing))
            finally:
                self._killing.discard(group)
            for ch in self.channels:
                if ch.group == group:
                    if ch.semaphore.error is None:
                        ch.semaphore.error = error
                    self._discard(ch)
            self.cv.notify_all()
