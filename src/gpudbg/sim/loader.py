"""Loading a PTX module onto the simulated GPU: allocate and initialize its
global and constant variables in device memory, place its code image,
translate its functions, and describe each kernel for the driver
(parameter layout, registers, shared and local memory, launch limits).

Loading is where every error a module can have is found: an unsupported
instruction, an undefined symbol, an initializer that does not fit or a
kernel whose frames need more local memory than a thread can have (512 KiB,
what ptxas refuses) fails here with the PTX location, so a launch never
discovers a broken module.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpudbg.ptx import ir
from gpudbg.ptx.regalloc import function_pressures, register_count
from gpudbg.ptx.types import PTX_TYPES
from gpudbg.sim.launch_limits import MAX_LOCAL_PER_THREAD
from gpudbg.sim.memory import AllocationKind
from gpudbg.sim.program import INSTRUCTION_BYTES, LoadError, Program


@dataclass(frozen=True)
class KernelParam:
    name: str
    type: str
    size: int
    align: int
    offset: int


@dataclass
class KernelFunction:
    name: str
    module: "LoadedModule"
    params: list[KernelParam]
    param_size: int
    num_regs: int
    static_shared: int
    local_size: int
    max_threads_per_block: int
    code_address: int
    shared_layout: dict[str, int] = field(default_factory=dict)
    directives: dict = field(default_factory=dict)

    @property
    def program(self) -> Program:
        return self.module.program


@dataclass
class LoadedModule:
    gpu: object
    ir: ir.Module
    program: Program
    functions: dict[str, KernelFunction]
    globals: dict[str, tuple[int, int]]
    allocations: list
    code_allocation: object
    loaded: bool = True
    ptx_text: str | None = None   # the PTX the module was parsed from, when the loader had it

    def unload(self) -> None:
        if not self.loaded:
            return
        for a in self.allocations:
            self.gpu.memory.free(a.base)
        self.loaded = False


def _var_bytes(v: ir.VariableDecl) -> int:
    n = v.element_count
    return PTX_TYPES[v.type].size * (v.vector or 1) * (n or 0)


def load_module(gpu, module: ir.Module) -> LoadedModule:
    mem = gpu.memory
    allocations = []
    symbols: dict[str, int] = {}
    sizes: dict[str, int] = {}
    try:
        for v in module.globals.values():
            if v.space not in ("global", "const") or v.linkage == "extern":
                continue
            if v.type in ("texref", "samplerref", "surfref"):
                raise LoadError(f"{v.loc}: .{v.type} variable {v.name}: .texref/.surfref variables (texture "
                                f"references, removed in CUDA 12) are not supported; use texture/surface objects")
            size = _var_bytes(v)
            kind = (AllocationKind.MODULE_CONST if v.space == "const"
                    else AllocationKind.MANAGED if v.managed else AllocationKind.MODULE_GLOBAL)
            a = mem.alloc(max(size, 1), kind=kind, align=max(v.align or 1, 256), label=f"{v.space} {v.name}")
            allocations.append(a)
            symbols[v.name] = a.base
            sizes[v.name] = size
        for v in module.globals.values():
            if v.linkage == "extern" and v.space in ("global", "const"):
                raise LoadError(f"{v.loc}: .extern {v.space} variable {v.name} is not defined in this module")
        program = Program(module, symbols, code_base=0)
        code_bytes = INSTRUCTION_BYTES * (len(program.code) + len(program.functions) + 2)
        code = mem.alloc(code_bytes, kind=AllocationKind.CODE, align=4096, label="code image")
        allocations.append(code)
        program.code_base = code.base
        mem.write(code.base, _code_image(program, code_bytes))
        for v in module.globals.values():
            if v.name in symbols and v.initializer is not None:
                mem.write(symbols[v.name], _initializer_bytes(v, program, sizes[v.name]))
    except Exception:
        for a in allocations:
            mem.free(a.base)
        raise
    loaded = LoadedModule(gpu, module, program, {}, {n: (symbols[n], sizes[n]) for n in symbols},
                          allocations, code)
    try:
        pressures = function_pressures(module)
        for f in module.functions.values():
            if f.kind == "entry" and f.body is not None:
                loaded.functions[f.name] = _describe_kernel(gpu, loaded, f, pressures)
    except Exception:
        loaded.unload()
        raise
    return loaded


def _code_image(program: Program, nbytes: int) -> bytes:
    """Our instruction encoding: per 16-byte slot, the pc, the PTX line and
    the opcode's length-prefixed initial bytes, so code memory reads are
    meaningful and stable."""
    img = np.zeros(nbytes, dtype=np.uint8)
    for c in program.code:
        rec = np.zeros(16, dtype=np.uint8)
        rec[0:4] = np.frombuffer(np.uint32(c.pc).tobytes(), np.uint8)
        rec[4:8] = np.frombuffer(np.uint32(c.inst.loc.line).tobytes(), np.uint8)
        name = c.inst.opcode.encode()[:7]
        rec[8] = len(name)
        rec[9:9 + len(name)] = np.frombuffer(name, np.uint8)
        img[16 * c.pc:16 * c.pc + 16] = rec
    return img.tobytes()


def _initializer_bytes(v: ir.VariableDecl, program: Program, size: int) -> bytes:
    t = PTX_TYPES[v.type]
    out = bytearray(min(size, t.size * len(v.initializer.items)))   # the allocation past it is zero already
    pos = 0
    for item in v.initializer.items:
        if pos + t.size > size:
            raise LoadError(f"{v.loc}: initializer of {v.name} has more elements than the variable")
        if isinstance(item, ir.GenericSymbol):
            item = item.symbol
        if isinstance(item, ir.Symbol):
            if item.name in program.symbols:
                val = program.symbols[item.name] + item.offset
            elif item.name in program.functions:
                val = program.function_address(item.name) + item.offset
            else:
                raise LoadError(f"{v.loc}: initializer of {v.name} refers to unknown symbol {item.name}")
            raw = int(val).to_bytes(8, "little")[:t.size]
        elif t.is_float and t.dtype.kind == "f":
            raw = np.array(item, dtype=np.float64).astype(t.dtype).tobytes()
        else:
            raw = (int(item) & ((1 << (8 * t.size)) - 1)).to_bytes(t.size, "little")
        out[pos:pos + t.size] = raw
        pos += t.size
    return bytes(out)


def _describe_kernel(gpu, loaded: LoadedModule, f: ir.Function, pressures: dict) -> KernelFunction:
    program = loaded.program
    params = []
    off = 0
    for p in f.params:
        t = PTX_TYPES[p.type]
        size = t.size * (p.vector or 1) * (p.element_count or 1)
        align = p.align or t.size
        off = (off + align - 1) // align * align
        params.append(KernelParam(p.name, p.type, size, align, off))
        off += size
    reach = program.reachable(f.name)
    layout, static = _shared_layout(program, reach)
    # what ptxas would allocate (liveness over the kernel and its callees),
    # not the PTX's declared virtual registers: occupancy depends on it
    regs = register_count(loaded.ir, f.name, pressures)
    model = gpu.model
    max_threads = model.max_threads_per_block
    limit_regs = model.registers_per_sm // max(regs, 1)
    max_threads = min(max_threads, limit_regs // 32 * 32)
    for key in ("maxntid", "reqntid"):
        if key in f.directives:
            dims = f.directives[key]
            dims = dims if isinstance(dims, (tuple, list)) else (dims,)
            max_threads = min(max_threads, int(np.prod([int(d) for d in dims])))
    local = program.max_stack(f.name)
    if local > MAX_LOCAL_PER_THREAD:    # what ptxas refuses ("uses too much local data")
        raise LoadError(f"{f.loc}: entry function {f.name} uses too much local data ({local} bytes of "
                        f"local memory per thread, {MAX_LOCAL_PER_THREAD} max)")
    return KernelFunction(
        name=f.name, module=loaded, params=params, param_size=off, num_regs=regs,
        static_shared=static, local_size=local,
        max_threads_per_block=max_threads, code_address=program.code_address(program.functions[f.name].entry_pc),
        shared_layout=layout, directives=dict(f.directives))


def _shared_layout(program: Program, reach: set[str]) -> tuple[dict[str, int], int]:
    used: list[str] = []
    for fname in sorted(reach):
        fn = program.functions[fname].ir
        if fn.body is None:
            continue
        for inst in fn.instructions:
            for name in _symbols_in(inst.operands):
                if name in program.shared_vars and name not in used:
                    used.append(name)
    layout, off, externs = {}, 0, []
    for name in used:
        v = program.shared_vars[name]
        if v.element_count in (None, 0):
            externs.append(name)
            continue
        al = v.align or PTX_TYPES[v.type].size
        off = (off + al - 1) // al * al
        layout[name] = off
        off += _var_bytes(v)
    dyn = off
    for name in externs:
        al = program.shared_vars[name].align or 16
        dyn = max(dyn, (off + al - 1) // al * al)
    for name in externs:
        layout[name] = dyn
    return layout, off


def _symbols_in(operands):
    for o in operands:
        if isinstance(o, ir.Symbol):
            yield o.name
        elif isinstance(o, ir.Address) and isinstance(o.base, ir.Symbol):
            yield o.base.name
        elif isinstance(o, ir.Vector):
            yield from _symbols_in(o.elements)
        elif isinstance(o, ir.ImageOperand):
            yield from _symbols_in((o.handle, o.sampler, o.coords))
