"""What the file fuzz targets (ptx, devcoredump, coredump) share: the
mutation operators and the time-boxed loop that records escapes.

The one idea: input number N of a run with seed S is generated from a
random.Random seeded by (target, S, N) alone, so every input of a run can be
regenerated on its own (`reproduce`) from the reproducer description the
run reports, without replaying the inputs before it. A target supplies its
seed corpus, a generator rng -> (bytes, description) and a check that
raises on a failure and may name the input's outcome (e.g. "refused",
"opened"; counted in "outcomes"); the loop counts inputs, records every exception
that escapes the check (type, message, reproducer) and every input slower
than SLOW_SECONDS, and stops an input that runs past HANG_SECONDS (when it
runs in the main thread, by SIGALRM) instead of hanging the run.

What it does not do: minimize failing inputs, or run anything in another
process (the supervisor fuzz/run.py does that, for crashes and hangs).
"""
from __future__ import annotations

import random
import re
import signal
import threading
import time
import traceback
from typing import Callable, Sequence

SLOW_SECONDS = 5.0
HANG_SECONDS = 60.0
MAX_RECORDED = 200     # escapes kept per run (each distinct (type, place) once)

Mutated = tuple[bytes, str]
Generator = Callable[[random.Random], Mutated]

# values that break parsers: huge, negative, out of range for fixed widths, NULs
HUGE_NUMBERS = ("9" * 5000, "1" + "0" * 4400, "18446744073709551616", "9223372036854775808",
                "4294967296", "-1", "-9223372036854775809", "0x" + "f" * 40, "1e999", "0", "-0",
                "340282366920938463463374607431768211456")
NASTY = ("\x00", "\x00" * 17, "\xff", "\ufffd", "\t", "\r", "\r\n", "\\", '"', "'", "(" * 3000,
         "[" * 3000, "{" * 3000, "-" * 3000, " " * 5000, "\n" * 50, "%", "::", "..")
_NUMBER = re.compile(rb"-?(?:0[xX][0-9A-Fa-f]+|\d+)")


class InputTimeout(BaseException):
    """One input ran past HANG_SECONDS (BaseException: code under test that
    catches Exception must not swallow it)."""


def pick(rng: random.Random, seq: Sequence):
    return seq[rng.randrange(len(seq))]


# ---------------------------------------------------------------- byte-level operators
def flip_bytes(rng: random.Random, data: bytes) -> Mutated:
    out = bytearray(data)
    n = rng.choice((1, 1, 2, 4, 16))
    for _ in range(n):
        if out:
            out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out), f"{n} byte(s) overwritten"


def truncate(rng: random.Random, data: bytes) -> Mutated:
    cut = rng.randrange(len(data) + 1)
    return data[:cut], f"truncated at byte {cut}"


def delete_range(rng: random.Random, data: bytes) -> Mutated:
    i = rng.randrange(len(data) + 1)
    j = min(len(data), i + rng.choice((1, 4, 16, 200)))
    return data[:i] + data[j:], f"bytes {i}..{j} deleted"


def duplicate_range(rng: random.Random, data: bytes) -> Mutated:
    i = rng.randrange(len(data) + 1)
    j = min(len(data), i + rng.choice((1, 8, 64, 400)))
    times = rng.choice((1, 2, 50))
    return data[:j] + data[i:j] * times + data[j:], f"bytes {i}..{j} repeated {times}x"


def insert_text(rng: random.Random, data: bytes, extra: Sequence[str] = ()) -> Mutated:
    snippet = pick(rng, HUGE_NUMBERS + NASTY + tuple(extra))
    i = rng.randrange(len(data) + 1)
    return data[:i] + snippet.encode("utf-8", "surrogatepass") + data[i:], \
        f"inserted {_short(snippet)} at byte {i}"


def replace_number(rng: random.Random, data: bytes) -> Mutated:
    """A number of the text (decimal or hex) replaced by a huge or odd one."""
    spots = [m.span() for m in _NUMBER.finditer(data)]
    if not spots:
        return insert_text(rng, data)
    i, j = pick(rng, spots)
    value = pick(rng, HUGE_NUMBERS)
    return data[:i] + value.encode() + data[j:], f"number at byte {i} replaced by {_short(value)}"


# ---------------------------------------------------------------- line/token operators
def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def delete_lines(rng: random.Random, data: bytes) -> Mutated:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    n = rng.choice((1, 1, 3, 20))
    return b"\n".join(lines[:i] + lines[i + n:]), f"lines {i + 1}..{i + n} deleted"


def duplicate_lines(rng: random.Random, data: bytes) -> Mutated:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    n = rng.choice((1, 1, 4))
    times = rng.choice((1, 2, 200))
    return b"\n".join(lines[:i + n] + lines[i:i + n] * times + lines[i + n:]), \
        f"lines {i + 1}..{i + n} repeated {times}x"


def swap_lines(rng: random.Random, data: bytes) -> Mutated:
    lines = _lines(data)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines), f"lines {i + 1} and {j + 1} swapped"


def _tokens(data: bytes) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(rb"[^\s]+", data)]


def delete_token(rng: random.Random, data: bytes) -> Mutated:
    toks = _tokens(data)
    if not toks:
        return truncate(rng, data)
    i, j = pick(rng, toks)
    return data[:i] + data[j:], f"token at byte {i} deleted"


