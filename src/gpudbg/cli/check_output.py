"""What `gpudbg check` writes for machines: its findings as JSON (one row
per device fault or tool finding, validated against CHECK_JSON_SCHEMA) or
XML, always atomically (a temp file beside the target, then rename).

A device fault's row keeps every FaultReport field (the dataclass's own
list, so new fields follow) under `finding` kernel_fault/kernel_hang/
device_error; a tool's row is Finding.as_dict() (sanitizer/findings.py).
Both carry `tool`, `finding`, `severity` and `count`, and `errors_in`
says how many errors a row stands for in the ERROR SUMMARY."""
from __future__ import annotations

import dataclasses
import enum
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from gpudbg.dump.files import replace_atomically
from gpudbg.sanitizer.findings import FINDING_SCHEMA, errors_of


class FindingKind(enum.Enum):
    """What a device fault is; the `finding` field of its row."""

    KERNEL_FAULT = "kernel_fault"   # a CUDBG exception, precise to the lane
    KERNEL_HANG = "kernel_hang"     # a barrier deadlock, a watchdog timeout, an interrupt
    DEVICE_ERROR = "device_error"   # a sticky context error with no FaultReport (e.g. a watchdog hang)


FAULT_KINDS = tuple(k.value for k in FindingKind)

FAULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["program", "finding", "origin", "device", "tool", "severity", "count"],
    "properties": {
        "finding": {"enum": list(FAULT_KINDS)},
        "origin": {"enum": ["raised", "sticky"]},
        "device": {"type": ["integer", "null"]},
        "tool": {"const": "memcheck"},
        "severity": {"const": "error"},
        "count": {"type": "integer", "minimum": 1},
        "message": {"type": "string"},
    },
}

CHECK_JSON_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {"if": {"properties": {"finding": {"enum": list(FAULT_KINDS)}}},
              "then": FAULT_SCHEMA, "else": FINDING_SCHEMA},
}


def finding_kind(fault: Any) -> FindingKind:
    if fault.report is None:
        return FindingKind.DEVICE_ERROR
    return FindingKind.KERNEL_HANG if fault.report.hang is not None else FindingKind.KERNEL_FAULT


def faulting_threads(report: Any) -> int:
    """How many threads a fault report stands for (every faulting lane of
    the instruction, when the simulator counted them)."""
    return max(1, int(getattr(report, "faulting_count", None) or 1)) if report is not None else 1


def _plain(value: Any) -> Any:
    """A JSON-friendly copy: enums by name (CUDBG codes) or value (text
    enums), tuples as lists, numpy scalars as Python numbers."""
    if isinstance(value, enum.Enum):
        return value.value if isinstance(value.value, str) else value.name
    if isinstance(value, (str, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (int, float)):
        return value
    if hasattr(value, "item"):   # numpy scalar
        return _plain(value.item())
    return str(value)


def finding_dict(fault: Any, program: str) -> dict[str, Any]:
    """One device fault's row: the program, the finding kind, where it came
    from, and every FaultReport field."""
    out: dict[str, Any] = {"program": program, "finding": finding_kind(fault).value,
                           "origin": fault.origin.value, "device": fault.device,
                           "tool": "memcheck", "severity": "error",
                           "count": faulting_threads(fault.report)}
    report = fault.report
    if report is None:
        out["message"] = fault.message
        return out
    for f in dataclasses.fields(report):
        out[f.name] = _plain(getattr(report, f.name))
    out["kind_code"] = int(report.kind)
    out["title"] = report.title
    return out


def errors_in(row: dict[str, Any]) -> int:
    """The errors one row adds to the ERROR SUMMARY."""
    if row.get("finding") in FAULT_KINDS:
        return int(row.get("count") or 1)
    return errors_of(str(row.get("tool")), str(row.get("severity", "error")), int(row.get("count") or 1))


def write_json_atomically(path: str, payload: Any) -> None:
    replace_atomically(path, (json.dumps(payload, indent=2) + "\n").encode())


def _xml_value(parent: ET.Element, name: str, value: Any) -> None:
    el = ET.SubElement(parent, name)
    if isinstance(value, dict):
        for k, v in value.items():
            _xml_value(el, str(k), v)
    elif isinstance(value, list):
        for v in value:
            _xml_value(el, "item", v)
    elif value is not None:
        el.text = str(value)


def write_xml_atomically(path: str, rows: list[dict[str, Any]], program: str) -> None:
    """<gpudbg-check program=...><finding tool=... kind=... severity=...>
    with one child element per row field."""
    root = ET.Element("gpudbg-check", program=program)
    for row in rows:
        el = ET.SubElement(root, "finding", tool=str(row.get("tool")), kind=str(row.get("finding")),
                           severity=str(row.get("severity")))
        for k, v in row.items():
            if k not in ("tool", "finding", "severity"):
                _xml_value(el, k, v)
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
    replace_atomically(path, text.encode())


def target_problem(path: str) -> str | None:
    """Why an output file cannot be written there, or None."""
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        return f"{path} is a directory"
    if not directory.is_dir():
        return f"directory {directory} does not exist"
    if not os.access(directory, os.W_OK):
        return f"directory {directory} is not writable"
    return None
