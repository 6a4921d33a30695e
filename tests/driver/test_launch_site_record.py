"""A launch records its host site raw (driver/host_site.py capture: code
objects and lines, no strings) and the site is formatted only when a fault
report shows it: the report still names the user's line that launched the
faulting kernel, exactly as python_frames would have."""
import sys

from gpudbg.driver import host_site
from gpudbg.driver.engine import get_engine
from gpudbg.runtime import mc

S = mc.mcError_t.mcSuccess

STORE_NULL = """.version 8.0
.target sm_80
.address_size 64
.visible .entry boom()
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    mov.u64 %rd1, 0;
    mov.u32 %r1, 7;
    st.global.u32 [%rd1], %r1;
    ret;
}
"""


def _kernel():
    err, mod = mc.mcModuleLoadData(STORE_NULL)
    assert err == S
    return mc.mcModuleGetFunction(mod, "boom")[1]


def test_a_faulting_launch_reports_the_users_line(real):
    f = _kernel()
    line = sys._getframe().f_lineno + 1
    assert mc.mcLaunchKernel(f, 1, 1, [], 0, None) == (S,)
    assert mc.mcDeviceSynchronize()[0] == mc.mcError_t.mcErrorIllegalAddress
    rep = mc.fault_report()
    here = f"{__file__}:{line} in test_a_faulting_launch_reports_the_users_line"
    assert rep.details["launch_site"][-1] == here
    assert f"launched from {here}" in rep.format()


def test_a_launch_keeps_its_site_unformatted(real):
    err, mod = mc.mcModuleLoadData(STORE_NULL.replace("st.global.u32 [%rd1], %r1;", ""))
    assert err == S
    ok = mc.mcModuleGetFunction(mod, "boom")[1]
    line = sys._getframe().f_lineno + 1
    assert mc.mcLaunchKernel(ok, 1, 1, [], 0, None) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    ctx = get_engine().current_context()
    site = list(ctx.launch_sites.values())[-1]
    assert all(code.__class__ is type(_kernel.__code__) and type(n) is int for code, n in site)
    shown = host_site.formatted(site)
    assert shown[-1] == f"{__file__}:{line} in test_a_launch_keeps_its_site_unformatted"
    assert shown == shown[-8:]


def test_python_frames_is_the_formatted_capture():
    def inner():
        return host_site.python_frames(), host_site.formatted(host_site.capture(8, 1))
    a, b = inner()
    assert a[-1].endswith(" in inner") and a[:-1] == b[:-1]
    assert a[-1].rsplit(":", 1)[0] == b[-1].rsplit(":", 1)[0]     # the same frame, one line apart


def test_a_walk_ending_in_library_frames_and_exec_code():
    """A thread's outermost frames are the standard library's (the walk runs
    off the stack's end), and exec'd code ("<string>") is not the user's."""
    import threading
    got = []

    def body():
        namespace = {"capture": host_site.capture}
        exec("def inner():\n    return capture(8, 1)\n", namespace)
        got.append(namespace["inner"]())

    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert [code.co_name for code, _line in got[0]] == ["body"]


def _sample(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            total += (i *
                      2)
        else:
            total -= [j for j in range(i)
                      if j % 2].__len__()
    try:
        total //= n - n
    except ZeroDivisionError:
        total = -total
    return total


def test_the_line_of_a_captured_offset_is_the_frames_line_at_every_instruction():
    """host_site.line_at(code, f_lasti), what formatted shows, agrees with
    the frame's own f_lineno at every instruction of a function with
    loops, a comprehension, a continued expression and a handler."""
    seen = []

    def tracer(frame, event, arg):
        if frame.f_code.co_name not in ("_sample", "<listcomp>"):
            return None
        frame.f_trace_opcodes = True

        def local(frame, event, arg):
            if event == "opcode":
                seen.append((frame.f_code, frame.f_lasti, frame.f_lineno))
            return local
        return local

    sys.settrace(tracer)
    try:
        _sample(7)
    finally:
        sys.settrace(None)
    assert len(seen) > 200
    assert len({line for _code, _off, line in seen}) >= 10
    assert [host_site.line_at(code, off) for code, off, _line in seen] == [line for _c, _o, line in seen]
