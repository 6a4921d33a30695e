"""`info cuda textures`: the program's live texture and surface objects,
each with the descriptor the device samples through (geometry, size,
element format, filter and address modes, read mode, coordinates) and the
device address of its texels, so `x` reads the image itself.

The one idea: a texture handle is only a number in a kernel's registers
(`print tex` shows it); this table is where the number is explained, read
from the simulated texture unit's own handle table, so what it shows is
exactly what `tex` instructions use. It does not decode texel data (`x`
with a format does that).
"""
from __future__ import annotations

from typing import Any

from .frames import safe

_FORMATS = {"UNSIGNED_INT8": "uint8", "UNSIGNED_INT16": "uint16", "UNSIGNED_INT32": "uint32",
            "SIGNED_INT8": "int8", "SIGNED_INT16": "int16", "SIGNED_INT32": "int32", "HALF": "half", "FLOAT": "float"}


def _image_text(image: Any) -> str:
    lv = image.base
    dims = {"1d": f"{lv.width}", "a1d": f"{lv.width}", "3d": f"{lv.width}x{lv.height}x{lv.depth}"}.get(
        image.geometry.value, f"{lv.width}x{lv.height}")
    layers = f", {image.layers} layers" if image.layers else ""
    levels = f", {len(image.levels)} levels" if len(image.levels) > 1 else ""
    fmt = _FORMATS.get(image.fmt.name.replace("CU_AD_FORMAT_", ""), image.fmt.name)
    where = "linear memory" if image.pitch_linear else "array"
    return (f"{image.geometry.value} {dims}{layers}{levels}, {image.channels} x {fmt}, "
            f"{where} at 0x{lv.address:x} (row pitch {lv.row_pitch})")


def _sampling_text(state: Any) -> str:
    modes = "/".join(m.name.lower() for m in state.address_modes)
    read = "normalized float" if state.normalized_float else "element type"
    parts = [f"filter {state.filter_mode.name.lower()}", f"address {modes}", f"read {read}",
             "normalized coords" if state.normalized_coords else "texel coords"]
    if state.srgb:
        parts.append("sRGB")
    if any(state.border_color):
        parts.append("border (" + ", ".join(f"{c:g}" for c in state.border_color) + ")")
    if len(state.image.levels) > 1:
        parts.append(f"mipmap filter {state.mipmap_filter_mode.name.lower()}, lod bias {state.mipmap_level_bias:g}, "
                     f"clamp [{state.min_mipmap_level_clamp:g}, {state.max_mipmap_level_clamp:g}]")
    return ", ".join(parts)


def info_textures(dbg: Any) -> str:
    lines = []
    for dev in dbg.devices():
        objects = safe(dbg.session.images, dev, default=[])
        if not objects:
            continue
        lines.append(f"Texture and surface objects on device {dev}:")
        for handle, state in objects:
            kind = "surface" if not hasattr(state, "filter_mode") else "texture"
            lines.append(f"  {handle:#x}  {kind}  {_image_text(state.image)}")
            if kind == "texture":
                lines.append(f"         {_sampling_text(state)}")
    return "\n".join(lines) if lines else "No texture or surface objects."
