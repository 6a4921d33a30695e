"""The PTX-level linker behind mcLink*: several parsed modules in, one
merged IR module out, which the loader accepts directly.

Linking works on the IR (gpudbg.ptx.ir), not on text, so each input's
`.file` table and `.loc` line info survive: file indices are renumbered
into one table (same path, same index) and every instruction's LineInfo is
rewritten, so the debugger maps linked code to the right source lines.

Symbol rules, as nvlink applies them: `.visible` definitions (and kernels,
whose names are the module's API) are strong and must be unique;
`.weak`/`.common` ones yield to a strong one (the first weak, the largest
common, wins otherwise); every `.extern` declaration resolves to exactly one
definition; the simulator's device runtime functions (vprintf, malloc, free,
__assertfail) may stay external. Internal symbols (no linkage) are private
to their input and are renamed `name$inK` where they would collide, as are
call prototypes and the labels of `.section .debug_*` blocks. DWARF
sections are carried over per input, not relinked into one DWARF tree.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from gpudbg.driver.jit_options import JitOptions
from gpudbg.driver.types import CUjitInputType
from gpudbg.ptx import ir
from gpudbg.ptx.types import PTX_TYPES
from gpudbg.driver.status import Cause, CUresult, EngineError
from gpudbg.sim.program import BUILTINS

STRONG, WEAK, COMMON = 2, 1, 0


@dataclass
class LinkInput:
    name: str
    module: ir.Module
    size: int                  # bytes of the input as given


@dataclass
class LinkedImage:
    """What mcLinkComplete returns: owned by its link state, loadable by
    mcModuleLoadData until the state is destroyed."""

    module: ir.Module
    inputs: tuple[str, ...]
    size: int                  # total bytes of the inputs it was linked from
    options: JitOptions
    log: str
    valid: bool = True

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"<linked image of {', '.join(self.inputs)}>"


@dataclass
class _Def:
    input: int
    strength: int
    kind: str                  # "function" or "variable"
    obj: Any


def _strength(linkage: str | None, is_entry: bool) -> int | None:
    if is_entry or linkage == "visible":
        return STRONG
    if linkage == "weak":
        return WEAK
    if linkage == "common":
        return COMMON
    return None                # internal


def _var_bytes(v: ir.VariableDecl) -> int:
    return PTX_TYPES[v.type].size * (v.vector or 1) * (v.element_count or 0)


def _is_linked_var(v: ir.VariableDecl) -> bool:
    return v.space in ("global", "const")


def _fail(code: CUresult, msg: str) -> EngineError:
    return EngineError(code, f"link error: {msg}")


# ------------------------------------------------------------------ resolution
def _collect(inputs: Sequence[LinkInput]) -> dict[str, _Def]:
    defs: dict[str, list[_Def]] = {}
    for k, inp in enumerate(inputs):
        for f in inp.module.functions.values():
            s = _strength(f.linkage, f.kind == "entry")
            if f.body is not None and s is not None:
                defs.setdefault(f.name, []).append(_Def(k, s, "function", f))
        for v in inp.module.globals.values():
            if _is_linked_var(v) and v.linkage != "extern":
                s = _strength(v.linkage, False)
                if s is not None:
                    defs.setdefault(v.name, []).append(_Def(k, s, "variable", v))
    winners = {}
    for name, ds in defs.items():
        kinds = {d.kind for d in ds}
        if len(kinds) > 1:
            a = next(d for d in ds if d.kind == "function")
            b = next(d for d in ds if d.kind == "variable")
            raise _fail(Cause.DUPLICATE_VARIABLE_NAME,
                        f"{name} is a function in {inputs[a.input].name} and a variable in {inputs[b.input].name}")
        strong = [d for d in ds if d.strength == STRONG]
        if len(strong) > 1:
            raise _fail(Cause.DUPLICATE_VARIABLE_NAME,
                        f"duplicate definition of {ds[0].kind} {name} in {inputs[strong[0].input].name} "
                        f"and {inputs[strong[1].input].name}")
        if strong:
            winners[name] = strong[0]
        elif any(d.strength == WEAK for d in ds):
            winners[name] = next(d for d in ds if d.strength == WEAK)
        else:   # .common: the largest wins, as with C tentative definitions
            winners[name] = max(ds, key=lambda d: (_var_bytes(d.obj), -d.input))
    return winners


def _check_externs(inputs: Sequence[LinkInput], winners: dict[str, _Def]) -> None:
    for inp in inputs:
        for f in inp.module.functions.values():
            if f.body is not None or f.name in BUILTINS and f.name not in winners:
                continue
            w = winners.get(f.name)
            if w is None:
                raise _fail(CUresult.CUDA_ERROR_NOT_FOUND,
                            f"unresolved external function {f.name} declared in {inp.name}: no input defines it")
            if w.kind != "function":
                raise _fail(CUresult.CUDA_ERROR_INVALID_IMAGE,
                            f"{inp.name} declares {f.name} as a function but {inputs[w.input].name} "
                            f"defines it as a variable")
            if len(f.params) != len(w.obj.params) or len(f.returns) != len(w.obj.returns):
                raise _fail(CUresult.CUDA_ERROR_INVALID_IMAGE,
                            f"{inp.name} declares {f.name} with {len(f.params)} parameters and "
                            f"{len(f.returns)} results, {inputs[w.input].name} defines it with "
                            f"{len(w.obj.params)} and {len(w.obj.returns)}")
        for v in inp.module.globals.values():
            if not (_is_linked_var(v) and v.linkage == "extern"):
                continue
            w = winners.get(v.name)
            if w is None:
                raise _fail(CUresult.CUDA_ERROR_NOT_FOUND,
                            f"unresolved external variable {v.name} (.extern .{v.space}) declared in "
                            f"{inp.name}: no input defines it")
            if w.kind != "variable" or w.obj.space != v.space:
                what = "a function" if w.kind != "variable" else f"a .{w.obj.space} variable"
                raise _fail(CUresult.CUDA_ERROR_INVALID_IMAGE,
                            f"{inp.name} declares {v.name} as .extern .{v.space} but "
                            f"{inputs[w.input].name} defines it as {what}")
            need = _var_bytes(v)
            if need and need > _var_bytes(w.obj):
                raise _fail(CUresult.CUDA_ERROR_INVALID_IMAGE,
                            f"{inp.name} declares {v.name} with {need} bytes but {inputs[w.input].name} "
                            f"defines only {_var_bytes(w.obj)}")


# ------------------------------------------------------------------ renaming
@dataclass
class _Renames:
    symbols: dict[str, str] = field(default_factory=dict)
    files: dict[int, int] = field(default_factory=dict)
    protos: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)   # debug-section labels

    def operand(self, o: Any, shadow: set[str]) -> Any:
        if isinstance(o, ir.Symbol):
            return o if o.name in shadow else replace(o, name=self.symbols.get(o.name, o.name))
        if isinstance(o, ir.Address) and isinstance(o.base, ir.Symbol):
            return replace(o, base=self.operand(o.base, shadow))
        if isinstance(o, ir.Vector):
            return ir.Vector(tuple(self.operand(e, shadow) for e in o.elements))
        if isinstance(o, ir.ImageOperand):
            return ir.ImageOperand(self.operand(o.handle, shadow), self.operand(o.sampler, shadow),
                                   self.operand(o.coords, shadow))
        if isinstance(o, ir.Negated):
            return ir.Negated(self.operand(o.operand, shadow))
        if isinstance(o, ir.PredicatePair):
            return ir.PredicatePair(self.operand(o.first, shadow), self.operand(o.second, shadow))
        if isinstance(o, ir.CallTarget):
            return ir.CallTarget(tuple(self.operand(r, shadow) for r in o.returns), self.operand(o.target, shadow),
                                 tuple(self.operand(a, shadow) for a in o.args),
                                 self.protos.get(o.prototype, o.prototype) if o.prototype else o.prototype)
        return o

    def line(self, li: ir.LineInfo | None) -> ir.LineInfo | None:
        if li is None:
            return None
        fname = li.function_name
        if fname:
            label, plus, off = fname.partition("+")
            fname = self.labels.get(label, label) + plus + off
        return ir.LineInfo(self.files.get(li.file_index, li.file_index), li.line, li.col,
                           self.line(li.inlined_at), fname)

    def function(self, f: ir.Function) -> ir.Function:
        shadow = set(f.locals) | {p.name for p in f.params + f.returns}
        body = None
        if f.body is not None:
            body = [replace(s, operands=tuple(self.operand(o, shadow) for o in s.operands),
                            line_info=self.line(s.line_info)) if isinstance(s, ir.Instruction) else s
                    for s in f.body]
        return replace(f, name=self.symbols.get(f.name, f.name), body=body)

    def variable(self, v: ir.VariableDecl) -> ir.VariableDecl:
        init = v.initializer
        if init is not None:
            items = []
            for it in init.items:
                if isinstance(it, ir.GenericSymbol):
                    it = ir.GenericSymbol(self.operand(it.symbol, set()))
                elif isinstance(it, ir.Symbol):
                    it = self.operand(it, set())
                items.append(it)
            init = ir.Initializer(items)
        return replace(v, name=self.symbols.get(v.name, v.name), initializer=init)


def _unique(name: str, k: int, taken: set[str]) -> str:
    new, n = f"{name}$in{k}", 1
    while new in taken:
        n += 1
        new = f"{name}$in{k}_{n}"
    return new


def _signature(p: ir.Function) -> tuple:
    return tuple((d.type, d.vector, d.dims) for d in p.params), tuple((d.type, d.vector, d.dims) for d in p.returns)


# ------------------------------------------------------------------ merge
def link_modules(inputs: Sequence[LinkInput]) -> tuple[ir.Module, list[str]]:
    """One module from all inputs, and the link log; EngineError on a
    duplicate, unresolved or mismatched symbol."""
    if not inputs:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, "link error: no inputs were added")
    sizes = {inp.module.address_size for inp in inputs}
    if len(sizes) > 1:
        raise _fail(CUresult.CUDA_ERROR_INVALID_IMAGE,
                    "inputs mix address sizes " + ", ".join(f"{i.name}: {i.module.address_size}" for i in inputs))
    winners = _collect(inputs)
    _check_externs(inputs, winners)
    log: list[str] = []
    out = ir.Module(filename="linked(" + ", ".join(i.name for i in inputs) + ")",
                    address_size=inputs[0].module.address_size)
    out.version = max((i.module.version for i in inputs if i.module.version), default=None)
    archs = [t for i in inputs for t in i.module.targets if t.startswith("sm_")]
    flags = [t for i in inputs for t in i.module.targets if not t.startswith("sm_")]
    best = max(archs, key=lambda t: int("".join(c for c in t[3:] if c.isdigit()) or 0), default=None)
    out.targets = tuple(([best] if best else []) + list(dict.fromkeys(flags)))

    taken: set[str] = set(winners) | {n for i in inputs for n in i.module.functions if n in BUILTINS}
    path_index: dict[str, int] = {}
    label_taken: set[str] = set()
    for k, inp in enumerate(inputs):
        m, rn = inp.module, _Renames()
        for name, obj in list(m.functions.items()) + list(m.globals.items()):
            internal = (obj.body is not None if isinstance(obj, ir.Function) else obj.linkage != "extern") \
                and _strength(obj.linkage, isinstance(obj, ir.Function) and obj.kind == "entry") is None
            if internal:
                if name in taken:
                    rn.symbols[name] = _unique(name, k, taken)
                    log.append(f"{inp.name}: internal symbol {name} renamed {rn.symbols[name]}")
                taken.add(rn.symbols.get(name, name))
        for idx, path in m.files.items():
            if path not in path_index:
                path_index[path] = len(path_index) + 1
                out.files[path_index[path]] = path
            rn.files[idx] = path_index[path]
        for sec in m.debug_sections:
            for item in sec.items:
                if item.width == 0:
                    label = item.values[0]
                    if label in label_taken:
                        rn.labels[label] = _unique(label, k, label_taken)
                    label_taken.add(rn.labels.get(label, label))
        for key, proto in m.callprototypes.items():
            old = out.callprototypes.get(key)
            if old is not None and _signature(old) != _signature(proto):
                rn.protos[key] = _unique(key, k, set(out.callprototypes))
            out.callprototypes.setdefault(rn.protos.get(key, key), replace(proto, name=rn.protos.get(key, key)))
        for key, names in m.calltargets.items():
            value = tuple(rn.symbols.get(n, n) for n in names)
            if key in out.calltargets and out.calltargets[key] != value:
                rn.protos[key] = _unique(key, k, set(out.calltargets) | set(out.callprototypes))
            out.calltargets.setdefault(rn.protos.get(key, key), value)
        _merge_symbols(k, inp, rn, winners, out, log)
        for sec in m.debug_sections:
            items = [ir.DebugItem(it.width, [_relabel(v, rn.labels) for v in it.values]) for it in sec.items]
            out.debug_sections.append(ir.DebugSection(sec.name, items, sec.loc))
        out.pragmas += [p for p in m.pragmas if p not in out.pragmas]
    for name, w in sorted(winners.items()):
        if any(i != w.input and name in inputs[i].module.functions | inputs[i].module.globals
               for i in range(len(inputs))):
            log.append(f"{name}: resolved to the definition in {inputs[w.input].name}")
    return out, log


def _merge_symbols(k: int, inp: LinkInput, rn: _Renames, winners: dict[str, _Def], out: ir.Module,
                   log: list[str]) -> None:
    for name, f in inp.module.functions.items():
        if f.body is None:
            if name not in winners and name not in out.functions:
                out.functions[name] = f          # a device runtime function the simulator provides
            continue
        w = winners.get(name)
        if w is not None and _strength(f.linkage, f.kind == "entry") is not None and w.input != k:
            log.append(f"{inp.name}: {f.linkage} function {name} overridden by the definition in another input")
            continue
        g = rn.function(f)
        out.functions[g.name] = g
    for name, v in inp.module.globals.items():
        if v.linkage == "extern":
            if not _is_linked_var(v) and name not in out.globals:
                out.globals[name] = v            # extern .shared: the dynamic shared window
            continue
        w = winners.get(name)
        if w is not None and _is_linked_var(v) and _strength(v.linkage, False) is not None and w.input != k:
            log.append(f"{inp.name}: {v.linkage} variable {name} overridden by the definition in another input")
            continue
        g = rn.variable(v)
        out.globals[g.name] = g


def _relabel(value: Any, labels: dict[str, str]) -> Any:
    if not isinstance(value, str) or not labels:
        return value
    out, word = [], ""
    for ch in value + "\0":
        if ch.isalnum() or ch in "_$.":
            word += ch
            continue
        if word:
            out.append(labels.get(word, word))
            word = ""
        if ch != "\0":
            out.append(ch)
    return "".join(out)


# ------------------------------------------------------------------ link state
class LinkState:
    """mcLinkState_t: options, the inputs added so far (parsed at once, so
    a bad input fails its mcLinkAdd* call) and the image of the last
    mcLinkComplete, which the state owns."""

    def __init__(self, context: Any, options: JitOptions):
        self.context = context
        self.options = options
        self.inputs: list[LinkInput] = []
        self.image: LinkedImage | None = None
        self.log: list[str] = []
        self.destroyed = False

    def __repr__(self) -> str:
        return f"<mcLinkState {len(self.inputs)} input(s)>"

    def add_data(self, kind: CUjitInputType, data: Any, size: Any, name: Any,
                 options: JitOptions) -> None:
        from gpudbg.driver import fatbin as FB
        from gpudbg.driver import module as M
        label = name if isinstance(name, str) and name else f"input{len(self.inputs)}"
        if isinstance(data, (str, bytes, bytearray, memoryview)):
            raw = data.encode() if isinstance(data, str) else bytes(data)
            if isinstance(size, bool) or not isinstance(size, int) or not 0 < size <= len(raw) + 1:
                raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                                  f"size must be 1..{len(raw) + 1} for this {len(raw)}-byte input, got {size!r}")
            raw = raw[:size]
        elif kind is CUjitInputType.CU_JIT_INPUT_PTX or isinstance(data, bool) or not isinstance(data, int):
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                              f"data must be str or bytes (or a pointer for binary inputs), not {type(data).__name__}")
        else:
            raw = M._read_pointer(self.context, data)
        texts: list[tuple[str, str]] = []
        if kind is CUjitInputType.CU_JIT_INPUT_PTX:
            texts.append((label, M.image_to_ptx(self.context, raw.split(b"\x00", 1)[0].decode("utf-8", "replace"))))
        elif kind is CUjitInputType.CU_JIT_INPUT_FATBINARY:
            texts.append((label, M.image_to_ptx(self.context, raw, fatbin_only=True)))
        elif kind is CUjitInputType.CU_JIT_INPUT_CUBIN:
            raise EngineError(CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU,
                              f"{label}: a cubin is SASS for a real NVIDIA GPU; the simulator links PTX only")
        elif kind is CUjitInputType.CU_JIT_INPUT_OBJECT:
            texts.append((label, M.image_to_ptx(self.context, raw)))
        elif kind is CUjitInputType.CU_JIT_INPUT_LIBRARY:
            try:
                members = FB.ar_members(raw)
            except FB.FatbinError as e:
                raise EngineError(CUresult.CUDA_ERROR_INVALID_IMAGE, f"{label}: {e}") from None
            for mname, body in members:
                try:
                    has_code = body.startswith(b"\x7fELF") and bool(FB.elf_fatbins(body)[0])
                except FB.FatbinError:
                    has_code = False     # a member that is no ELF object holds no device code
                if has_code:
                    texts.append((f"{label}({mname})", M.image_to_ptx(self.context, body)))
            if not texts:
                raise EngineError(CUresult.CUDA_ERROR_INVALID_IMAGE, f"{label}: no member holds device code")
        else:
            raise EngineError(CUresult.CUDA_ERROR_JIT_COMPILER_NOT_FOUND,
                              f"{label}: NVVM IR inputs need libNVVM for link-time optimisation, which the "
                              f"simulator does not include; add PTX instead")
        for tname, text in texts:
            module = M.parse_ptx(text, tname)
            self.inputs.append(LinkInput(tname, module, len(text.encode())))
            self.log.append(f"added {tname} ({len(module.functions)} functions, {len(module.globals)} variables)")
        self.log += options.ignored_notes()

    def complete(self) -> LinkedImage:
        t0 = time.perf_counter()
        try:
            module, log = link_modules(self.inputs)
            if self.options.target is not None:
                from gpudbg.driver.module import _check_target
                _check_target(self.context, module, self.options)
        except EngineError as e:
            self.options.write_outputs("\n".join(self.log) + "\n", e.message + "\n",
                                       (time.perf_counter() - t0) * 1e3)
            raise
        text = "\n".join(self.log + log + [f"linked {len(self.inputs)} input(s) into "
                                           f"{len(module.functions)} functions"]) + "\n"
        if self.image is not None:
            self.image.valid = False
        self.image = LinkedImage(module, tuple(i.name for i in self.inputs),
                                 sum(i.size for i in self.inputs), self.options, text)
        self.options.write_outputs(text, "", (time.perf_counter() - t0) * 1e3)
        return self.image

    def destroy(self) -> None:
        if self.image is not None:
            self.image.valid = False
        self.inputs.clear()
        self.destroyed = True


__all__ = ["LinkInput", "LinkedImage", "LinkState", "link_modules"]
