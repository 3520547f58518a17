"""cuvil_fixed.h, the fixed-point type of the FPGA target's generated HLS
C++, against exact rational arithmetic (fractions.Fraction).

The reference below is written from the definitions, not from bits: each
quantization mode is a rounding rule on the exact rational value (floor,
toward zero, ties up / toward zero / down / away from zero / to even) and
each overflow mode a rule on the rounded integer (modulo 2^W, clamp,
zero, symmetric clamp). g++ compiles one program that assigns every case
to every type and mode (signed and unsigned; fraction bits positive, zero
and negative), from fixed-point values of other types, from doubles
(exact ties, infinities, NaN, tiny and huge values) and from the exact
results of products and sums; its bits must be the reference's.
"""

import itertools
import math
import pathlib
import subprocess
from fractions import Fraction

import pytest

from fixed_reference import fitted, reference, rounded  # noqa: F401

ROOT = pathlib.Path(__file__).resolve().parents[2]
HEADER = ROOT / "cuvil" / "targets" / "fpga" / "hls" / "cuvil_fixed.h"

QUANTIZATION = ["TRN", "TRN_ZERO", "RND", "RND_ZERO", "RND_MIN_INF", "RND_INF",
                "RND_CONV"]
OVERFLOW = ["WRAP", "SAT", "SAT_ZERO", "SAT_SYM"]
# (W, I, signed): fraction bits 5, 10, 0, 12 (I < 0) and -2 (I > W).
TYPES = [(8, 3, True), (8, 3, False), (16, 6, True), (6, 6, True),
         (10, -2, True), (12, 14, True), (12, 14, False)]


