"""Which way a C API parameter carries data, shared by the function tables
of both debug facades (cudbg and zet), which turn out-parameters into
returned outputs."""
from __future__ import annotations

import enum


class Direction(enum.Enum):
    IN = "in"
    OUT = "out"
    INOUT = "inout"

    @classmethod
    def from_annotation(cls, tag: str) -> "Direction":
        """Level Zero's doc annotations: `in`, `out`, `in,out`."""
        return cls.INOUT if tag.replace(" ", "") == "in,out" else cls(tag)

    @property
    def annotation(self) -> str:
        return "in,out" if self is Direction.INOUT else self.value


IN, OUT, INOUT = Direction.IN, Direction.OUT, Direction.INOUT
