"""Which threads of a wave run next: the executor's scheduling policy.

Two policies, both legal schedules of a real GPU:

- "lowest-pc" (the default): the executor's own rule (executor.next_group),
  every step runs all threads of the wave waiting at the lowest pending pc.
  It is deterministic and fast, and it hides races: neighbours always run
  in lockstep, so a missing __syncthreads between a write and a read of
  another warp's data never shows.
- "random" with a seed: at every step one warp is drawn among the warps
  that can run, and with it a random subset of the other warps waiting at
  the same pc; those warps run one basic block. The one idea: order
  *between warps* is free on hardware (independent warp schedulers), order
  *inside a warp* is not observable by a correct program, so each warp keeps
  the lowest-pc rule for its own threads (a diverged warp reconverges at the
  first pc its halves share, and warp-synchronous instructions see the warp
  converged exactly as under lowest-pc) while warps interleave at random.
  Barriers, exits and reconvergence work unchanged: the schedule only
  chooses among runnable threads. The draw comes from a numpy Generator
  seeded by the configured seed, so a program that launches the same
  kernels in the same order is interleaved the same way again.

Configuration: `configure(policy, seed)` (gpudbg check's --schedule/--seed,
through the sanitizer session), or the environment GPUDBG_SCHEDULE
(lowest-pc|random) and GPUDBG_SEED (a non-negative integer), read at each
launch unless configure() chose a policy. Bad values raise ScheduleError
(a ValueError) with a sentence naming the variable.

What it deliberately does not do: model timing or warp priorities (the
draw is uniform over runnable warps, so a pc group is chosen in proportion
to its warps), randomize inside a warp, or apply under the debugger, whose
loop (debug_port) keeps lowest-pc so that stepping stays predictable. With
the default policy the executor never calls into this module per step.
"""
from __future__ import annotations

import enum
import os

import numpy as np

from gpudbg.sim.state import PARKED

WARP = 32
ENV_SCHEDULE = "GPUDBG_SCHEDULE"
ENV_SEED = "GPUDBG_SEED"


class Policy(enum.Enum):
    LOWEST_PC = "lowest-pc"
    RANDOM = "random"


class ScheduleError(ValueError):
    """A schedule policy or seed that cannot be used."""


_configured: tuple[Policy, int] | None = None   # set by configure(); None: the environment decides
_rng: np.random.Generator | None = None          # the configured policy's generator
_env_rng: tuple[int, np.random.Generator] | None = None   # (seed, generator) of the environment's


def parse_policy(text: str, where: str = "schedule") -> Policy:
    try:
        return Policy(text.strip().lower())
    except ValueError:
        choices = ", ".join(p.value for p in Policy)
        raise ScheduleError(f"{where}={text!r} is not a schedule (choose {choices})") from None


def parse_seed(value: object, where: str = "seed") -> int:
    try:
        seed = int(str(value).strip(), 10) if not isinstance(value, int) else value
    except ValueError:
        raise ScheduleError(f"{where}={value!r} is not an integer seed") from None
    if isinstance(seed, bool) or seed < 0:
        raise ScheduleError(f"{where}={value!r} must be a non-negative integer")
    return seed


def configure(policy: str, seed: int = 0) -> None:
    """Choose the policy of every later launch (until configured again);
    a random policy restarts its generator from `seed`."""
    global _configured, _rng
    p = parse_policy(policy)
    s = parse_seed(seed)
    _configured = (p, s)
    _rng = np.random.default_rng(s) if p is Policy.RANDOM else None


def reset() -> None:
    """Forget configure(): the environment decides again (its generator
    restarts from GPUDBG_SEED)."""
    global _configured, _rng, _env_rng
    _configured = None
    _rng = None
    _env_rng = None


def from_environment() -> tuple[Policy, int]:
    """(policy, seed) that GPUDBG_SCHEDULE / GPUDBG_SEED ask for;
    ScheduleError on bad values."""
    raw = os.environ.get(ENV_SCHEDULE, "").strip()
    policy = parse_policy(raw, ENV_SCHEDULE) if raw else Policy.LOWEST_PC
    raw_seed = os.environ.get(ENV_SEED, "").strip()
    seed = parse_seed(raw_seed, ENV_SEED) if raw_seed else 0
    return policy, seed


def describe() -> str:
    """The policy in force, in words ("random (seed 3)")."""
    policy, seed = _configured if _configured is not None else from_environment()
    return f"random (seed {seed})" if policy is Policy.RANDOM else policy.value


def configured() -> bool:
    """Whether configure() chose the policy (else the environment does)."""
    return _configured is not None


def for_launch() -> "RandomSchedule | None":
    """The schedule of the next launch: None for lowest-pc (the executor's
    own loop), else a RandomSchedule drawing from the policy's generator."""
    global _env_rng
    if _configured is not None:
        return RandomSchedule(_rng) if _rng is not None else None
    if not os.environ.get(ENV_SCHEDULE):
        return None
    policy, seed = from_environment()
    if policy is not Policy.RANDOM:
        return None
    if _env_rng is None or _env_rng[0] != seed:
        _env_rng = (seed, np.random.default_rng(seed))
    return RandomSchedule(_env_rng[1])


class RandomSchedule:
    """Random interleaving of whole warps; each warp lowest-pc inside."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.lanes = np.arange(WARP, dtype=np.int64)

    def next_group(self, view: np.ndarray):
        """(pc, slots) of the next step over the scheduling pcs `view`
        (a pc >= PARKED: nothing can run; slots None: the whole wave)."""
        w = view.reshape(-1, WARP)
        wmin = w.min(axis=1)                      # each warp's own lowest pending pc
        runnable = np.flatnonzero(wmin < PARKED)
        if not len(runnable):
            return int(wmin.min()), None
        rng = self.rng
        first = int(runnable[rng.integers(len(runnable))])
        m = int(wmin[first])
        peers = runnable[wmin[runnable] == m]     # warps whose next pc is m as well
        if len(peers) > 1:
            peers = peers[(rng.random(len(peers)) < 0.5) | (peers == first)]
        else:
            peers = np.array([first], dtype=np.int64)
        sub = w[peers] == m
        idx = (peers[:, None] * WARP + self.lanes)[sub]
        if len(idx) == len(view):
            return m, None
        return m, idx
