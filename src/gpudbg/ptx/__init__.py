"""PTX front end: parse PTX text into the IR of `gpudbg.ptx.ir`.

`parse`/`parse_file` are the whole public surface; every failure on bad
input is a PTXParseError naming file, line and column.
"""
from __future__ import annotations

from . import ir
from .errors import PTXParseError
from .parser import parse, parse_file

__all__ = ["PTXParseError", "ir", "parse", "parse_file"]
