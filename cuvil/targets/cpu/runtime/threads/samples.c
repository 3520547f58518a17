/*===- samples.c - a batch run as chunks of samples, one per thread -------===*/

#include "cuvil/targets/cpu/runtime/threads/samples.h"

struct cuvil_chunks {
  const cuvil_sample_model *model;
  const void *const *inputs;
  void *const *outputs;
  unsigned char *arena;
  int64_t first, size; /* samples [first + c * size, first + (c + 1) * size) */
  int *status;         /* one per chunk */
};

/* Runs samples [begin, begin + count) of the call on `arena`. */
static int cuvil_run_range(const cuvil_sample_model *model,
                           const void *const *inputs, void *const *outputs,
                           int64_t begin, int64_t count, unsigned char *arena,
                           cuvil_pool *pool) {
  /* At least one element each: C99 has no empty arrays. */
  const void *ins[model->num_inputs > 0 ? model->num_inputs : 1];
  void *outs[model->num_outputs > 0 ? model->num_outputs : 1];
  int i;
  for (i = 0; i < model->num_inputs; ++i)
    ins[i] = (const unsigned char *)inputs[i] +
             (size_t)begin * model->input_sample_bytes[i];
  for (i = 0; i < model->num_outputs; ++i)
    outs[i] = (unsigned char *)outputs[i] +
              (size_t)begin * model->output_sample_bytes[i];
  return model->run(count, ins, outs, arena, pool);
}

static void cuvil_run_chunk(void *arg, int64_t begin, int64_t end) {
  const struct cuvil_chunks *chunks = (const struct cuvil_chunks *)arg;
  int64_t c;
  for (c = begin; c < end; ++c)
    chunks->status[c] = cuvil_run_range(
        chunks->model, chunks->inputs, chunks->outputs,
        chunks->first + c * chunks->size, chunks->size,
        chunks->arena + (size_t)c * chunks->model->arena_stride, NULL);
}

int cuvil_run_samples(const cuvil_sample_model *model, int64_t batch,
                      const void *const *inputs, void *const *outputs,
                      unsigned char *arena, int arenas, cuvil_pool *pool) {
  int64_t count = cuvil_pool_threads(pool), done;
  int c;
  if (count > arenas)
    count = arenas;
  if (count > batch)
    count = batch;
  if (count < 2)
    return model->run(batch, inputs, outputs, arena, pool);
  {
    int status[count];
    struct cuvil_chunks chunks;
    chunks.model = model;
    chunks.inputs = inputs;
    chunks.outputs = outputs;
    chunks.arena = arena;
    chunks.first = 0;
    chunks.size = batch / count;
    chunks.status = status;
    /* A pool of T threads gives each of T indices its own thread. */
    cuvil_parallel_for(pool, count, cuvil_run_chunk, &chunks);
    for (c = 0; c < count; ++c)
      if (status[c] != 0)
        return status[c];
    done = chunks.size * count;
  }
  if (done == batch)
    return 0;
  return cuvil_run_range(model, inputs, outputs, done, batch - done, arena,
                         pool);
}
