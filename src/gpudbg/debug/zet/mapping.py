"""``ze_device_thread_t`` (slice, subslice, eu, thread) <-> simulator (sm, warp slot, lane).

A Level Zero thread is an EU *hardware thread*: it runs one SIMD
instruction stream whose lanes are channels of that thread, not threads of
their own. The simulator's counterpart is a warp, so one zet thread names
one warp slot, a zet thread's SIMD channels are the warp's lanes, and
lane-level focus cannot be expressed in zet (the facade addresses whole
warps; per-lane state comes back as per-channel data). The hierarchy above
the warp follows the hardware that plays each role on an NVIDIA-class GPU:

- slice    = GPC        = ``sm // sms_per_slice``  (default 18 SMs: a GH100
  GPC, 9 TPCs x 2 SMs; with 132 SMs the 8th slice has 6, like a part with
  fused-off units),
- subslice = SM         = ``sm % sms_per_slice``   (an Xe-core/subslice is
  the unit that owns shared local memory, as an SM owns shared memory),
- eu       = SM sub-partition (SMSP) = ``warp % eus_per_subslice`` (default
  4: the SIMD unit with its own scheduler and hardware-thread slots, as an
  EU; warp slot w is scheduled by sub-partition w % 4),
- thread   = slot within that sub-partition = ``warp // eus_per_subslice``.

So ``to_sim(to_zet(sm, warp)) == (sm, warp)`` and the reverse hold for
every coordinate the device has. Any field equal to UINT32_MAX is the "all"
wildcard for that level; ``expand`` turns a thread with wildcards into the
resident warps it names (never a warp that is not resident: zet only
interrupts, resumes or reads threads that exist). Nothing here inspects a
running device: residency is passed in by the caller.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from gpudbg.debug.zet.structs import UINT32_MAX, ze_device_thread_t
from gpudbg.sim.device_model import DeviceModel

SMS_PER_SLICE = 18
EUS_PER_SUBSLICE = 4
ALL = UINT32_MAX


class WarpSlot(NamedTuple):
    """A simulator warp: SM index and warp slot within the SM."""

    sm: int
    warp: int


class SimThread(NamedTuple):
    """A simulator thread: one lane of a warp slot."""

    sm: int
    warp: int
    lane: int


class ZetCoordinateError(ValueError):
    """A ze_device_thread_t or simulator coordinate outside the device."""


@dataclass(frozen=True)
class ThreadMapping:
    """The mapping for one device shape (see the module docstring for the rule)."""

    sm_count: int
    warp_slots_per_sm: int
    lanes: int
    sms_per_slice: int = SMS_PER_SLICE
    eus_per_subslice: int = EUS_PER_SUBSLICE

    def __post_init__(self) -> None:
        for name in ("sm_count", "warp_slots_per_sm", "lanes", "sms_per_slice", "eus_per_subslice"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ZetCoordinateError(f"ThreadMapping.{name} must be a positive integer, got {value!r}")
        if self.warp_slots_per_sm % self.eus_per_subslice:
            raise ZetCoordinateError(f"{self.warp_slots_per_sm} warp slots per SM do not split evenly over "
                                     f"{self.eus_per_subslice} EUs (sub-partitions)")

    @classmethod
    def from_model(cls, model: DeviceModel, sms_per_slice: int = SMS_PER_SLICE,
                   eus_per_subslice: int = EUS_PER_SUBSLICE) -> ThreadMapping:
        return cls(model.sm_count, model.warp_slots_per_sm, model.lanes, sms_per_slice, eus_per_subslice)

    # ------------------------------------------------------------ the shape

    @property
    def num_slices(self) -> int:
        return -(-self.sm_count // self.sms_per_slice)

    def subslices_in(self, slice_: int) -> int:
        """SMs in ``slice_`` (the last slice may be partial)."""
        if not 0 <= slice_ < self.num_slices:
            raise ZetCoordinateError(f"slice {slice_} out of range: the device has {self.num_slices} slices")
        return min(self.sms_per_slice, self.sm_count - slice_ * self.sms_per_slice)

    @property
    def threads_per_eu(self) -> int:
        return self.warp_slots_per_sm // self.eus_per_subslice

    @property
    def all_lanes_mask(self) -> int:
        return (1 << self.lanes) - 1

    # ------------------------------------------------------------ one to one

    def to_zet(self, sm: int, warp: int, lane: int | None = None) -> ze_device_thread_t:
        """The zet thread running warp ``(sm, warp)``; a lane only names one of its channels."""
        self._check_warp(sm, warp)
        if lane is not None and not (isinstance(lane, int) and 0 <= lane < self.lanes):
            raise ZetCoordinateError(f"lane {lane!r} out of range: warps have {self.lanes} lanes")
        return ze_device_thread_t(sm // self.sms_per_slice, sm % self.sms_per_slice,
                                  warp % self.eus_per_subslice, warp // self.eus_per_subslice)

    def to_sim(self, thread: ze_device_thread_t) -> WarpSlot:
        """The warp slot of one zet thread; wildcards must go through ``expand``."""
        self.validate(thread)
        if not thread.is_single:
            raise ZetCoordinateError(f"{thread} uses the 'all' wildcard: it names a set of threads, "
                                     "expand it instead of mapping it to one warp")
        return WarpSlot(thread.slice * self.sms_per_slice + thread.subslice,
                        thread.thread * self.eus_per_subslice + thread.eu)

    def lanes_of(self, thread: ze_device_thread_t) -> tuple[SimThread, ...]:
        """Every simulator thread (SIMD channel) of one zet thread."""
        sm, warp = self.to_sim(thread)
        return tuple(SimThread(sm, warp, lane) for lane in range(self.lanes))

    # ------------------------------------------------------------ wildcards

    def validate(self, thread: ze_device_thread_t) -> None:
        """Raise unless every coordinate is 'all' or exists on this device."""
        if not isinstance(thread, ze_device_thread_t):
            raise ZetCoordinateError(f"expected a ze_device_thread_t, got {type(thread).__name__}")
        if thread.slice != ALL:
            width = self.subslices_in(thread.slice)
            if thread.subslice != ALL and thread.subslice >= width:
                raise ZetCoordinateError(f"subslice {thread.subslice} out of range: slice {thread.slice} "
                                         f"has {width} subslices")
        elif thread.subslice != ALL and thread.subslice >= min(self.sms_per_slice, self.sm_count):
            raise ZetCoordinateError(f"subslice {thread.subslice} out of range: slices have at most "
                                     f"{min(self.sms_per_slice, self.sm_count)} subslices")
        if thread.eu != ALL and thread.eu >= self.eus_per_subslice:
            raise ZetCoordinateError(f"eu {thread.eu} out of range: subslices have {self.eus_per_subslice} EUs")
        if thread.thread != ALL and thread.thread >= self.threads_per_eu:
            raise ZetCoordinateError(f"thread {thread.thread} out of range: EUs have {self.threads_per_eu} threads")

    def covers(self, thread: ze_device_thread_t, sm: int, warp: int) -> bool:
        """Whether ``thread`` (wildcards allowed) names warp ``(sm, warp)``."""
        here = self.to_zet(sm, warp)
        return all(want in (ALL, have) for want, have in zip(
            (thread.slice, thread.subslice, thread.eu, thread.thread),
            (here.slice, here.subslice, here.eu, here.thread)))

    def hardware_warps(self, thread: ze_device_thread_t) -> Iterator[WarpSlot]:
        """Every warp slot the thread names, resident or not, in (sm, warp) order."""
        self.validate(thread)
        slices = range(self.num_slices) if thread.slice == ALL else (thread.slice,)
        eus = range(self.eus_per_subslice) if thread.eu == ALL else (thread.eu,)
        hw = range(self.threads_per_eu) if thread.thread == ALL else (thread.thread,)
        warps = sorted(t * self.eus_per_subslice + e for e in eus for t in hw)
        for s in slices:
            width = self.subslices_in(s)
            subs = range(width) if thread.subslice == ALL else (thread.subslice,)
            for sub in subs:
                if sub < width:
                    for w in warps:
                        yield WarpSlot(s * self.sms_per_slice + sub, w)

    def expand(self, thread: ze_device_thread_t, resident: Iterable[tuple[int, int]]) -> frozenset[WarpSlot]:
        """The resident warps ``thread`` names (all of them for ZE_DEVICE_THREAD_ALL)."""
        self.validate(thread)
        out = set()
        for sm, warp in resident:
            if self.covers(thread, sm, warp):
                out.add(WarpSlot(sm, warp))
        return frozenset(out)

    def expand_lanes(self, thread: ze_device_thread_t,
                     resident: Mapping[tuple[int, int], int]) -> frozenset[SimThread]:
        """Simulator threads named by ``thread``: each resident warp's lanes in its valid-lane mask."""
        out = set()
        for sm, warp in self.expand(thread, resident.keys()):
            mask = resident[(sm, warp)]
            if not isinstance(mask, int) or mask < 0 or mask > self.all_lanes_mask:
                raise ZetCoordinateError(f"lane mask {mask!r} of warp ({sm}, {warp}) does not fit "
                                         f"{self.lanes} lanes")
            out.update(SimThread(sm, warp, lane) for lane in range(self.lanes) if mask >> lane & 1)
        return frozenset(out)

    def _check_warp(self, sm: int, warp: int) -> None:
        if isinstance(sm, bool) or not isinstance(sm, int) or not 0 <= sm < self.sm_count:
            raise ZetCoordinateError(f"SM {sm!r} out of range: the device has {self.sm_count} SMs")
        if isinstance(warp, bool) or not isinstance(warp, int) or not 0 <= warp < self.warp_slots_per_sm:
            raise ZetCoordinateError(f"warp slot {warp!r} out of range: SMs have {self.warp_slots_per_sm} slots")
