"""Argument kinds of the mc* functions: the runtime's one validation layer.

What it is: every parameter of every public mc* function is annotated with
a kind from this module (`Size`, `DevicePtr`, `SrcMemory`, `DstMemory`,
`mcStream_t`, `MemcpyKind`, `Dim3`, `KernelParams`, `Path`, ...; a plain
`int` or `str` annotation means `Int` or `Name`), the way a C signature says
"size_t", "void * (host, written)", "cudaStream_t" or "enum cudaMemcpyKind".
`_api` (runtime/api/_base.py) turns a function's annotations into a `Plan`
once, when the function is defined, and `Plan.bind` checks every argument
before the body runs (a call with every argument by position, such as each
launch, goes through `Plan.fast`, the same checks unrolled into code
generated for the function, each kind's common case written inline): arity, type and range, normalizing what C would have
converted (numpy integers become ints, dims become 3-tuples, argument
sequences become lists). A wrong argument is an McError with the kind's own
code (mcErrorInvalidValue, mcErrorInvalidResourceHandle,
mcErrorInvalidMemcpyDirection, mcErrorInvalidDevice, ...) and a sentence
naming the function, the parameter and what it takes; values are shown
safely (an int of thousands of digits, a huge list or an object whose repr
fails never break the message).

The one idea: a kind is what the C type of the parameter promises, so the
bodies never re-check types and a Python value that C could not even express
(an object array as a destination buffer, a NUL inside a path, an int of
2**64, a string as a stream) never reaches the driver.

What it deliberately does not do: anything that needs state. Whether a
handle is still alive or belongs to the current context, whether a pointer
names an allocation large enough, whether flags combine legally: the driver
knows and checks (it has the objects and the locks).
"""
from __future__ import annotations

import dataclasses
import inspect
import typing
from typing import Annotated, Any, Callable

from gpudbg.driver.event import Event
from gpudbg.driver.graph import Graph, GraphExec
from gpudbg.driver.linker import LinkState
from gpudbg.driver.mempool import ImportedPool, MemPool
from gpudbg.driver.module import Function, Module
from gpudbg.runtime.api._kinds import (
    INT, STREAM, Bad, CallableKind, Dim3Kind, EnumKind, HandleKind, ImageKind, IntKind, IntOrCallableKind,
    KernelParamsKind, KernelSymbolKind, Kind, LaunchExtraKind, LaunchListKind, MemoryKind, NameKind, Opaque,
    PathKind, SequenceKind, StructKind, SymbolKind, show,
)
from gpudbg.runtime.errors import McError, mcError_t
from gpudbg.runtime.jit_types import mcJitInputType
from gpudbg.runtime.types import mcMemcpyKind

E = mcError_t

# ------------------------------------------------------------------ the kinds, as annotations
Int = Annotated[int, INT]
Int32 = Annotated[int, IntKind(-2**31, 2**31 - 1, "a 32-bit int")]
UInt32 = Annotated[int, IntKind(0, 2**32 - 1, "an int >= 0")]
UInt64 = Annotated[int, IntKind(0, 2**64 - 1, "an int >= 0")]
Size = Annotated[int, IntKind(0, 2**64 - 1, "an int >= 0")]
Count = Annotated[int, IntKind(0, 2**31 - 1, "an int >= 0")]
Flags = Annotated[int, IntKind(0, 2**32 - 1, "flags (an int >= 0)")]
Device = Annotated[int, IntKind(-2**31, 2**31 - 1, "a device ordinal (an int)", E.mcErrorInvalidDevice,
                                E.mcErrorInvalidDevice)]
OptionalDevice = Annotated[int | None, IntKind(-2**31, 2**31 - 1, "a device ordinal (an int)",
                                               E.mcErrorInvalidDevice, E.mcErrorInvalidDevice, optional=True)]
DevicePtr = Annotated[int, MemoryKind(False, buffers=False)]
DimX = Annotated[int, IntKind(0, 2**32 - 1, "a dimension (an int >= 0)", E.mcErrorInvalidConfiguration)]
Dim3 = Annotated[Any, Dim3Kind()]

SrcMemory = Annotated[Any, MemoryKind(False)]
DstMemory = Annotated[Any, MemoryKind(True)]
HostBuffer = Annotated[Any, MemoryKind(False, pointers=False)]
HostMemory = Annotated[Any, MemoryKind(False)]     # pinned pointer or registered buffer, looked up
MemcpyKind = Annotated[int, EnumKind(mcMemcpyKind, E.mcErrorInvalidMemcpyDirection)]
# the host operands inside copy structs (None where the struct names device memory instead)
SRC_FIELD, DST_FIELD = MemoryKind(False, optional=True), MemoryKind(True, optional=True)

