"""The simulated device clock's cost model: how many cycles each piece of
front-end work adds to `gpu.clock_cycles`.

One idea: the device clock counts work, not wall time. Kernels advance it
by the cycles the executor counted (sim/executor.py launch_grid, after each wave);
every other command the front end executes is charged here from its size
alone, so the same sequence of commands always gives the same clock values
(event timestamps are monotonic and repeatable). Time the GPU spends idle,
or blocked on a semaphore, WAIT_VALUE or host callback, does not age the
clock. This module does not model overlap between channels: commands of
different streams may execute at once on the copy and compute engines
(sim/engines.py), but each one's cycles are added to the one clock, so work
on different streams adds up.

Model (cycles at the device's clock_rate_khz):
- every command run off the lock (launch, copy, memset, pool): COMMAND_CYCLES, plus:
- LAUNCH: LAUNCH_CYCLES of launch overhead on top of the kernel's own cycles;
- COPY, COPY_2D: COPY_CYCLES + ceil(bytes / COPY_BYTES_PER_CYCLE);
- MEMSET, MEMSET_2D: MEMSET_CYCLES + ceil(bytes / MEMSET_BYTES_PER_CYCLE);
- other slow commands (pool map/unmap): COMMAND_CYCLES only.
Semaphore, notify, stream-memory and timestamp commands cost nothing, so
two events recorded back to back are 0 ms apart.

Beside the device clock, each executed TIMESTAMP also notes the host's
time.perf_counter() for its slot (record_host_time): when the simulator
really finished the work before it. That is what the Python API's
Event.elapsed_time(clock="host") reads; the cycle count above stays the
deterministic figure.
"""
from __future__ import annotations

import threading
import time
from typing import Any

COMMAND_CYCLES = 20
LAUNCH_CYCLES = 4_000           # ~2 us at 1.98 GHz, a typical launch latency
COPY_CYCLES = 2_000             # DMA setup, ~1 us
COPY_BYTES_PER_CYCLE = 32       # ~63 GB/s at 1.98 GHz: a PCIe-class copy engine
MEMSET_CYCLES = 1_000
MEMSET_BYTES_PER_CYCLE = 256    # ~500 GB/s: device-memory fill bandwidth


def command_cycles(opcode_name: str, fields: Any) -> int:
    """Cycles charged for one executed command (besides a kernel's own)."""
    cycles = COMMAND_CYCLES
    if opcode_name == "LAUNCH":
        cycles += LAUNCH_CYCLES
    elif opcode_name == "COPY":
        cycles += COPY_CYCLES + -(-int(fields["size"]) // COPY_BYTES_PER_CYCLE)
    elif opcode_name == "COPY_2D":
        nbytes = int(fields["width"]) * int(fields["height"])
        cycles += COPY_CYCLES + -(-nbytes // COPY_BYTES_PER_CYCLE)
    elif opcode_name == "MEMSET":
        nbytes = int(fields["count"]) * int(fields["element_size"])
        cycles += MEMSET_CYCLES + -(-nbytes // MEMSET_BYTES_PER_CYCLE)
    elif opcode_name == "MEMSET_2D":
        nbytes = int(fields["width"]) * int(fields["height"]) * int(fields["element_size"])
        cycles += MEMSET_CYCLES + -(-nbytes // MEMSET_BYTES_PER_CYCLE)
    return cycles


# Serializes every update of a GPU's clock_cycles: the front end's charges
# (made under the GPU's lock) and the executor's per-wave advances (made
# without it, so that a wave's end does not wait for the lock the host's
# launches take).
_clock_lock = threading.Lock()


def charge(gpu: Any, opcode_name: str, fields: Any) -> None:
    """Advance the device clock for one executed command."""
    advance(gpu, command_cycles(opcode_name, fields))


# what a LAUNCH is charged, whatever its fields: the front end's charge for
# a stream of launches without the model's walk
LAUNCH_COMMAND_CYCLES = command_cycles("LAUNCH", {})


def advance(gpu: Any, cycles: int) -> None:
    """Add `cycles` to the device clock (from any thread)."""
    with _clock_lock:     # (the clock only ever holds the ints stored here)
        gpu.clock_cycles = getattr(gpu, "clock_cycles", 0) + int(cycles)


def now(gpu: Any) -> int:
    return int(getattr(gpu, "clock_cycles", 0))


def cycles_to_ms(cycles: int, clock_rate_khz: int) -> float:
    """kHz is cycles per millisecond."""
    if clock_rate_khz <= 0:
        raise ValueError(f"clock rate must be positive, got {clock_rate_khz} kHz")
    return cycles / clock_rate_khz


def record_host_time(gpu: Any, address: int) -> None:
    """Note the host time at which a TIMESTAMP to `address` executed
    (the front end calls it under the GPU's lock)."""
    stamps = getattr(gpu, "host_timestamps", None)
    if stamps is None:
        stamps = gpu.host_timestamps = {}
    stamps[int(address)] = time.perf_counter()


def host_time(gpu: Any, address: int) -> float | None:
    """time.perf_counter() of the last TIMESTAMP executed to `address`."""
    return getattr(gpu, "host_timestamps", {}).get(int(address))
