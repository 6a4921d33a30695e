"""Command-word resolution (gdb's prefix and alias rules), the value
history, register value conversion, the pipe REPL and the info renderer."""
from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudbg.cli.debugger.commands import Command, CommandError, CommandTable, resolve_word
from gpudbg.cli.debugger.context import ConvenienceStore, _as_dtype
from gpudbg.cli.debugger.info import render
from gpudbg.cli.debugger.repl import PROMPT, pipe_reader
from gpudbg.cli.debugger.values import Value


def _table():
    seen = []
    t = CommandTable()
    for name, aliases in (("delete", ("d",)), ("disable", ("disa",)), ("disassemble", ("disas",)),
                          ("print", ("p",)), ("info", ("i",)), ("next", ("n",)), ("nexti", ("ni",))):
        t.add(Command(name, lambda rest, name=name: seen.append((name, rest)), "help", aliases=aliases))
    return t, seen


def test_exact_alias_and_unique_prefix():
    t, _ = _table()
    assert t.lookup("d").name == "delete"
    assert t.lookup("disas").name == "disassemble"
    assert t.lookup("disab").name == "disable"
    assert t.lookup("pri").name == "print"
    assert t.lookup("next").name == "next" and t.lookup("nexti").name == "nexti"


def test_ambiguous_and_unknown_words():
    t, _ = _table()
    with pytest.raises(CommandError, match='Ambiguous command "di": disable, disassemble'):
        t.lookup("di")
    with pytest.raises(CommandError, match='Undefined command: "frobnicate"'):
        t.lookup("frobnicate")
    with pytest.raises(CommandError, match="Valid choices"):
        resolve_word("zz", ("devices", "sms"), "info cuda command")


def test_split_ends_the_word_at_a_slash():
    t, _ = _table()
    cmd, rest = t.split("p/x $r1")
    assert cmd.name == "print" and rest == "/x $r1"


def test_duplicate_names_are_rejected():
    t, _ = _table()
    with pytest.raises(ValueError):
        t.add(Command("d", lambda r: None, "x"))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["delete", "disable", "disassemble", "print", "info", "next", "nexti"]))
def test_every_name_resolves_to_itself(name):
    t, _ = _table()
    assert t.lookup(name).name == name


def test_value_history_spellings():
    s = ConvenienceStore()
    for v in (1, 2, 3):
        assert s.record(Value.from_int(v)) == v
    assert s.get("1").as_int() == 1 and s.get("$").as_int() == 3
    assert s.get("$$").as_int() == 2 and s.get("$$2").as_int() == 1
    assert s.get("4") is None and s.get("$$5") is None
    s.set("foo", Value.from_int(9))
    assert s.get("foo").as_int() == 9


def test_register_values_convert_to_the_register_dtype():
    assert _as_dtype(Value.from_int(-1), np.dtype(np.uint32)) == np.uint32(0xFFFFFFFF)
    assert _as_dtype(Value.from_float(2.5, "float"), np.dtype(np.float32)) == np.float32(2.5)
    assert _as_dtype(5, np.dtype(np.int64)) == 5
    assert _as_dtype(b"\x01\x02", np.dtype(np.uint32)) == 0x0201
    assert _as_dtype(3, np.dtype(np.bool_)) == np.bool_(True)


def test_pipe_reader_echoes_the_prompt_and_ends(capsys):
    read = pipe_reader(io.StringIO("info cuda devices\nquit\n"))
    assert read() == "info cuda devices" and read() == "quit" and read() is None
    assert capsys.readouterr().out.count(PROMPT) == 3


def test_render_inserts_group_lines_between_aligned_rows():
    text = render(["", "Ln", "State"], [("Device 0 SM 0 Warp 0", ["*", "0", "active"]),
                                        (None, [" ", "10", "divergent"])], right={"Ln"})
    lines = text.splitlines()
    assert lines[0].split() == ["Ln", "State"]
    assert lines[1] == "Device 0 SM 0 Warp 0"
    assert lines[2].split() == ["*", "0", "active"] and lines[3].split() == ["10", "divergent"]
    assert lines[2].index("active") == lines[3].index("divergent")
