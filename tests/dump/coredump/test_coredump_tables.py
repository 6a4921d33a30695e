"""Row tables: sizes match COREDUMP-FORMAT.md §3, and write -> read round
trips for every table and layout version, including rows read with a
larger (newer driver) or smaller (older driver) entry size."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.dump.coredump.tables import (
    TABLES, Layout, TableError, pack_rows, row_layout, unpack_rows,
)

DOC_SIZES = {
    ("device", 346): 72, ("device", 400): 80, ("device", 575): 88, ("context", 400): 40,
    ("module", 400): 8, ("grid", 400): 104, ("grid", 525): 120, ("grid", 565): 136,
    ("constbank", 550): 16, ("sm", 400): 8, ("sm", 555): 40, ("cta", 400): 24, ("cta", 525): 40,
    ("cta", 565): 56, ("warp", 400): 32, ("warp", 525): 40, ("warp", 570): 48, ("warp", 575): 64,
    ("lane", 400): 48, ("lane", 575): 56, ("backtrace", 400): 24, ("meta", 565): 24,
}


@pytest.mark.parametrize("key", sorted(DOC_SIZES))
def test_row_sizes_match_the_format_doc(key):
    assert row_layout(*key).size == DOC_SIZES[key]


def _rows(table, version):
    lay = row_layout(table, version)
    field = {n: st.integers(0, (1 << {"u64": 64, "u32": 32, "u16": 16}[t]) - 1) for n, t, _ in lay.fields}
    return st.lists(st.fixed_dictionaries(field), max_size=4)


TABLE_VERSIONS = [(t, int(v)) for t in TABLES for v in Layout
                  if any(since <= v for since, _, _ in TABLES[t])]


@settings(max_examples=6, deadline=None)
@given(data=st.data(), pad=st.sampled_from([0, 16]))
@pytest.mark.parametrize("table,version", TABLE_VERSIONS)
def test_round_trip_any_layout_and_padding(table, version, data, pad):
    rows = data.draw(_rows(table, version))
    size = row_layout(table, version).size
    raw = pack_rows(table, rows, version)
    if pad:  # a newer driver's longer rows: unknown tail bytes are stepped over
        raw = b"".join(raw[i:i + size] + b"\xee" * pad for i in range(0, len(raw), size))
    back = unpack_rows(table, raw, size + pad)
    names = set(row_layout(table, version).names)
    assert [{k: v for k, v in r.items() if k in names} for r in back] == rows


def test_older_rows_lack_newer_fields():
    raw = pack_rows("device", [dict(devId=3, numSMs=80)], Layout.R346)
    (row,) = unpack_rows("device", raw, 72)
    assert row["devId"] == 3 and row["numSMs"] == 80 and "numUniformRegsPrWarp" not in row


def test_bad_rows_are_rejected_with_the_field_named():
    with pytest.raises(TableError, match="numSMs"):
        pack_rows("device", [dict(numSMs=1 << 32)])
    with pytest.raises(TableError, match="bogus"):
        pack_rows("lane", [dict(bogus=1)])
    with pytest.raises(TableError, match="whole number"):
        unpack_rows("lane", b"\0" * 50, 48)
    with pytest.raises(TableError, match="unknown coredump table"):
        row_layout("nope", 400)
