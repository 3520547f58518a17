/*===- entry_test.c - entry.c on its own, around a stand-in model --------===*
 *
 * entry.c built with check_model.h: the checks it makes before running the
 * model, contexts (a call from inside a running call is refused as busy),
 * and the messages. The stand-in model records its calls.
 *
 *===--------------------------------------------------------------------===*/
#include "cuvil/targets/cpu/runtime/abi/check_model.h"
#include "cuvil/targets/cpu/runtime/abi/abi.h"

#include "cuvil/targets/cpu/runtime/expect.h"

#include <stdio.h>
#include <string.h>

struct cuvil_pool;

static int runs, last_arenas;
static cuvil_context *reentered;
static int reentered_status = -1;


__attribute__((visibility("hidden"))) int
cuvil_internal_run(int64_t batch, const void *const *inputs,
                   void *const *outputs, unsigned char *arena, int arenas,
                   struct cuvil_pool *pool) {
  (void)inputs;
  (void)pool;
  ++runs;
  last_arenas = arenas;
  /* Every workspace the caller says it has (the stride is a multiple of
   * 64); a short allocation corrupts the heap here. */
  memset(arena, 0x5a, (size_t)arenas * CUVIL_MODEL_WORKSPACE_SIZE);
  *(int64_t *)outputs[0] = batch;
  if (reentered)
    reentered_status = cuvil_context_run(reentered, batch, inputs, outputs);
  return CUVIL_OK;
}

/* A pool the stand-in never uses, for contexts of several threads. */
static int stand_in_pool;
struct cuvil_pool *cuvil_pool_create(int num_threads) {
  return num_threads > 1 ? (struct cuvil_pool *)&stand_in_pool : NULL;
}
void cuvil_pool_destroy(struct cuvil_pool *pool) { (void)pool; }

int main(void) {
  float a = 1, b = 2;
  int64_t out = 0;
  const void *inputs[2] = {&a, &b};
  void *outputs[1] = {&out};
  const void *missing[2] = {&a, NULL};
  unsigned char workspace[CUVIL_MODEL_WORKSPACE_SIZE];
  cuvil_context *context = NULL;

  EXPECT(cuvil_model_num_inputs() == 2 && cuvil_model_num_outputs() == 1);
  EXPECT(cuvil_model_workspace_size() == CUVIL_MODEL_WORKSPACE_SIZE);
  EXPECT(strcmp(cuvil_model_metadata(), CUVIL_METADATA_JSON) == 0);
  EXPECT(strcmp(cuvil_status_message(CUVIL_ERROR_UNSUPPORTED_CPU),
                CUVIL_CPU_MESSAGE) == 0);
  EXPECT(strcmp(cuvil_status_message(99), "unknown status") == 0);

  /* Refused before the model runs. */
  EXPECT(cuvil_model_run(0, inputs, outputs, workspace, sizeof workspace) ==
         CUVIL_ERROR_BATCH_OUT_OF_RANGE);
  EXPECT(cuvil_model_run(5, inputs, outputs, workspace, sizeof workspace) ==
         CUVIL_ERROR_BATCH_OUT_OF_RANGE);
  EXPECT(cuvil_model_run(1, missing, outputs, workspace, sizeof workspace) ==
         CUVIL_ERROR_INVALID_ARGUMENT);
  EXPECT(cuvil_model_run(1, inputs, NULL, workspace, sizeof workspace) ==
         CUVIL_ERROR_INVALID_ARGUMENT);
  EXPECT(cuvil_model_run(1, inputs, outputs, NULL, sizeof workspace) ==
         CUVIL_ERROR_INVALID_ARGUMENT);
  EXPECT(cuvil_model_run(1, inputs, outputs, workspace, 8) ==
         CUVIL_ERROR_WORKSPACE_TOO_SMALL);
  EXPECT(runs == 0);
  EXPECT(cuvil_model_run(3, inputs, outputs, workspace, sizeof workspace) ==
         CUVIL_OK);
  EXPECT(runs == 1 && out == 3 && last_arenas == 1);

  /* Contexts. */
  EXPECT(cuvil_context_create(-1, &context) == CUVIL_ERROR_INVALID_ARGUMENT);
  EXPECT(cuvil_context_create(cuvil_context_max_threads() + 1, &context) ==
         CUVIL_ERROR_TOO_MANY_THREADS);
  EXPECT(context == NULL);
  EXPECT(cuvil_context_create(0, &context) == CUVIL_OK && context);
  EXPECT(cuvil_context_run(context, 9, inputs, outputs) ==
         CUVIL_ERROR_BATCH_OUT_OF_RANGE);
  EXPECT(strstr(cuvil_context_error(context), "batch 9 is outside 1..4"));
  reentered = context;
  EXPECT(cuvil_context_run(context, 2, inputs, outputs) == CUVIL_OK);
  EXPECT(reentered_status == CUVIL_ERROR_BUSY && out == 2);
  EXPECT(strcmp(cuvil_context_error(context), "") == 0);
  EXPECT(last_arenas == 1);
  reentered = NULL;
  cuvil_context_destroy(context);

  /* A sample-parallel model's context holds a workspace per thread, at
   * most one per sample of the largest batch. */
  EXPECT(cuvil_context_create(3, &context) == CUVIL_OK && context);
  EXPECT(cuvil_context_run(context, 4, inputs, outputs) == CUVIL_OK);
  EXPECT(last_arenas == (CUVIL_MODEL_SAMPLE_PARALLEL ? 3 : 1));
  cuvil_context_destroy(context);
  EXPECT(cuvil_context_create(cuvil_context_max_threads(), &context) ==
             CUVIL_OK &&
         context);
  EXPECT(cuvil_context_run(context, 4, inputs, outputs) == CUVIL_OK);
  EXPECT(last_arenas == (CUVIL_MODEL_SAMPLE_PARALLEL ? 4 : 1));
  cuvil_context_destroy(context);
  EXPECT(strcmp(cuvil_context_error(NULL), "the context is NULL") == 0);

  return cuvil_expect_result();
}
