"""The 12 ``zetDebug*`` functions of seed 001 as data: names, versions, parameters.

Each parameter carries the spec's annotation ("[in]", "[out]",
"[in,out][optional][range(0, *pCount)]", "[in][release]") decoded into a
direction plus the optional/release/range qualifiers, so the facade can
derive its Python shape from one table: inputs are the parameters it takes,
outputs are what it returns after the ``ze_result_t`` (the mc* convention,
out-parameters become outputs). ``c_signature`` rebuilds the declaration a
test finds verbatim in the seed.

One deliberate departure from the annotations: ``zetDebugWriteRegisters``
marks ``pRegisterValues`` "[in,out]", but writing only consumes it, so the
facade does not return it (``FACADE_INPUT_ONLY``). Handles are opaque
inputs; the session handle ``phDebug`` is the one handle produced.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from gpudbg.debug.signature import IN, INOUT, OUT, Direction  # noqa: F401  (part of this table's vocabulary)


@dataclass(frozen=True)
class Param:
    """One C parameter; ``type`` is normalized as ``base *`` (``const zet_debug_event_t *``)."""

    type: str
    name: str
    direction: Direction
    optional: bool = False
    release: bool = False
    range: str | None = None  # "0, *pCount": the elements of an array argument

    @property
    def is_pointer(self) -> bool:
        return self.type.endswith("*")

    @property
    def annotation(self) -> str:
        """The spec's bracketed annotation, rebuilt."""
        out = f"[{self.direction.annotation}]"
        if self.release:
            out += "[release]"
        if self.optional:
            out += "[optional]"
        if self.range is not None:
            out += f"[range({self.range})]"
        return out


@dataclass(frozen=True)
class ZetFunction:
    name: str
    since: str
    params: tuple[Param, ...]
    summary: str

    @property
    def inputs(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.direction is not OUT)

    @property
    def outputs(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params
                     if p.direction is not IN and (self.name, p.name) not in FACADE_INPUT_ONLY)

    def c_signature(self) -> str:
        args = ", ".join(f"{p.type}{p.name}" if p.is_pointer else f"{p.type} {p.name}" for p in self.params)
        return f"ZE_APIEXPORT ze_result_t ZE_APICALL {self.name}({args})"


def _p(decl: str, annotation: str) -> Param:
    """``'const zet_debug_config_t *config'``, ``'[in]'`` -> Param."""
    m = re.fullmatch(r"(.*?)\s*(\**)\s*(\w+)", decl)
    if m is None:
        raise ValueError(f"unparsed parameter {decl!r}")
    ctype = m.group(1) + (" " + m.group(2) if m.group(2) else "")
    tags = re.findall(r"\[([^\]]*)\]", annotation)
    if not tags or "".join(f"[{t}]" for t in tags) != annotation:
        raise ValueError(f"unparsed annotation {annotation!r} of {decl!r}")
    direction = Direction.from_annotation(tags[0])
    rng = next((t[6:-1] for t in tags[1:] if t.startswith("range(")), None)
    unknown = [t for t in tags[1:] if t not in ("optional", "release") and not t.startswith("range(")]
    if unknown:
        raise ValueError(f"unknown qualifier {unknown} in {annotation!r}")
    return Param(ctype, m.group(3), direction, "optional" in tags, "release" in tags, rng)


_THREAD = ("ze_device_thread_t thread", "[in]")
_SESSION = ("zet_debug_session_handle_t hDebug", "[in]")
_REGS = (_SESSION, _THREAD, ("uint32_t type", "[in]"), ("uint32_t start", "[in]"), ("uint32_t count", "[in]"),
         ("void *pRegisterValues", "[in,out][optional][range(0, count)]"))
_PROPS = (("uint32_t *pCount", "[in,out]"),
          ("zet_debug_regset_properties_t *pRegisterSetProperties", "[in,out][optional][range(0, *pCount)]"))

_TABLE = (
    ("zetDebugAttach", "1.0", "Attach to a device.",
     (("zet_device_handle_t hDevice", "[in]"), ("const zet_debug_config_t *config", "[in]"),
      ("zet_debug_session_handle_t *phDebug", "[out]"))),
    ("zetDebugDetach", "1.0", "Close a debug session.",
     (("zet_debug_session_handle_t hDebug", "[in][release]"),)),
    ("zetDebugReadEvent", "1.0", "Read the topmost debug event.",
     (_SESSION, ("uint64_t timeout", "[in]"), ("zet_debug_event_t *event", "[in,out]"))),
    ("zetDebugAcknowledgeEvent", "1.0", "Acknowledge a debug event.",
     (_SESSION, ("const zet_debug_event_t *event", "[in]"))),
    ("zetDebugInterrupt", "1.0", "Interrupt device threads.", (_SESSION, _THREAD)),
    ("zetDebugResume", "1.0", "Resume device threads.", (_SESSION, _THREAD)),
    ("zetDebugReadMemory", "1.0", "Read memory.",
     (_SESSION, _THREAD, ("const zet_debug_memory_space_desc_t *desc", "[in]"), ("size_t size", "[in]"),
      ("void *buffer", "[in,out]"))),
    ("zetDebugWriteMemory", "1.0", "Write memory.",
     (_SESSION, _THREAD, ("const zet_debug_memory_space_desc_t *desc", "[in]"), ("size_t size", "[in]"),
      ("const void *buffer", "[in]"))),
    ("zetDebugGetRegisterSetProperties", "1.0", "Retrieves debug register set properties.",
     (("zet_device_handle_t hDevice", "[in]"), *_PROPS)),
    ("zetDebugReadRegisters", "1.0", "Read register state.", _REGS),
    ("zetDebugWriteRegisters", "1.0", "Write register state.", _REGS),
    ("zetDebugGetThreadRegisterSetProperties", "1.5", "Retrieves debug register set properties for a given thread.",
     (_SESSION, _THREAD, *_PROPS)),
)

FUNCTIONS: tuple[ZetFunction, ...] = tuple(
    ZetFunction(name, since, tuple(_p(d, a) for d, a in params), summary) for name, since, summary, params in _TABLE)
FUNCTIONS_BY_NAME: dict[str, ZetFunction] = {f.name: f for f in FUNCTIONS}

# Parameters annotated [in,out] that the facade only consumes (see the module docstring).
FACADE_INPUT_ONLY: frozenset[tuple[str, str]] = frozenset({("zetDebugWriteRegisters", "pRegisterValues")})


def function(name: str) -> ZetFunction:
    """The table entry for ``name``, with a pointed error for names outside seed 001."""
    try:
        return FUNCTIONS_BY_NAME[name]
    except KeyError:
        close = [f.name for f in FUNCTIONS if f.name.lower() == name.lower()]
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise KeyError(f"no zetDebug function named {name!r} in seed 001{hint}") from None
