"""The base protocol: Content-Length frames in and out, and every way a
peer can get them wrong, each a FramingError naming where."""
from __future__ import annotations

import io
import json
import threading

import pytest
from hypothesis import given, strategies as st

from gpudbg.dap.framing import MAX_BODY, FramingError, Reader, Writer, encode

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**53, 2**53) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)
messages = st.dictionaries(st.text(max_size=10), json_values, max_size=6)


@given(st.lists(messages, max_size=5))
def test_frames_round_trip_in_order(msgs):
    stream = io.BytesIO(b"".join(encode(m) for m in msgs))
    r = Reader(stream)
    assert [r.read() for _ in msgs] == msgs
    assert r.read() is None


@given(messages)
def test_content_length_counts_utf8_bytes(msg):
    data = encode(msg)
    head, body = data.split(b"\r\n\r\n", 1)
    assert int(head.split(b":")[1]) == len(body)
    assert json.loads(body.decode("utf-8")) == msg


def test_other_headers_are_ignored_and_case_does_not_matter():
    body = b'{"seq":1}'
    stream = io.BytesIO(b"Content-Type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body) + body)
    assert Reader(stream).read() == {"seq": 1}


@pytest.mark.parametrize("data, words", [
    (b"Content-Type: x\r\n\r\n{}", "without Content-Length"),
    (b"Content-Length: ten\r\n\r\n{}", "is not a number"),
    (b"Content-Length: -3\r\n\r\n{}", "is not a number"),
    (b"Content-Length: %d\r\n\r\n" % (MAX_BODY + 1), "over the"),
    (b"Content-Length: 10\r\n\r\n{}", "ended after 2 of 10"),
    (b"Content-Length: 2\r\n\r\n[]", "JSON list, not an object"),
    (b"Content-Length: 3\r\n\r\n{x}", "not UTF-8 JSON"),
    (b"Content-Length: 2\r\n", "ended inside a header"),
    (b"Content-Length 2\r\n\r\n{}", "has no ':'"),
    (b"X" * 9000, "longer than"),
])
def test_bad_frames_are_framing_errors(data, words):
    with pytest.raises(FramingError, match=words):
        Reader(io.BytesIO(data)).read()


def test_the_error_names_the_offset_of_the_bad_frame():
    good = encode({"seq": 1})
    r = Reader(io.BytesIO(good + b"Content-Length: x\r\n\r\n"))
    assert r.read() == {"seq": 1}
    with pytest.raises(FramingError) as e:
        r.read()
    assert e.value.offset == len(good)
    assert f"byte {len(good)}" in str(e.value)


def test_writer_is_whole_messages_from_many_threads():
    out = io.BytesIO()
    w = Writer(out)
    threads = [threading.Thread(target=lambda k=k: [w.write({"t": k, "i": i}) for i in range(50)]) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    r = Reader(io.BytesIO(out.getvalue()))
    got = [r.read() for _ in range(200)]
    assert sorted((m["t"], m["i"]) for m in got) == [(k, i) for k in range(4) for i in range(50)]


def test_writer_reports_a_closed_peer():
    out = io.BytesIO()
    w = Writer(out)
    out.close()
    assert w.write({"seq": 1}) is False
    assert w.closed
