"""`set cuda NAME VALUE` / `show cuda [NAME]`: cuda-gdb's CUDA settings,
as one table.

The one idea: every setting cuda-gdb has is a row (its values, default,
and either what it does here or why it cannot apply to a simulated GPU),
so `show cuda` lists them all and a setting that makes no sense here is
refused by name with its reason instead of being silently accepted.
Those that apply:

- break_on_launch none|application|system|all: a temporary breakpoint at
  the first instruction of every kernel launched by the program
  (application); gpudbg launches no kernels of its own (copies and
  memsets run on copy engines), so `system` matches none and `all` is
  `application`.
- kernel_events none|application|system|all: print cuda-gdb's
  `[Launch of CUDA Kernel N ...]` / `[Termination of CUDA Kernel N ...]`.
- api_failures ignore|stop|hide: failing mc*/cuda* calls (apihook.py).
- memcheck on|off: run the sanitizer's memcheck during the session (its
  host checks: invalid and double frees; and the leak check at exit), and
  report an illegal access as cuda-gdb's memcheck does (`Memcheck detected
  an illegal access to address (@global)0x...`) before the exception. The
  simulator checks every device access whether or not it is on, so the
  stop itself is always at the faulting lane.
- coalescing on|off: `info cuda threads|blocks` join ranges (off: a row each).
- thread_selection logical|physical: which lane of a stop takes the focus
  (the lowest block/thread, or the lowest sm/warp/lane).
- value_extrapolation on|off: a launch that ran optimized native code
  (no breakpoint in its kernel when it started, PTX not built with -G)
  keeps only the registers live at each pc; off shows the others as
  `<optimized out>`, on shows what the register file holds, marked
  `(possibly)` since it may be an older value.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .apihook import ApiFailureMode
from .commands import CommandError, resolve_word

LAUNCH_KINDS = ("none", "application", "system", "all")
ON_OFF = ("on", "off")


@dataclass(frozen=True)
class Setting:
    values: tuple[str, ...]
    default: str
    refused: str | None = None       # why it does not apply here (None: it does)


SETTINGS: dict[str, Setting] = {
    "api_failures": Setting(("ignore", "stop", "hide"), "ignore"),
    "break_on_launch": Setting(LAUNCH_KINDS, "none"),
    "kernel_events": Setting(LAUNCH_KINDS, "none"),
    "memcheck": Setting(ON_OFF, "off"),
    "coalescing": Setting(ON_OFF, "on"),
    "thread_selection": Setting(("logical", "physical"), "logical"),
    "context_events": Setting(ON_OFF, "off", "context events are not reported by gpudbg's debugger"),
    "launch_blocking": Setting(ON_OFF, "off", "launches stay asynchronous: the simulator's streams order "
                                              "them, and the debugger stops any of them where it is"),
    "notify": Setting(("youngest", "random"), "youngest", "there is no host signal to deliver: the "
                                                          "debugger waits on the device's events directly"),
    "ptx_cache": Setting(ON_OFF, "on", "PTX registers are read from the simulator itself, never cached"),
    "single_stepping_optimizations": Setting(ON_OFF, "on", "single steps already run one warp instruction "
                                                           "at a time in the simulator"),
    "value_extrapolation": Setting(ON_OFF, "off"),
    "software_preemption": Setting(ON_OFF, "off", "the simulated GPU is never shared with a display"),
    "disassemble_from": Setting(("device_memory", "elf_image"), "elf_image",
                                "disassembly is always the loaded module's PTX"),
    "defer_kernel_launch_notifications": Setting(ON_OFF, "off", "removed from cuda-gdb; launches are "
                                                                "always reported"),
    "step_divergent_lanes": Setting(ON_OFF, "on", "a warp step always steps every active lane; divergent "
                                                  "lanes wait at their own pc"),
    "printf_flushing": Setting(ON_OFF, "on", "device printf output is written when the kernel runs it"),
    "stop_signal": Setting(("SIGINT", "SIGTRAP"), "SIGINT", "stops are not signals here"),
}


def current(dbg: Any, name: str) -> str:
    return getattr(dbg, "cuda_settings", {}).get(name, SETTINGS[name].default)


def set_cuda(dbg: Any, rest: str) -> None:
    words = rest.split()
    if not words:
        raise CommandError(f"\"set cuda\" must be followed by a setting: {', '.join(SETTINGS)}.")
    name = resolve_word(words[0], SETTINGS, "set cuda setting")
    setting = SETTINGS[name]
    if setting.refused is not None:
        raise CommandError(f"set cuda {name} is not supported by gpudbg: {setting.refused}.")
    if len(words) != 2:
        raise CommandError(f"set cuda {name} takes one value: {'|'.join(setting.values)}.")
    value = resolve_word(words[1], setting.values, f"value for {name}")
    if not hasattr(dbg, "cuda_settings"):
        dbg.cuda_settings = {}
    dbg.cuda_settings[name] = value
    if name == "break_on_launch":
        dbg.break_on_launch = value in ("application", "all")
        dbg.session.break_on_launch = dbg.break_on_launch   # a temporary breakpoint per launch
    elif name == "api_failures":
        dbg.api_mode = ApiFailureMode(value)
        if dbg.api_mode is ApiFailureMode.HIDE:
            dbg.interceptor.uninstall()
        elif dbg.inferior is not None and dbg.inferior.running:
            dbg.interceptor.install()
    elif name == "value_extrapolation":
        dbg.session.value_extrapolation = value == "on"
    elif name == "memcheck":
        if dbg.inferior is not None and dbg.inferior.running:
            (start_memcheck if value == "on" else stop_memcheck)(dbg)


def show_cuda(dbg: Any, rest: str) -> str:
    words = rest.split()
    names = [resolve_word(words[0], SETTINGS, "show cuda setting")] if words else list(SETTINGS)
    out = []
    for n in names:
        if n == "api_failures":
            value = dbg.api_mode.value
        elif n == "break_on_launch" and current(dbg, n) == "none" and dbg.break_on_launch:
            value = "application"
        else:
            value = current(dbg, n)
        note = " (not supported by gpudbg)" if SETTINGS[n].refused else ""
        out.append(f"{n}: {value}{note}")
    return "\n".join(out)


# ------------------------------------------------------------------ memcheck
def start_memcheck(dbg: Any) -> None:
    """The sanitizer's memcheck for the program's run (leak check included)."""
    from gpudbg.sanitizer import session as sanitizer
    from gpudbg.sanitizer.config import CheckConfig
    if getattr(dbg, "memcheck_session", None) is None:
        dbg.memcheck_session = sanitizer.start(CheckConfig(leak_check=True))


def stop_memcheck(dbg: Any, leaks: bool = True) -> None:
    """End of the run (or memcheck off): what only the end knows (leaks;
    not after a kill, which frees nothing the program would have)."""
    s = getattr(dbg, "memcheck_session", None)
    dbg.memcheck_session = None
    if s is None:
        return
    s.config.leak_check = leaks      # the tools' finish also removes their API hooks: always run it
    s.finish()


def program_starting(dbg: Any) -> None:
    if current(dbg, "memcheck") == "on":
        start_memcheck(dbg)


def program_ended(dbg: Any, leaks: bool = True) -> None:
    stop_memcheck(dbg, leaks)


def memcheck_line(dbg: Any, report: Any) -> str | None:
    """cuda-gdb's memcheck sentence for an illegal access, when memcheck is on."""
    if current(dbg, "memcheck") != "on" or report is None or getattr(report, "address", None) is None:
        return None
    space = getattr(report, "space", None) or "global"
    kind = getattr(getattr(report, "kind", None), "name", "")
    what = "a misaligned access" if "MISALIGNED" in kind else "an illegal access"
    return f"Memcheck detected {what} to address (@{space})0x{report.address:x}"


def kernel_event(dbg: Any, grid: Any, finished: bool) -> None:
    """cuda-gdb's kernel event lines (kernel_events application|all)."""
    if current(dbg, "kernel_events") not in ("application", "all"):
        return
    from .breakpoints import source_name
    from .frames import launch_shape
    number = dbg.kernel_of(grid.dev, grid.grid_id)
    what = "Termination" if finished else "Launch"
    print(f"[{what} of CUDA Kernel {number} ({source_name(grid.kernel)}{launch_shape(grid)}) on "
          f"Device {grid.dev}, level 0]")
