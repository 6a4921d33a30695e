"""Which instructions of a native run really ran compiled: the memory
tests assert that the form under test is inside a compiled segment or
region, so a lowering that silently refuses it cannot pass by comparing
the interpreter with itself."""
from __future__ import annotations


def native_texts(result) -> list[str]:
    """Instruction texts covered by the program's compiled segments and regions."""
    prog = result.module.program
    covered: set[int] = set()
    for c in prog.code:
        for attr in ("native", "region"):
            seg = getattr(c, attr, None)
            if seg is not None and hasattr(seg, "start") and hasattr(seg, "end"):
                covered.update(range(seg.start, seg.end))
    return [prog.code[pc].inst.text for pc in sorted(covered)]


def assert_native(result, *fragments: str) -> None:
    """Every fragment appears in some natively covered instruction's text."""
    texts = native_texts(result)
    for f in fragments:
        assert any(f in t for t in texts), f"{f!r} did not run natively; native: {texts}"
