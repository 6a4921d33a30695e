"""Seed 002 §2.12.3.4-8: mcLink* as a PTX-level linker (driver/linker.py):
extern resolution across NVRTC -rdc inputs, strong/weak/internal symbol
rules, line info that survives linking, and every error code."""
import numpy as np
import pytest

from gpudbg import compile_ptx
from gpudbg.driver import fatbin as FB
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E

S = E.mcSuccess
PTX_IN, FAT_IN = mc.mcJitInputType.mcJitInputPtx, mc.mcJitInputType.mcJitInputFatBinary

A_SRC = r'''
extern __device__ int scale;
extern __device__ int helper(int x);
extern "C" __global__ void kern(int *out) {
    int i = threadIdx.x;
    out[i] = helper(i) + scale;
}
'''
B_SRC = r'''
__device__ int scale = 100;
__device__ int helper(int x) {
    return x * 3;
}
'''

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"
KERNEL = HEAD + """.extern .func (.param .b32 r) getv ();
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [p];
    cvta.to.global.u64 %rd2, %rd1;
    {
    .param .b32 rv;
    call.uni (rv), getv, ();
    ld.param.b32 %r1, [rv];
    }
    st.global.u32 [%rd2], %r1;
    ret;
}
"""


def getv(linkage: str, value: int) -> str:
    return HEAD + f"{linkage} .func (.param .b32 r) getv ()\n{{\n    st.param.b32 [r], {value};\n    ret;\n}}\n"


@pytest.fixture(scope="module")
def rdc():
    return (compile_ptx(A_SRC, ["-rdc=true"], name="a.cu"), compile_ptx(B_SRC, ["-rdc=true"], name="b.cu"))


def link(*inputs, options=()):
    vals = [v for _, v in options]
    err, st = mc.mcLinkCreate(len(options), [o for o, _ in options], vals)
    assert err == S
    for i, (name, text) in enumerate(inputs):
        kind = FAT_IN if isinstance(text, bytes) else PTX_IN
        assert mc.mcLinkAddData(st, kind, text, len(text), name) == (S,), mc.last_error_message()
    return st, vals


def run(module, kernel, n):
    err, f = mc.mcModuleGetFunction(module, kernel)
    assert err == S
    err, d = mc.mcMalloc(4 * n)
    assert mc.mcLaunchKernel(f, 1, n, [d]) == (S,)
    out = np.zeros(n, np.int32)
    assert mc.mcMemcpy(out, d, 4 * n, mc.mcMemcpyKind.mcMemcpyDeviceToHost) == (S,)
    return out


def test_rdc_kernel_calls_function_and_reads_variable_of_other_input(real, rdc):
    a, b = rdc
    assert ".extern .func" in a and ".extern .global" in a
    assert mc.mcModuleLoadData(a) == (E.mcErrorInvalidKernelFile, None)   # alone it cannot load
    info = bytearray(4096)
    st, vals = link(("a.ptx", a), ("b.ptx", b), options=[(mc.mcJitOption.mcJitInfoLogBuffer, info),
                                                          (mc.mcJitOption.mcJitWallTime, 0.0)])
    err, image, size = mc.mcLinkComplete(st)
    assert err == S and size == len(a) + len(b)
    assert "scale: resolved to the definition in b.ptx" in info.decode()
    assert vals[1] > 0
    err, m = mc.mcModuleLoadData(image)
    assert err == S
    assert run(m, "kern", 32).tolist() == [3 * i + 100 for i in range(32)]
    err, ptr, nbytes = mc.mcModuleGetGlobal(m, "scale")
    assert err == S and nbytes == 4
    # each input's line table survives: helper's code maps to b.cu, kern's to a.cu
    lm = image.module
    by_file = {lm.functions[n].name: {lm.files[i.line_info.file_index] for i in lm.functions[n].instructions
                                      if i.line_info} for n in ("kern", "_Z6helperi")}
    assert by_file == {"kern": {"a.cu"}, "_Z6helperi": {"b.cu"}}
    helper_lines = {i.line_info.line for i in lm.functions["_Z6helperi"].instructions if i.line_info}
    assert helper_lines <= {3, 4, 5} and 4 in helper_lines
    assert mc.mcLinkDestroy(st) == (S,)
    assert mc.mcModuleLoadData(image) == (E.mcErrorInvalidImage, None)
    assert mc.mcLinkDestroy(st) == (E.mcErrorInvalidValue,)


def test_strong_definition_overrides_weak(real):
    st, _ = link(("k.ptx", KERNEL), ("weak.ptx", getv(".weak", 1)), ("strong.ptx", getv(".visible", 2)))
    err, image, _ = mc.mcLinkComplete(st)
    assert err == S
    assert run(mc.mcModuleLoadData(image)[1], "k", 1).tolist() == [2]
    st, _ = link(("k.ptx", KERNEL), ("weak1.ptx", getv(".weak", 1)), ("weak2.ptx", getv(".weak", 3)))
    err, image, _ = mc.mcLinkComplete(st)
    assert run(mc.mcModuleLoadData(image)[1], "k", 1).tolist() == [1]