mcStream_t = Annotated[Any, STREAM]
mcEvent_t = Annotated[Any, HandleKind((Event,), "an event handle (mcEvent_t)")]
mcModule_t = Annotated[Any, HandleKind((Module,), "a module handle (mcModule_t)", E.mcErrorInvalidValue)]
UnloadModule = Annotated[Any, HandleKind((Module,), "a module handle (mcModule_t)", E.mcErrorNotFound)]
mcFunction_t = Annotated[Any, HandleKind((Function,), "a function handle (mcFunction_t)")]
FunctionOrNull = Annotated[Any, HandleKind((Function,), "a function handle (mcFunction_t)",
                                           null_code=E.mcErrorInvalidValue)]
KernelSymbol = Annotated[Any, KernelSymbolKind()]
DeviceFunction = Annotated[Any, HandleKind((Function,), "a function handle (mcFunction_t)",
                                           E.mcErrorInvalidDeviceFunction)]
mcLinkState = Annotated[Any, HandleKind((LinkState,), "a link state (mcLinkState_t)")]
FinishedLinkState = Annotated[Any, HandleKind((LinkState,), "a link state (mcLinkState_t)", E.mcErrorInvalidValue)]
mcMemPool_t = Annotated[Any, HandleKind((MemPool, ImportedPool), "a memory pool (mcMemPool_t)",
                                        E.mcErrorInvalidValue)]
mcGraph_t = Annotated[Any, HandleKind((Graph,), "a graph (mcGraph_t)", E.mcErrorInvalidValue)]
mcGraphExec_t = Annotated[Any, HandleKind((GraphExec,), "an executable graph (mcGraphExec_t)",
                                          E.mcErrorInvalidValue)]

Callback = Annotated[Callable, CallableKind()]
SharedMemOfBlockSize = Annotated[Any, IntOrCallableKind()]
UserData = Annotated[Any, Opaque()]
Anything = Annotated[Any, Opaque()]   # a value the body interprets itself (documented there)
KernelParams = Annotated[Any, KernelParamsKind(optional=False)]
OptionalKernelParams = Annotated[Any, KernelParamsKind(optional=True)]
Path = Annotated[Any, PathKind()]
LaunchExtra = Annotated[Any, LaunchExtraKind()]
LaunchList = Annotated[Any, LaunchListKind()]
Name = Annotated[str, NameKind()]
Symbol = Annotated[Any, SymbolKind()]
Image = Annotated[Any, ImageKind()]
OptionalSequence = Annotated[Any, SequenceKind(optional=True)]
JitOptionCodes = Annotated[Any, SequenceKind("a sequence of mcJitOption codes", optional=True, max_len=1 << 10)]
JitOptionValues = Annotated[Any, SequenceKind("a sequence of option values (a list receives the outputs)",
                                              optional=True, max_len=1 << 10, keep=True)]
JitInputType = Annotated[int, EnumKind(mcJitInputType)]
Devices = Annotated[Any, SequenceKind("a sequence of device ordinals", optional=True, max_len=1 << 16,
                                      elements=IntKind(-2**31, 2**31 - 1, "a device ordinal (an int)"))]


def Enum(cls: type, code: mcError_t = E.mcErrorInvalidValue) -> Any:   # noqa: N802 (reads as a type)
    """The annotation of a parameter that is a member of enum `cls`."""
    return Annotated[int, EnumKind(cls, code)]


def Struct(*classes: type, code: mcError_t = E.mcErrorInvalidValue, optional: bool = False,
           **fields: Kind) -> Any:   # noqa: N802
    """The annotation of a parameter that is one of the dataclasses
    `classes`; keyword arguments give kinds of fields by dotted name (with
    '__' for '.')."""
    pairs = tuple((k.replace("__", "."), v) for k, v in fields.items())
    return Annotated[Any, StructKind(classes, pairs, code, optional)]


def Seq(need: str, elements: Kind | None = None, optional: bool = False,  # noqa: N802
        single: type | None = None) -> Any:
    return Annotated[Any, SequenceKind(need, optional, 1 << 16, elements, single)]


# ------------------------------------------------------------------ plans
_PLAIN = {int: INT, "int": INT, str: NameKind(), "str": NameKind(), Any: Opaque(), "Any": Opaque()}


def kind_of(annotation: Any) -> Kind:
    """The Kind an evaluated annotation stands for."""
    if typing.get_origin(annotation) is Annotated:
        for meta in annotation.__metadata__:
            if isinstance(meta, Kind):
                return meta
    if annotation in _PLAIN:
        return _PLAIN[annotation]
    raise TypeError(f"annotation {annotation!r} is not an argument kind of gpudbg.runtime.api._args")


@dataclasses.dataclass
class Param:
    name: str
    kind: Kind
    default: Any
    keyword_only: bool


_EMPTY = inspect.Parameter.empty


