"""Strided geometry of device arrays: basic indexing, reshape, transpose.

A view is (byte offset from its parent's first element, shape, byte
strides), numpy's own model, so every rule here is numpy's: slices with any
step (negative ones included), integers that drop an axis, Ellipsis and
None (np.newaxis). The functions are pure arithmetic on tuples, never touch
device memory, and are tested against numpy's own views of host arrays.

Deliberately not here: advanced (integer-array or boolean) indexing, which
gathers into new memory rather than making a view; and reshapes that need a
copy (a non-contiguous array reshaped is refused with the reason, as
`ndarray.shape = ...` refuses it).
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

Geometry = tuple[int, tuple[int, ...], tuple[int, ...]]   # (byte offset, shape, strides)


def c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    out, step = [], itemsize
    for d in reversed(shape):
        out.append(step)
        step *= max(d, 1)
    return tuple(reversed(out))


def is_c_contiguous(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> bool:
    """numpy's rule: axes of length 1 may have any stride, an empty array is contiguous."""
    if 0 in shape:
        return True
    step = itemsize
    for d, s in zip(reversed(shape), reversed(strides)):
        if d != 1 and s != step:
            return False
        step *= d
    return True


def _index_int(value: Any) -> int | None:
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _normalize(key: Any, ndim: int) -> list[Any]:
    """The key as a list of int/slice/None, Ellipsis expanded to full slices."""
    items = list(key) if isinstance(key, tuple) else [key]
    for k in items:
        if k is Ellipsis or k is None or isinstance(k, slice) or _index_int(k) is not None:
            continue
        kind = "boolean" if isinstance(k, (bool, np.bool_)) else type(k).__name__
        raise IndexError(f"only integers, slices, Ellipsis and None index a DeviceArray "
                         f"(views); got a {kind} index {k!r} (advanced indexing copies: "
                         f"do it on the host array)")
    if sum(k is Ellipsis for k in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for k in items if k is not None and k is not Ellipsis)
    if used > ndim:
        raise IndexError(f"too many indices: the array is {ndim}-dimensional, but {used} were indexed")
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at:at + 1] = [slice(None)] * (ndim - used)
    else:
        items += [slice(None)] * (ndim - used)
    return items


def index(shape: tuple[int, ...], strides: tuple[int, ...], key: Any) -> Geometry:
    """The view `a[key]` of an array with `shape` and byte `strides`."""
    offset, out_shape, out_strides = 0, [], []
    axis = 0
    for k in _normalize(key, len(shape)):
        if k is None:
            out_shape.append(1)
            out_strides.append(0)
            continue
        n, s = shape[axis], strides[axis]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            length = len(range(start, stop, step))
            if length:
                offset += start * s
            out_shape.append(length)
            out_strides.append(s * step)
        else:
            i = _index_int(k)
            assert i is not None
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            offset += (i % n) * s
        axis += 1
    return offset, tuple(out_shape), tuple(out_strides)


def reshape(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int,
            new_shape: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(shape, strides) of a C-order reshape without a copy (one -1 allowed)."""
    dims = [new_shape] if _index_int(new_shape) is not None else list(new_shape)
    ints = []
    for d in dims:
        i = _index_int(d)
        if i is None or i < -1:
            raise ValueError(f"reshape dimensions must be ints >= -1, got {new_shape!r}")
        ints.append(i)
    size = math.prod(shape)
    if ints.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension (-1)")
    if -1 in ints:
        known = math.prod(d for d in ints if d != -1)
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {tuple(ints)}")
        ints[ints.index(-1)] = size // known
    target = tuple(ints)
    if math.prod(target) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {target}")
    if not is_c_contiguous(shape, strides, itemsize):
        raise ValueError(f"cannot reshape a non-contiguous view {shape} with strides {strides} "
                         f"without copying; call .copy() first")
    return target, c_strides(target, itemsize)


def transpose(shape: tuple[int, ...], strides: tuple[int, ...],
              axes: Any = None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    n = len(shape)
    order = list(range(n))[::-1] if axes is None else [_index_int(a) for a in axes]
    if any(a is None for a in order) or len(order) != n:
        raise ValueError(f"axes {axes!r} do not match an array of {n} dimensions")
    order = [a % n if -n <= a < n else -1 for a in order]   # type: ignore[operator]
    if sorted(order) != list(range(n)):
        raise ValueError(f"axes {axes!r} are not a permutation of 0..{n - 1}")
    return tuple(shape[a] for a in order), tuple(strides[a] for a in order)


def extent(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> tuple[int, int]:
    """(lowest, highest+1) byte offsets the view touches, relative to its first element."""
    if 0 in shape:
        return 0, 0
    lo = sum((d - 1) * s for d, s in zip(shape, strides) if s < 0)
    hi = sum((d - 1) * s for d, s in zip(shape, strides) if s > 0)
    return lo, hi + itemsize


def broadcast_strides(shape: tuple[int, ...], strides: tuple[int, ...],
                      target: tuple[int, ...]) -> tuple[int, ...]:
    """Strides that read an array of `shape` as `target` (numpy broadcasting)."""
    lead = len(target) - len(shape)
    out = [0] * lead
    for d, s, t in zip(shape, strides, target[lead:]):
        out.append(0 if d == 1 and t != 1 else s)
    return tuple(out)


def coalesce(shape: tuple[int, ...], operand_strides: list[tuple[int, ...]]) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """Merge neighbouring axes that every operand walks as one, so a
    contiguous array becomes 1-D (fewer index divisions in the kernels)."""
    dims = [i for i, d in enumerate(shape) if d != 1]
    if not dims:
        return (), [() for _ in operand_strides]
    new_shape = [shape[dims[0]]]
    new_strides = [[s[dims[0]]] for s in operand_strides]
    for i in dims[1:]:
        if all(ns[-1] == s[i] * shape[i] for ns, s in zip(new_strides, operand_strides)):
            new_shape[-1] *= shape[i]
            for ns, s in zip(new_strides, operand_strides):
                ns[-1] = s[i]
        else:
            new_shape.append(shape[i])
            for ns, s in zip(new_strides, operand_strides):
                ns.append(s[i])
    return tuple(new_shape), [tuple(ns) for ns in new_strides]
