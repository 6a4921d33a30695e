"""Instructions whose only effect is ordering, scheduling or caching, which
the simulator accepts in exactly the forms the PTX ISA defines and executes
as what they mean here -- nothing:

- membar / fence (every .sem and scope, .op_restrict, .proxy.*): memory
  operations happen in one global order and there is one proxy (a bulk or
  cp.async copy reads its source at issue, after every earlier generic
  write of the thread), so every fence is already satisfied;
- griddepcontrol.launch_dependents / .wait: a dependent grid starts only
  after this one finished, so the prerequisite grids' memory is always
  visible and the early-launch hint has nothing to start;
- setmaxnreg.inc/.dec: the register file is not partitioned between warps
  here, so a request is granted at once (its count is still checked);
- prefetch, prefetchu, applypriority, discard, createpolicy: there are no
  caches. discard leaves the old bytes, one of the indeterminate values the
  ISA allows a read after it to return; createpolicy returns an opaque
  policy word that encodes its operands (different policies differ).

Misspelled or out-of-range forms are rejected at load time, naming the form.
"""
from __future__ import annotations

import numpy as np

from gpudbg.ptx import ir
from gpudbg.ptx.types import PTX_TYPES
from gpudbg.sim.ops.base import Built, Mods, UnsupportedInstruction, op

_SEMS = ("sc", "acq_rel", "acquire", "release", "relaxed")
_SCOPES = ("cta", "cluster", "gpu", "sys")
_PROXY_KINDS = ("alias", "async", "async.global", "async.shared::cta", "async.shared::cluster",
                "tensormap::generic", "async::generic")


def _nothing(X, idx) -> None:
    return None


def _forms(*forms: str) -> str:
    return ", ".join(forms)


def _exact(inst, allowed: dict[tuple[str, ...], int]) -> int:
    """The operand count of the instruction's modifier sequence, which must
    be one of `allowed` (modifiers in the ISA's order)."""
    mods = tuple(inst.modifiers)
    if mods not in allowed:
        raise UnsupportedInstruction(
            f"{inst.opcode}{''.join('.' + m for m in mods)} is not a form of {inst.opcode} (the ISA's: "
            + _forms(*(inst.opcode + "".join("." + m for m in f) for f in allowed)) + ")")
    n = allowed[mods]
    if len(inst.operands) != n:
        raise UnsupportedInstruction(f"{inst.opcode} takes {n} operand(s), got {len(inst.operands)}")
    return n


@op("membar")
def build_membar(inst, tc) -> Built:
    _exact(inst, {("cta",): 0, ("gl",): 0, ("sys",): 0, ("proxy", "alias"): 0})
    return Built(_nothing, info={"hint": "ordering"})


def _fence_forms() -> dict[tuple[str, ...], int]:
    forms: dict[tuple[str, ...], int] = {}
    for scope in _SCOPES:
        forms[(scope,)] = 0
        for sem in ("sc", "acq_rel"):
            forms[(sem, scope)] = 0
    for sem in ("acquire", "release"):
        forms[(sem, "sync_restrict::shared::cluster", "cluster")] = 0
        forms[(sem, "sync_restrict::shared::cta", "cluster")] = 0
    forms[("mbarrier_init", "release", "cluster")] = 0
    forms[("op_restrict", "release", "cluster")] = 0
    for kind in _PROXY_KINDS[:5]:
        forms[("proxy",) + tuple(kind.split("."))] = 0
    for scope in _SCOPES:
        forms[("proxy", "tensormap::generic", "release", scope)] = 0
        forms[("proxy", "tensormap::generic", "acquire", scope)] = 2
    for sem in ("acquire", "release"):
        for where in ("sync_restrict::shared::cluster", "sync_restrict::shared::cta"):
            forms[("proxy", "async::generic", sem, where, "cluster")] = 0
    return forms


_FENCES = _fence_forms()


@op("fence")
def build_fence(inst, tc) -> Built:
    n = _exact(inst, _FENCES)
    if n == 2:
        if not isinstance(inst.operands[0], ir.Address):
            raise UnsupportedInstruction("fence.proxy.tensormap::generic.acquire takes [addr], 128")
        if not isinstance(inst.operands[1], ir.Immediate) or inst.operands[1].value != 128:
            raise UnsupportedInstruction("fence.proxy.tensormap::generic.acquire's size must be 128")
    return Built(_nothing, info={"hint": "ordering"})


@op("griddepcontrol")
def build_griddepcontrol(inst, tc) -> Built:
    _exact(inst, {("launch_dependents",): 0, ("wait",): 0})
    return Built(_nothing, info={"hint": "scheduling"})


@op("setmaxnreg")
def build_setmaxnreg(inst, tc) -> Built:
    _exact(inst, {("inc", "sync", "aligned", "u32"): 1, ("dec", "sync", "aligned", "u32"): 1})
    n = inst.operands[0]
    if not isinstance(n, ir.Immediate) or not isinstance(n.value, int) or not (24 <= n.value <= 256) \
            or n.value % 8:
        raise UnsupportedInstruction("setmaxnreg's register count must be a constant multiple of 8 in 24..256")
    return Built(_nothing, info={"hint": "registers"})


