/* cuvil_expf and cuvil_erff (the vectorizable exp and erf the generated
 * code uses for f32) against libm in double, over a dense sweep and the
 * special values; exits non-zero on a failure. */
#include "cuvil/targets/cpu/runtime/math/vecmath.h"

#include <stdio.h>

static int failures;

static void expect(int ok, const char *what, float x, double got, double want) {
  if (!ok && failures++ < 10)
    fprintf(stderr, "%s(%.9g) = %.9g, want %.9g\n", what, x, got, want);
}

int main(void) {
  float x;
  for (x = -100.0f; x <= 100.0f; x += 0.0137f) {
    double want = exp((double)x), got = cuvil_expf(x);
    if (x < -87.3f) /* flushed to 0 below -87.3 */
      expect(got == 0.0, "cuvil_expf", x, got, want);
    else if (want > 3.4e38)
      expect(isinf(got), "cuvil_expf", x, got, want);
    else
      expect(fabs(got - want) <= 4e-7 * want, "cuvil_expf", x, got, want);
  }
  for (x = -6.0f; x <= 6.0f; x += 0.00037f) {
    double want = erf((double)x), got = cuvil_erff(x);
    expect(fabs(got - want) <= 2e-7 + 1e-6 * fabs(want), "cuvil_erff", x, got, want);
  }
  for (x = 1e-12f; x < 0.1f; x *= 1.7f) { /* relative accuracy near 0 */
    double want = erf((double)x), got = cuvil_erff(x);
    expect(fabs(got - want) <= 1e-6 * want, "cuvil_erff", x, got, want);
    expect(cuvil_erff(-x) == -cuvil_erff(x), "cuvil_erff odd", x, cuvil_erff(-x), -got);
  }
  expect(cuvil_expf(-INFINITY) == 0.0f, "cuvil_expf", -INFINITY, cuvil_expf(-INFINITY), 0);
  expect(isinf(cuvil_expf(INFINITY)), "cuvil_expf", INFINITY, cuvil_expf(INFINITY), INFINITY);
  expect(isnan(cuvil_expf(NAN)), "cuvil_expf", NAN, cuvil_expf(NAN), NAN);
  expect(cuvil_erff(INFINITY) == 1.0f, "cuvil_erff", INFINITY, cuvil_erff(INFINITY), 1);
  expect(cuvil_erff(-INFINITY) == -1.0f, "cuvil_erff", -INFINITY, cuvil_erff(-INFINITY), -1);
  expect(isnan(cuvil_erff(NAN)), "cuvil_erff", NAN, cuvil_erff(NAN), NAN);
  if (failures)
    fprintf(stderr, "%d failures\n", failures);
  return failures != 0;
}
