"""`gpudbg run|check` of programs that are not plain Python on gpudbg's API:
native executables (nvcc-built, loaded through the drop-in libcudart and
libcuda) and Python programs that reach a driver library themselves
(numba-cuda, cuda-python, cuda.core).

The one idea: the simulated GPU lives in the process that uses it. A Python
program gets gpudbg's libcuda.so.1 loaded (RTLD_GLOBAL) before it starts,
so its `dlopen("libcuda.so.1")` finds ours and calls back into this
process. A native program runs as a child with the libraries first on the
loader path; inside it, the embedded interpreter the libraries start runs
`child_start()` (named by GPUDBG_NATIVE_STARTUP), which registers an exit
hook that finds the device faults
left at the end (the same `sticky_faults` as for Python programs), prints
them in the tool's format and writes them as JSON for the parent, which
adds the verdict (exit status, ERROR SUMMARY) and the --json file. The
parent forwards Ctrl-C to the child and reports a child killed by a signal.

`gpudbg debug` of a native program is gpudbg.cli.debugger.native_inferior.
"""
from __future__ import annotations

import atexit
import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

SESSION_ENV = "GPUDBG_NATIVE_SESSION"
CHECK_CONFIG_ENV = "GPUDBG_CHECK_CONFIG"     # the check's tools, started in the program's process
STARTUP_ENV = "GPUDBG_NATIVE_STARTUP"     # read by gpudbg.native.bridge
ELF_MAGIC = b"\x7fELF"


def is_native(program: str) -> bool:
    """An ELF executable (anything else is run as Python)."""
    try:
        with open(program, "rb") as f:
            return f.read(4) == ELF_MAGIC
    except OSError:
        return False


def library_dir() -> Path:
    """Where the drop-in libraries are (built if missing or stale)."""
    from gpudbg.native.build import library_dir as build_library_dir
    return build_library_dir(rebuild_if_stale=True)


_preloaded: list[Any] = []


def preload_driver() -> str | None:
    """Load gpudbg's libcuda.so.1 and libnvJitLink.so.13 into this process
    with RTLD_GLOBAL, so a Python program's own dlopen of the driver finds
    ours, and cuda-pathfinder (which takes an already-loaded soname before
    any wheel) finds our nvJitLink without nvJitLinkVersion: numba then
    compiles without LTO and cuda.core links PTX through our driver's
    cuLink*. The problem as a sentence when a library cannot be had
    (gpudbg's API works without)."""
    if _preloaded:
        return None
    import warnings
    try:
        libs = library_dir()
        driver = ctypes.CDLL(str(libs / "libcuda.so.1"), mode=ctypes.RTLD_GLOBAL)
    except Exception as e:  # no C compiler, unwritable cache, ...
        return f"the drop-in libcuda.so.1 is not available ({e}); only gpudbg's own API will work"
    _preloaded.append(driver)
    try:
        _preloaded.append(ctypes.CDLL(str(libs / "libnvJitLink.so.13"), mode=ctypes.RTLD_GLOBAL))
    except OSError as e:
        return (f"gpudbg's libnvJitLink.so.13 is not available ({e}); numba-cuda and cuda.core may "
                f"link with NVIDIA's nvJitLink into SASS the simulator cannot run")
    # cuda.core's advice for the nvJitLink we withhold on purpose ("too old,
    # consider upgrading") would be wrong under gpudbg.
    warnings.filterwarnings("ignore", message=r"libnvJitLink\.so\* is too old", category=RuntimeWarning)
    return None


# ------------------------------------------------------------------ parent side
def run_native(program: str, args: list[str], tool: str) -> tuple[int, list[dict[str, Any]]]:
    """Run a native executable under `tool` ("run" or "check"): its exit
    status (128+N for signal N) and the findings the child reported."""
    env = dict(os.environ)
    try:
        libs = library_dir()
    except Exception as e:
        print(f"gpudbg {tool}: cannot build the drop-in CUDA libraries: {e}", file=sys.stderr)
        return 2, []
    env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (str(libs), env.get("LD_LIBRARY_PATH", "")) if p)
    fd, results = tempfile.mkstemp(prefix="gpudbg-native-", suffix=".json")
    os.close(fd)
    os.unlink(results)
    from gpudbg.dump.devcoredump.capture import ENV_DIR, dump_directory
    dumps = dump_directory()              # --devcoredump reaches the program's process too
    if dumps is not None:
        env[ENV_DIR] = str(dumps)
    env[SESSION_ENV] = json.dumps({"tool": tool, "program": program, "results": results})
    env[STARTUP_ENV] = f"{__name__}:child_start"
    path = program if os.sep in program else os.path.join(".", program)
    try:
        child = subprocess.Popen([path, *args], env=env)
    except OSError as e:
        print(f"gpudbg {tool}: cannot run {program}: {e}", file=sys.stderr)
        return 2, []
    status = _wait(child)
    findings = _read_results(results)
    if status < 0:
        name = signal.Signals(-status).name if -status in signal.Signals.__members__.values() else str(-status)
        print(f"gpudbg {tool}: {program} was terminated by signal {name}", file=sys.stderr)
        status = 128 - status
    return status, findings


