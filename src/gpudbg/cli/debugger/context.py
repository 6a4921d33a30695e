"""The evaluator's view of one lane: EvalContext over a Session.

The one idea: an expression is always evaluated for exactly one lane
(device, SM, warp, lane), so every name it uses resolves against that
lane: source variables through the Session's DWARF reading at the lane's
pc, PTX registers of its running function, builtins from its warp and
grid, memory as that lane sees it (its shared block, its local frame).
Breakpoint conditions use the same context per candidate lane, with the
logical coordinates taken from the hit's LaneCoords instead of asking
the device again.

A context may stand in an outer frame of the lane (`up`, `frame N`):
then names resolve at that frame's call instruction, against its own
local frame and registers, and `$pc` is its return address.

Every Value it hands out remembers where it came from (memory address
and space, register, variable) so an assignment in the evaluator comes
back through write_register / write_memory / write_variable here.
"""
from __future__ import annotations

import re
from typing import Any

import numpy as np

from gpudbg.debug.backend import BackendError, MemorySpace

from .values import Lval, Type, TypeKind, Value, base_type, memory_space, pointer_to, vector3_type

_R_REGISTER = re.compile(r"R(\d+)$")
_SASS_PRED = re.compile(r"P(\d+)$")


class ConvenienceStore:
    """gdb convenience variables ($foo) and the value history ($1, $2, ...),
    shared by every context of one debugger."""

    def __init__(self) -> None:
        self.values: dict[str, Value] = {}
        self.history: list[Value] = []

    def record(self, value: Value) -> int:
        """Append to the value history; the number `print` shows."""
        self.history.append(value.rvalue())
        return len(self.history)

    def get(self, name: str) -> Value | None:
        """The evaluator's spelling: "N" for $N, "$" for the last value,
        "$$" / "$$N" counting back from it, anything else a convenience."""
        h = self.history
        if name == "$":
            return h[-1] if h else None
        if name.startswith("$$") and (name[2:].isdigit() or name == "$$"):
            back = int(name[2:] or 1)
            return h[-1 - back] if back < len(h) else None
        if name.isdigit():
            n = int(name)
            return h[n - 1] if 1 <= n <= len(h) else None
        return self.values.get(name)

    def set(self, name: str, value: Value) -> None:
        self.values[name] = value.rvalue()


def _errors():
    from gpudbg.debug.session import DebugError
    return (DebugError, BackendError)


def _func_pointer() -> Type:
    return pointer_to(Type(TypeKind.FUNCTION, target=None))


