/* Runs a compiled model through the C ABI of its header alone (model.h),
 * for the aarch64 tests and benchmarks under qemu-aarch64:
 *
 *   run_model [--repeat N] THREADS BATCH IN.bin... -- OUT.bin:BYTES...
 *
 * Reads each input's bytes from its file, runs the batch in a context of
 * THREADS threads (N times: the benchmark counts the instructions of N = 2
 * and N = 1, whose difference is one inference), writes each output's
 * BYTES to its file. Exits 0, or with the model's status code after
 * printing its message. */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  long size;
  void *data;
  if (!f || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
      fseek(f, 0, SEEK_SET) != 0) {
    fprintf(stderr, "run_model: cannot read %s\n", path);
    exit(100);
  }
  data = malloc(size ? (size_t)size : 1);
  if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) {
    fprintf(stderr, "run_model: cannot read %s\n", path);
    exit(100);
  }
  fclose(f);
  return data;
}

int main(int argc, char **argv) {
  const void *inputs[CUVIL_MODEL_NUM_INPUTS + 1];
  void *outputs[CUVIL_MODEL_NUM_OUTPUTS + 1];
  size_t bytes[CUVIL_MODEL_NUM_OUTPUTS + 1];
  const char *paths[CUVIL_MODEL_NUM_OUTPUTS + 1];
  int threads, i, at = 3, status, repeat = 1, run;
  long long batch;
  cuvil_context *context = NULL;
  if (argc > 2 && strcmp(argv[1], "--repeat") == 0) {
    repeat = atoi(argv[2]);
    argv += 2;
    argc -= 2;
  }
  if (argc != 4 + CUVIL_MODEL_NUM_INPUTS + CUVIL_MODEL_NUM_OUTPUTS || repeat < 1) {
    fprintf(stderr, "usage: run_model [--repeat N] THREADS BATCH IN.bin x %d -- "
            "OUT.bin:BYTES x %d\n", CUVIL_MODEL_NUM_INPUTS, CUVIL_MODEL_NUM_OUTPUTS);
    return 100;
  }
  threads = atoi(argv[1]);
  batch = atoll(argv[2]);
  for (i = 0; i < CUVIL_MODEL_NUM_INPUTS; ++i)
    inputs[i] = read_file(argv[at++]);
  if (strcmp(argv[at++], "--") != 0) {
    fprintf(stderr, "run_model: expected -- after the inputs\n");
    return 100;
  }
  for (i = 0; i < CUVIL_MODEL_NUM_OUTPUTS; ++i) {
    char *colon = strrchr(argv[at], ':');
    if (!colon) {
      fprintf(stderr, "run_model: expected OUT.bin:BYTES, got %s\n", argv[at]);
      return 100;
    }
    *colon = '\0';
    paths[i] = argv[at++];
    bytes[i] = (size_t)strtoull(colon + 1, NULL, 10);
    outputs[i] = calloc(bytes[i] ? bytes[i] : 1, 1);
  }
  status = cuvil_context_create(threads, &context);
  for (run = 0; status == CUVIL_OK && run < repeat; ++run)
    status = cuvil_context_run(context, batch, inputs, outputs);
  if (status != CUVIL_OK) {
    fprintf(stderr, "run_model: status %d: %s\n", status,
            context ? cuvil_context_error(context) : cuvil_status_message(status));
    cuvil_context_destroy(context);
    return status;
  }
  cuvil_context_destroy(context);
  for (i = 0; i < CUVIL_MODEL_NUM_OUTPUTS; ++i) {
    FILE *f = fopen(paths[i], "wb");
    if (!f || fwrite(outputs[i], 1, bytes[i], f) != bytes[i] || fclose(f) != 0) {
      fprintf(stderr, "run_model: cannot write %s\n", paths[i]);
      return 100;
    }
  }
  return 0;
}