class Plan:
    """How to bind and check one function's arguments."""

    def __init__(self, fn: Callable) -> None:
        self.name = fn.__name__
        sig = inspect.signature(fn, eval_str=False)
        namespace = dict(vars(typing))
        namespace.update(fn.__globals__)
        self.params: list[Param] = []
        for p in sig.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TypeError(f"{self.name}: *args/**kwargs cannot be validated")
            ann = p.annotation
            if isinstance(ann, str):
                ann = eval(ann, namespace)   # noqa: S307 (the module's own annotation text)
            self.params.append(Param(p.name, kind_of(ann), p.default, p.kind is p.KEYWORD_ONLY))
        self.positional = [p for p in self.params if not p.keyword_only]
        self.by_name = {p.name: p for p in self.params}
        self.usage = f"{self.name}({', '.join(p.name for p in self.params)})"
        self.checks = tuple(p.kind.check for p in self.params)
        self.fast = _unrolled(self.checks) if len(self.positional) == len(self.params) else None

    def bind(self, args: tuple, kwargs: dict) -> list:
        """The checked argument values, in parameter order (keyword-only
        ones after the positional ones)."""
        if not kwargs and len(args) == len(self.checks):
            # every argument given by position (each launch): the checks
            # alone; a refusal is bound again below for its exact message
            try:
                return [check(v) for check, v in zip(self.checks, args)]
            except Exception:
                pass
        if len(args) > len(self.positional):
            raise McError(E.mcErrorInvalidValue, f"{self.usage} takes {len(self.positional)} positional "
                                                 f"arguments, {len(args)} were given")
        values = list(args)
        if len(values) < len(self.params):
            values += [_EMPTY] * (len(self.params) - len(values))
        for key, v in kwargs.items():
            p = self.by_name.get(key)
            if p is None:
                raise McError(E.mcErrorInvalidValue, f"{self.usage} has no parameter {show(key)}")
            i = self.params.index(p)
            if values[i] is not _EMPTY:
                raise McError(E.mcErrorInvalidValue, f"{self.usage}: {key} given twice")
            values[i] = v
        for i, p in enumerate(self.params):
            if values[i] is _EMPTY:
                if p.default is _EMPTY:
                    raise McError(E.mcErrorInvalidValue, f"{self.usage}: missing argument {p.name}")
                values[i] = p.default
                continue
            try:
                values[i] = p.kind.check(values[i])
            except Bad as bad:
                raise McError(bad.code, f"{p.name} must be {bad.need}, got {show(values[i])}") from None
            except Exception as e:   # the value's own methods (__len__, __iter__, buffer export) failed
                raise McError(E.mcErrorInvalidValue, f"{p.name} ({show(values[i])}) cannot be read as "
                                                     f"{p.kind.need}: {type(e).__name__}") from None
        return values

    def call(self, fn: Callable, args: tuple, kwargs: dict) -> Any:
        if not kwargs and self.fast is not None and len(args) == len(self.checks):
            out = self.fast(fn, args)       # every argument by position (each launch)
            if out is not REBIND:
                return out
        return self.call_bound(fn, args, kwargs)

    def call_bound(self, fn: Callable, args: tuple, kwargs: dict) -> Any:
        """call, through bind (the path whose refusals name the argument)."""
        values = self.bind(args, kwargs)
        n = len(self.positional)
        if n == len(self.params):
            return fn(*values)
        return fn(*values[:n], **{p.name: v for p, v in zip(self.params[n:], values[n:])})


REBIND = object()      # an unrolled check refused a value: bind again for the exact message


def _kind_of_check(check: Callable) -> Kind:
    kind = getattr(check, "__self__", None)
    return kind if isinstance(kind, Kind) else Kind()     # a plain function: called, never inlined


def _unrolled(checks: tuple) -> Callable:
    """fast(fn, args): fn called with each positional argument checked by
    its kind, unrolled for this arity (generated once per function, as
    dataclasses generates __init__), or REBIND when a check refused one,
    before fn ran: Plan.bind then binds again and names the argument. An
    exception out of fn itself propagates as it is."""
    names = [f"a{i}" for i in range(len(checks))]
    joined = ", ".join(names)
    if not names:
        return lambda fn, args: fn()    # the caller checked there are no arguments
    namespace: dict[str, Any] = {f"c{i}": c for i, c in enumerate(checks)}
    namespace["REBIND"] = REBIND
    # each kind writes its common case inline (Kind.inline), the call otherwise
    lines = [_kind_of_check(c).inline(a, f"c{i}", namespace) for i, (a, c) in enumerate(zip(names, checks))]
    src = (f"def fast(fn, args):\n"
           f"    {joined}, = args\n"
           f"    try:\n"
           + "".join(f"        {a} = {line}\n" for a, line in zip(names, lines))
           + "    except Exception:\n"
           "        return REBIND\n"
           f"    return fn({joined})\n")
    exec(src, namespace)    # noqa: S102 (text built above from names only)
    return namespace["fast"]


__all__ = ["Plan", "REBIND", "Kind", "kind_of", "show", "Bad"]
