/*===- check_model.h - the emitter's macros, for building entry.c alone ---===*
 *
 * What the emitter writes before entry.c in an artifact (model.h's macros
 * and the ABI's own), for a model of two inputs, one output, batches up to
 * 4 and no CPU features: the build compiles entry.c with it
 * (-include), warnings as errors, and entry_test.c runs the result.
 *
 *===--------------------------------------------------------------------===*/
#ifndef CUVIL_ABI_CHECK_MODEL_H
#define CUVIL_ABI_CHECK_MODEL_H

#define CUVIL_ABI_VERSION 1
#define CUVIL_MODEL_NUM_INPUTS 2
#define CUVIL_MODEL_NUM_OUTPUTS 1
#define CUVIL_MODEL_MAX_BATCH 4
#define CUVIL_MODEL_WORKSPACE_SIZE 256
#define CUVIL_MODEL_DEFAULT_THREADS 1

#define CUVIL_METADATA_JSON "{\"abi_version\":1}"
#define CUVIL_CPU_MESSAGE "this CPU lacks an instruction set (check)"
#define CUVIL_CHECK_CPU_FEATURES(ok, ...)                                      \
  do {                                                                         \
  } while (0)
/* The build also compiles the --external-weights form (1). */
#ifndef CUVIL_EXTERNAL_WEIGHTS
#define CUVIL_EXTERNAL_WEIGHTS 0
#endif
#define CUVIL_WEIGHTS_BYTES ((size_t)64)
/* And the sample-parallel form (1). */
#ifndef CUVIL_MODEL_SAMPLE_PARALLEL
#define CUVIL_MODEL_SAMPLE_PARALLEL 0
#endif

#endif /* CUVIL_ABI_CHECK_MODEL_H */
