/* Misuse of the context API that the ABI detects where it is cheap (issue
 * #18): a destroyed context, one context shared by many threads, absurd
 * thread counts. Run natively only: a use after destroy is what it tests,
 * so memory checkers would (rightly) object.
 *
 * Built against the MLP test model (x float32 [batch, 10] -> y float32
 * [batch, 16], --max-batch 4). */
#define _GNU_SOURCE
#include "model.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;
#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);      \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

#define BATCH 4
enum { kThreads = 16, kCalls = 4000 };
static float input[BATCH * 10];
static float reference[BATCH * 16];
static cuvil_context *shared;
static pthread_barrier_t start;
static long ok_calls, busy_calls, wrong_results, other_errors;

/* Many threads on one context: every call either computes the right
 * answer or is refused with CUVIL_ERROR_BUSY; none computes garbage. */
static void *share(void *arg) {
  float out[BATCH * 16];
  const void *ins[1] = {input};
  void *outs[1] = {out};
  int i;
  (void)arg;
  pthread_barrier_wait(&start);
  for (i = 0; i < kCalls; ++i) {
    int status;
    memset(out, 0, sizeof(out));
    status = cuvil_context_run(shared, BATCH, ins, outs);
    if (status == CUVIL_OK) {
      __atomic_add_fetch(&ok_calls, 1, __ATOMIC_RELAXED);
      if (memcmp(out, reference, sizeof(out)) != 0)
        __atomic_add_fetch(&wrong_results, 1, __ATOMIC_RELAXED);
    } else if (status == CUVIL_ERROR_BUSY) {
      __atomic_add_fetch(&busy_calls, 1, __ATOMIC_RELAXED);
    } else {
      __atomic_add_fetch(&other_errors, 1, __ATOMIC_RELAXED);
    }
  }
  return NULL;
}

int main(void) {
  float out[BATCH * 16];
  const void *ins[1] = {input};
  void *outs[1] = {out};
  cuvil_context *context = NULL;
  pthread_t threads[kThreads];
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int i, round, max_threads = cuvil_context_max_threads();

  for (i = 0; i < BATCH * 10; ++i)
    input[i] = (float)((i * 37) % 19) / 7.0f - 1.0f;
  EXPECT(cuvil_context_create(1, &context) == CUVIL_OK);
  EXPECT(cuvil_context_run(context, BATCH, ins, outs) == CUVIL_OK);
  memcpy(reference, out, sizeof(out));

  /* A destroyed context is refused, and destroying it again does nothing
   * (detected while its memory is not reused: documented, not promised). */
  cuvil_context_destroy(context);
  EXPECT(cuvil_context_run(context, BATCH, ins, outs) == CUVIL_ERROR_INVALID_ARGUMENT);
  EXPECT(strcmp(cuvil_context_error(context), "not a live context (destroyed?)") == 0);
  cuvil_context_destroy(context);

  /* Thread counts are capped: 4 per CPU online, at most 1024. */
  EXPECT(max_threads == (cpus > 256 ? 1024 : 4 * (int)cpus));
  context = NULL;
  EXPECT(cuvil_context_create(100000, &context) == CUVIL_ERROR_TOO_MANY_THREADS);
  EXPECT(context == NULL);
  EXPECT(cuvil_context_create(max_threads + 1, &context) == CUVIL_ERROR_TOO_MANY_THREADS);
  EXPECT(strstr(cuvil_status_message(CUVIL_ERROR_TOO_MANY_THREADS), "cuvil_context_max_threads") != NULL);
  EXPECT(cuvil_context_create(max_threads, &context) == CUVIL_OK);
  EXPECT(cuvil_context_run(context, BATCH, ins, outs) == CUVIL_OK);
  EXPECT(memcmp(out, reference, sizeof(out)) == 0);
  cuvil_context_destroy(context);

  /* One context, 16 threads. They collide when two run at once, which a
   * busy machine (one CPU free for them) makes rare: rounds repeat until
   * a refusal is seen (at most 100). */
  EXPECT(cuvil_context_create(1, &shared) == CUVIL_OK);
  for (round = 0; round < 100 && (round == 0 || busy_calls == 0); ++round) {
    pthread_barrier_init(&start, NULL, kThreads);
    for (i = 0; i < kThreads; ++i)
      EXPECT(pthread_create(&threads[i], NULL, share, NULL) == 0);
    for (i = 0; i < kThreads; ++i)
      pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&start);
  }
  printf("shared context: %ld calls computed, %ld refused as busy (%d "
         "rounds)\n",
         ok_calls, busy_calls, round);
  EXPECT(wrong_results == 0);
  EXPECT(other_errors == 0);
  EXPECT(ok_calls + busy_calls == (long)round * kThreads * kCalls);
  EXPECT(ok_calls > 0);
  /* The refusal is exercised. */
  EXPECT(busy_calls > 0);
  EXPECT(strstr(cuvil_status_message(CUVIL_ERROR_BUSY), "one context per thread") != NULL);
  /* The context still works for its one caller. */
  EXPECT(cuvil_context_run(shared, BATCH, ins, outs) == CUVIL_OK);
  EXPECT(memcmp(out, reference, sizeof(out)) == 0);
  cuvil_context_destroy(shared);

  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  else
    printf("abi_misuse_test: all checks passed\n");
  return failures != 0;
}
