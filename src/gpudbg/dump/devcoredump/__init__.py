"""The drm/msm GPU devcoredump text format: model, parser, writer, analyzer.

`parse`/`parse_file` read any generation's dump into a Devcoredump model,
`write`/`write_file` print a model exactly as the kernel would, and
`analyze` (in analyzer.py) summarizes one. See the format notes in
../shared/MSM-DEVCOREDUMP-FORMAT.md; the model is in model.py.
"""
from gpudbg.dump.devcoredump.errors import DevcoredumpError, DpuDumpError
from gpudbg.dump.devcoredump.model import (
    BufferObject, Cluster, ClusterContext, DebugbusBlock, Devcoredump, DumpTime, FaultForm,
    FaultInfo, GmuBuffer, IndexedRegisters, Layout, ParseWarning, Register, Revision,
    RevisionForm, Ringbuffer, ShaderBlock, ShaderEntry, UnknownSection, VmLogEntry,
)
from gpudbg.dump.devcoredump.parser import parse, parse_file
from gpudbg.dump.devcoredump.writer import DevcoredumpWriteError, write, write_file

__all__ = [
    "BufferObject", "Cluster", "ClusterContext", "DebugbusBlock", "Devcoredump", "DevcoredumpError",
    "DevcoredumpWriteError", "DpuDumpError", "DumpTime", "FaultForm", "FaultInfo", "GmuBuffer",
    "IndexedRegisters", "Layout", "ParseWarning", "Register", "Revision", "RevisionForm",
    "Ringbuffer", "ShaderBlock", "ShaderEntry", "UnknownSection", "VmLogEntry",
    "parse", "parse_file", "write", "write_file",
]
