"""Output routing: the debugger's text is `console`, the program's is
`stdout`/`stderr`, whichever thread writes it and however (text, bytes)."""
from __future__ import annotations

import sys
import threading

from gpudbg.dap.output import Capture, RoutedWriter, mark_adapter_thread


def test_routing_by_thread_and_stream():
    before = sys.stdout
    got: list[tuple[str, str]] = []
    cap = Capture(lambda cat, text: got.append((cat, text)), redirect_fd1=False)
    try:
        def program():
            print("from the program")
            print("oops", file=sys.stderr)
            sys.stdout.buffer.write("bytes \u00e9\n".encode())

        def adapter():
            mark_adapter_thread()
            print("Breakpoint 1 at ...")
        for fn in (program, adapter):
            t = threading.Thread(target=fn)
            t.start()
            t.join()
        assert sys.stdout.fileno() == 1 and sys.stderr.fileno() == 2
    finally:
        cap.restore()
    text = {c: "".join(t for cc, t in got if cc == c) for c in ("stdout", "stderr", "console")}
    assert text == {"stdout": "from the program\nbytes \u00e9\n", "stderr": "oops\n", "console": "Breakpoint 1 at ...\n"}
    assert sys.stdout is before and not isinstance(sys.stderr, RoutedWriter)