class LaneContext:
    """EvalContext for the lane (dev, sm, wp, ln). `block`/`thread` given
    means the logical coordinates are already known (a condition)."""

    def __init__(self, session: Any, dev: int, sm: int, wp: int, ln: int, store: ConvenienceStore,
                 block: tuple[int, int, int] | None = None, thread: tuple[int, int, int] | None = None,
                 frame: int = 0):
        self.session = session
        self.dev, self.sm, self.wp, self.ln = int(dev), int(sm), int(wp), int(ln)
        self.store = store
        self.frame = int(frame)
        self._block, self._thread = block, thread
        self._warp = None

    # ------------------------------------------------------------ helpers
    def warp(self):
        if self._warp is None:
            self._warp = self.session.warp(self.dev, self.sm, self.wp)
        return self._warp

    def lane(self):
        return self.warp().lane(self.ln)

    def grid(self):
        return self.session.grid(self.dev, self.warp().grid_id)

    def at_frame(self, frame: int) -> "LaneContext":
        """The same lane seen from frame `frame`."""
        return LaneContext(self.session, self.dev, self.sm, self.wp, self.ln, self.store,
                           self._block, self._thread, frame)

    def _registers(self):
        if self.frame:
            return self.session.frame_registers(self.dev, self.sm, self.wp, self.ln, self.frame)
        return self.session.registers(self.dev, self.sm, self.wp, self.ln)

    def _visible(self, name: str):
        try:
            found = [v for v in self.session.variables(self.dev, self.sm, self.wp, self.ln, self.frame)
                     if v.name == name]
        except _errors():
            return None
        unshadowed = [v for v in found if not getattr(v, "shadowed", False)]
        return (unshadowed or found or [None])[0]

    # ------------------------------------------------------------ EvalContext
    def variable(self, name: str) -> Value | None:
        visible = self._visible(name)
        if visible is None:
            return None
        try:
            vv = self.session.read_variable(self.dev, self.sm, self.wp, self.ln, name, self.frame)
        except _errors():
            return None
        var = getattr(vv.variable, "variable", vv.variable)
        vtype = var.type if var.type is not None else base_type("int")
        if vv.address is not None:
            return Value(vtype, bytes(vv.data), address=int(vv.address), space=memory_space(vv.space))
        return Value(vtype, bytes(vv.data), lval=Lval.VARIABLE, origin=name)

    def register(self, name: str) -> Value | None:
        name = name.lstrip("$%")
        if name == "pc":
            if self.frame:
                try:
                    pc = self.session.frames(self.dev, self.sm, self.wp, self.ln)[self.frame].pc
                except (IndexError, *_errors()):
                    return None
                return Value.from_int(pc, _func_pointer())
            return Value.from_int(self.lane().pc, _func_pointer())
        if name == "errorpc":
            epc = self.warp().error_pc
            return None if epc is None else Value.from_int(epc, _func_pointer())
        try:
            from gpudbg.debug import registers as numbering
            m = _R_REGISTER.match(name)
            if m:
                raw = numbering.read_r(self._registers(), int(m.group(1))) if self.frame else \
                    self.session.read_register_r(self.dev, self.sm, self.wp, self.ln, int(m.group(1)))
                return Value.from_int(int(raw), "unsigned int")
            m = _SASS_PRED.match(name)
            if m:
                raw = numbering.read_p(self._registers(), int(m.group(1))) if self.frame else \
                    self.session.read_predicate(self.dev, self.sm, self.wp, self.ln, int(m.group(1)))
                return Value.from_int(int(raw), "unsigned int")
            if self.frame:
                from gpudbg.debug import frame_state
                x = frame_state.read_register(self.session, self.dev, self.sm, self.wp, self.ln, self.frame,
                                              "%" + name)
            else:
                x = self.session.read_register(self.dev, self.sm, self.wp, self.ln, "%" + name)
        except _errors() as e:
            if getattr(e, "code", None) == "OPTIMIZED_OUT":     # gdb's words for using such a value
                from .expr import ExpressionError
                raise ExpressionError(f"${name}: value has been optimized out") from None
            return None
        except (KeyError, ValueError):
            return None
        return Value.from_numpy(x).replace(lval=Lval.REGISTER, origin=name)

    def builtin(self, name: str) -> Value | None:
        if name == "threadIdx":
            t = self._thread if self._thread is not None else self.lane().thread_idx
            return Value.struct_of(vector3_type("uint3"), dict(zip("xyz", map(int, t))))
        if name == "blockIdx":
            b = self._block if self._block is not None else self.warp().block_idx
            return Value.struct_of(vector3_type("uint3"), dict(zip("xyz", map(int, b))))
        if name == "blockDim":
            return Value.struct_of(vector3_type("dim3"), dict(zip("xyz", self.grid().block_dim)))
        if name == "gridDim":
            return Value.struct_of(vector3_type("dim3"), dict(zip("xyz", self.grid().grid_dim)))
        if name == "warpSize":
            return Value.from_int(self.session.device(self.dev).num_lanes, "int")
        return None

    def read_memory(self, space: MemorySpace, address: int, size: int) -> bytes:
        return self.session.read_memory(self.dev, space, int(address), int(size), self.sm, self.wp, self.ln)

    def write_memory(self, space: MemorySpace, address: int, data: bytes) -> None:
        self.session.write_memory(self.dev, space, int(address), bytes(data), self.sm, self.wp, self.ln)

    def convenience(self, name: str) -> Value | None:
        return self.store.get(name)

    def set_convenience(self, name: str, value: Value) -> None:
        self.store.set(name, value)

    def write_register(self, name: str, value: Any) -> None:
        name = name.lstrip("$%")
        if name in ("pc", "errorpc"):
            raise BackendError("NOT_SUPPORTED", f"${name} cannot be written")
        dtype = self._register_dtype(name)
        if self.frame:
            self.session.write_frame_register(self.dev, self.sm, self.wp, self.ln, self.frame, "%" + name,
                                              _as_dtype(value, dtype))
            return
        self.session.write_register(self.dev, self.sm, self.wp, self.ln, "%" + name, _as_dtype(value, dtype))

    def write_variable(self, name: str, data: bytes) -> None:
        vv = self.session.read_variable(self.dev, self.sm, self.wp, self.ln, name, self.frame)
        if vv.address is not None:
            self.write_memory(memory_space(vv.space), int(vv.address), data)
            return
        visible = self._visible(name)
        loc = getattr(visible, "location", None)
        if loc is None or getattr(loc, "kind", None) is None or loc.kind.value != "register" or not loc.name:
            raise BackendError("NOT_SUPPORTED", f"variable {name} is not in memory or a register here; "
                                                f"it cannot be written")
        reg = loc.name.lstrip("%")
        self.write_register(reg, _as_dtype(data, self._register_dtype(reg)))

    def disassemble(self, address: int, count: int) -> list[tuple[int, str]]:
        """(address, PTX text) of `count` instructions from `address` (x/i)."""
        program = self.session.program_at(self.dev, int(address))
        if program is None:
            return []
        pc = program.pc_of_address(int(address))
        if pc is None:
            return []
        return [(program.code_address(i), program.code[i].inst.text)
                for i in range(pc, min(len(program.code), pc + count))]

    def _register_dtype(self, name: str) -> np.dtype:
        for r in self._registers():
            if r.name.lstrip("%") == name:
                return np.dtype(r.dtype)
        raise BackendError("INVALID_REGISTER", f"Invalid register `{name}'")


def _as_dtype(value: Any, dtype: np.dtype):
    """A numpy scalar of the register's dtype from a Value, raw bytes or a
    Python number (bytes are the low bytes of the register, zero-extended)."""
    if isinstance(value, Value):
        value = value.data if value.type.strip().kind is not TypeKind.BASE or len(value.data) == dtype.itemsize \
            else value.to_python()
    if isinstance(value, (bytes, bytearray)):
        raw = bytes(value)[:dtype.itemsize].ljust(dtype.itemsize, b"\x00")
        return np.frombuffer(raw, dtype=dtype.newbyteorder("<"))[0].astype(dtype)
    if dtype == np.bool_:
        return np.bool_(bool(value))
    if np.issubdtype(dtype, np.floating):
        return dtype.type(float(value))
    bits = 8 * dtype.itemsize
    return np.array(int(value) % (1 << bits), dtype=f"u{dtype.itemsize}").view(dtype)[()]
