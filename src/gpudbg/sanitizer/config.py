"""What a check run asks for: compute-sanitizer's options as one record.

The record travels to a native program's process as JSON in
GPUDBG_CHECK_CONFIG (its simulated GPU lives there), so every field is a
plain value."""
from __future__ import annotations

import dataclasses
import enum
import json
import os
from dataclasses import dataclass
from typing import Any

from gpudbg.sanitizer.findings import ToolName

CONFIG_ENV = "GPUDBG_CHECK_CONFIG"
DEFAULT_PRINT_LIMIT = 100        # compute-sanitizer's default; 0 prints every error


class ApiErrors(enum.Enum):
    """--report-api-errors: which failing API calls are findings."""

    ALL = "all"
    EXPLICIT = "explicit"
    NO = "no"


class Schedule(enum.Enum):
    LOWEST_PC = "lowest-pc"
    RANDOM = "random"


@dataclass
class CheckConfig:
    tool: ToolName = ToolName.MEMCHECK
    leak_check: bool = False
    report_api_errors: ApiErrors = ApiErrors.EXPLICIT
    print_limit: int = DEFAULT_PRINT_LIMIT
    error_exitcode: int | None = None
    show_backtrace: bool = True
    schedule: Schedule | None = None   # None: as GPUDBG_SCHEDULE/GPUDBG_SEED say (lowest-pc by default)
    seed: int = 0
    track_unused_memory: bool = False
    racecheck_global: bool = True      # beyond compute-sanitizer: races between blocks in global memory

    def to_json(self) -> str:
        raw = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return json.dumps({k: v.value if isinstance(v, enum.Enum) else v for k, v in raw.items()})

    @classmethod
    def from_json(cls, text: str) -> "CheckConfig":
        raw: dict[str, Any] = json.loads(text)
        kinds = {"tool": ToolName, "report_api_errors": ApiErrors, "schedule": Schedule}
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: kinds[k](v) if k in kinds and v is not None else v
                      for k, v in raw.items() if k in known})

    @classmethod
    def from_environment(cls) -> "CheckConfig | None":
        raw = os.environ.get(CONFIG_ENV)
        if not raw:
            return None
        try:
            return cls.from_json(raw)
        except (ValueError, TypeError, KeyError) as e:
            raise ValueError(f"{CONFIG_ENV} is not a valid check configuration: {e}") from None