def duplicate_token(rng: random.Random, data: bytes) -> Mutated:
    toks = _tokens(data)
    if not toks:
        return truncate(rng, data)
    i, j = pick(rng, toks)
    times = rng.choice((1, 1, 3, 1000))
    return data[:j] + (b" " + data[i:j]) * times + data[j:], f"token at byte {i} repeated {times}x"


def move_token(rng: random.Random, data: bytes) -> Mutated:
    toks = _tokens(data)
    if len(toks) < 2:
        return truncate(rng, data)
    (i, j), (k, _) = pick(rng, toks), pick(rng, toks)
    tok = data[i:j]
    rest = data[:i] + data[j:]
    k = k if k < i else max(0, k - (j - i))
    return rest[:k] + tok + b" " + rest[k:], f"token at byte {i} moved to byte {k}"


TEXT_OPERATORS: tuple[Callable[[random.Random, bytes], Mutated], ...] = (
    flip_bytes, truncate, delete_range, duplicate_range, insert_text, replace_number, replace_number,
    delete_lines, duplicate_lines, swap_lines, delete_token, duplicate_token, move_token)


def mutate_text(rng: random.Random, data: bytes, rounds: int | None = None,
                operators: Sequence[Callable[[random.Random, bytes], Mutated]] = TEXT_OPERATORS) -> Mutated:
    """1-3 (or `rounds`) text operators in a row."""
    steps = []
    for _ in range(rounds if rounds is not None else rng.choice((1, 1, 2, 3))):
        data, what = pick(rng, operators)(rng, data)
        steps.append(what)
    return data, "; ".join(steps)


def _short(text: str) -> str:
    return repr(text) if len(text) <= 24 else f"{text[:8]!r}...({len(text)} chars)"


# ---------------------------------------------------------------- the loop
def input_rng(target: str, seed: int, index: int) -> random.Random:
    return random.Random(f"{target}:{seed}:{index}")


def reproducer(target: str, seed: int, index: int, what: str) -> str:
    return f"python -m fuzz.{target} --seed {seed} --input {index} --write FILE  # {what}"


def _where(exc: BaseException) -> str:
    """The innermost frame of the traceback: groups escapes by their place."""
    tb = traceback.extract_tb(exc.__traceback__)
    return f"{tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno}" if tb else "?"


def _alarm(_signum, _frame) -> None:
    raise InputTimeout(f"input ran past {HANG_SECONDS:.0f} s")


def fuzz_loop(target: str, seconds: float, seed: int, generate: Callable[[random.Random], Mutated],
              check: Callable[[bytes], str | None], extra: dict | None = None) -> dict:
    """Run generated inputs through `check` for `seconds` (at least one input)."""
    escaped: list[tuple[str, str, str]] = []
    places: set[tuple[str, str]] = set()
    slow: list[tuple[float, str]] = []
    outcomes: dict[str, int] = {}
    guard = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    old = signal.signal(signal.SIGALRM, _alarm) if guard else None
    start = time.monotonic()
    n = 0
    try:
        while n == 0 or time.monotonic() - start < seconds:
            data, what = generate(input_rng(target, seed, n))
            t0 = time.perf_counter()
            try:
                if guard:
                    signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
                try:
                    outcome = check(data)
                finally:
                    if guard:
                        signal.setitimer(signal.ITIMER_REAL, 0)
            except InputTimeout:
                slow.append((round(time.perf_counter() - t0, 1), "TIMED OUT " + reproducer(target, seed, n, what)))
            except KeyboardInterrupt:
                raise
            except BaseException as e:  # noqa: BLE001 - an escape is what we look for
                place = (type(e).__name__, _where(e))
                if place not in places and len(escaped) < MAX_RECORDED:
                    places.add(place)
                    escaped.append((type(e).__name__, f"{str(e)[:300]} [at {place[1]}]",
                                    reproducer(target, seed, n, what)))
            else:
                if outcome:
                    outcomes[outcome] = outcomes.get(outcome, 0) + 1
                took = time.perf_counter() - t0
                if took > SLOW_SECONDS:
                    slow.append((round(took, 1), reproducer(target, seed, n, what)))
            n += 1
    finally:
        if guard:
            signal.signal(signal.SIGALRM, old)
    return {"target": target, "seed": seed, "seconds": round(time.monotonic() - start, 1), "inputs": n,
            "escaped": escaped, "slow": slow, "outcomes": outcomes, **(extra or {})}


def main(target: str, generate_for: Callable[[int, int], Mutated], run: Callable[[float, int], dict],
         argv: list[str] | None = None) -> int:
    """`python -m fuzz.<target>`: a run (--seconds), or one input rebuilt
    (--input N, written with --write FILE)."""
    import argparse
    import json
    import sys
    ap = argparse.ArgumentParser(prog=f"python -m fuzz.{target}")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--input", type=int, help="rebuild input N of the run with --seed")
    ap.add_argument("--write", metavar="FILE", help="where --input writes the input")
    args = ap.parse_args(argv)
    if args.input is not None:
        data, what = generate_for(args.seed, args.input)
        print(what, file=sys.stderr)
        if args.write:
            with open(args.write, "wb") as f:
                f.write(data)
        else:
            sys.stdout.buffer.write(data)
        return 0
    print(json.dumps(run(args.seconds, args.seed), indent=2, default=str))
    return 0
