/* Exercises a compiled model through model.h only: error codes, the context
 * API, reentrancy under 8 threads (bitwise identical results), and the
 * no-allocation claim (malloc is interposed and counted).
 *
 * Built against the MLP test model: input x float32 [batch, 10], output y
 * float32 [batch, 16], compiled with --max-batch 4. */
#define _GNU_SOURCE
#include "model.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Counts heap allocations while `counting` is set; the model's .so resolves
 * malloc to these definitions (the executable's symbols come first). */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
static volatile int counting;
static long allocations;
void *malloc(size_t n) {
  if (counting)
    __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED);
  return __libc_malloc(n);
}
void *calloc(size_t n, size_t m) {
  if (counting)
    __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED);
  return __libc_calloc(n, m);
}
void *realloc(void *p, size_t n) {
  if (counting)
    __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED);
  return __libc_realloc(p, n);
}

static int failures;
#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);      \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

#define BATCH 4
static float input[BATCH * 10];
static float reference[BATCH * 16];

enum { kThreads = 8, kCallsPerThread = 2000 };
static int mismatches;

static void *worker(void *arg) {
  float out[BATCH * 16];
  const void *ins[1] = {input};
  void *outs[1] = {out};
  size_t size = cuvil_model_workspace_size();
  void *workspace = malloc(size);
  int i;
  (void)arg;
  for (i = 0; i < kCallsPerThread; ++i) {
    memset(out, 0, sizeof(out));
    if (cuvil_model_run(BATCH, ins, outs, workspace, size) != CUVIL_OK ||
        memcmp(out, reference, sizeof(out)) != 0)
      __atomic_add_fetch(&mismatches, 1, __ATOMIC_RELAXED);
  }
  free(workspace);
  return NULL;
}

