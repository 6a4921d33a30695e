"""gpudbg.sim.arith: exact PTX numeric semantics as vectorized numpy functions.

The executor applies one PTX instruction to all lanes at once by calling the
function for it here with register arrays.  Families live in submodules with
overlapping names (integer.mul vs floating.mul), so they are exported both
as modules and, where names are unique, as functions; prefer the module
form (`arith.integer.mul`, `arith.floating.mul`) for the clashing ones.
"""
from __future__ import annotations

from . import bits, compare, convert, fapprox, fbasic, floating, half, integer, rounding, video
from ._common import ArithError, INT_ROUNDING_MODES, ROUNDING_MODES
from .bits import (bfe, bfi, bfind, bmsk, brev, clz, cnot, fns, lop3, popc, prmt, shf, shl,
                   shr)
from .compare import COMPARISONS
from .compare import compare as compare_values
from .convert import cvt, cvt_pack
from .fapprox import cos, ex2, lg2, rsqrt, sin, tanh
from .fbasic import (CANONICAL_NAN_BITS, canonical_nan, canonicalize, copysign,
                     flush_subnormals, saturate, testp)
from .floating import fma
from .half import (bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16, half_abs, half_add,
                   half_fma, half_max, half_min, half_mul, half_neg, half_sub, pack_x2,
                   unpack_x2)
from .integer import (add_cc, add_sat, dp2a, dp4a, mad24, mad_cc, mul24, sad, sub_cc, sub_sat,
                      szext)
from .video import (vabsdiff2, vabsdiff4, vadd2, vadd4, vavrg2, vavrg4, vmax2, vmax4, vmin2,
                    vmin4, vop, vsub2, vsub4)

__all__ = [
    "bits", "compare", "convert", "fapprox", "fbasic", "floating", "half", "integer",
    "rounding", "video", "ArithError", "INT_ROUNDING_MODES", "ROUNDING_MODES",
    "bfe", "bfi", "bfind", "bmsk", "brev", "clz", "cnot", "fns", "lop3", "popc", "prmt", "shf",
    "shl", "shr", "COMPARISONS", "compare_values", "cvt", "cvt_pack", "cos", "ex2", "lg2",
    "rsqrt", "sin", "tanh", "CANONICAL_NAN_BITS", "canonical_nan", "canonicalize", "copysign",
    "flush_subnormals", "saturate", "testp", "fma", "bf16_to_f32", "f16_to_f32", "f32_to_bf16",
    "f32_to_f16", "half_abs", "half_add", "half_fma", "half_max", "half_min", "half_mul",
    "half_neg", "half_sub", "pack_x2", "unpack_x2", "add_cc", "add_sat", "dp2a", "dp4a",
    "mad24", "mad_cc", "mul24", "sad", "sub_cc", "sub_sat", "szext", "vabsdiff2", "vabsdiff4",
    "vadd2", "vadd4", "vavrg2", "vavrg4", "vmax2", "vmax4", "vmin2", "vmin4", "vop", "vsub2",
    "vsub4",
]