def test_internal_symbols_of_inputs_do_not_collide(real):
    def part(name, value):
        return HEAD + (f".func (.param .b32 r) priv ()\n{{\n    st.param.b32 [r], {value};\n    ret;\n}}\n"
                       f".visible .func (.param .b32 r) {name} ()\n{{\n    .reg .b32 %r<2>;\n    {{\n"
                       f"    .param .b32 rv;\n    call.uni (rv), priv, ();\n    ld.param.b32 %r1, [rv];\n"
                       f"    }}\n    st.param.b32 [r], %r1;\n    ret;\n}}\n")
    kern = KERNEL.replace("getv", "geta").replace(".extern", ".extern .func (.param .b32 r) getb ();\n.extern", 1)
    kern = kern.replace("    st.global.u32 [%rd2], %r1;", """    {
    .param .b32 rw;
    call.uni (rw), getb, ();
    ld.param.b32 %r0, [rw];
    }
    add.s32 %r1, %r1, %r0;
    st.global.u32 [%rd2], %r1;""")
    st, _ = link(("k.ptx", kern), ("a.ptx", part("geta", 10)), ("b.ptx", part("getb", 20)))
    err, image, _ = mc.mcLinkComplete(st)
    assert err == S, mc.last_error_message()
    assert "priv$in2" in image.module.functions
    assert run(mc.mcModuleLoadData(image)[1], "k", 1).tolist() == [30]


def test_duplicate_and_unresolved_symbols(real, rdc):
    a, b = rdc
    err_log = bytearray(512)
    st, _ = link(("a.ptx", a), ("b.ptx", b), ("b2.ptx", b),
                 options=[(mc.mcJitOption.mcJitErrorLogBuffer, err_log)])
    assert mc.mcLinkComplete(st) == (E.mcErrorDuplicateVariableName, None, None)
    msg = mc.last_error_message()
    assert "b.ptx" in msg and "b2.ptx" in msg
    assert b"duplicate definition" in err_log
    st, _ = link(("a.ptx", a))
    assert mc.mcLinkComplete(st) == (E.mcErrorSymbolNotFound, None, None)
    assert "a.ptx" in mc.last_error_message() and ("scale" in mc.last_error_message()
                                                   or "_Z6helperi" in mc.last_error_message())
    st, _ = link(("k.ptx", KERNEL), ("v.ptx", HEAD + ".visible .global .u32 getv;\n"))
    assert mc.mcLinkComplete(st)[0] == E.mcErrorInvalidImage
    assert "variable" in mc.last_error_message()


def test_fatbin_and_file_inputs(real, rdc, tmp_path):
    a, b = rdc
    fat = FB.build_fatbin([b])
    pa = tmp_path / "a.ptx"
    pa.write_text(a)
    err, st = mc.mcLinkCreate(0, None, None)
    assert mc.mcLinkAddFile(st, PTX_IN, str(pa)) == (S,)
    assert mc.mcLinkAddData(st, FAT_IN, fat, len(fat), "b.fatbin") == (S,)
    err, image, size = mc.mcLinkComplete(st)
    assert err == S and image.inputs == (str(pa), "b.fatbin")
    assert run(mc.mcModuleLoadData(image)[1], "kern", 4).tolist() == [100, 103, 106, 109]
    assert mc.mcLinkAddFile(st, PTX_IN, str(tmp_path / "none.ptx")) == (E.mcErrorFileNotFound,)


def test_link_argument_errors(real, rdc):
    a, _ = rdc
    err, st = mc.mcLinkCreate(0, None, None)
    assert mc.mcLinkComplete(st) == (E.mcErrorInvalidValue, None, None)          # no inputs
    assert mc.mcLinkAddData("state", PTX_IN, a, len(a), "a") == (E.mcErrorInvalidHandle,)
    assert mc.mcLinkAddData(st, 42, a, len(a), "a") == (E.mcErrorInvalidValue,)
    assert mc.mcLinkAddData(st, PTX_IN, a, len(a) + 5, "a") == (E.mcErrorInvalidValue,)
    assert mc.mcLinkAddData(st, PTX_IN, 3.0, 8, "a") == (E.mcErrorInvalidValue,)
    assert mc.mcLinkAddData(st, PTX_IN, a.replace("ret;", "nonsense;"), len(a), "bad") \
        == (E.mcErrorInvalidKernelFile,)
    assert mc.mcLinkAddData(st, mc.mcJitInputType.mcJitInputCubin, b"\x7fELF", 4, "c") \
        == (E.mcErrorNoBinaryForGpu,)
    assert mc.mcLinkAddData(st, mc.mcJitInputType.mcJitInputNvvm, b"BC", 2, "n") \
        == (E.mcErrorJitCompilerNotFound,)
    assert mc.mcLinkAddData(st, FAT_IN, a, len(a), "notfat") == (E.mcErrorInvalidImage,)
    assert mc.mcLinkAddData(st, mc.mcJitInputType.mcJitInputLibrary, b"!<arch>\n", 8, "lib") \
        == (E.mcErrorInvalidImage,)
    assert mc.mcLinkAddData(st, PTX_IN, a, len(a), "a", 1, [mc.mcJitOption.mcJitMaxRegisters], [0]) \
        == (E.mcErrorInvalidValue,)
    assert mc.mcLinkCreate(1, [77], [0]) == (E.mcErrorInvalidValue, None)
    assert mc.mcLinkComplete(None) == (E.mcErrorInvalidValue, None, None)
    assert mc.mcLinkDestroy(None) == (E.mcErrorInvalidValue,)


def test_link_options_reach_the_loaded_module(real, rdc):
    a, b = rdc
    st, _ = link(("a.ptx", a), ("b.ptx", b), options=[(mc.mcJitOption.mcJitMaxRegisters, 8)])
    err, image, _ = mc.mcLinkComplete(st)
    err, m = mc.mcModuleLoadData(image)
    assert mc.mcFuncGetAttribute(mc.mcFunction_attribute.MC_FUNC_ATTRIBUTE_NUM_REGS, m.functions["kern"]) \
        == (S, 8)