def _wait(child: subprocess.Popen) -> int:
    """Wait for the child; Ctrl-C is passed on to it (it may handle it: see
    cli/interrupt.py), so is a second one (the child then exits at once),
    and the child is killed if it does not."""
    interrupts = 0
    while True:
        try:
            if interrupts >= 2:
                try:
                    return child.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    child.kill()
            return child.wait()
        except KeyboardInterrupt:
            interrupts += 1
            if interrupts <= 2:
                child.send_signal(signal.SIGINT)
            else:
                child.kill()


def _read_results(path: str) -> list[dict[str, Any]]:
    try:
        with open(path) as f:
            data = json.load(f)
    except FileNotFoundError:
        return []          # the program never started the simulated GPU
    except (OSError, ValueError) as e:
        print(f"gpudbg: the program's findings could not be read ({e})", file=sys.stderr)
        return []
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    return list(data) if isinstance(data, list) else []


# ------------------------------------------------------------------ child side
_armed: list[dict[str, Any]] = []


def child_start() -> None:
    """The startup hook (GPUDBG_NATIVE_STARTUP) the drop-in libraries run
    when gpudbg starts inside a native program: arm the exit report. The
    embedded interpreter is never finalized; the libraries' exit hook runs
    Python's atexit functions at the program's exit(), before the program's
    own earlier-registered handlers (nvcc's module unregistration)."""
    raw = os.environ.pop(SESSION_ENV, None)
    if not raw or _armed:
        return
    try:
        session = json.loads(raw)
    except ValueError:
        print(f"gpudbg: {SESSION_ENV} is not JSON; no report at exit", file=sys.stderr)
        return
    _armed.append(session)
    if session.get("tool") == "check":
        _start_tools(session)
    from gpudbg.cli.interrupt import install_in_child
    install_in_child()      # Ctrl-C stops the running kernels; exit 130 after the report below
    atexit.register(_at_exit, session)


def _start_tools(session: dict[str, Any]) -> None:
    """The sanitizer session of `gpudbg check`, in the program's process
    (where its simulated GPU is); its findings are printed here and sent
    to the parent with the faults."""
    from gpudbg.sanitizer import sites
    from gpudbg.sanitizer.config import CheckConfig
    from gpudbg.sanitizer.report import Reporter
    from gpudbg.sanitizer.session import SanitizerSession

    sites.native_process = True

    try:
        config = CheckConfig.from_environment() or CheckConfig()
    except ValueError as e:
        print(f"gpudbg: {e}; checking with memcheck", file=sys.stderr)
        config = CheckConfig()
    reporter = Reporter(config.print_limit, config.show_backtrace, write=lambda t: print(t, flush=True))
    session["_tools"] = SanitizerSession(config, reporter).start()


def _at_exit(session: dict[str, Any]) -> None:
    """At the program's exit(): report every device fault left behind."""
    try:
        _report(session)
    except BaseException as e:  # never turn the program's exit into a crash
        print(f"gpudbg: exit report failed: {type(e).__name__}: {e}", file=sys.stderr)


def _report(session: dict[str, Any]) -> None:
    from gpudbg.cli.check import PREFIX, finding_dict, format_fault, write_json_atomically
    from gpudbg.cli.run import print_fault, sticky_faults

    faults = sticky_faults(0)
    program = str(session.get("program", "?"))
    tools = session.get("_tools")
    reporter = tools.reporter if tools is not None else None
    for fault in faults:
        if session.get("tool") == "check":
            shown = reporter is not None and reporter.printed > 0
            print((PREFIX + "\n" if shown else "") + format_fault(fault), flush=True)
            if reporter is not None:
                reporter.printed += 1
        else:
            print_fault(fault)
    rows = [finding_dict(f, program) for f in faults]
    if tools is not None:
        import gc
        gc.collect()
        tools.finish()
        rows += [f.as_dict() for f in reporter.findings]
    results = session.get("results")
    if results:
        write_json_atomically(results, rows)
    sys.stdout.flush()
    sys.stderr.flush()
