/* A model cuvil_model built as a shared object: the program links it and
 * finds it in its runfiles at start; the calls are the same. */
#include <stdio.h>

#include "classifier_shared.h"

int main(void) {
  float features[4] = {-2.0f, -0.75f, 0.5f, 1.75f}, probabilities[3];
  const void *inputs[1] = {features};
  void *outputs[1] = {probabilities};
  classifier_shared_context *context;
  int status = classifier_shared_context_create(1, &context);
  if (status != CUVIL_OK) {
    fprintf(stderr, "%s\n", classifier_shared_status_message(status));
    return 1;
  }
  status = classifier_shared_context_run(context, 1, inputs, outputs);
  if (status != CUVIL_OK) /* the context says what went wrong */
    fprintf(stderr, "%s\n", classifier_shared_context_error(context));
  classifier_shared_context_destroy(context);
  if (status != CUVIL_OK)
    return 1;
  printf("classifier_shared %.9g %.9g %.9g\n", probabilities[0],
         probabilities[1], probabilities[2]);
  return 0;
}
