"""The cudbg facade: seed 000's CUDBGAPI_st over a gpudbg.debug.Session.

``cudbgGetAPI(major, minor, rev)`` returns ``(CUDBGResult, api)``; every
method of ``api`` is one latest entry of CUDBGAPI_st, named and ordered as
in the header, and returns ``(CUDBGResult, *outputs)``: the C out-parameters
in declaration order (buffers the C caller would provide come back as
bytes or tuples; their size inputs stay inputs). On failure every output is
None and getErrorStringEx tells why.

The one idea: the class is assembled from api_table, not written by hand.
For each table entry the assembler takes the implementation of that name
from the mixins (facade_state, facade_regs, facade_memory, facade_control) and wraps it
once: bind and convert the inputs by their C types (facade_args), refuse
calls before initialize and from inside the event callback, translate the
Session's DebugError/BackendError codes into CUDBGResult, check the number
of outputs against the table and record the last error. An entry without
an implementation gets a method that returns the code UNSUPPORTED gives it,
with the reason as its docstring, so the table and the class cannot drift
apart and ``coverage`` can count what is real.

The facade holds no debugger state of its own beyond what the API shape
needs: the Session, the last error message, the event callback and its
queues, and handles (breakpoints set by address, ELF images by handle).
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from gpudbg.debug.backend import BackendError
from gpudbg.debug.cudbg.api_table import LATEST_ENTRIES, ApiEntry
from gpudbg.debug.cudbg.enums import CUDBGResult
from gpudbg.debug.cudbg.errors import LastError, cudbgGetErrorString
from gpudbg.debug.cudbg.facade_args import ArgumentError, bind, converter
from gpudbg.debug.cudbg.facade_control import ControlEntries
from gpudbg.debug.cudbg.facade_memory import MemoryEntries
from gpudbg.debug.cudbg.facade_regs import RegisterEntries
from gpudbg.debug.cudbg.facade_state import CudbgError, StateEntries

__all__ = ["CUDBGAPI", "CudbgError", "UNSUPPORTED", "cudbgGetAPI", "cudbgGetAPIVersion", "cudbgGetErrorString",
           "implemented_entries", "result_for_code", "CUDBG_API_VERSION_MAJOR", "CUDBG_API_VERSION_MINOR",
           "CUDBG_API_VERSION_REVISION"]

R = CUDBGResult

CUDBG_API_VERSION_MAJOR = 13
CUDBG_API_VERSION_MINOR = 0
CUDBG_API_VERSION_REVISION = 163

# Entries with no implementation: the code each returns and why (the method's docstring).
UNSUPPORTED: dict[str, tuple[CUDBGResult, str]] = {
    "readTextureMemory": (R.CUDBG_ERROR_NOT_SUPPORTED,
                          "The header: no longer supported since CUDA 12.0 (and PTX textures are not simulated)."),
    "readTextureMemoryBindless": (R.CUDBG_ERROR_NOT_SUPPORTED,
                                  "The header: no longer supported since CUDA 12.0."),
    "memcheckReadErrorAddress": (R.CUDBG_ERROR_NOT_SUPPORTED,
                                 "The header documents only NOT_SUPPORTED (integrated memcheck is gone); "
                                 "the faulting address is in the exception's PAGE_FAULT details instead."),
    "getNextSyncEvent55": (R.CUDBG_ERROR_NOT_SUPPORTED,
                           "CUDBGEvent55 carries host pointers to ELF images; use "
                           "getNextEvent(CUDBG_EVENT_QUEUE_TYPE_SYNC), which replaces it."),
    "getNextAsyncEvent55": (R.CUDBG_ERROR_NOT_SUPPORTED,
                            "CUDBGEvent55 carries host pointers to ELF images; use "
                            "getNextEvent(CUDBG_EVENT_QUEUE_TYPE_ASYNC), which replaces it."),
    "readCCRegister": (R.CUDBG_ERROR_NOT_SUPPORTED,
                       "The PTX machine has no condition-code register (add.cc's carry is not "
                       "architectural state the Session exposes)."),
    "writeCCRegister": (R.CUDBG_ERROR_NOT_SUPPORTED,
                        "The PTX machine has no condition-code register."),
    "getConstBankAddress": (R.CUDBG_ERROR_NOT_SUPPORTED,
                            "The Session does not expose constant banks (PTX .const is addressed directly)."),
    "executeInternalCommand": (R.CUDBG_ERROR_NOT_SUPPORTED,
                               "The header: not available in public driver builds."),
    "getCbuWarpState": (R.CUDBG_ERROR_NOT_SUPPORTED,
                        "The simulator has no convergence barrier unit; reconvergence is by scheduling."),
    "consumeCudaLogs": (R.CUDBG_ERROR_NOT_SUPPORTED,
                        "The driver writes no CUDA error log (CUDBG_DEBUGGER_CAPABILITY_ENABLE_CUDA_LOGS "
                        "is not offered)."),
    "readCPUCallStack": (R.CUDBG_ERROR_NOT_SUPPORTED,
                         "Host call stacks of launches are not captured (the capability is not offered)."),
}

# Entries callable before initialize (the header says so for the capabilities query).
NO_INIT_NEEDED = frozenset({"initialize", "getSupportedDebuggerCapabilities"})
# Entries whose call does not replace the last error message (reading it must not clear it).
KEEPS_LAST_ERROR = frozenset({"getErrorStringEx"})

# Session/backend codes whose CUDBGResult name differs from CUDBG_ERROR_<code>.
CODE_ALIASES: dict[str, CUDBGResult] = {
    "RUNNING": R.CUDBG_ERROR_RUNNING_DEVICE,
    "SUSPENDED": R.CUDBG_ERROR_SUSPENDED_DEVICE,
    "NOT_STOPPED": R.CUDBG_ERROR_RUNNING_DEVICE,
    "BAD_ADDRESS": R.CUDBG_ERROR_MEMORY_MAPPING_FAILED,
    "UNMAPPED": R.CUDBG_ERROR_MEMORY_MAPPING_FAILED,
    "OUT_OF_BOUNDS": R.CUDBG_ERROR_INVALID_MEMORY_ACCESS,
    "INVALID_REGISTER": R.CUDBG_ERROR_INVALID_ARGS,
    "INVALID_PREDICATE": R.CUDBG_ERROR_INVALID_ARGS,
    "INVALID_SPACE": R.CUDBG_ERROR_INVALID_MEMORY_SEGMENT,
    "CANNOT_EXECUTE": R.CUDBG_ERROR_NOT_SUPPORTED,
    "WARP_EXCEPTION": R.CUDBG_ERROR_WARP_RESUME_NOT_POSSIBLE,
    "DETACHED": R.CUDBG_ERROR_UNINITIALIZED,
}


def result_for_code(code: str) -> CUDBGResult:
    """The CUDBGResult of a DebugError/BackendError code ("INVALID_WARP", "RUNNING", ...)."""
    name = str(code).upper()
    if name.startswith("CUDBG_ERROR_"):
        name = name[len("CUDBG_ERROR_"):]
    if name in CODE_ALIASES:
        return CODE_ALIASES[name]
    try:
        return R["CUDBG_ERROR_" + name]
    except KeyError:
        return R.CUDBG_ERROR_UNKNOWN


def _session_error_types() -> tuple[type[BaseException], ...]:
    """BackendError, and the Session's DebugError once gpudbg.debug.session exists."""
    try:
        from gpudbg.debug.session import DebugError
    except ImportError:
        return (BackendError,)
    return (BackendError, DebugError)


