/*===- samples.h - a batch run as chunks of samples, one per thread -------===*
 *
 * For models whose ops keep the samples of the batch apart (the compiler's
 * cuvil.sample_parallel): each thread runs a contiguous chunk of the batch
 * through the whole model on its own workspace, single-threaded. No barrier
 * between layers, and each core keeps its own activations in its cache. A
 * sample's values are what the whole batch gives (the kernels compute each
 * output element the same way whatever the batch and the thread count).
 *
 *===----------------------------------------------------------------------===*/

#ifndef CUVIL_RUNTIME_SAMPLES_H
#define CUVIL_RUNTIME_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "cuvil/targets/cpu/runtime/threads/threads.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The model's whole-batch function: 0 on success, else a status. */
typedef int (*cuvil_batch_fn)(int64_t batch, const void *const *inputs,
                              void *const *outputs, unsigned char *arena,
                              cuvil_pool *pool);

typedef struct {
  cuvil_batch_fn run;
  int num_inputs, num_outputs;
  /* Bytes of one sample of each tensor; 0 for an input that does not
   * depend on the batch (every chunk reads all of it). */
  const size_t *input_sample_bytes, *output_sample_bytes;
  /* Bytes between two chunks' workspaces (a multiple of 64). */
  size_t arena_stride;
} cuvil_sample_model;

/* Runs `batch` samples. With a pool of T threads, `arenas` >= 2 workspaces
 * and batch >= 2: C = min(T, arenas, batch) chunks of batch / C samples run
 * at once, chunk c on workspace c without the pool, then the batch % C
 * samples left run with the pool. Otherwise the whole batch runs with the
 * pool on workspace 0. Returns the first failing chunk's status, else 0. */
int cuvil_run_samples(const cuvil_sample_model *model, int64_t batch,
                      const void *const *inputs, void *const *outputs,
                      unsigned char *arena, int arenas, cuvil_pool *pool);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_RUNTIME_SAMPLES_H */
