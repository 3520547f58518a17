/*===- abi.h - the C ABI every x86 model exports (docs/abi.md) -----------===*
 *
 * The declarations of a model's public header (model.h): the emitter
 * writes the model's own macros (CUVIL_ABI_VERSION, CUVIL_MODEL_*) and a
 * description of its tensors, then this text.
 *
 *===--------------------------------------------------------------------===*/
#ifndef CUVIL_ABI_H
#define CUVIL_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Shared by every model's header (two models linked into one program with
 * --symbol-prefix include two), hence its own guard. */
#ifndef CUVIL_STATUS_DEFINED
#define CUVIL_STATUS_DEFINED
typedef enum cuvil_status {
  CUVIL_OK = 0,
  CUVIL_ERROR_INVALID_ARGUMENT = 1,   /* a null pointer, or bad data */
  CUVIL_ERROR_BATCH_OUT_OF_RANGE = 2, /* batch outside 1..CUVIL_MODEL_MAX_BATCH */
  CUVIL_ERROR_WORKSPACE_TOO_SMALL = 3,
  CUVIL_ERROR_UNSUPPORTED_CPU = 4,    /* the CPU lacks an ISA the code uses */
  CUVIL_ERROR_OUT_OF_MEMORY = 5,
  CUVIL_ERROR_WEIGHTS_UNAVAILABLE = 6, /* --external-weights: file missing */
  CUVIL_ERROR_BUSY = 7,               /* the context is running another call */
  CUVIL_ERROR_TOO_MANY_THREADS = 8    /* above cuvil_context_max_threads() */
} cuvil_status;
#endif /* CUVIL_STATUS_DEFINED */

/* A human-readable description of a status code. */
const char *cuvil_status_message(int status);

/* JSON: inputs and outputs (names, dtypes, shapes with -1 for the batch),
 * the target CPU and its features, compiler version, model hash. */
const char *cuvil_model_metadata(void);

int cuvil_model_num_inputs(void);
int cuvil_model_num_outputs(void);
size_t cuvil_model_workspace_size(void);

/* Runs the model on caller-owned memory: `inputs` and `outputs` hold one
 * pointer per tensor (dense, row-major), `workspace` at least
 * cuvil_model_workspace_size() bytes (64-byte alignment is fastest). For a
 * model with a dynamic batch, `batch` is its size (1..CUVIL_MODEL_MAX_BATCH);
 * otherwise it is ignored. Allocates nothing; safe to call from many threads
 * at once with distinct workspaces. */
int cuvil_model_run(int64_t batch, const void *const *inputs,
                    void *const *outputs, void *workspace,
                    size_t workspace_size);

/* A context owns a workspace and num_threads - 1 worker pthreads (0: the
 * compiled default), so each call needs only the tensors; results are the
 * same for any thread count. One context serves one caller at a time: a
 * call that finds it running another gets CUVIL_ERROR_BUSY. A destroyed
 * context must not be used again (a call may detect it and return
 * CUVIL_ERROR_INVALID_ARGUMENT, but cannot always). cuvil_model_run always
 * runs on the calling thread alone. */
typedef struct cuvil_context cuvil_context;
/* The most threads a context may have: 4 per CPU online, at most 1024. */
int cuvil_context_max_threads(void);
int cuvil_context_create(int num_threads, cuvil_context **context);
int cuvil_context_run(cuvil_context *context, int64_t batch,
                      const void *const *inputs, void *const *outputs);
/* The message of the context's last failed call ("" if none). */
const char *cuvil_context_error(const cuvil_context *context);
void cuvil_context_destroy(cuvil_context *context);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_ABI_H */
