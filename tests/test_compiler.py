"""gpudbg.compile / compile_ptx: NVRTC driving, the prelude, errors, cache."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")

import gpudbg
from gpudbg import compiler
from gpudbg.runtime.errors import mcError_t

SAXPY = r"""
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "gpudbg" / "ptx"


@pytest.fixture
def fresh_device():
    yield gpudbg.Device(0)
    gpudbg.Device(0).reset()


def test_default_arch_is_compute_80_with_line_info():
    ptx = gpudbg.compile_ptx(SAXPY)
    assert ".target sm_80" in ptx
    assert ".visible .entry saxpy(" in ptx
    assert ".loc" in ptx


def test_arch_option_overrides_default():
    assert ".target sm_75" in gpudbg.compile_ptx(SAXPY, ["-arch=compute_75"])
    assert ".target sm_86" in gpudbg.compile_ptx(SAXPY, "--gpu-architecture=compute_86")


def test_line_info_can_be_turned_off():
    assert ".loc" not in gpudbg.compile_ptx(SAXPY, line_info=False)


def test_file_directive_names_the_file_as_given():
    ptx = gpudbg.compile_ptx(SAXPY, name="my_kernels.cu")
    assert '.file\t1 "my_kernels.cu"' in ptx or '.file 1 "my_kernels.cu"' in ptx


def test_compile_error_carries_the_log_with_exact_lines():
    src = 'extern "C" __global__ void k(int *p) {\n  p[0] = 1;\n  undefined_thing = 2;\n}\n'
    with pytest.raises(gpudbg.CompileError) as ei:
        gpudbg.compile_ptx(src, name="bad.cu")
    e = ei.value
    assert 'identifier "undefined_thing" is undefined' in e.log
    assert e.diagnostics[0].file == "bad.cu"
    assert e.diagnostics[0].line == 3    # the prelude does not shift lines
    assert e.diagnostics[0].severity == "error"
    assert "bad.cu:3: error:" in str(e)


def test_invalid_option_is_a_compile_error():
    with pytest.raises(gpudbg.CompileError, match="unrecognized option --no-such-flag"):
        gpudbg.compile_ptx(SAXPY, ["--no-such-flag"])


def test_bad_arguments_are_type_errors():
    with pytest.raises(TypeError, match="source must be CUDA C"):
        gpudbg.compile_ptx(SAXPY.encode())
    with pytest.raises(TypeError, match="must be a str"):
        gpudbg.compile_ptx(SAXPY, [3])
    with pytest.raises(ValueError, match="name"):
        gpudbg.compile_ptx(SAXPY, name="")


def test_parse_log_reads_warnings_and_errors():
    log = ('k.cu(4): warning #177-D: variable "x" was declared but never referenced\n'
           '   int x;\n\nk.cu(9): error: expected a ";"\n')
    d = compiler.parse_log(log)
    assert [(x.line, x.severity) for x in d] == [(4, "warning"), (9, "error")]
    assert d[1].message == 'expected a ";"'


@settings(max_examples=40, deadline=None)
@given(file=st.from_regex(r"[A-Za-z_][A-Za-z0-9_./-]{0,20}\.cu", fullmatch=True),
       line=st.integers(1, 10**6), severity=st.sampled_from(["error", "warning"]),
       message=st.text(st.characters(min_codepoint=32, max_codepoint=126), min_size=1).map(str.strip)
       .filter(bool))
def test_parse_log_round_trips(file, line, severity, message):
    (d,) = compiler.parse_log(f"{file}({line}): {severity}: {message}\n  source line\n")
    assert (d.file, d.line, d.severity, d.message) == (file, line, severity, message)


def test_prelude_skips_what_the_source_declares():
    own = 'extern "C" __device__ int printf(const char *fmt, ...);\n'
    assert "printf" not in compiler.prelude_for(own)
    assert "printf" in compiler.prelude_for("")
    assert "__assertfail" in compiler.prelude_for("")
    # a source that declares printf itself still compiles
    gpudbg.compile_ptx(own + 'extern "C" __global__ void k() { printf("hi\\n"); }')


def test_standard_header_names_resolve_to_the_prelude():
    src = ('#include <cstdio>\n#include <assert.h>\n#include <stdlib.h>\n'
           'extern "C" __global__ void k(int n) { assert(n > 0); printf("%d\\n", n); free(malloc(8)); }\n')
    ptx = gpudbg.compile_ptx(src)
    for sym in ("vprintf", "__assertfail", "malloc", "free"):
        assert sym in ptx


