"""The register allocator (gpudbg.ptx.regalloc) on small hand-written PTX
whose register needs are known: liveness across branches and loops,
64-bit pairs, predicates outside the count, vector operands, constants
that need no register, ABI calls and the .maxnreg cap."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpudbg.ptx.parser import parse
from gpudbg.ptx.regalloc import (ABI_CALL_FLOOR, BASE_REGISTERS, REPORTED_OVERHEAD, function_pressures,
                                 register_count, register_counts, split_operands)

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"


def kernel(body: str, regs: str, params: str = ".param .u64 out", extra: str = "", directives: str = "") -> str:
    return HEAD + extra + f".visible .entry k({params}){directives}\n{{\n{regs}\n{body}\n}}\n"


def count(ptx: str, name: str = "k") -> int:
    return register_count(parse(ptx, "t.ptx"), name)


EMPTY = BASE_REGISTERS + REPORTED_OVERHEAD


def test_empty_kernel_reports_the_reserved_registers():
    assert count(kernel("ret;", "")) == EMPTY == 4       # what ptxas -v reports for `__global__ void k(){}`


def test_parameters_and_literals_take_no_register_until_a_store_needs_them():
    body = ("ld.param.u64 %rd1, [out];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1, 7;\n"
            "st.global.u32 [%rd2], %r1;\nret;")
    # the store needs the address (a pair) and the value in registers
    assert count(kernel(body, ".reg .b32 %r<2>;\n.reg .b64 %rd<3>;")) == EMPTY + 3 - 1


def _independent_loads(n: int, width: str = "u32") -> str:
    """n loads kept apart by barriers, summed only at the end: all n
    values are live together."""
    t = "b64" if width == "u64" else "b32"
    regs = f".reg .b64 %rd<5>;\n.reg .b32 %r<2>;\n.reg .{t} %v<{n}>;\n.reg .{t} %s<{n}>;"
    body = ["ld.param.u64 %rd1, [out];", "cvta.to.global.u64 %rd2, %rd1;", "mov.u32 %r1, %tid.x;",
            "mul.wide.u32 %rd3, %r1, 4;", "add.s64 %rd4, %rd2, %rd3;"]
    for i in range(n):
        if i:
            body.append("bar.sync 0;")          # keeps the loads apart (no hoisting across a barrier)
        body.append(f"ld.global.{width} %v{i}, [%rd4+{8 * i}];")
    acc = "%v0"
    for i in range(1, n):
        body.append(f"add.s{width[1:]} %s{i}, {acc}, %v{i};")
        acc = f"%s{i}"
    body += [f"st.global.{width} [%rd4], {acc};", "ret;"]
    return kernel("\n".join(body), regs)


def test_values_live_together_need_their_own_registers():
    few, many = count(_independent_loads(2)), count(_independent_loads(12))
    assert many - few >= 10          # ten more values alive at once


def test_64_bit_values_take_register_pairs():
    narrow, wide = count(_independent_loads(8)), count(_independent_loads(8, "u64"))
    assert wide - narrow >= 8        # eight 64-bit values hold eight more words than 32-bit ones


def test_predicates_are_not_counted():
    preds = "\n".join(f"setp.eq.u32 %p{i}, %r1, {i};" for i in range(1, 7))
    use = "\n".join(f"@%p{i} st.global.u32 [%rd2], %r1;" for i in range(1, 7))
    body = ("ld.param.u64 %rd1, [out];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1, %tid.x;\n"
            + preds + "\n" + use + "\nret;")
    with_preds = count(kernel(body, ".reg .pred %p<8>;\n.reg .b32 %r<2>;\n.reg .b64 %rd<3>;"))
    assert with_preds <= EMPTY + 4          # tid and the address; six live predicates add nothing


def test_a_value_live_around_a_loop_stays_allocated():
    body = """ld.param.u64 %rd1, [out];
