"""Capture a devcoredump of the simulated GPU when work faults or hangs.

This is our msm_gpu_crashstate_capture(): the front end calls
`on_device_fault` when a kernel faults or hangs (KernelFault, including the
executor's instruction-budget and barrier-deadlock hangs), and the driver's
watchdog calls `on_hang` when a fence never retires while every channel is
blocked. Both latch the GPU's fault registers (sim/registers.py) and, when
dumping is on, write a dump in the drm/msm text format with `module: gpudbg`.
The one idea: the dump is read from the same state the GPU runs on, under
the GPU lock, so it shows exactly what the hardware had: each channel ring
as the driver encoded it in device memory with its rptr (the command being
executed or waited in) and wptr, fences issued and retired, the register
file, and the buffers of the failing submission as `bos`: the launch
descriptor, the kernel parameters and the code image of the LAUNCH being
executed (and of the launches queued behind a blocked head), the word a
blocked WAIT_VALUE / SEM_ACQUIRE waits on, and the allocation(s) at or next
to the fault address. A bo larger than MAX_BO_BYTES is dumped as a window of
that size around the address of interest. Sizes are rounded up to whole
dwords, as the format counts dwords.

Contents: `kernel: gpudbg <version>`, `module: gpudbg`, `time:` (host wall
clock, seconds.nanoseconds), `comm:`/`cmdline:` of this process (from
/proc/self when there is one), `revision:` (sim/registers.py: 900 (9.0.0.0)
for compute capability 9.0), `fault-info:` only for faults with an address
(ttbr0 = the device's VA base, iova, dir, type = CUDBGException name,
source = SM<n>), `rbbm-status:` (our RBBM_STATUS), then `ringbuffer:`,
`bos:` and `registers:` in the a6xx layout order (gpu-initialized first).

Where: dumping is on when `enable(DIR)` was called (the CLI's
`--devcoredump DIR`) or GPUDBG_DEVCOREDUMP_DIR is set; the directory is
created if needed. Files are named `devcd-<pid>-<n>.devcore` (the kernel's
devcd<N> plus our pid, n counting from 1 per process, never overwriting)
and written atomically with mode 0600 (dump/files.py). A failed capture never hides
the fault: it is noted in the report's details and on stderr instead.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from gpudbg.driver import commands as C
from gpudbg.dump.devcoredump.model import (
    BufferObject, Devcoredump, DumpTime, FaultForm, FaultInfo, Layout, Register, Revision, Ringbuffer,
)
from gpudbg.dump.devcoredump.writer import write_file
from gpudbg.dump.files import OnExisting
from gpudbg.sim import registers as R
from gpudbg.sim.faults import FaultReport

ENV_DIR = "GPUDBG_DEVCOREDUMP_DIR"
MAX_BO_BYTES = 1 << 20
QUEUED_LAUNCHES = 8         # launches behind a blocked head whose buffers are dumped
NEIGHBOUR_BYTES = 1 << 16   # how far from a fault address a nearby allocation is dumped

_lock = threading.Lock()
_override: Path | None = None
_counter = 0


class DevcoredumpConfigError(ValueError):
    """A dump directory that cannot be used."""


# ---------------------------------------------------------------- configuration
def _usable(directory: str | os.PathLike[str], source: str) -> Path:
    path = Path(directory).expanduser()
    if str(directory) == "":
        raise DevcoredumpConfigError(f"{source}: empty directory name")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DevcoredumpConfigError(f"{source}: cannot create directory {path}: {e.strerror or e}") from None
    if not path.is_dir():
        raise DevcoredumpConfigError(f"{source}: {path} is not a directory")
    if not os.access(path, os.W_OK | os.X_OK):
        raise DevcoredumpConfigError(f"{source}: directory {path} is not writable")
    return path.resolve()


def enable(directory: str | os.PathLike[str]) -> Path:
    """Turn dumping on, into `directory` (created if needed); overrides the
    environment variable. Returns the resolved directory."""
    global _override
    path = _usable(directory, "devcoredump directory")
    with _lock:
        _override = path
    return path


def disable() -> None:
    """Forget enable(); GPUDBG_DEVCOREDUMP_DIR (if set) still applies."""
    global _override
    with _lock:
        _override = None


def dump_directory() -> Path | None:
    """Where dumps go now, or None when dumping is off."""
    with _lock:
        if _override is not None:
            return _override
    env = os.environ.get(ENV_DIR)
    return _usable(env, ENV_DIR) if env else None


# ---------------------------------------------------------------- host process
def _quotable(text: str) -> str:
    """kstrdup_quotable's idea: no control characters in a dump line."""
    return "".join(c if c.isprintable() else f"\\{ord(c):03o}" for c in text)


