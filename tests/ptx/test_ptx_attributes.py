"""`.attribute(...)` on variables: `.managed` marks a __managed__ variable
(loaded into host-visible managed memory); other attributes are read and
ignored."""
from gpudbg.ptx import parse

PTX = """
.version 8.0
.target sm_80
.address_size 64
.global .attribute(.managed) .align 4 .u32 total;
.global .attribute(.unified(19, 95)) .align 4 .b8 table[16];
.global .align 4 .u32 plain;
"""


def test_managed_attribute_is_recorded():
    m = parse(PTX, "attrs.ptx")
    assert m.globals["total"].managed and m.globals["total"].attributes == ("managed",)
    assert m.globals["table"].attributes == ("unified",) and not m.globals["table"].managed
    assert not m.globals["plain"].managed and m.globals["plain"].attributes == ()
