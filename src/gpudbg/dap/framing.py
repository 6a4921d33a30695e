"""The Debug Adapter Protocol's base protocol: `Content-Length: N\\r\\n\\r\\n`
then N bytes of UTF-8 JSON, in both directions.

The one idea: a reader that never trusts the peer. Every way a frame can
be wrong (no Content-Length, a length that is not a number or is absurd,
a header line that never ends, a body cut short, a body that is not a
JSON object) is a FramingError saying which, at which byte of the
stream, instead of a hang or a crash. A clean end of stream between
frames is `None`. It knows nothing of requests or events.
"""
from __future__ import annotations

import json
import threading
from typing import Any, BinaryIO

MAX_HEADER_LINE = 8192          # bytes in one header line
MAX_BODY = 64 << 20             # a 64 MiB message is a broken peer, not a request
HEADER_END = b"\r\n"


class FramingError(Exception):
    """The peer sent something that is not a DAP message; `offset` is
    the stream position where the bad frame started."""

    def __init__(self, message: str, offset: int):
        super().__init__(f"{message} (frame at byte {offset} of the stream)")
        self.offset = offset


def encode(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Reader:
    """Reads framed messages from a binary stream, one at a time."""

    def __init__(self, stream: BinaryIO):
        self.stream = stream
        self.offset = 0

    def _line(self, start: int) -> bytes | None:
        line = self.stream.readline(MAX_HEADER_LINE + 1)
        self.offset += len(line)
        if not line:
            return None
        if len(line) > MAX_HEADER_LINE or not line.endswith(b"\n"):
            if len(line) > MAX_HEADER_LINE:
                raise FramingError(f"a header line longer than {MAX_HEADER_LINE} bytes", start)
            raise FramingError("the stream ended inside a header line", start)
        return line.rstrip(b"\r\n")

    def read(self) -> dict[str, Any] | None:
        """The next message, or None at a clean end of stream."""
        start = self.offset
        length: int | None = None
        first = True
        while True:
            line = self._line(start)
            if line is None:
                if first:
                    return None
                raise FramingError("the stream ended inside a header", start)
            first = False
            if not line:
                break
            name, sep, value = line.partition(b":")
            if not sep:
                raise FramingError(f"header line {line[:80]!r} has no ':'", start)
            if name.strip().lower() == b"content-length":
                text = value.strip()
                if not text.isdigit():
                    raise FramingError(f"Content-Length {text[:40]!r} is not a number", start)
                length = int(text)
                if length > MAX_BODY:
                    raise FramingError(f"Content-Length {length} is over the {MAX_BODY}-byte limit", start)
        if length is None:
            raise FramingError("a header without Content-Length", start)
        body = self.stream.read(length)
        self.offset += len(body)
        if len(body) < length:
            raise FramingError(f"the stream ended after {len(body)} of {length} body bytes", start)
        try:
            message = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise FramingError(f"the body is not UTF-8 JSON: {e}", start) from None
        if not isinstance(message, dict):
            raise FramingError(f"the body is a JSON {type(message).__name__}, not an object", start)
        return message


class Writer:
    """Writes framed messages; safe to call from any thread (events come
    from the execution thread while responses come from the reader's)."""

    def __init__(self, stream: BinaryIO):
        self.stream = stream
        self._lock = threading.Lock()
        self.closed = False

    def write(self, message: dict[str, Any]) -> bool:
        """False when the peer is gone (the stream is closed)."""
        data = encode(message)
        with self._lock:
            if self.closed:
                return False
            try:
                self.stream.write(data)
                self.stream.flush()
            except (OSError, ValueError):
                self.closed = True
                return False
        return True
