"""The cuda-gdb focus: one lane, named physically or logically.

The one idea: the focus is stored as physical coordinates (device, SM,
warp slot, lane) and the logical ones (kernel, grid, block, thread) are
always derived from the device's current warp views, so the two sides can
never disagree. A switch request names some coordinates of one side; the
others are kept from the current focus when they still name a valid
lane, else the first valid one is taken (cuda-gdb's rule), and a request
whose named coordinates match nothing leaves the focus unchanged with
cuda-gdb's error.

It does not pick the focus at a stop (the debugger does, from the event's
lanes) and holds no device state of its own.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable

from .commands import CommandError, resolve_word

FIELDS = ("kernel", "grid", "block", "thread", "device", "sm", "warp", "lane")
PHYSICAL = ("device", "sm", "warp", "lane")
LOGICAL = ("kernel", "grid", "block", "thread")
INVALID = "Invalid coordinates. CUDA focus unchanged."
NO_FOCUS = "Focus not set on any active CUDA kernel."

Dim3 = tuple[int, int, int]


@dataclass(frozen=True)
class Focus:
    dev: int
    sm: int
    wp: int
    ln: int
    kernel: int
    grid: int
    block: Dim3
    thread: Dim3

    def value(self, name: str):
        return {"kernel": self.kernel, "grid": self.grid, "block": self.block, "thread": self.thread,
                "device": self.dev, "sm": self.sm, "warp": self.wp, "lane": self.ln}[name]

    def describe(self, names: Iterable[str] = FIELDS) -> str:
        """`block (0,0,0), thread (5,0,0)` in cuda-gdb's order."""
        wanted = set(names)
        parts = []
        for n in FIELDS:
            if n in wanted:
                v = self.value(n)
                parts.append(f"{n} {dim(v) if isinstance(v, tuple) else v}")
        return ", ".join(parts)

    def switching(self) -> str:
        return f"[Switching focus to CUDA {self.describe()}]"


def dim(t: Iterable[int]) -> str:
    return "(" + ",".join(str(int(v)) for v in t) + ")"


@dataclass(frozen=True)
class LaneSite:
    """One valid lane of the device, with both coordinate sets."""

    dev: int
    sm: int
    wp: int
    ln: int
    grid: int
    block: Dim3
    thread: Dim3


def sites(session, devices: Iterable[int]) -> list[LaneSite]:
    """Every valid lane, ordered by (device, sm, warp, lane)."""
    out = []
    for dev in devices:
        for w in sorted(session.warps(dev), key=lambda w: (w.sm, w.wp)):
            for lv in w.lanes:
                out.append(LaneSite(dev, w.sm, w.wp, lv.ln, w.grid_id, tuple(w.block_idx), tuple(lv.thread_idx)))
    return out


def parse_request(text: str) -> dict[str, object]:
    """`block 1 thread (5,0,0)` -> {"block": (1,0,0), "thread": (5,0,0)};
    a field with no value (`cuda block thread`) maps to None (a query)."""
    words = _tokens(text)
    out: dict[str, object] = {}
    i = 0
    while i < len(words):
        name = resolve_word(words[i].lower(), FIELDS, "CUDA focus coordinate")
        if name in out:
            raise CommandError(f"Coordinate {name} given twice.")
        value = None
        if i + 1 < len(words) and not words[i + 1][0].isalpha():
            value = _value(name, words[i + 1])
            i += 1
        out[name] = value
        i += 1
    return out


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        if text[pos] == "(":
            end = text.find(")", pos)
            if end < 0:
                raise CommandError(f"Unbalanced parenthesis in {text!r}.")
            out.append(text[pos:end + 1])
            pos = end + 1
        elif text[pos].isalpha():
            m = re.match(r"[A-Za-z_]+", text[pos:])
            out.append(m.group(0))
            pos += m.end()
        else:
            m = re.match(r"[0-9xXa-fA-F]+(\s*,\s*[0-9xXa-fA-F]+)*", text[pos:])
            if m is None:
                raise CommandError(f"Unexpected {text[pos:]!r} in CUDA focus coordinates.")
            out.append(m.group(0))
            pos += m.end()
    return out


def _value(name: str, token: str):
    body = token.strip("() ")
    try:
        nums = [int(p.strip(), 0) for p in body.split(",") if p.strip()]
    except ValueError:
        raise CommandError(f"Invalid value {token!r} for CUDA coordinate {name}.") from None
    if not nums or any(n < 0 for n in nums):
        raise CommandError(f"Invalid value {token!r} for CUDA coordinate {name}.")
    if name in ("block", "thread"):
        if len(nums) > 3:
            raise CommandError(f"{name} takes at most 3 coordinates, got {token!r}.")
        return tuple(nums + [0] * (3 - len(nums)))
    if len(nums) != 1:
        raise CommandError(f"{name} takes one number, got {token!r}.")
    return nums[0]


def make_focus(site: LaneSite, kernel_of: Callable[[int, int], int]) -> Focus:
    return Focus(site.dev, site.sm, site.wp, site.ln, kernel_of(site.dev, site.grid), site.grid,
                 site.block, site.thread)


def resolve(request: dict[str, object], current: Focus | None, all_sites: list[LaneSite],
            grid_of_kernel: Callable[[int], tuple[int, int] | None]) -> LaneSite:
    """The lane a switch request names (see the module docstring)."""
    named = {k: v for k, v in request.items() if v is not None}
    if not all_sites:
        raise CommandError(NO_FOCUS)
    if any(k in PHYSICAL for k in named) and any(k in LOGICAL for k in named):
        raise CommandError("Cannot mix physical (device/sm/warp/lane) and logical "
                           "(kernel/grid/block/thread) coordinates in one switch.")
    if "kernel" in named:
        hit = grid_of_kernel(int(named["kernel"]))  # type: ignore[arg-type]
        if hit is None:
            raise CommandError(INVALID)
        dev, grid = hit
        if "grid" in named and named["grid"] != grid:
            raise CommandError(INVALID)
        named["grid"] = grid
        named.setdefault("device", dev)
    if any(k in LOGICAL for k in named):
        order = ("device", "grid", "block", "thread")
        key = lambda s: {"device": s.dev, "grid": s.grid, "block": s.block, "thread": s.thread}
    else:
        order = ("device", "sm", "warp", "lane")
        key = lambda s: {"device": s.dev, "sm": s.sm, "warp": s.wp, "lane": s.ln}
    candidates = all_sites
    for field_name in order:
        if field_name in named:
            candidates = [s for s in candidates if key(s)[field_name] == named[field_name]]
            if not candidates:
                raise CommandError(INVALID)
        elif current is not None:
            keep = _current_value(current, field_name)
            kept = [s for s in candidates if key(s)[field_name] == keep]
            if kept:
                candidates = kept
    return candidates[0]


def _current_value(f: Focus, name: str):
    return {"device": f.dev, "sm": f.sm, "warp": f.wp, "lane": f.ln, "grid": f.grid,
            "block": f.block, "thread": f.thread}[name]