cvta.to.global.u64 %rd2, %rd1;
mov.u32 %r1, %tid.x;
mov.u32 %r2, %ctaid.x;
mov.u32 %r3, 0;
$L_loop:
add.s32 %r3, %r3, %r1;
setp.lt.u32 %p1, %r3, 100;
@%p1 bra $L_loop;
add.s32 %r4, %r3, %r2;
st.global.u32 [%rd2], %r4;
ret;"""
    pressures = function_pressures(parse(kernel(body, ".reg .pred %p<2>;\n.reg .b32 %r<5>;\n.reg .b64 %rd<3>;"),
                                         "t.ptx"))
    assert pressures["k"].pressure >= 3      # tid, ctaid (needed after the loop) and the sum, inside the loop


def test_vector_operands_define_and_use_every_element():
    inst = parse(kernel("ld.param.u64 %rd1, [out];\nld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];\n"
                        "st.global.v4.u32 [%rd1], {%r4, %r3, %r2, %r1};\nret;",
                        ".reg .b32 %r<5>;\n.reg .b64 %rd<2>;"), "t.ptx").functions["k"].instructions
    assert split_operands(inst[1]) == (["%r1", "%r2", "%r3", "%r4"], ["%rd1"])
    assert split_operands(inst[2]) == ([], ["%rd1", "%r4", "%r3", "%r2", "%r1"])


def test_a_call_the_abi_governs_gets_the_abi_floor():
    extra = ".extern .func (.param .b32 r) vprintf(.param .b64 a, .param .b64 b);\n"
    body = """.param .b64 p0;
.param .b64 p1;
.param .b32 rv;
st.param.b64 [p0], 0;
st.param.b64 [p1], 0;
call.uni (rv), vprintf, (p0, p1);
ret;"""
    assert count(kernel(body, "", extra=extra)) == ABI_CALL_FLOOR


def test_an_internal_function_adds_its_registers_to_the_values_live_across_the_call():
    callee = """.func (.param .b32 r) f(.param .b32 a)
{
.reg .b32 %q<12>;
ld.param.b32 %q1, [a];
""" + "\n".join(f"mul.lo.s32 %q{i + 1}, %q{i}, {i};" for i in range(1, 10)) + """
add.s32 %q11, %q1, %q10;
st.param.b32 [r], %q11;
ret;
}
"""
    body = """.param .b32 a0;
.param .b32 rv;
ld.param.u64 %rd1, [out];
cvta.to.global.u64 %rd2, %rd1;
mov.u32 %r1, %tid.x;
st.param.b32 [a0], %r1;
call.uni (rv), f, (a0);
ld.param.b32 %r2, [rv];
add.s32 %r3, %r2, %r1;
st.global.u32 [%rd2], %r3;
ret;"""
    ptx = kernel(body, ".reg .b32 %r<4>;\n.reg .b64 %rd<3>;", extra=callee)
    module = parse(ptx, "t.ptx")
    p = function_pressures(module)
    assert p["k"].calls and p["k"].calls[0][0] == "f" and p["k"].calls[0][1] >= 1    # tid lives across
    assert register_count(module, "k") < ABI_CALL_FLOOR      # module-internal: no ABI floor
    assert register_count(module, "k") >= EMPTY + p["f"].pressure


def test_maxnreg_caps_the_count():
    ptx = _independent_loads(40).replace(".visible .entry k(.param .u64 out)",
                                        ".visible .entry k(.param .u64 out) .maxnreg 32")
    assert count(ptx) == 32
    assert count(_independent_loads(40)) > 32


def test_every_kernel_of_a_module_is_counted():
    ptx = kernel("ret;", "") + ".visible .entry k2()\n{\nret;\n}\n"
    assert register_counts(parse(ptx, "t.ptx")) == {"k": EMPTY, "k2": EMPTY}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=1, max_value=60))
def test_count_bounds_for_any_number_of_live_values(n):
    """n loaded values all live at the final sum: the count covers them
    and never leaves the architecture's 4..255."""
    c = count(_independent_loads(n))
    assert max(EMPTY, n) <= c <= 255


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=1, max_value=40), st.integers(min_value=1, max_value=40))
def test_more_live_values_never_need_fewer_registers(a, b):
    lo, hi = sorted((a, b))
    assert count(_independent_loads(lo)) <= count(_independent_loads(hi))
