"""Register and predicate entries of the cudbg facade (cuda-gdb's R/P view).

CUDBG numbers hardware registers (R0..Rn, 32 bits each, and predicates
P0..P6); the simulator has typed PTX registers. The Session's register map
says which R words and P bits each PTX register occupies (a 64-bit register
spans two consecutive R words, low word first), and reads go through
``read_register_r`` / ``read_predicate``, R writes through
``write_register_r`` (which keeps the other half of a 64-bit register).
The one idea for predicate writes, which the Session offers only by PTX
name: the map names the .pred register behind each P number, so each
value goes to that register; P numbers no register occupies hold nothing.

The PTX machine has no uniform registers or predicates: their counts are 0,
so only empty ranges are valid.
"""
from __future__ import annotations

from gpudbg.debug.cudbg.enums import CUDBGResult
from gpudbg.debug.cudbg.facade_state import CudbgError, Helpers

R = CUDBGResult


class RegisterEntries(Helpers):
    def _check_regs(self, dev: int, first: int, count: int) -> None:
        n = self._props(dev).num_registers
        if first + count > n:
            raise CudbgError(R.CUDBG_ERROR_INVALID_ARGS,
                             f"registers R{first}..R{first + count - 1} exceed the {n} registers per lane")

    def _check_preds(self, dev: int, count: int) -> None:
        n = self._props(dev).num_predicates
        if count > n:
            raise CudbgError(R.CUDBG_ERROR_INVALID_ARGS, f"{count} predicates asked, a lane has {n}")

    def readRegister(self, dev, sm, wp, ln, regno) -> tuple:
        """R<regno> of the lane, as cuda-gdb shows it."""
        self._lane(dev, sm, wp, ln)
        self._check_regs(dev, regno, 1)
        return (int(self.session.read_register_r(dev, sm, wp, ln, regno)) & 0xFFFFFFFF,)

    def readRegisterRange(self, devId, sm, wp, ln, index, registers_size) -> tuple:
        self._lane(devId, sm, wp, ln)
        self._check_regs(devId, index, registers_size)
        read = self.session.read_register_r
        return (tuple(int(read(devId, sm, wp, ln, r)) & 0xFFFFFFFF for r in range(index, index + registers_size)),)

    def writeRegister(self, dev, sm, wp, ln, regno, val) -> tuple:
        """Writes the 32 bits of R<regno> into the PTX register that occupies it."""
        self._lane(dev, sm, wp, ln)
        self._check_regs(dev, regno, 1)
        self.session.write_register_r(dev, sm, wp, ln, regno, val)
        return ()

    def readPredicates(self, dev, sm, wp, ln, predicates_size) -> tuple:
        self._lane(dev, sm, wp, ln)
        self._check_preds(dev, predicates_size)
        read = self.session.read_predicate
        return (tuple(int(read(dev, sm, wp, ln, p)) & 1 for p in range(predicates_size)),)

    def writePredicates(self, dev, sm, wp, ln, predicates_size, predicates) -> tuple:
        """Predicates the lane's function does not use have no PTX register and are skipped."""
        self._lane(dev, sm, wp, ln)
        self._check_preds(dev, predicates_size)
        if len(predicates) != predicates_size:
            raise CudbgError(R.CUDBG_ERROR_INVALID_ARGS,
                             f"predicates_size={predicates_size} but {len(predicates)} values given")
        for name, _dtype, kind, first, _words in self.session.register_map(dev, sm, wp, ln):
            if kind == "P" and first < predicates_size:
                self.session.write_register(dev, sm, wp, ln, name, bool(predicates[first]))
        return ()

    # ------------------------------------------------------------- uniform registers (none)
    def _no_uniform(self, dev: int, sm: int, wp: int, what: str, first: int, count: int) -> None:
        self._warp(dev, sm, wp)
        if first + count > 0:
            raise CudbgError(R.CUDBG_ERROR_INVALID_ARGS, f"the device has no uniform {what} "
                             f"(asked for index {first}, count {count})")

    def readUniformRegisterRange(self, devId, sm, wp, regno, registers_size) -> tuple:
        """Only the empty range exists: getNumUniformRegisters is 0."""
        self._no_uniform(devId, sm, wp, "registers", regno, registers_size)
        return ((),)

    def writeUniformRegister(self, dev, sm, wp, regno, val) -> tuple:
        """Always CUDBG_ERROR_INVALID_ARGS for a valid warp: there is no uniform register."""
        self._no_uniform(dev, sm, wp, "registers", regno, 1)
        return ()

    def readUniformPredicates(self, dev, sm, wp, predicates_size) -> tuple:
        self._no_uniform(dev, sm, wp, "predicates", 0, predicates_size)
        return ((),)

    def writeUniformPredicates(self, dev, sm, wp, predicates_size, predicates) -> tuple:
        self._no_uniform(dev, sm, wp, "predicates", 0, predicates_size)
        return ()
