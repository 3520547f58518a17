/*===- expect.h - EXPECT for the runtime's C tests -----------------------===*
 *
 * A failed EXPECT prints its condition and counts; a test returns
 * cuvil_expect_result() from main.
 *
 *===--------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_EXPECT_H
#define CUVIL_RUNTIME_EXPECT_H

#include <stdio.h>

static int cuvil_expect_failures;

#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);      \
      ++cuvil_expect_failures;                                                 \
    }                                                                          \
  } while (0)

/* Prints "ok" or "FAILED"; the exit status of main. */
static int cuvil_expect_result(void) {
  printf("%s\n", cuvil_expect_failures ? "FAILED" : "ok");
  return cuvil_expect_failures != 0;
}

#endif /* CUVIL_RUNTIME_EXPECT_H */
