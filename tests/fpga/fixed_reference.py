"""Fixed-point arithmetic from its definitions, in exact rationals: the
reference cuvil_fixed.h and the FPGA target's designs are checked against.

Each quantization mode is a rounding rule on the exact rational value (floor,
toward zero, ties up / toward zero / down / away from zero / to even), each
overflow mode a rule on the rounded integer (modulo 2^W, clamp, zero,
symmetric clamp), as Xilinx documents ap_fixed and Intel ac_fixed.
"""

import math
from fractions import Fraction


def rounded(x, mode):
    """The integer the quantization mode makes of the rational x."""
    floor = math.floor(x)
    frac = x - floor
    nearest = floor + (1 if frac > Fraction(1, 2) else 0)
    tie = frac == Fraction(1, 2)
    if mode == "TRN":
        return floor
    if mode == "TRN_ZERO":
        return floor if x >= 0 else math.ceil(x)
    if not tie:
        return nearest
    return {"RND": floor + 1,
            "RND_ZERO": floor if x > 0 else floor + 1,
            "RND_MIN_INF": floor,
            "RND_INF": floor + 1 if x > 0 else floor,
            "RND_CONV": floor + (floor % 2)}[mode]


def fitted(n, width, signed, mode):
    """The stored integer the overflow mode makes of the integer n."""
    lo, hi = (-(2 ** (width - 1)), 2 ** (width - 1) - 1) if signed else (0, 2 ** width - 1)
    if mode == "WRAP":
        return (n - lo) % 2 ** width + lo
    if mode == "SAT_ZERO":
        return n if lo <= n <= hi else 0
    if mode == "SAT_SYM" and signed:
        lo = -hi
    return min(max(n, lo), hi)


def reference(value, width, integer, signed, q, o):
    """The stored integer of `value` (a Fraction) in fixed<W, I, S, Q, O>."""
    return fitted(rounded(value * Fraction(2) ** (width - integer), q), width, signed, o)
