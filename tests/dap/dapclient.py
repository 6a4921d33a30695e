"""A small synchronous DAP client for the Python protocol tests: starts
`python -m gpudbg dap` as a subprocess and talks to it over stdio with
gpudbg.dap.framing, keeping the events it receives in order.

A reader thread files every message as it arrives (so the adapter never
blocks on a full pipe); `request` waits for the matching response and
`wait_event` for the next event of a kind, both with generous timeouts
(a loaded CI machine) that fail the test instead of hanging it.
"""
from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from typing import Any

from gpudbg.dap.framing import Reader, Writer

TIMEOUT = 120.0


class DapClient:
    def __init__(self, *extra: str, env: dict | None = None):
        self.proc = subprocess.Popen([sys.executable, "-m", "gpudbg", "dap", *extra], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env={**os.environ, **(env or {})})
        self.writer = Writer(self.proc.stdin)
        self.reader = Reader(self.proc.stdout)
        self.seq = 0
        self.responses: dict[int, dict] = {}
        self.events: "queue.Queue[dict]" = queue.Queue()
        self.seen: list[dict] = []
        self.output: list[dict] = []
        self._cv = threading.Condition()
        self.eof = False
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        while True:
            try:
                msg = self.reader.read()
            except Exception as e:           # the test sees the failure as a missing response
                msg = {"type": "event", "event": "_framing_error", "body": {"error": str(e)}}
            if msg is None:
                self.events.put({"type": "event", "event": "_eof"})
                with self._cv:
                    self.eof = True
                    self._cv.notify_all()
                return
            if msg.get("type") == "response":
                with self._cv:
                    self.responses[msg["request_seq"]] = msg
                    self._cv.notify_all()
            else:
                self.seen.append(msg)
                if msg.get("event") == "output":
                    self.output.append(msg["body"])
                self.events.put(msg)

    def send(self, command: str, arguments: Any = None) -> int:
        self.seq += 1
        msg: dict[str, Any] = {"seq": self.seq, "type": "request", "command": command}
        if arguments is not None:
            msg["arguments"] = arguments
        self.writer.write(msg)
        return self.seq

    def response(self, seq: int, timeout: float = TIMEOUT) -> dict:
        with self._cv:
            ok = self._cv.wait_for(lambda: seq in self.responses or self.eof, timeout)
            if seq in self.responses:
                return self.responses.pop(seq)
        raise AssertionError(f"no response to request {seq} (adapter alive: {self.proc.poll() is None}, ok={ok})"
                             f"; stderr: {self.stderr_text()}")

    def request(self, command: str, arguments: Any = None, ok: bool = True) -> dict:
        r = self.response(self.send(command, arguments))
        if ok:
            assert r["success"], f"{command} failed: {r.get('message')}"
        return r

    def wait_event(self, name: str | tuple[str, ...], timeout: float = TIMEOUT) -> dict:
        """The next event named `name` (or any of several names)."""
        names = (name,) if isinstance(name, str) else name
        while True:
            try:
                ev = self.events.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no '{name}' event within {timeout} s; output: "
                                     f"{''.join(o['output'] for o in self.output)[-2000:]}") from None
            if ev["event"] in names:
                return ev
            if ev["event"] in ("_eof", "_framing_error"):
                raise AssertionError(f"adapter ended before a '{name}' event: {ev.get('body')}; "
                                     f"stderr: {self.stderr_text()}")

    def stderr_text(self) -> str:
        if self.proc.poll() is None:
            return "(running)"
        return self.proc.stderr.read().decode(errors="replace")[-3000:]

    def text(self, category: str | None = None) -> str:
        return "".join(o["output"] for o in self.output if category is None or o.get("category") == category)

    def close(self) -> int:
        if self.proc.poll() is None and not self.eof:
            try:
                self.request("disconnect", {"terminateDebuggee": True}, ok=False)
            except AssertionError:
                pass
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()
        finally:
            for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                try:
                    f.close()
                except OSError:
                    pass
