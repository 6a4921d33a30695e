"""Load rate of the PTX corpus (tests/data/ptx_corpus: real kernels from
CUB, libcu++, cooperative groups, tensor cores, textures and this
repository's own test sources, compiled by nvcc 13 plain and with -G; see its README). Loading
only, nothing runs. The rates are printed (pytest -s); every module
loads (issue 11), and were one to fail, its message must name the
instruction or feature that stopped it."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from gpudbg.sim.corpus_load import failure_feature, load_rate, main, summary

CORPUS = Path(__file__).resolve().parent.parent / "data" / "ptx_corpus"
#: measured when the corpus was checked in: plain 53/54 (98.1%), -G 44/45 (97.8%)
FLOORS = {"plain": 1.0, "G": 1.0}     # every module of the corpus loads


@lru_cache(maxsize=None)
def results(build: str):
    return tuple(load_rate([CORPUS / build], CORPUS))


@pytest.mark.parametrize("build", sorted(FLOORS))
def test_load_rate_does_not_fall(build):
    rs = results(build)
    s = summary(list(rs))
    print(f"\n{build}: {s['loaded']}/{s['modules']} PTX modules load ({100 * s['rate']:.1f}%); "
          f"failures by first unsupported feature: {s['failures_by_feature']}")
    assert s["modules"] >= 35
    assert s["rate"] >= FLOORS[build]


@pytest.mark.parametrize("build", sorted(FLOORS))
def test_every_failure_names_what_stopped_it(build):
    for r in results(build):
        if not r.ok:
            assert r.feature, r.message
            assert r.feature in r.message and r.path in r.message, r


def test_loaded_modules_have_kernels():
    assert all(r.kernels > 0 for b in FLOORS for r in results(b) if r.ok)


def test_failure_feature_reads_loader_and_parser_messages():
    assert failure_feature("k.ptx:3:1: unsupported instruction 'tex' in kernel k: tex.2d.v4.f32.f32 "
                           "{%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}];") == "tex"
    assert failure_feature("k.ptx:9:2: cvta.param is not supported in kernel k: cvta.param.u64 %rd1, %rd2;") \
        == "cvta.param.u64"
    assert failure_feature("k.ptx:4:5: unknown special register '%foo'") == "%foo"


def test_report_command(capsys, tmp_path):
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n"
                   "frobnicate.b32 %r1;\nret;\n}\n")
    assert main([str(bad)]) == 0
    out = capsys.readouterr().out
    assert "0/1 modules load" in out and "frobnicate" in out
    assert main([str(tmp_path / "missing.ptx")]) == 2
