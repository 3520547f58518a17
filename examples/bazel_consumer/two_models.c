/* Two models compiled by cuvil_model, linked statically into one program:
 * each has its own names (classifier_*, scorer_*), so nothing clashes. */
#include <stdio.h>
#include <stdlib.h>

#include "classifier.h"
#include "scorer.h"

/* Inputs exact in float32, so a reference computes the same ones. */
static void fill(float *values, int count) {
  for (int i = 0; i < count; ++i)
    values[i] = (float)((i * 37) % 17 - 8) / 4.0f;
}

static void print_rows(const char *model, const float *values, int rows,
                       int columns) {
  for (int r = 0; r < rows; ++r) {
    printf("%s", model);
    for (int c = 0; c < columns; ++c)
      printf(" %.9g", values[r * columns + c]);
    printf("\n");
  }
}

int main(void) {
  enum { kRows = 3, kScorerRows = 5 };
  float features[kRows * 4], probabilities[kRows * 3];
  float scorer_features[kScorerRows * 8], scores[kScorerRows];
  fill(features, kRows * 4);
  fill(scorer_features, kScorerRows * 8);

  /* The classifier through a context (its compiled default: 2 threads). */
  classifier_context *context;
  int status = classifier_context_create(0, &context);
  if (status != CUVIL_OK) {
    fprintf(stderr, "classifier: %s\n", classifier_status_message(status));
    return 1;
  }
  const void *inputs[CLASSIFIER_MODEL_NUM_INPUTS] = {features};
  void *outputs[CLASSIFIER_MODEL_NUM_OUTPUTS] = {probabilities};
  status = classifier_context_run(context, kRows, inputs, outputs);
  if (status != CUVIL_OK) {
    fprintf(stderr, "classifier: %s\n", classifier_context_error(context));
    return 1;
  }
  print_rows("classifier", probabilities, kRows, 3);
  /* A batch above the compiled maximum is an error, not a crash. */
  status = classifier_context_run(context, CLASSIFIER_MODEL_MAX_BATCH + 1,
                                  inputs, outputs);
  printf("classifier_batch_%d %d %s\n", CLASSIFIER_MODEL_MAX_BATCH + 1, status,
         classifier_context_error(context));
  classifier_context_destroy(context);

  /* The scorer on a caller-owned workspace, on this thread. */
  size_t size = scorer_model_workspace_size();
  void *workspace = aligned_alloc(64, (size + 63) / 64 * 64);
  const void *scorer_inputs[SCORER_MODEL_NUM_INPUTS] = {scorer_features};
  void *scorer_outputs[SCORER_MODEL_NUM_OUTPUTS] = {scores};
  status = scorer_model_run(kScorerRows, scorer_inputs, scorer_outputs,
                            workspace, size);
  free(workspace);
  if (status != CUVIL_OK) {
    fprintf(stderr, "scorer: %s\n", scorer_status_message(status));
    return 1;
  }
  print_rows("scorer", scores, kScorerRows, 1);
  return 0;
}
