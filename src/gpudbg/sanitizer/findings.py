"""What the sanitizer reports: one `Finding` per error or warning, worded
as compute-sanitizer words it, with where it happened on the device (kernel,
pc, source line, thread and block) and on the host (the call site).

A finding's `title` is the first line and `details` the indented lines of
compute-sanitizer's block; `as_dict` is the JSON form (validated by
tests against FINDING_SCHEMA). `count` says how many threads or accesses
one finding stands for (racecheck's "[N hazards]", memcheck's grouped
faulting lanes)."""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class ToolName(enum.Enum):
    """compute-sanitizer's --tool values, plus the host-side checks."""

    MEMCHECK = "memcheck"
    RACECHECK = "racecheck"
    INITCHECK = "initcheck"
    SYNCCHECK = "synccheck"


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class DeviceSite:
    """Where on the device: one thread at one instruction."""

    kernel: str
    function: str
    pc: int                      # virtual code address
    offset: int                  # pc relative to the function's entry
    instruction: str
    source_file: str | None
    source_line: int | None
    block: tuple[int, int, int] | None
    thread: tuple[int, int, int] | None
    device: int | None = None
    grid_id: int | None = None      # which launch: its host call site is known by it

    @property
    def where(self) -> str:
        """compute-sanitizer's 'at 0x50 in file.cu:7:kernel' part."""
        loc = f"{self.source_file}:{self.source_line}:" if self.source_line else ""
        return f"0x{self.offset:x} in {loc}{self.function}"

    @property
    def who(self) -> str:
        if self.block is None or self.thread is None:
            return ""
        t, b = self.thread, self.block
        return f"thread ({t[0]},{t[1]},{t[2]}) in block ({b[0]},{b[1]},{b[2]})"

    def as_dict(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "function": self.function, "pc": self.pc,
                "offset": self.offset, "instruction": self.instruction,
                "source_file": self.source_file, "source_line": self.source_line,
                "block": list(self.block) if self.block else None,
                "thread": list(self.thread) if self.thread else None,
                "device": self.device, "grid_id": self.grid_id}


@dataclass
class Finding:
    tool: ToolName
    kind: str                    # a stable identifier: "shared_race", "uninitialized_read", ...
    title: str
    details: list[str] = field(default_factory=list)
    severity: Severity = Severity.ERROR
    site: DeviceSite | None = None
    other_site: DeviceSite | None = None     # racecheck: the other access
    address: int | None = None
    size: int | None = None
    count: int = 1
    host_site: list[str] = field(default_factory=list)   # innermost last, "file:line in function"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def errors(self) -> int:
        """What this finding adds to the ERROR SUMMARY, as compute-sanitizer
        counts: every thread's access for memcheck, initcheck and synccheck
        (`count` threads), one per displayed hazard report for racecheck."""
        return errors_of(self.tool.value, self.severity.value, self.count)

    def lines(self, show_backtrace: bool = True) -> list[str]:
        out = [self.title, *("    " + d for d in self.details)]
        if show_backtrace and self.host_site:
            out.append("    Saved host backtrace up to driver entry point")
            out += [f"        Host Frame: {f}" for f in reversed(self.host_site)]
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"tool": self.tool.value, "finding": self.kind, "severity": self.severity.value,
                "title": self.title, "details": list(self.details), "count": self.count,
                "address": self.address, "size": self.size,
                "site": self.site.as_dict() if self.site else None,
                "other_site": self.other_site.as_dict() if self.other_site else None,
                "host_site": list(self.host_site), **({"extra": self.extra} if self.extra else {})}


def errors_of(tool: str, severity: str, count: int) -> int:
    if severity != Severity.ERROR.value:
        return 0
    return 1 if tool == ToolName.RACECHECK.value else max(1, int(count))


_SITE_SCHEMA = {"type": ["object", "null"],
                "required": ["kernel", "function", "pc", "offset", "source_file", "source_line",
                             "block", "thread"]}

FINDING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["tool", "finding", "severity", "title", "details", "count", "site", "host_site"],
    "properties": {
        "tool": {"enum": [t.value for t in ToolName]},
        "finding": {"type": "string"},
        "severity": {"enum": [s.value for s in Severity]},
        "title": {"type": "string"},
        "details": {"type": "array", "items": {"type": "string"}},
        "count": {"type": "integer", "minimum": 1},
        "address": {"type": ["integer", "null"]},
        "size": {"type": ["integer", "null"]},
        "site": _SITE_SCHEMA,
        "other_site": _SITE_SCHEMA,
        "host_site": {"type": "array", "items": {"type": "string"}},
    },
}
