"""The latest-entries table against the CUDBGAPI_st struct of the header."""
import re

import pytest
from cudbg_seed import count_api_signatures, param_docs, parse_api_table, seed_text

from gpudbg.debug.cudbg import api_table as A


OUTPUT_WORDS = r"\(output\)|^(the )?returned\b|\b(would|will) be (stored|set|populated)\b|is written here"


def family(name):
    return re.sub(r"\d+$", "", name)


def test_latest_and_dropped_cover_every_slot_once():
    seed = [e.name for e in parse_api_table()]
    assert len(seed) == count_api_signatures() == A.HEADER_TABLE_SIZE == 148
    ours = [e.name for e in A.LATEST_ENTRIES] + [d.name for d in A.SUPERSEDED_ENTRIES]
    assert sorted(ours) == sorted(seed)
    assert [n for n in seed if n in A.LATEST_BY_NAME] == [e.name for e in A.LATEST_ENTRIES], "header order"


def test_signatures_match_the_header():
    seed = {e.name: e for e in parse_api_table()}
    for entry in A.LATEST_ENTRIES:
        assert [(p.type, p.name) for p in entry.params] == seed[entry.name].params, entry.name
        assert entry.since == seed[entry.name].since, entry.name


def test_c_signature_reproduces_the_declaration():
    text = seed_text()
    squash = lambda s: re.sub(r"\s*\*\s*", "*", " ".join(s.split()))  # noqa: E731
    header = squash(text)
    for entry in A.LATEST_ENTRIES:
        assert squash(entry.c_signature()) in header, entry.name


def test_kept_entries_are_the_latest_of_their_family():
    seed = parse_api_table()
    by_name = {e.name: e for e in seed}
    for entry in A.LATEST_ENTRIES:
        assert not by_name[entry.name].deprecated, f"{entry.name} is marked \\deprecated"
        rivals = [e.name for e in seed if family(e.name) == family(entry.name) and e.name != entry.name]
        if re.search(r"\d+$", entry.name):
            newer = [r for r in rivals if not re.search(r"\d+$", r)
                     or int(re.search(r"\d+$", r).group()) > int(re.search(r"\d+$", entry.name).group())]
            assert not newer, f"{entry.name} is superseded by {newer}"
    for dropped in A.SUPERSEDED_ENTRIES:
        marked = by_name[dropped.name].deprecated
        assert marked == dropped.reason.startswith("deprecated"), dropped.name
        if not marked:
            assert family(dropped.successor) == family(dropped.name)
        if dropped.successor:
            assert dropped.successor in A.LATEST_BY_NAME, dropped


def test_directions_agree_with_the_c_types_and_the_comments():
    seed = {e.name: e for e in parse_api_table()}
    for entry in A.LATEST_ENTRIES:
        docs = param_docs(seed[entry.name].doc)
        for p in entry.params:
            where = f"{entry.name}.{p.name}"
            if not p.is_pointer or p.type.startswith("const "):
                assert p.direction is A.IN, where
            text = docs.get(p.name, "")
            if re.search(OUTPUT_WORDS, text):
                assert p.direction is not A.IN, where
    assert A.entry("getGridAttributes").params[3].direction is A.INOUT
    assert A.entry("lookupDeviceCodeSymbol").params[0].direction is A.IN


def test_inputs_outputs_split():
    e = A.entry("getDeviceInfo")
    assert [p.name for p in e.inputs] == ["dev", "type", "length"]
    assert [p.name for p in e.outputs] == ["buffer", "dataLength"]
    assert A.entry("initialize").c_signature() == "CUDBGResult (*initialize)(void);"


def test_dropped_and_unknown_names_explain_themselves():
    with pytest.raises(KeyError, match="readWarpState60 is not a latest entry.*use readWarpState"):
        A.entry("readWarpState60")
    with pytest.raises(KeyError, match="getPhysicalRegister30 is not a latest entry \\(deprecated in CUDA 3.1\\)"):
        A.entry("getPhysicalRegister30")
    with pytest.raises(KeyError, match="no entry named 'frobnicate'"):
        A.entry("frobnicate")


def test_print_counts():
    marked = sum(d.reason.startswith("deprecated") for d in A.SUPERSEDED_ENTRIES)
    print(f"\nCUDBGAPI_st: {A.HEADER_TABLE_SIZE} slots, {len(A.LATEST_ENTRIES)} latest entries, "
          f"{marked} marked deprecated, {len(A.SUPERSEDED_ENTRIES) - marked} superseded by a newer version")
    assert len(A.LATEST_ENTRIES) == 108
