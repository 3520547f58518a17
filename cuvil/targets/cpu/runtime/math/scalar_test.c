/*===- scalar_test.c - half conversions and integer power ----------------===*
 *
 * Against IEEE 754 bit patterns worked out by hand (round to nearest, ties
 * to even, subnormals, infinities, NaN) and the round trip of every half.
 *
 *===--------------------------------------------------------------------===*/
#include "cuvil/targets/cpu/runtime/math/scalar.h"

#include <math.h>
#include "cuvil/targets/cpu/runtime/expect.h"

#include <stdio.h>



int main(void) {
  unsigned h;
  /* float16 -> float. */
  EXPECT(cuvil_h2f(0x3c00) == 1.0f);
  EXPECT(cuvil_h2f(0xc000) == -2.0f);
  EXPECT(cuvil_h2f(0x7bff) == 65504.0f);
  EXPECT(cuvil_h2f(0x0400) == ldexpf(1, -14));
  EXPECT(cuvil_h2f(0x0001) == ldexpf(1, -24));
  EXPECT(cuvil_h2f(0x8000) == 0.0f && signbit(cuvil_h2f(0x8000)));
  EXPECT(isinf(cuvil_h2f(0x7c00)) && cuvil_h2f(0x7c00) > 0);
  EXPECT(isnan(cuvil_h2f(0x7e00)));
  /* float -> float16, ties to even. */
  EXPECT(cuvil_f2h(1.0f) == 0x3c00);
  EXPECT(cuvil_f2h(65504.0f) == 0x7bff);
  EXPECT(cuvil_f2h(65520.0f) == 0x7c00); /* halfway to 65536: overflows */
  EXPECT(cuvil_f2h(1e6f) == 0x7c00 && cuvil_f2h(-1e6f) == 0xfc00);
  EXPECT(cuvil_f2h(1.0f + ldexpf(1, -11)) == 0x3c00);
  EXPECT(cuvil_f2h(1.0f + 3 * ldexpf(1, -11)) == 0x3c02);
  EXPECT(cuvil_f2h(ldexpf(1, -24)) == 0x0001);
  EXPECT(cuvil_f2h(ldexpf(1, -25)) == 0x0000);
  EXPECT(cuvil_f2h(3 * ldexpf(1, -25)) == 0x0002);
  EXPECT((cuvil_f2h(NAN) & 0x7c00) == 0x7c00 && (cuvil_f2h(NAN) & 0x3ff));
  for (h = 0; h < 0x10000; ++h) {
    float f = cuvil_h2f((uint16_t)h);
    if (!isnan(f) && cuvil_f2h(f) != h) {
      fprintf(stderr, "half 0x%04x does not round-trip\n", h);
      ++cuvil_expect_failures;
      break;
    }
  }
  /* bfloat16. */
  EXPECT(cuvil_bf2f(0x3f80) == 1.0f);
  EXPECT(cuvil_bf2f(0x4049) == 3.140625f);
  EXPECT(cuvil_f2bf(1.0f) == 0x3f80);
  EXPECT(cuvil_f2bf(1.0f + ldexpf(1, -8)) == 0x3f80);
  EXPECT(cuvil_f2bf(1.0f + 3 * ldexpf(1, -8)) == 0x3f82);
  EXPECT(isnan(cuvil_bf2f(cuvil_f2bf(NAN))));
  /* Integer power, negative exponents as numpy's integers. */
  EXPECT(cuvil_ipow(3, 4) == 81 && cuvil_ipow(-2, 3) == -8);
  EXPECT(cuvil_ipow(5, 0) == 1 && cuvil_ipow(2, 62) == (int64_t)1 << 62);
  EXPECT(cuvil_ipow(2, -1) == 0 && cuvil_ipow(1, -7) == 1);
  EXPECT(cuvil_ipow(-1, -3) == -1 && cuvil_ipow(-1, -4) == 1);
  return cuvil_expect_result();
}
