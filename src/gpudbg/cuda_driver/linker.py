"""The driver API's JIT linker: cuLinkCreate(_v2), cuLinkAddData(_v2),
cuLinkAddFile(_v2), cuLinkComplete, cuLinkDestroy, over the engine's
LinkState (driver/linker.py), which parses every input as it is added and
links their IR.

The one idea: cuLinkComplete must hand back bytes ("cubinOut") that a
program copies, caches, and later loads with cuModuleLoadData or
cuLibraryLoadData, possibly after cuLinkDestroy. So the bytes must be a
self-contained image, not a reference to engine state. With one PTX input
(numba's case) the image is that PTX text itself, which every loader of
gpudbg accepts. With several inputs it is a small text container holding
each input (its CUjitInputType, name and bytes, base64); loading one
replays the link on the engine (same inputs, same result) and loads the
linked module. The container starts with CONTAINER_MAGIC and is
NUL-terminated, so it travels through `const void*` like PTX text.

The buffer stays alive until cuLinkDestroy. Link options (log buffers,
wall time) are honoured at cuLinkComplete; options that shape code
(register caps, debug info) are not carried inside the image: pass them
to the load again.
"""
from __future__ import annotations

import base64
import ctypes
import json
from typing import Any

from gpudbg import cabi
from gpudbg.cabi import handles
from gpudbg.cuda_driver._base import HandleKind, R, current_context, entry, fail, handle_of, object_of
from gpudbg.cuda_driver.module import CJitOptions, need
from gpudbg.driver import module as _module
from gpudbg.driver.jit_options import JitOptions, check_input_type
from gpudbg.driver.linker import LinkState
from gpudbg.driver.types import CUjitInputType

__all__ = ["cuLinkCreate_v2", "cuLinkCreate", "cuLinkAddData_v2", "cuLinkAddData", "cuLinkAddFile_v2",
           "cuLinkAddFile", "cuLinkComplete", "cuLinkDestroy"]

INVALID = R.CUDA_ERROR_INVALID_VALUE
CONTAINER_MAGIC = b"//gpudbg-linked-image v1\n"


class CuLinkState:
    """A CUlinkState: the engine's LinkState, the inputs as given (for the
    image), the C options (their outputs are written at complete) and the
    image buffer of the last cuLinkComplete."""

    def __init__(self, state: LinkState, copts: CJitOptions):
        self.state = state
        self.copts = copts
        self.inputs: list[tuple[int, str, bytes]] = []
        self.image: ctypes.Array | None = None


def _state(handle: int) -> CuLinkState:
    st = object_of(HandleKind.LINK_STATE, int(handle))
    if st.state.destroyed:
        raise fail(R.CUDA_ERROR_INVALID_HANDLE, f"CUlinkState 0x{int(handle):x} was destroyed")
    return st


# ------------------------------------------------------------------ the image
def is_container(image: Any) -> bool:
    return isinstance(image, (bytes, bytearray)) and bytes(image[:len(CONTAINER_MAGIC)]) == CONTAINER_MAGIC


def make_image(inputs: list[tuple[int, str, bytes]]) -> bytes:
    """The NUL-terminated bytes cuLinkComplete hands out."""
    if len(inputs) == 1 and inputs[0][0] == CUjitInputType.CU_JIT_INPUT_PTX:
        return inputs[0][2].split(b"\x00", 1)[0] + b"\x00"
    lines = [CONTAINER_MAGIC.decode()]
    for kind, name, data in inputs:
        lines.append(json.dumps([int(kind), name, base64.b64encode(data).decode()]) + "\n")
    return "".join(lines).encode() + b"\x00"


def load_container(ctx: Any, image: bytes, options: JitOptions | None) -> Any:
    """Relink a container's inputs in `ctx` and load the result."""
    state = LinkState(ctx, JitOptions())
    body = bytes(image).split(b"\x00", 1)[0][len(CONTAINER_MAGIC):].decode()
    try:
        entries = [json.loads(line) for line in body.splitlines() if line.strip()]
        inputs = [(CUjitInputType(k), str(n), base64.b64decode(d, validate=True)) for k, n, d in entries]
    except (ValueError, TypeError) as e:
        raise fail(R.CUDA_ERROR_INVALID_IMAGE, f"damaged gpudbg linked image: {e}") from None
    for kind, name, data in inputs:
        state.add_data(kind, data, len(data), name, JitOptions())
    linked = state.complete()
    return _module.load_data(ctx, linked, options=options)


# ------------------------------------------------------------------ the API
@entry
def cuLinkCreate_v2(numOptions: int, options: int, optionValues: int, stateOut: int) -> None:
    """A pending link; its options' outputs (logs, wall time) are written
    into optionValues when cuLinkComplete runs."""
    need(stateOut, "stateOut")
    ctx = current_context()
    copts = CJitOptions(numOptions, options, optionValues)
    st = CuLinkState(LinkState(ctx, copts.jit), copts)
    cabi.store(stateOut, "u64", handle_of(HandleKind.LINK_STATE, st), "stateOut")


cuLinkCreate = cuLinkCreate_v2


def _add(st: CuLinkState, kind: CUjitInputType, data: bytes, name: str, copts: CJitOptions) -> None:
    try:
        st.state.add_data(kind, data, len(data), name, copts.jit)
    finally:
        copts.write_back()
    st.inputs.append((kind, name, data))


@entry
def cuLinkAddData_v2(state: int, type_: int, data: int, size: int, name: int, numOptions: int, options: int,
                     optionValues: int) -> None:
    """Add `size` bytes at `data` (PTX text, a fatbin, an object, a
    library); the input is parsed now, so a bad one fails here."""
    current_context()
    st = _state(state)
    kind = check_input_type(int(type_))
    size = int(size)
    if size <= 0:
        raise fail(INVALID, f"size must be positive, got {size}")
    raw = cabi.read(need(data, "data"), size, "data")
    label = cabi.c_string(name, "name") if name else ""
    _add(st, kind, raw, label, CJitOptions(numOptions, options, optionValues))


cuLinkAddData = cuLinkAddData_v2


@entry
def cuLinkAddFile_v2(state: int, type_: int, path: int, numOptions: int, options: int, optionValues: int) -> None:
    """cuLinkAddData of a file's contents (its path names the input)."""
    current_context()
    st = _state(state)
    kind = check_input_type(int(type_))
    p = cabi.c_string(need(path, "path"), "path")
    _add(st, kind, _module.read_file(p), p, CJitOptions(numOptions, options, optionValues))


cuLinkAddFile = cuLinkAddFile_v2


@entry
def cuLinkComplete(state: int, cubinOut: int, sizeOut: int) -> None:
    """Link; *cubinOut points at the image (see the module docstring),
    valid until cuLinkDestroy; *sizeOut is its size in bytes."""
    need(cubinOut, "cubinOut")
    current_context()
    st = _state(state)
    if not st.inputs:
        raise fail(INVALID, "the link state has no inputs (cuLinkAddData first)")
    try:
        st.state.complete()
    finally:
        st.copts.write_back()
    image = make_image(st.inputs)
    st.image = ctypes.create_string_buffer(image, len(image))
    cabi.store(cubinOut, "u64", ctypes.addressof(st.image), "cubinOut")
    if sizeOut:
        cabi.store(sizeOut, "u64", len(image), "sizeOut")


@entry
def cuLinkDestroy(state: int) -> None:
    """Frees the state and the image cuLinkComplete returned."""
    st = _state(state)
    st.state.destroy()
    handles.forget(HandleKind.LINK_STATE, int(state))
    st.image = None