class _Base:
    """Lifecycle and plumbing the entry mixins rely on."""

    def __init__(self, session: Any = None, *, session_factory: Callable[[], Any] | None = None) -> None:
        self._given_session = session
        self._session_factory = session_factory
        self._session: Any = None
        self._owns_session = False
        self._last_error = LastError()
        self._init_state()

    @property
    def session(self) -> Any:
        """The Session under the facade (None before initialize)."""
        return self._session

    def _attach(self) -> Any:
        if self._given_session is not None:
            return self._given_session
        if self._session_factory is not None:
            self._owns_session = True
            return self._session_factory()
        from gpudbg.debug.session import Session
        self._owns_session = True
        return Session.attach()

    # ----------------------------------------------------------- the call wrapper
    def _call(self, entry: ApiEntry, impl: Callable[..., tuple], args: tuple, kwargs: dict) -> tuple:
        nout = len(entry.outputs)
        failed = (None,) * nout
        try:
            if self._in_callback():
                raise CudbgError(R.CUDBG_ERROR_RECURSIVE_API_CALL,
                                 "called from inside the new-event callback")
            values = bind(entry, args, kwargs)
            if self._session is None and entry.name not in NO_INIT_NEEDED:
                raise CudbgError(R.CUDBG_ERROR_UNINITIALIZED, "call initialize() first")
            outputs = impl(self, *values)
            if not isinstance(outputs, tuple) or len(outputs) != nout:
                raise CudbgError(R.CUDBG_ERROR_INTERNAL,
                                 f"implementation returned {outputs!r}, the table has {nout} output(s)")
            result, detail = R.CUDBG_SUCCESS, ""
        except CudbgError as e:
            result, detail, outputs = e.result, e.detail, failed + ()
            if e.outputs is not None:
                outputs = e.outputs
        except ArgumentError as e:
            result, detail, outputs = R.CUDBG_ERROR_INVALID_ARGS, str(e), failed
        except _session_error_types() as e:
            result, detail, outputs = result_for_code(e.code), getattr(e, "message", str(e)), failed
        except Exception as e:  # a C API cannot raise: anything else is the API's internal error
            result, detail, outputs = R.CUDBG_ERROR_INTERNAL, f"{type(e).__name__}: {e}", failed
        if entry.name not in KEEPS_LAST_ERROR:
            self._last_error.record(entry.name, result, detail)
        return (result, *outputs)