int main(void) {
  float out[BATCH * 16];
  const void *ins[1] = {input};
  void *outs[1] = {out};
  size_t size = cuvil_model_workspace_size();
  unsigned char *workspace = (unsigned char *)malloc(size);
  cuvil_context *context = NULL;
  pthread_t threads[kThreads];
  int i;

  for (i = 0; i < BATCH * 10; ++i)
    input[i] = (float)((i * 37) % 19) / 7.0f - 1.0f;

  EXPECT(CUVIL_MODEL_NUM_INPUTS == 1 && cuvil_model_num_inputs() == 1);
  EXPECT(cuvil_model_num_outputs() == 1);
  EXPECT(CUVIL_MODEL_MAX_BATCH == 4);
  EXPECT(size == CUVIL_MODEL_WORKSPACE_SIZE);
  EXPECT(strstr(cuvil_model_metadata(), "\"shape\":[-1,10]") != NULL);
  EXPECT(strstr(cuvil_model_metadata(), "\"max_batch\":4") != NULL);

  /* Bad calls return errors, never crash. */
  EXPECT(cuvil_model_run(BATCH, NULL, outs, workspace, size) == CUVIL_ERROR_INVALID_ARGUMENT);
  EXPECT(cuvil_model_run(BATCH, ins, NULL, workspace, size) == CUVIL_ERROR_INVALID_ARGUMENT);
  {
    const void *null_in[1] = {NULL};
    void *null_out[1] = {NULL};
    EXPECT(cuvil_model_run(BATCH, null_in, outs, workspace, size) == CUVIL_ERROR_INVALID_ARGUMENT);
    EXPECT(cuvil_model_run(BATCH, ins, null_out, workspace, size) == CUVIL_ERROR_INVALID_ARGUMENT);
  }
  EXPECT(cuvil_model_run(0, ins, outs, workspace, size) == CUVIL_ERROR_BATCH_OUT_OF_RANGE);
  EXPECT(cuvil_model_run(5, ins, outs, workspace, size) == CUVIL_ERROR_BATCH_OUT_OF_RANGE);
  EXPECT(cuvil_model_run(BATCH, ins, outs, workspace, size - 1) == CUVIL_ERROR_WORKSPACE_TOO_SMALL);
  EXPECT(cuvil_model_run(BATCH, ins, outs, NULL, size) == CUVIL_ERROR_INVALID_ARGUMENT);
  EXPECT(strcmp(cuvil_status_message(CUVIL_ERROR_BATCH_OUT_OF_RANGE),
                "batch size out of the compiled range") == 0);
  EXPECT(strcmp(cuvil_status_message(12345), "unknown status") == 0);

  /* The reference result, single-threaded. */
  EXPECT(cuvil_model_run(BATCH, ins, outs, workspace, size) == CUVIL_OK);
  memcpy(reference, out, sizeof(out));
  {
    /* Softmax rows sum to one. */
    int r, c;
    for (r = 0; r < BATCH; ++r) {
      float sum = 0;
      for (c = 0; c < 16; ++c)
        sum += out[r * 16 + c];
      EXPECT(sum > 0.999f && sum < 1.001f);
    }
  }
  /* A smaller batch computes the same rows. */
  memset(out, 0, sizeof(out));
  EXPECT(cuvil_model_run(2, ins, outs, workspace, size) == CUVIL_OK);
  EXPECT(memcmp(out, reference, 2 * 16 * sizeof(float)) == 0);

  /* Context API. */
  EXPECT(cuvil_context_create(1, NULL) == CUVIL_ERROR_INVALID_ARGUMENT);
  EXPECT(cuvil_context_create(-1, &context) == CUVIL_ERROR_INVALID_ARGUMENT);
  EXPECT(cuvil_context_create(1, &context) == CUVIL_OK && context != NULL);
  EXPECT(cuvil_context_run(context, 9, ins, outs) == CUVIL_ERROR_BATCH_OUT_OF_RANGE);
  EXPECT(strcmp(cuvil_context_error(context),
                "batch 9 is outside 1..4, the range this model was compiled for") == 0);
  EXPECT(cuvil_context_run(context, BATCH, ins, outs) == CUVIL_OK);
  EXPECT(strcmp(cuvil_context_error(context), "") == 0);
  EXPECT(memcmp(out, reference, sizeof(out)) == 0);
  EXPECT(cuvil_context_run(NULL, BATCH, ins, outs) == CUVIL_ERROR_INVALID_ARGUMENT);
  EXPECT(strcmp(cuvil_context_error(NULL), "the context is NULL") == 0);

  /* A context with worker threads computes the same bits. */
  {
    cuvil_context *threaded = NULL;
    EXPECT(cuvil_context_create(4, &threaded) == CUVIL_OK && threaded != NULL);
    for (i = 0; i < 200; ++i) {
      memset(out, 0, sizeof(out));
      EXPECT(cuvil_context_run(threaded, BATCH, ins, outs) == CUVIL_OK);
      if (memcmp(out, reference, sizeof(out)) != 0) {
        EXPECT(!"threaded result differs");
        break;
      }
    }
    /* No allocation on the steady-state path, with or without threads. */
    counting = 1;
    for (i = 0; i < 1000; ++i) {
      cuvil_model_run(BATCH, ins, outs, workspace, size);
      cuvil_context_run(context, BATCH, ins, outs);
      cuvil_context_run(threaded, BATCH, ins, outs);
    }
    counting = 0;
    EXPECT(allocations == 0);
    cuvil_context_destroy(threaded);
  }
  cuvil_context_destroy(context);
  cuvil_context_destroy(NULL);

  /* Reentrancy: 8 threads, one model, identical results. */
  for (i = 0; i < kThreads; ++i)
    EXPECT(pthread_create(&threads[i], NULL, worker, NULL) == 0);
  for (i = 0; i < kThreads; ++i)
    pthread_join(threads[i], NULL);
  EXPECT(mismatches == 0);

  free(workspace);
  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  else
    printf("abi_test: all checks passed (%d threads x %d calls, 0 allocations)\n",
           kThreads, kCallsPerThread);
  return failures != 0;
}
