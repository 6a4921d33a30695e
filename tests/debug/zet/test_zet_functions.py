"""The zetDebug* table against seed 001's declarations and parameter annotations."""
import re

import pytest
from zet_seed import count_declarations, parse_functions, seed_text

from gpudbg.debug.zet import functions as F


def test_twelve_functions_in_seed_order():
    seed = parse_functions()
    assert len(seed) == count_declarations() == len(F.FUNCTIONS) == 12
    assert [f.name for f in seed] == [f.name for f in F.FUNCTIONS]


def test_signatures_versions_and_summaries_match():
    for s, ours in zip(parse_functions(), F.FUNCTIONS):
        assert [(p.type, p.name) for p in ours.params] == s.params, ours.name
        assert ours.since == s.since, ours.name
        assert ours.summary == s.summary, ours.name


def test_c_signature_is_in_the_seed_verbatim():
    text = seed_text()
    for f in F.FUNCTIONS:
        assert f.c_signature() + "#" in text, f.name


def test_annotations_match_the_parameter_lists():
    for s, ours in zip(parse_functions(), F.FUNCTIONS):
        assert set(s.annotations) == {p.name for p in ours.params}, ours.name
        for p in ours.params:
            assert p.annotation == s.annotations[p.name], f"{ours.name}.{p.name}"


def test_directions_are_consistent_with_c_types():
    for f in F.FUNCTIONS:
        for p in f.params:
            if not p.is_pointer or p.type.startswith("const "):
                assert p.direction is F.IN, f"{f.name}.{p.name}"


def test_facade_shape():
    assert [p.name for p in F.function("zetDebugAttach").outputs] == ["phDebug"]
    assert [p.name for p in F.function("zetDebugReadEvent").inputs] == ["hDebug", "timeout", "event"]
    assert [p.name for p in F.function("zetDebugReadEvent").outputs] == ["event"]
    props = F.function("zetDebugGetThreadRegisterSetProperties")
    assert [p.name for p in props.outputs] == ["pCount", "pRegisterSetProperties"]
    assert props.params[-1].optional and props.params[-1].range == "0, *pCount"
    assert F.function("zetDebugWriteRegisters").outputs == ()
    assert [p.name for p in F.function("zetDebugReadRegisters").outputs] == ["pRegisterValues"]
    assert F.function("zetDebugDetach").params[0].release
    assert all(re.fullmatch(r"zetDebug\w+", f.name) for f in F.FUNCTIONS)


def test_unknown_names_explain_themselves():
    with pytest.raises(KeyError, match="no zetDebug function named 'zetdebugattach'.*did you mean zetDebugAttach"):
        F.function("zetdebugattach")
    with pytest.raises(KeyError, match="no zetDebug function named 'zetDebugStep' in seed 001"):
        F.function("zetDebugStep")


def test_param_parser_rejects_garbage():
    with pytest.raises(ValueError, match="unknown qualifier"):
        F._p("uint32_t x", "[in][sideways]")
    with pytest.raises(ValueError, match="unparsed annotation"):
        F._p("uint32_t x", "in")