def _unsupported_impl(entry: ApiEntry, code: CUDBGResult, reason: str) -> Callable[..., tuple]:
    def impl(self: Any, *values: Any) -> tuple:
        raise CudbgError(code, reason)
    return impl


def _method(entry: ApiEntry, impl: Callable[..., tuple], doc: str) -> Callable[..., tuple]:
    def method(self: _Base, *args: Any, **kwargs: Any) -> tuple:
        return self._call(entry, impl, args, kwargs)
    method.__name__ = entry.name
    method.__qualname__ = f"CUDBGAPI.{entry.name}"
    method.__doc__ = f"{entry.c_signature()}\n\n{inspect.cleandoc(doc)}" if doc else entry.c_signature()
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += [inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in entry.inputs]
    method.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    method.entry = entry  # type: ignore[attr-defined]
    method.implemented = impl is not None and entry.name not in UNSUPPORTED  # type: ignore[attr-defined]
    return method


def _check_impl(entry: ApiEntry, impl: Callable[..., tuple]) -> None:
    """An implementation takes exactly the table's inputs, in order, under their C names."""
    names = list(inspect.signature(impl).parameters)[1:]
    expected = [p.name for p in entry.inputs]
    if names != expected:
        raise TypeError(f"{entry.name}: implementation inputs {names} differ from the table's {expected}")
    for p in entry.inputs:
        converter(p)


def _assemble() -> type:
    mixins = (StateEntries, RegisterEntries, MemoryEntries, ControlEntries)
    namespace: dict[str, Any] = {"__doc__": CUDBGAPI_DOC, "__module__": __name__}
    table_names = {e.name for e in LATEST_ENTRIES}
    for mixin in mixins:
        for name, value in vars(mixin).items():
            if callable(value) and not name.startswith("_") and name not in table_names:
                raise TypeError(f"{mixin.__name__}.{name} is not a latest CUDBGAPI_st entry")
    for entry in LATEST_ENTRIES:
        impl = next((vars(m)[entry.name] for m in mixins if entry.name in vars(m)), None)
        if impl is not None and entry.name in UNSUPPORTED:
            raise TypeError(f"{entry.name} is both implemented and listed as unsupported")
        if impl is None:
            if entry.name not in UNSUPPORTED:
                raise TypeError(f"{entry.name} has neither an implementation nor an unsupported reason")
            code, reason = UNSUPPORTED[entry.name]
            namespace[entry.name] = _method(entry, _unsupported_impl(entry, code, reason),
                                            f"Returns {code.name}: {reason}")
            namespace[entry.name].implemented = False
            continue
        _check_impl(entry, impl)
        namespace[entry.name] = _method(entry, impl, impl.__doc__ or "")
    return type("CUDBGAPI", (_Base, *mixins), namespace)


CUDBGAPI_DOC = """One CUDBGAPI_st table bound to a Session (see the module docstring).

Construct it through cudbgGetAPI. ``session`` binds an existing Session
(for instance one over a coredump backend); otherwise initialize() attaches
to this process's GPUs with Session.attach() and finalize() detaches."""

CUDBGAPI = _assemble()


def implemented_entries() -> list[str]:
    """Names of the latest entries with a real implementation, in table order."""
    return [e.name for e in LATEST_ENTRIES if getattr(CUDBGAPI, e.name).implemented]


def cudbgGetAPI(major: int, minor: int, rev: int, *, session: Any = None,
                session_factory: Callable[[], Any] | None = None) -> tuple[CUDBGResult, Any]:
    """``(CUDBGResult, api)`` for a client built against API version major.minor.rev.

    The major version must be ours and (minor, rev) not newer than ours,
    since a client compiled against a newer header may call entries or use
    struct fields this table lacks: otherwise CUDBG_ERROR_INCOMPATIBLE_API.
    Each call returns a fresh API object with its own initialize state."""
    for name, v in (("major", major), ("minor", minor), ("rev", rev)):
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 0xFFFFFFFF:
            return R.CUDBG_ERROR_INVALID_ARGS, None
    if major != CUDBG_API_VERSION_MAJOR or (minor, rev) > (CUDBG_API_VERSION_MINOR, CUDBG_API_VERSION_REVISION):
        return R.CUDBG_ERROR_INCOMPATIBLE_API, None
    return R.CUDBG_SUCCESS, CUDBGAPI(session, session_factory=session_factory)


def cudbgGetAPIVersion() -> tuple[CUDBGResult, int, int, int]:
    """``(CUDBG_SUCCESS, major, minor, rev)`` of the API this facade implements."""
    return R.CUDBG_SUCCESS, CUDBG_API_VERSION_MAJOR, CUDBG_API_VERSION_MINOR, CUDBG_API_VERSION_REVISION
