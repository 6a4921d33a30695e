"""GPU coredumps in NVIDIA's `.nvcudmp` format (COREDUMP-FORMAT.md): capture
a faulting wave (snapshot.py), write it so NVIDIA's cuda-gdb opens it
(writer.py over tables.py, elf.py, cubin.py), and read our cores and the
driver's into the same model (reader.py).

The one idea: the row layouts are data (tables.py), shared by the writer
and the reader, so both agree byte for byte and a reader can step over rows
of layouts newer or older than the ones we write.
"""
from gpudbg.dump.coredump.snapshot import (
    CUDBG_COREDUMP_DEFAULT_FLAGS, CUDBG_COREDUMP_LIGHTWEIGHT_FLAGS,
    CUDBG_COREDUMP_SKIP_CONSTBANK_MEMORY, CUDBG_COREDUMP_SKIP_GLOBAL_MEMORY,
    CUDBG_COREDUMP_SKIP_LOCAL_MEMORY, CUDBG_COREDUMP_SKIP_NONRELOCATED_ELF_IMAGES,
    CUDBG_COREDUMP_SKIP_SHARED_MEMORY, CUDBGCoredumpGenerationFlags, DeviceSnapshot,
    snapshot_from_wave,
)
from gpudbg.dump.coredump.writer import (
    build_coredump, expand_pattern, on_kernel_fault, write_coredump,
)
from gpudbg.dump.coredump.reader import CoreDump, CoredumpError, read_coredump

__all__ = [
    "CUDBG_COREDUMP_DEFAULT_FLAGS", "CUDBG_COREDUMP_LIGHTWEIGHT_FLAGS",
    "CUDBG_COREDUMP_SKIP_CONSTBANK_MEMORY", "CUDBG_COREDUMP_SKIP_GLOBAL_MEMORY",
    "CUDBG_COREDUMP_SKIP_LOCAL_MEMORY", "CUDBG_COREDUMP_SKIP_NONRELOCATED_ELF_IMAGES",
    "CUDBG_COREDUMP_SKIP_SHARED_MEMORY", "CUDBGCoredumpGenerationFlags", "DeviceSnapshot",
    "snapshot_from_wave", "build_coredump", "expand_pattern", "on_kernel_fault",
    "write_coredump", "CoreDump", "CoredumpError", "read_coredump",
]
