"""A GPU hang: a stream waits for a flag that nobody ever sets.

A producer/consumer handshake through a device-memory flag word: the
consumer stream waits (mcStreamWaitValue32) until flags[0] >= 1 and then
launches `scale`; the producer stream is meant to set flags[0] with
mcStreamWriteValue32, but the bug writes flags[1]. The consumer's WAIT_VALUE
never becomes true, so its fence never retires. The driver's watchdog sees a
host wait with every channel blocked and no progress for GPUDBG_HANG_TIMEOUT
seconds (this example uses 2 unless you set it), declares a hang, stops the
context with mcErrorLaunchTimeout and, when dumping is on, writes a
devcoredump of the GPU. Run it with

    gpudbg run --devcoredump /tmp/dumps examples/hang.py
    gpudbg dump show /tmp/dumps/devcd-*.devcore

The program prints where it hung (channel, ring word, the word it waits on,
fences) and exits with status 1; the dump shows the ring with the blocked
WAIT_VALUE marked and the LAUNCH queued behind it.

Usage: python hang.py [N]   (N defaults to 4096 floats)
"""
import os
import sys

import numpy as np

import gpudbg
from gpudbg import mc

SOURCE = r"""
extern "C" __global__ void scale(float *data, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] *= factor;
}
"""

WAIT_GEQ = int(mc.mcStreamWaitValueFlags.mcStreamWaitValueGeq)
WRITE_DEFAULT = int(mc.mcStreamWriteValueFlags.mcStreamWriteValueDefault)


def _check(result: tuple, what: str) -> None:
    if result[0] != gpudbg.mcError_t.mcSuccess:
        raise gpudbg.GPUError(result[0], what)


def main(argv: list[str]) -> int:
    n = int(argv[1]) if len(argv) > 1 else 4096
    default_timeout = "GPUDBG_HANG_TIMEOUT" not in os.environ
    if default_timeout:
        os.environ["GPUDBG_HANG_TIMEOUT"] = "2"    # the driver's default is 60 s
    try:
        return _run(n)
    finally:
        if default_timeout:
            os.environ.pop("GPUDBG_HANG_TIMEOUT", None)


def _run(n: int) -> int:
    module = gpudbg.compile(SOURCE, name="hang.cu")
    data = gpudbg.to_device(np.ones(n, dtype=np.float32))
    flags = gpudbg.zeros(2, np.uint32)
    consumer = gpudbg.Stream(non_blocking=True)
    producer = gpudbg.Stream(non_blocking=True)

    _check(mc.mcStreamWaitValue32(consumer.handle, flags.ptr, 1, WAIT_GEQ), "mcStreamWaitValue32")
    threads = 256
    module.scale[(n + threads - 1) // threads, threads, consumer](data, np.float32(2.0), n)
    # bug: the producer sets flags[1]; the consumer waits on flags[0]
    _check(mc.mcStreamWriteValue32(producer.handle, flags.ptr + 4, 1, WRITE_DEFAULT), "mcStreamWriteValue32")
    try:
        consumer.synchronize()
    except gpudbg.GPUError as e:
        print(f"hang: {e}", file=sys.stderr)
        gpudbg.Device(0).reset()    # recover, as the kernel does after a hang
        return 1
    ok = bool(np.all(data.to_host() == 2.0))
    print(f"hang: n={n} the consumer ran: {'PASSED' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
