/* Per-call latency of a compiled model through its C ABI, from C: no
 * Python, no ctypes. Built and run by benchmarks/bench.py.
 *
 *   cabi_latency MODEL.so BATCH WARMUP RUNS  ->  {"p50": ms, "p99": ms, "min": ms}
 *
 * Inputs are zeros (the latency of these models does not depend on values);
 * buffers are sized from cuvil_model_metadata's shapes.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct cuvil_context cuvil_context;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Element counts of the tensors in the metadata's "inputs" or "outputs"
 * list (every dtype is at most 8 bytes, so 8 bytes per element is enough). */
static int tensor_sizes(const char *json, const char *key, int64_t batch,
                        int64_t *sizes, int max) {
  const char *p = strstr(json, key), *end;
  int count = 0;
  if (!p)
    return 0;
  /* The list ends at the first "]}]" after the key (shape is the last key
   * of an entry: the metadata's keys are sorted, without spaces). */
  end = strstr(p, "]}]");
  while ((p = strstr(p, "\"shape\":[")) && p < end && count < max) {
    int64_t n = 1;
    p += strlen("\"shape\":[");
    while (*p != ']') {
      long d = strtol(p, (char **)&p, 10);
      n *= d == -1 ? batch : d;
      if (*p == ',')
        ++p;
      while (*p == ' ')
        ++p;
    }
    sizes[count++] = n;
  }
  return count;
}

int main(int argc, char **argv) {
  void *lib;
  const char *(*metadata)(void);
  int (*create)(int, cuvil_context **);
  int (*run)(cuvil_context *, int64_t, const void *const *, void *const *);
  cuvil_context *context;
  int64_t batch, in_sizes[16], out_sizes[16];
  int warmup, runs, n_in, n_out, i;
  const void *inputs[16];
  void *outputs[16];
  double *samples;
  if (argc != 5) {
    fprintf(stderr, "usage: %s MODEL.so BATCH WARMUP RUNS\n", argv[0]);
    return 2;
  }
  batch = atoll(argv[2]);
  warmup = atoi(argv[3]);
  runs = atoi(argv[4]);
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  metadata = (const char *(*)(void))dlsym(lib, "cuvil_model_metadata");
  create = (int (*)(int, cuvil_context **))dlsym(lib, "cuvil_context_create");
  run = (int (*)(cuvil_context *, int64_t, const void *const *,
                 void *const *))dlsym(lib, "cuvil_context_run");
  n_in = tensor_sizes(metadata(), "\"inputs\"", batch, in_sizes, 16);
  n_out = tensor_sizes(metadata(), "\"outputs\"", batch, out_sizes, 16);
  for (i = 0; i < n_in; ++i)
    inputs[i] = calloc(in_sizes[i], 8);
  for (i = 0; i < n_out; ++i)
    outputs[i] = calloc(out_sizes[i], 8);
  if (create(1, &context) != 0)
    return 1;
  for (i = 0; i < warmup; ++i)
    if (run(context, batch, inputs, outputs) != 0)
      return 1;
  samples = malloc(sizeof(double) * runs);
  for (i = 0; i < runs; ++i) {
    double start = now_ms();
    run(context, batch, inputs, outputs);
    samples[i] = now_ms() - start;
  }
  qsort(samples, runs, sizeof(double), compare);
  printf("{\"p50\": %.6f, \"p99\": %.6f, \"min\": %.6f, \"runs\": %d}\n",
         samples[runs / 2], samples[(int)(runs * 0.99)], samples[0], runs);
  return 0;
}