def _address(inst, i: int) -> None:
    if len(inst.operands) <= i or not isinstance(inst.operands[i], ir.Address):
        raise UnsupportedInstruction(f"{inst.opcode} takes a memory operand [a]")


def _prefetch_forms() -> dict[tuple[str, ...], int]:
    forms = {(lvl,): 1 for lvl in ("L1", "L2")}
    for space in ("global", "local"):
        for lvl in ("L1", "L2"):
            forms[(space, lvl)] = 1
    forms[("global", "L2::evict_last")] = 1
    forms[("global", "L2::evict_normal")] = 1
    for space in ((), ("const",), ("param",)):
        forms[space + ("tensormap",)] = 1
    return forms


_PREFETCHES = _prefetch_forms()


@op("prefetch")
def build_prefetch(inst, tc) -> Built:
    _exact(inst, _PREFETCHES)
    _address(inst, 0)
    return Built(_nothing, info={"hint": "cache"})


@op("prefetchu")
def build_prefetchu(inst, tc) -> Built:
    _exact(inst, {("L1",): 1})
    _address(inst, 0)
    return Built(_nothing, info={"hint": "cache"})


@op("applypriority")
def build_applypriority(inst, tc) -> Built:
    _exact(inst, {("L2::evict_normal",): 2, ("global", "L2::evict_normal"): 2})
    _address(inst, 0)
    _size_128(inst, 1)
    return Built(_nothing, info={"hint": "cache"})


@op("discard")
def build_discard(inst, tc) -> Built:
    _exact(inst, {("L2",): 2, ("global", "L2"): 2})
    _address(inst, 0)
    _size_128(inst, 1)
    return Built(_nothing, info={"hint": "cache"})


def _size_128(inst, i: int) -> None:
    s = inst.operands[i]
    if not isinstance(s, ir.Immediate) or s.value != 128:
        raise UnsupportedInstruction(f"{inst.opcode}'s size operand must be 128")


_PRIMARY = ("L2::evict_last", "L2::evict_normal", "L2::evict_first", "L2::evict_unchanged")
_KIND_CODE = {"fractional": 1, "range": 2, "cvt": 3}


@op("createpolicy")
def build_createpolicy(inst, tc) -> Built:
    m = Mods(inst)
    kind = m.take("fractional", "range", "cvt")
    if kind is None:
        raise UnsupportedInstruction("createpolicy needs .fractional, .range or .cvt")
    if kind == "cvt":
        if tuple(inst.modifiers) != ("cvt", "L2", "b64"):
            raise UnsupportedInstruction("the form is createpolicy.cvt.L2.b64 policy, access-property")
        d = tc.writer(inst.operands[0])
        prop = tc.reader(inst.operands[1], PTX_TYPES["b64"])
        # a CUDA access property already is a policy word; keep its bits
        return Built(lambda X, idx: d(X, idx, np.asarray(prop(X, idx)).astype(np.uint64)), info={"hint": "cache"})
    if kind == "range":
        m.take("global")
    prios = [p for p in inst.modifiers if p in _PRIMARY]
    if not prios or len(prios) > 2 or (len(prios) == 2 and prios[1] not in ("L2::evict_first", "L2::evict_unchanged")):
        raise UnsupportedInstruction("createpolicy takes a primary L2::evict_* priority and an optional "
                                     "secondary .L2::evict_first or .L2::evict_unchanged")
    m.take("L2::evict_unchanged")   # the other priorities are IGNORABLE modifiers
    if not m.flag("b64"):
        raise UnsupportedInstruction("createpolicy's result is .b64")
    m.finish()
    d = tc.writer(inst.operands[0])
    code = (_KIND_CODE[kind] << 60) | (_PRIMARY.index(prios[0]) << 56) | \
        ((_PRIMARY.index(prios[1]) + 1 if len(prios) > 1 else 0) << 52)
    ops = inst.operands
    if kind == "fractional":
        if len(ops) not in (1, 2):
            raise UnsupportedInstruction("createpolicy.fractional takes policy{, fraction}")
        frac = tc.reader(ops[1], PTX_TYPES["f32"]) if len(ops) == 2 else (lambda X, idx: np.float32(1.0))

        def run(X, idx):
            f = np.asarray(frac(X, idx), dtype=np.float32)
            bits = np.clip(np.round(f * 255), 0, 255).astype(np.uint64)
            d(X, idx, np.uint64(code) | bits)
        return Built(run, info={"hint": "cache"})
    if len(ops) != 4 or not isinstance(ops[1], ir.Address):
        raise UnsupportedInstruction("createpolicy.range takes policy, [a], primary-size, total-size")
    return Built(lambda X, idx: d(X, idx, np.uint64(code)), info={"hint": "cache"})