def source_values():
    """Fixed-point sources: (fraction bits, raw) of a 64-bit signed type,
    chosen around every rounding point of the targets (exact ties, one
    quantum either side, negative ones) and beyond their ranges."""
    cases = []
    for f2 in (0, 8, 20):
        raws = {0, 1, -1, 2 ** 40, -(2 ** 40), 2 ** 62, -(2 ** 63), 2 ** 63 - 1}
        for target_f in (5, 10, 0, 12, -2):
            shift = f2 - target_f
            for k in range(-5, 6):
                for delta in (-1, 0, 1):
                    if shift > 0:
                        raws.add(k * 2 ** shift + delta)  # ties at k/2
                        raws.add((2 * k + 1) * 2 ** (shift - 1) + delta)
                    else:
                        raws.add(k + delta)
        for big in (127, 128, 255, 256, 4095, 4096, 32767, 32768):
            for sign in (1, -1):
                raws.add(sign * big * 2 ** f2)
                raws.add(sign * (big * 2 ** f2 + 2 ** f2 // 2))
        cases.append((f2, sorted(r for r in raws if -(2 ** 63) <= r < 2 ** 63)))
    return cases


DOUBLES = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 1.25, -1.25, 0.75, -0.75,
           0.015625, -0.015625, 0.0234375, -0.0234375, 3.1, -3.1, 19.0, -19.0,
           31.0, 127.9, -128.1, 1e-300, -1e-300, 2.0 ** 70, -(2.0 ** 70),
           2.0 ** 70 + 2.0 ** 40, 1e300, math.inf, -math.inf, math.nan,
           2.0 ** -20, -(2.0 ** -20), 12345.6789, -4096.5]


def double_value(d):
    return Fraction(d)


def type_name(width, integer, signed, q, o):
    return f"cuvil::fixed<{width}, {integer}, {'true' if signed else 'false'}, " \
           f"cuvil::Q::{q}, cuvil::O::{o}>"


def build_and_run(tmp_path, program):
    source = tmp_path / "fixed_test.cpp"
    source.write_text(program)
    binary = tmp_path / "fixed_test"
    subprocess.run(["g++", "-std=c++14", "-O1", "-Wall", "-Wextra", "-Werror",
                    f"-I{ROOT}", "-o", str(binary), str(source)], check=True)
    return subprocess.run([str(binary)], check=True, capture_output=True,
                          text=True).stdout.split()


def test_assignment_matches_exact_rationals(tmp_path):
    sources = source_values()
    lines = ['#include "cuvil/targets/fpga/hls/cuvil_fixed.h"', "#include <cmath>",
             "#include <cstdio>", "#include <limits>", "int main() {"]
    expected = []
    for f2, raws in sources:
        array = ", ".join(f"(long long)({r}LL)" if r != -(2 ** 63) else
                          "std::numeric_limits<long long>::min()" for r in raws)
        lines.append(f"  {{ const long long raws[] = {{{array}}};")
        for (w, i, s), q, o in itertools.product(TYPES, QUANTIZATION, OVERFLOW):
            lines.append(f"    for (long long r : raws) std::printf(\"%lld\\n\", "
                         f"(long long)({type_name(w, i, s, q, o)}("
                         f"cuvil::fixed<64, {64 - f2}, true>::from_raw(r)).raw()));")
            expected += [reference(Fraction(r, 2 ** f2), w, i, s, q, o) for r in raws]
        lines.append("  }")
    doubles = ", ".join("NAN" if math.isnan(d) else "INFINITY" if d == math.inf else
                        "-INFINITY" if d == -math.inf else f"{d:.17g}" for d in DOUBLES)
    lines.append(f"  {{ const double values[] = {{{doubles}}};")
    for (w, i, s), q, o in itertools.product(TYPES, QUANTIZATION, OVERFLOW):
        lines.append(f"    for (double d : values) std::printf(\"%lld\\n\", "
                     f"(long long)({type_name(w, i, s, q, o)}(d).raw()));")
        for d in DOUBLES:
            if math.isnan(d):
                expected.append(0)
            elif math.isinf(d):
                # Beyond every range: wrapping keeps 0 low bits.
                expected.append(0 if o == "WRAP" else fitted(
                    int(math.copysign(2 ** 200, d)), w, s, o))
            else:
                expected.append(reference(double_value(d), w, i, s, q, o))
    lines += ["  }", "  return 0;", "}"]
    got = [int(v) for v in build_and_run(tmp_path, "\n".join(lines))]
    assert len(got) == len(expected)
    mismatches = [k for k, (a, b) in enumerate(zip(got, expected)) if a != b]
    assert not mismatches, f"{len(mismatches)} of {len(got)} differ, first at " \
        f"{mismatches[0]}: got {got[mismatches[0]]}, expected {expected[mismatches[0]]}"


# Xilinx UG1399's examples of each mode (ap_fixed<3, 2> and <4, 4>), as
# decimal values.
DOCUMENTED = [
    ((3, 2, "RND", "SAT"), 1.25, 1.5), ((3, 2, "RND", "SAT"), -1.25, -1.0),
    ((3, 2, "RND_ZERO", "SAT"), 1.25, 1.0), ((3, 2, "RND_ZERO", "SAT"), -1.25, -1.0),
    ((3, 2, "RND_MIN_INF", "SAT"), 1.25, 1.0), ((3, 2, "RND_MIN_INF", "SAT"), -1.25, -1.5),
    ((3, 2, "RND_INF", "SAT"), 1.25, 1.5), ((3, 2, "RND_INF", "SAT"), -1.25, -1.5),
    ((3, 2, "RND_CONV", "SAT"), 0.75, 1.0), ((3, 2, "RND_CONV", "SAT"), -0.75, -1.0),
    ((3, 2, "TRN", "SAT"), 1.25, 1.0), ((3, 2, "TRN", "SAT"), -1.25, -1.5),
    ((3, 2, "TRN_ZERO", "SAT"), 1.25, 1.0), ((3, 2, "TRN_ZERO", "SAT"), -1.25, -1.0),
    ((4, 4, "RND", "SAT"), 19.0, 7.0), ((4, 4, "RND", "SAT"), -19.0, -8.0),
    ((4, 4, "RND", "SAT_ZERO"), 19.0, 0.0), ((4, 4, "RND", "SAT_ZERO"), -19.0, 0.0),
    ((4, 4, "RND", "SAT_SYM"), 19.0, 7.0), ((4, 4, "RND", "SAT_SYM"), -19.0, -7.0),
    ((4, 4, "RND", "WRAP"), 31.0, -1.0), ((4, 4, "RND", "WRAP"), -19.0, -3.0),
]


def test_the_documented_examples(tmp_path):
    lines = ['#include "cuvil/targets/fpga/hls/cuvil_fixed.h"', "#include <cstdio>",
             "int main() {"]
    for (w, i, q, o), value, _ in DOCUMENTED:
        lines.append(f"  std::printf(\"%.17g\\n\", {type_name(w, i, True, q, o)}"
                     f"({value!r}).to_double());")
    lines += ["  return 0;", "}"]
    got = [float(v) for v in build_and_run(tmp_path, "\n".join(lines))]
    assert got == [want for _, _, want in DOCUMENTED]


def test_arithmetic_is_exact_until_assigned(tmp_path):
    """a * b + c in the full-precision result types (fixed<8, 3> x fixed<8,
    3> is fixed<16, 6>; the sum with fixed<10, 2> widens to fixed<17, 7>),
    then assigned: the same as rounding the exact rational once."""
    a_raws = [-128, -127, -77, -1, 0, 1, 45, 127]
    c_raws = [-512, -300, -1, 0, 1, 257, 511]
    targets = [(8, 4, True, q, o) for q in QUANTIZATION for o in OVERFLOW]
    lines = ['#include "cuvil/targets/fpga/hls/cuvil_fixed.h"', "#include <cstdio>",
             "#include <type_traits>",
             "typedef cuvil::fixed<8, 3> A;", "typedef cuvil::fixed<10, 2> C;",
             "static_assert(std::is_same<decltype(A() * A()), cuvil::fixed<16, 6>>::value, \"mult\");",
             "static_assert(std::is_same<decltype(A() * A() + C()), cuvil::fixed<17, 7>>::value, \"plus\");",
             "int main() {"]
    expected = []
    for a, b, c in itertools.product(a_raws, a_raws[::3], c_raws):
        exact = Fraction(a, 32) * Fraction(b, 32) + Fraction(c, 256)
        for w, i, s, q, o in targets:
            lines.append(f"  std::printf(\"%lld\\n\", (long long){type_name(w, i, s, q, o)}"
                         f"(A::from_raw({a}) * A::from_raw({b}) + C::from_raw({c})).raw());")
            expected.append(reference(exact, w, i, s, q, o))
        lines.append(f"  std::printf(\"%d\\n\", (int)(A::from_raw({a}) * A::from_raw({b}) < "
                     f"C::from_raw({c})));")
        expected.append(int(Fraction(a, 32) * Fraction(b, 32) < Fraction(c, 256)))
    lines += ["  return 0;", "}"]
    got = [int(v) for v in build_and_run(tmp_path, "\n".join(lines))]
    assert got == expected


@pytest.mark.parametrize("declaration,message", [
    ("cuvil::fixed<65, 10> x;", "cuvil::fixed holds 1 to 64 bits"),
    ("cuvil::fixed<40, 10> a; auto b = a * a; (void)b;", "cuvil::fixed holds 1 to 64 bits"),
])
def test_widths_beyond_64_bits_do_not_compile(tmp_path, declaration, message):
    source = tmp_path / "too_wide.cpp"
    source.write_text('#include "cuvil/targets/fpga/hls/cuvil_fixed.h"\n'
                      f"int main() {{ {declaration} return 0; }}\n")
    result = subprocess.run(["g++", "-std=c++14", "-fsyntax-only", f"-I{ROOT}",
                             str(source)], capture_output=True, text=True)
    assert result.returncode != 0 and message in result.stderr, result.stderr


# Stand-ins for the vendor headers (which cannot ship here): their mode
# enums and class templates, just enough to check which vendor type each
# cuvil::fixed becomes under CUVIL_FIXED_USE_VENDOR.
VENDOR_STUBS = {
    "ap_fixed.h": """
enum ap_q_mode { AP_RND, AP_RND_ZERO, AP_RND_MIN_INF, AP_RND_INF, AP_RND_CONV,
                 AP_TRN, AP_TRN_ZERO };
enum ap_o_mode { AP_SAT, AP_SAT_ZERO, AP_SAT_SYM, AP_WRAP, AP_WRAP_SM };
template <int W, int I, ap_q_mode Q, ap_o_mode O> struct ap_fixed {};
template <int W, int I, ap_q_mode Q, ap_o_mode O> struct ap_ufixed {};
""",
    "ac_fixed.h": """
enum ac_q_mode { AC_TRN, AC_RND, AC_TRN_ZERO, AC_RND_ZERO, AC_RND_INF,
                 AC_RND_MIN_INF, AC_RND_CONV, AC_RND_CONV_ODD };
enum ac_o_mode { AC_WRAP, AC_SAT, AC_SAT_ZERO, AC_SAT_SYM };
template <int W, int I, bool S, ac_q_mode Q, ac_o_mode O> struct ac_fixed {};
""",
}


@pytest.mark.parametrize("vendor", ["ap", "ac", "oneapi"])
def test_the_vendor_switch_names_the_vendor_types(tmp_path, vendor):
    for name, text in VENDOR_STUBS.items():
        (tmp_path / name).write_text(text)
    # oneAPI ships the same ac_fixed under its SYCL headers.
    oneapi = tmp_path / "sycl" / "ext" / "intel" / "ac_types"
    oneapi.mkdir(parents=True)
    (oneapi / "ac_fixed.hpp").write_text(VENDOR_STUBS["ac_fixed.h"])
    if vendor == "oneapi":
        (tmp_path / "ac_fixed.h").unlink()
    checks = []
    for (w, i, s), q, o in itertools.product([(8, 3, True), (12, 4, False)],
                                             QUANTIZATION, OVERFLOW):
        if vendor == "ap":
            family = "ap_fixed" if s else "ap_ufixed"
            want = f"{family}<{w}, {i}, AP_{q}, AP_{o}>"
        else:
            want = f"ac_fixed<{w}, {i}, {'true' if s else 'false'}, AC_{q}, AC_{o}>"
        checks.append(f"static_assert(std::is_same<{type_name(w, i, s, q, o)}, "
                      f"{want}>::value, \"{want}\");")
    source = tmp_path / "vendor.cpp"
    source.write_text('#include "cuvil/targets/fpga/hls/cuvil_fixed.h"\n'
                      "#include <type_traits>\n" + "\n".join(checks) + "\n")
    defines = ["-DCUVIL_FIXED_USE_VENDOR"] + {
        "ap": [], "ac": ["-DCUVIL_FIXED_USE_AC"],
        "oneapi": ["-DCUVIL_FIXED_USE_AC", "-DCUVIL_FIXED_ONEAPI"]}[vendor]
    result = subprocess.run(["g++", "-std=c++14", "-fsyntax-only", "-Wall", "-Werror",
                             *defines, f"-I{tmp_path}", f"-I{ROOT}", str(source)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert len(checks) == 56
