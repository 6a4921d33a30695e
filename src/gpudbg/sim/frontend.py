"""The simulated GPU's front end (host interface + PBDMA): one scheduler
thread that reads commands out of channel rings, executes the quick ones
itself and hands the long ones to the engines (sim/engines.py). What each
command does is sim/command_execution.py's (mixed in); this module
schedules, retires and faults.

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
from typing import Any

from gpudbg.driver import commands as C
from gpudbg.driver.fence import ChannelError
from gpudbg.driver.status import CUresult
from gpudbg.sim import timing
from gpudbg.sim.command_execution import CommandExecution
from gpudbg.sim.engines import ENGINE_OF, MAX_CONCURRENT_KERNELS, DeviceThreads, Engine, EngineKind, Job
from gpudbg.sim.memory.spaces import AccessFault


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
VALUE_POLL_S = 0.002   # re-check interval of blocked WAIT_VALUEs (direct host_view writes)


class Frontend(CommandExecution):
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
