"""`gpudbg core FILE`: open a GPU coredump in the debugger, as cuda-gdb's
`target cudacore FILE` does.

The one idea: a coredump is one more DebugBackend (can_execute False), so
the same Debugger runs over it: the focus is set on the faulting lane and
announced with the exception, and every state command (info cuda, the
focus commands, print, x, info registers, backtrace, list, disassemble)
works on the frozen state, while execution commands answer "The program is
not being run.". Sources embedded in the dump are used by `list` when the
files are not on disk.
"""
from __future__ import annotations

import argparse
import sys

BAD_INPUT = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from gpudbg.cli.debug import add_session_arguments
    add_session_arguments(parser)
    parser.add_argument("core", metavar="FILE", help="the GPU coredump to open")


def _register_embedded_sources(backend) -> None:
    from gpudbg.cli.debugger.frames import register_sources
    sources = getattr(backend, "sources", None)
    if sources is None:
        return
    for dev in range(backend.device_count()):
        for program in backend.programs(dev):
            try:
                found = sources(dev, program.code_base)
            except Exception:   # a dump without embedded sources still debugs (PTX listing)
                found = None
            if isinstance(found, dict):
                register_sources(found)


def _focus_on_fault(dbg) -> None:
    """cuda-gdb's greeting: the exception, then the focus on its lane."""
    from gpudbg.cli.debugger.frames import source_of
    from gpudbg.sim.faults import EXCEPTION_TITLES, CUDBGException

    all_sites = dbg.all_sites()
    if not all_sites:
        print("No CUDA kernel was running when the dump was written.")
        return
    s = dbg.session
    chosen, kind, warp = None, None, None
    by_warp = {(d, w.sm, w.wp): w for d in dbg.devices() for w in s.warps(d)}
    for site in all_sites:
        w = by_warp[(site.dev, site.sm, site.wp)]
        lv = w.lane(site.ln)
        if lv.exception and lv.exception is not CUDBGException.CUDBG_EXCEPTION_NONE:
            chosen, kind, warp = site, lv.exception, w
            break
    if chosen is None:
        chosen = next((st for st in all_sites if by_warp[(st.dev, st.sm, st.wp)].broken), all_sites[0])
        warp = by_warp[(chosen.dev, chosen.sm, chosen.wp)]
    if kind is not None:
        title = EXCEPTION_TITLES.get(kind, kind.name)
        print(f"\nCUDA Exception: {title}")
        pc = warp.error_pc if warp.error_pc is not None else warp.lane(chosen.ln).pc
        where = source_of(s, chosen.dev, pc)
        print(f"The exception was triggered at PC 0x{pc:x}" + (f" ({where[0]}:{where[1]})" if where else ""))
        report = getattr(s.backend, "fault_report", lambda: None)()
        if report is not None:
            print(f"  {report.message}")
            if report.address is not None:
                print(f"  address 0x{report.address:x}")
    from gpudbg.cli.debugger.focus import make_focus
    dbg.focus = make_focus(chosen, dbg.kernel_of)
    print(f"[Current focus set to CUDA {dbg.focus.describe()}]")
    print("#0  ", end="")
    dbg.print_location(full=True, with_address=True)


def execute(args: argparse.Namespace) -> int:
    from gpudbg.cli.debug import drive
    from gpudbg.cli.debugger.debugger import Debugger

    from gpudbg.reader_error import ReaderError
    try:
        from gpudbg.dump.coredump.target import open_core
        backend = open_core(args.core)
    except OSError as e:
        print(f"gpudbg core: {args.core}: {e.strerror or e}", file=sys.stderr)
        return BAD_INPUT
    except ReaderError as e:   # CoredumpError: what is damaged, and where
        where = f" (byte offset 0x{e.offset:x})" if e.offset is not None else ""
        print(f"gpudbg core: {args.core}: {e}{where}", file=sys.stderr)
        return BAD_INPUT
    dbg = Debugger(backend=backend)
    dbg.open()
    print(f"Opening GPU coredump: {args.core}")
    for note in getattr(backend, "notes", []):
        print(f"warning: {note}")
    _register_embedded_sources(backend)
    _focus_on_fault(dbg)
    return drive(dbg, args)
