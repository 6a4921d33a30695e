"""Texture and surface operands: `[handle, {coords}]`, the independent
form `[tex, sampler, {coords}]`, scalar coordinates, and the errors for
malformed ones; every register inside counts as a use."""
from __future__ import annotations

import pytest

from gpudbg.ptx import PTXParseError, ir, parse

H = ".version 8.0\n.target sm_80\n.address_size 64\n"


def body(text: str) -> list:
    src = H + (".visible .entry k(.param .u64 p)\n{\n\t.reg .b64 %rd<4>;\n\t.reg .f32 %f<9>;\n"
               "\t.reg .b32 %r<5>;\n\t.reg .b16 %rs<5>;\n" + text + "\n}\n")
    fn = parse(src).functions
    f = fn[0] if isinstance(fn, list) else next(iter(fn.values()))
    return [i for i in f.body if isinstance(i, ir.Instruction)]


def test_tex_with_vector_coordinates():
    (i,) = body("\ttex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}];")
    img = i.operands[1]
    assert isinstance(img, ir.ImageOperand)
    assert img.handle == ir.Register("%rd1") and img.sampler is None
    assert img.coords == ir.Vector((ir.Register("%f5"), ir.Register("%f6")))


def test_tex_level_keeps_the_trailing_operand():
    (i,) = body("\ttex.level.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}], %f7;")
    assert i.modifiers[:2] == ("level", "2d") and i.operands[2] == ir.Register("%f7")


def test_independent_mode_names_the_sampler():
    src = H + (".global .texref t;\n.global .samplerref s;\n.visible .entry k()\n{\n\t.reg .f32 %f<9>;\n"
               "\ttex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [t, s, {%f5, %f6}];\n}\n")
    fn = parse(src).functions
    f = fn[0] if isinstance(fn, list) else next(iter(fn.values()))
    img = [i for i in f.body if isinstance(i, ir.Instruction)][0].operands[1]
    assert img.handle == ir.Symbol("t") and img.sampler == ir.Symbol("s")


def test_surface_store_with_scalar_coordinate():
    (i,) = body("\tsust.b.1d.b32.trap [%rd1, %r1], %r2;")
    assert i.operands[0] == ir.ImageOperand(ir.Register("%rd1"), None, ir.Register("%r1"))


def test_undeclared_register_inside_coordinates_is_reported():
    with pytest.raises(PTXParseError, match="%r9 used but not declared"):
        body("\tsuld.b.2d.b32.trap %r1, [%rd1, {%r9, %r2}];")


@pytest.mark.parametrize("text, message", [
    ("\ttex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1+8, {%f5, %f6}];", "starts with a handle"),
    ("\ttex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, %rd2, %rd3, {%f5, %f6}];", "optional sampler"),
    ("\ttex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6};", "after texture/surface operand"),
])
def test_malformed_image_operands(text, message):
    with pytest.raises(PTXParseError, match=message):
        body(text)