def host_process() -> tuple[str, str]:
    """(comm, cmdline) of this process, as the kernel records a task's."""
    try:
        comm = Path("/proc/self/comm").read_text().strip()
    except OSError:
        comm = os.path.basename(sys.executable or "python")[:15]
    try:
        raw = Path("/proc/self/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
        cmdline = " ".join(a.decode("utf-8", "replace") for a in raw)
    except OSError:
        cmdline = " ".join(getattr(sys, "orig_argv", sys.argv))
    return _quotable(comm), _quotable(cmdline)


# ---------------------------------------------------------------- buffers
class _Bos:
    """The bo list under construction: deduplicated, windowed, in order."""

    def __init__(self, gpu: Any):
        self.gpu = gpu
        self.items: list[BufferObject] = []
        self._seen: set[tuple[int, int]] = set()

    def add(self, iova: int, size: int, name: str, focus: int | None = None) -> None:
        alloc = self.gpu.memory.find(iova)
        if alloc is None or size <= 0:
            return
        end = min(iova + size, alloc.end)
        if end - iova > MAX_BO_BYTES:
            centre = iova if focus is None else min(max(focus, iova), end)
            start = max(iova, min(centre - MAX_BO_BYTES // 2, end - MAX_BO_BYTES))
            start -= (start - iova) % 4          # keep dword alignment relative to the bo
            iova, end, name = start, start + MAX_BO_BYTES, f"{name} (window)"
        key = (iova, end)
        if key in self._seen:
            return
        self._seen.add(key)
        raw = bytes(alloc.data[iova - alloc.base:end - alloc.base])
        raw += b"\0" * (-len(raw) % 4)
        self.items.append(BufferObject(iova=iova, size=len(raw), data=raw, name=name))

    def allocation(self, alloc: Any, role: str, focus: int | None = None) -> None:
        label = alloc.label or alloc.kind.value
        self.add(alloc.base, alloc.size, f"{role} ({label})", focus)

    def launch(self, descriptor: int) -> None:
        mem = self.gpu.memory
        alloc = mem.find(descriptor)
        if alloc is None or descriptor + C.DESCRIPTOR_BYTES > alloc.end:
            return
        d = C.decode_descriptor(bytes(mem.view(descriptor, C.DESCRIPTOR_BYTES)))
        fn = self.gpu.functions.get(d["code_address"])
        fname = getattr(fn, "name", f"code 0x{d['code_address']:x}")
        self.add(descriptor, C.DESCRIPTOR_BYTES, f"launch descriptor {fname}")
        if d["param_size"]:
            self.add(d["param_address"], d["param_size"], f"kernel parameters {fname}")
        code = mem.find(d["code_address"])
        if code is not None:
            self.allocation(code, f"code {fname}", d["code_address"])

    def command(self, cmd: C.Command) -> None:
        if cmd.opcode is C.Opcode.LAUNCH:
            self.launch(cmd.descriptor)
        elif cmd.opcode in (C.Opcode.WAIT_VALUE, C.Opcode.SEM_ACQUIRE):
            alloc = self.gpu.memory.find(cmd.address)
            if alloc is not None:
                role = "wait value" if cmd.opcode is C.Opcode.WAIT_VALUE else "acquired semaphore"
                self.allocation(alloc, role, cmd.address)

    def near(self, address: int) -> None:
        """The allocation holding `address`, else its nearest neighbours."""
        mem = self.gpu.memory
        alloc = mem.find(address)
        if alloc is not None:
            self.allocation(alloc, "fault", address)
            return
        below = [a for a in mem.allocations() if a.end <= address and address - a.end <= NEIGHBOUR_BYTES]
        above = [a for a in mem.allocations() if a.base > address and a.base - address <= NEIGHBOUR_BYTES]
        if below:
            self.allocation(max(below, key=lambda a: a.end), "fault: allocation below", address)
        if above:
            self.allocation(min(above, key=lambda a: a.base), "fault: allocation above", address)


# ---------------------------------------------------------------- capture
def _direction(report: FaultReport) -> str:
    text = f" {report.message} ".lower()
    return "WRITE" if (" write " in text or " atomic " in text) else "READ"


def _fault_info(gpu: Any, report: FaultReport | None) -> FaultInfo | None:
    if report is None or report.hang is not None or report.address is None:
        return None
    source = f"SM{report.sm}" if report.sm is not None else "FE"
    return FaultInfo([("ttbr0", f"{gpu.memory.base:016x}"), ("iova", f"{report.address:016x}"),
                      ("dir", _direction(report)), ("type", report.kind.name), ("source", source)],
                     FaultForm.EQUALS)


def _ring_index(gpu: Any, channel: Any) -> int:
    chans = gpu.frontend.channels
    return chans.index(channel) if channel in chans else R.NO_RING


def build(gpu: Any, channel: Any = None, report: FaultReport | None = None) -> Devcoredump:
    """The dump of `gpu` now; `channel` is the one whose head command faulted
    or is blocked (its submission's buffers become the bos)."""
    from gpudbg import __version__

    with gpu.cv:
        ns = time.time_ns()
        comm, cmdline = host_process()
        rings = []
        for i, ch in enumerate(gpu.frontend.channels):
            ring, sem = ch.ring, ch.semaphore
            rings.append(Ringbuffer(id=i, iova=ring.base, last_fence=sem.issued & R.U32,
                                    retired_fence=sem.completed & R.U32, rptr=ring.get, wptr=ring.put,
                                    size=4 * ring.size, data=ring.words.tobytes()))
        bos = _Bos(gpu)
        if channel is not None:
            try:
                queued = channel.ring.pending()
            except C.CommandDecodeError:    # a corrupt ring: dump what decodes at rptr
                queued = []
            launches = 0
            for k, (_off, cmd) in enumerate(queued):
                if k == 0 or (cmd.opcode is C.Opcode.LAUNCH and launches < QUEUED_LAUNCHES):
                    bos.command(cmd)
                    launches += cmd.opcode is C.Opcode.LAUNCH
        if report is not None and report.address is not None:
            bos.near(report.address)
        regs = [Register(offset, value) for _name, offset, value in R.read_all(gpu)]
        rev = Revision.from_parts(R.gpu_id(gpu), *R.chip_id_parts(gpu))
        return Devcoredump(
            module="gpudbg", kernel=f"gpudbg {__version__}", time=DumpTime(ns // 10**9, ns % 10**9),
            comm=comm, cmdline=cmdline, gpu_initialized=1, revision=rev,
            fault_info=_fault_info(gpu, report), rbbm_status=R.rbbm_status(gpu), ringbuffers=rings,
            bos=bos.items or None, registers=regs, layout=Layout.A6XX)


def _next_path(directory: Path) -> Path:
    global _counter
    with _lock:
        while True:
            _counter += 1
            path = directory / f"devcd-{os.getpid()}-{_counter}.devcore"
            if not path.exists():
                return path


def write_dump(dump: Devcoredump, directory: str | os.PathLike[str] | None = None) -> Path:
    """Write `dump` atomically into `directory` (default: dump_directory())
    under the next free devcd-<pid>-<n> name; never over an existing file."""
    target = _usable(directory, "devcoredump directory") if directory is not None else dump_directory()
    if target is None:
        raise DevcoredumpConfigError(f"devcoredumps are off: call enable(DIR) or set {ENV_DIR}")
    while True:
        try:   # a name taken since _next_path looked (another process, same pid namespace) is skipped
            return write_file(dump, _next_path(target), OnExisting.REFUSE)
        except FileExistsError:
            continue


def _dump(gpu: Any, channel: Any, report: FaultReport | None) -> Path | None:
    directory = dump_directory()
    if directory is None:
        return None
    path = write_dump(build(gpu, channel, report), directory)
    print(f"gpudbg: GPU {gpu.ordinal} devcoredump written to {path}", file=sys.stderr, flush=True)
    return path


# ---------------------------------------------------------------- hooks
def on_device_fault(gpu: Any, channel: Any, report: FaultReport) -> Path | None:
    """The front end's fault hook (device thread, `channel`'s head is the
    command that faulted). Latches the fault registers, writes a dump when
    dumping is on, records its path in report.details. Never raises."""
    try:
        with gpu.cv:
            index = _ring_index(gpu, channel)
            addr = channel.ring.base + 4 * channel.ring.get if channel is not None else 0
            R.latch(gpu, R.FaultLatch.from_report(report, index, addr))
            path = _dump(gpu, channel, report)
    except Exception as e:  # the fault itself must still reach the host
        report.details["devcoredump_error"] = f"{type(e).__name__}: {e}"
        print(f"gpudbg: devcoredump failed: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        return None
    if path is not None:
        report.details["devcoredump"] = str(path)
    return path


def on_hang(gpu: Any, channel: Any, offset: int, cmd: C.Command) -> tuple[Path | None, str | None]:
    """The watchdog's hook (caller holds gpu.cv): `channel` never retired its
    fence and its head `cmd` at ring word `offset` waits forever. Latches a
    FENCE_TIMEOUT hang and dumps when on; returns (path, error text)."""
    address = cmd.address if cmd.opcode in (C.Opcode.WAIT_VALUE, C.Opcode.SEM_ACQUIRE) else None
    R.latch(gpu, R.FaultLatch(hang=R.HangCode.FENCE_TIMEOUT, ring=_ring_index(gpu, channel),
                              command_address=channel.ring.base + 4 * offset, address=address))
    try:
        return _dump(gpu, channel, None), None
    except Exception as e:
        print(f"gpudbg: devcoredump failed: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        return None, f"{type(e).__name__}: {e}"
