"""Human descriptions of where an address lies relative to allocations.

One function words every case ("is 16 bytes before the start of the
4096-byte allocation at 0x..."), for the global registry and for device heap
blocks alike: callers pass sorted live regions, remembered freed regions and
reservations, plus the noun to use. It never decides whether an access
faults; it only explains an address. A freed region names where it was
freed when a tool recorded it (`free_site`), and driver memory says what
the driver keeps there.
"""
from __future__ import annotations

import bisect
from typing import Protocol, Sequence

# An address farther than this from every live allocation is "not near any".
NEAR_LIMIT = 1 << 28


class Region(Protocol):
    base: int
    size: int
    label: str


def region_phrase(region: Region, noun: str, also: str = "") -> str:
    """'4096-byte allocation at 0x... (label[, also])'."""
    notes = ", ".join(n for n in (region.label, also) if n)
    return f"{region.size}-byte {noun} at 0x{region.base:x}" + (f" ({notes})" if notes else "")


def freed_at(region: Region) -> str:
    """'freed at host.py:12' when a tool recorded where it was freed."""
    site = getattr(region, "free_site", None)
    return f"freed at {site}" if site else ""


def driver_memory_phrase(region: Region, kind: str) -> str:
    """Why a kernel's access to driver memory (AllocationKind value `kind`)
    faults: 'is inside driver memory (launch parameters of saxpy) that
    kernels cannot access'."""
    label = region.label or kind
    if kind == "launch" and label.startswith("launch "):
        what = f"launch parameters of {label[len('launch '):]}"
    elif kind == "ring" and not label.startswith("ring"):
        what = f"command ring {label}"
    elif kind == "ring":
        what = f"command {label}"
    elif kind == "code" and label == "code image":
        what = "the code image"
    else:
        what = label
    return f"is inside driver memory ({what}) that kernels cannot access"


def describe_address(address: int, size: int, live: Sequence[Region],
                     freed: Sequence[Region] = (), reserved: Sequence[Region] = (),
                     noun: str = "allocation") -> str:
    """The phrase that follows 'address 0x...' in a fault message.

    `live` must be sorted by base and non-overlapping; `freed` and
    `reserved` need not be sorted."""
    bases = [r.base for r in live]
    i = bisect.bisect_right(bases, address) - 1
    if i >= 0:
        r = live[i]
        if r.size > 0 and address < r.base + r.size:
            into = address - r.base
            if address + size <= r.base + r.size:
                return f"is {into} bytes inside the {region_phrase(r, noun)}"
            over = address + size - (r.base + r.size)
            return (f"is {into} bytes inside the {region_phrase(r, noun)} and the "
                    f"{size}-byte access runs {over} bytes past its end")
    for r in sorted(freed, key=lambda r: -r.base):
        if r.base <= address < r.base + max(r.size, 1):
            return f"is inside a freed {region_phrase(r, noun, freed_at(r))}"
    for r in reserved:
        if r.base <= address < r.base + r.size:
            return f"is inside the reserved but unmapped {region_phrase(r, 'range')}"
    best: tuple[int, str] | None = None
    if i >= 0:
        r = live[i]
        past = address - (r.base + r.size)
        best = (past, f"is {past} bytes past the end of the {region_phrase(r, noun)}")
    if i + 1 < len(live):
        r = live[i + 1]
        before = r.base - address
        if best is None or before < best[0]:
            best = (before, f"is {before} bytes before the start of the {region_phrase(r, noun)}")
    if best is None or best[0] > NEAR_LIMIT:
        return f"is not near any {noun}"
    return best[1]