def test_printf_malloc_and_assert_run(fresh_device, capfd):
    src = r"""
extern "C" __global__ void k(int *out, int n) {
    int *buf = (int *)malloc(4 * sizeof(int));
    buf[1] = n * 2;
    out[threadIdx.x] = buf[1] + threadIdx.x;
    free(buf);
    if (threadIdx.x == 0) printf("value %d\n", n);
    assert(n != 7);
}
"""
    m = gpudbg.compile(src, name="prelude.cu")
    out = gpudbg.zeros(4, np.int32)
    m.k[1, 4](out, 21)
    assert out.to_host().tolist() == [42, 43, 44, 45]
    assert "value 21" in capfd.readouterr().out
    m.k[1, 4](out, 7)
    with pytest.raises(gpudbg.KernelFaultError) as ei:
        gpudbg.synchronize()
    assert ei.value.code is mcError_t.mcErrorAssert
    # __FILE__/__LINE__ point into the user's file (line 8 of src)
    assert "prelude.cu:8" in ei.value.report.message
    printed = capfd.readouterr().out
    assert "Assertion `n != 7` failed." in printed
    assert "void k(int *, int)" in printed


def test_ndebug_disables_assert():
    ptx = gpudbg.compile_ptx('extern "C" __global__ void k(int n) { assert(n); }', ["-DNDEBUG"])
    assert "__assertfail" not in ptx.split(".visible .entry")[1]


def test_cache_hit_skips_nvrtc(private_cache, monkeypatch):
    first = gpudbg.compile_ptx(SAXPY, ["-arch=compute_80"])
    files = list(private_cache.glob("*.ptx"))
    assert len(files) == 1

    def boom(*a, **k):
        raise AssertionError("NVRTC called despite a cache hit")

    monkeypatch.setattr(compiler, "_run_nvrtc", boom)
    assert gpudbg.compile_ptx(SAXPY, ["-arch=compute_80"]) == first
    with pytest.raises(AssertionError):   # other options: another key
        gpudbg.compile_ptx(SAXPY, ["-arch=compute_86"])
    with pytest.raises(AssertionError):   # cache=False always compiles
        gpudbg.compile_ptx(SAXPY, ["-arch=compute_80"], cache=False)


def test_cache_disabled_and_corrupt_entries_recompile(private_cache):
    ptx = gpudbg.compile_ptx(SAXPY)
    (entry,) = private_cache.glob("*.ptx")
    entry.write_text("garbage")
    assert gpudbg.compile_ptx(SAXPY) == ptx
    assert compiler.read_cache_entry(entry) == ptx
    assert gpudbg.compile_ptx(SAXPY, cache=False) == ptx


def test_unusable_cache_does_not_break_compilation(tmp_path, monkeypatch):
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert ".entry saxpy" in gpudbg.compile_ptx(SAXPY)


def test_cache_dir_defaults_to_home(monkeypatch, tmp_path):
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert compiler.cache_dir() == tmp_path / ".cache" / "gpudbg" / "ptx"


def test_compile_returns_a_loaded_module(fresh_device):
    m = gpudbg.compile(SAXPY, name="saxpy.cu")
    assert isinstance(m, gpudbg.Module)
    assert m.source == SAXPY and ".entry saxpy" in m.ptx
    assert isinstance(m.saxpy, gpudbg.Kernel)


def test_source_line_quotes_compiled_and_on_disk_sources(fresh_device, tmp_path):
    gpudbg.compile(SAXPY, name="quoted_saxpy.cu")
    assert compiler.source_line("quoted_saxpy.cu", 4).strip() == "if (i < n) y[i] = a * x[i] + y[i];"
    assert compiler.source_line("quoted_saxpy.cu", 99) is None
    f = tmp_path / "disk.cu"
    f.write_text("a\nb\n")
    assert compiler.source_line(str(f), 2) == "b"
    assert compiler.source_line(str(tmp_path / "missing.cu"), 1) is None


def test_sources_including_disk_files_are_not_cached(private_cache, tmp_path):
    (tmp_path / "scale.h").write_text("#define SCALE 2\n")
    src = '#include "scale.h"\n#include <cstdio>\nextern "C" __global__ void k(int *p) { p[0] = SCALE; }\n'
    ptx = gpudbg.compile_ptx(src, [f"-I{tmp_path}"])
    assert ".entry k" in ptx
    assert not private_cache.exists() or not list(private_cache.glob("*.ptx"))
    assert not compiler.cacheable(src, [])
    assert compiler.cacheable("#include <cstdio>\n", [])
    assert not compiler.cacheable("", ["--pre-include=x.h"])
