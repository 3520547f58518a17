/*===- entry.c - the exported entry points of a model --------------------===*
 *
 * Built for the architecture's baseline ISA (x86-64, armv8-a), so that
 * checking the CPU cannot itself fault. The emitter writes the model's
 * macros before this text:
 *   CUVIL_METADATA_JSON       the metadata, a string literal
 *   CUVIL_CPU_MESSAGE         the status message of an unsupported CPU
 *   CUVIL_CHECK_CPU_FEATURES(ok, ...)
 *                             clears `ok` unless the CPU has every feature
 *                             the code was built for: on x86-64 from cpuid
 *                             leaves 1, 7 and 7.1 and XCR0 (ok, r1, r7, r71,
 *                             xcr0), on aarch64 from the hwcaps (ok, hwcap,
 *                             hwcap2)
 *   CUVIL_EXTERNAL_WEIGHTS    1: map <name>.weights.bin beside the .so
 *   CUVIL_WEIGHTS_BYTES       that file's size
 *   CUVIL_MODEL_SAMPLE_PARALLEL
 *                             1: a context runs a batch as chunks of samples,
 *                             one per thread, each on its own workspace
 * and the artifact's model.h stands for the include of abi.h below (the
 * build compiles this file with check_model.h in their place).
 *
 *===--------------------------------------------------------------------===*/
#if CUVIL_EXTERNAL_WEIGHTS && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* dladdr */
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200112L /* posix_memalign */
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuvil/targets/cpu/runtime/abi/abi.h"

#if defined(__GNUC__)
#define CUVIL_INTERNAL __attribute__((visibility("hidden")))
#define CUVIL_EXPORT __attribute__((visibility("default")))
#else
#define CUVIL_INTERNAL
#define CUVIL_EXPORT
#endif

/* The model's side (its TU, and runtime/threads). */
struct cuvil_pool;
/* `arena` holds `arenas` workspaces of CUVIL_MODEL_WORKSPACE_SIZE bytes
 * (rounded up to 64), one per chunk of a sample-parallel model's batch. */
CUVIL_INTERNAL int cuvil_internal_run(int64_t batch, const void *const *inputs,
                                      void *const *outputs, unsigned char *arena,
                                      int arenas, struct cuvil_pool *pool);
struct cuvil_pool *cuvil_pool_create(int num_threads);
void cuvil_pool_destroy(struct cuvil_pool *pool);

/* The metadata and the ABI version can be read without running the .so:
 * a loader checks them (ELF section .cuvil.metadata, note .note.cuvil)
 * before it dlopens the file (docs/abi.md). */
#if defined(__GNUC__) && defined(__ELF__)
static const char cuvil_metadata_json[]
    __attribute__((section(".cuvil.metadata"), used)) = CUVIL_METADATA_JSON;
static const struct {
  uint32_t name_size, desc_size, type;
  char name[8];
  uint32_t abi_version;
} cuvil_abi_note __attribute__((section(".note.cuvil"), aligned(4), used)) = {
    6, 4, 1, "Cuvil", CUVIL_ABI_VERSION};
#else
static const char cuvil_metadata_json[] = CUVIL_METADATA_JSON;
#endif

#if CUVIL_EXTERNAL_WEIGHTS
/* --external-weights: maps <name>.weights.bin (beside the .so) when the .so
 * is loaded. The pointer is written once, before any call can run. */
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

CUVIL_INTERNAL const unsigned char *cuvil_weights_external;
#define CUVIL_WEIGHTS_READY (cuvil_weights_external != NULL)

__attribute__((constructor)) static void cuvil_map_weights(void) {
  Dl_info info;
  char path[4096];
  size_t length;
  struct stat st;
  void *mapped;
  int fd;
  if (!dladdr((void *)&cuvil_map_weights, &info) || !info.dli_fname)
    return;
  length = strlen(info.dli_fname);
  if (length >= 3 && strcmp(info.dli_fname + length - 3, ".so") == 0)
    length -= 3;
  if (length + sizeof(".weights.bin") > sizeof(path))
    return;
  memcpy(path, info.dli_fname, length);
  memcpy(path + length, ".weights.bin", sizeof(".weights.bin"));
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  if (fstat(fd, &st) != 0 || (size_t)st.st_size != CUVIL_WEIGHTS_BYTES ||
      CUVIL_WEIGHTS_BYTES == 0) {
    close(fd);
    return;
  }
  mapped = mmap(NULL, CUVIL_WEIGHTS_BYTES, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (mapped != MAP_FAILED)
    cuvil_weights_external = (const unsigned char *)mapped;
}

__attribute__((destructor)) static void cuvil_unmap_weights(void) {
  if (cuvil_weights_external)
    munmap((void *)cuvil_weights_external, CUVIL_WEIGHTS_BYTES);
}
#else
#define CUVIL_WEIGHTS_READY 1
#endif

/* The CPU's features as CUVIL_CHECK_CPU_FEATURES reads them: on x86-64,
 * cpuid leaves 1, 7 and 7.1 and XCR0 (what the OS saves); on aarch64, the
 * kernel's AT_HWCAP and AT_HWCAP2 words. */
#if defined(__x86_64__) || defined(__i386__)
static void cuvil_cpuid(unsigned leaf, unsigned sub, unsigned regs[4]) {
  __asm__ __volatile__("cpuid"
                       : "=a"(regs[0]), "=b"(regs[1]), "=c"(regs[2]), "=d"(regs[3])
                       : "a"(leaf), "c"(sub));
}

static int cuvil_cpu_check(void) {
  unsigned r1[4] = {0, 0, 0, 0}, r7[4] = {0, 0, 0, 0}, r71[4] = {0, 0, 0, 0},
           r0[4];
  unsigned long long xcr0 = 0;
  int ok = 1;
  cuvil_cpuid(0, 0, r0);
  if (r0[0] >= 1)
    cuvil_cpuid(1, 0, r1);
  if (r0[0] >= 7)
    cuvil_cpuid(7, 0, r7);
  if (r0[0] >= 7 && r7[0] >= 1) /* leaf 7's subleaves */
    cuvil_cpuid(7, 1, r71);
  if (r1[2] & (1u << 27)) { /* OSXSAVE: the OS saves extended registers */
    unsigned lo, hi;
    __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = ((unsigned long long)hi << 32) | lo;
  }
  (void)r1;
  (void)r7;
  (void)r71;
  (void)xcr0;
  CUVIL_CHECK_CPU_FEATURES(ok, r1, r7, r71, xcr0);
  return ok;
}
#elif defined(__aarch64__)
#include <sys/auxv.h>

static int cuvil_cpu_check(void) {
  unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
  int ok = 1;
  (void)hwcap;
  (void)hwcap2;
  CUVIL_CHECK_CPU_FEATURES(ok, hwcap, hwcap2);
  return ok;
}
#else
#error "a Cuvil model's entry points are built for x86-64 or aarch64"
#endif

/* Checks once per process; the cached answer is the only static state that
 * changes, and it changes at most once, atomically. */
static int cuvil_cpu_supported(void) {
  static int state; /* 0 unknown, 1 supported, 2 not supported */
  int known = __atomic_load_n(&state, __ATOMIC_ACQUIRE), ok;
  if (known)
    return known == 1;
  ok = cuvil_cpu_check();
  __atomic_store_n(&state, ok ? 1 : 2, __ATOMIC_RELEASE);
  return ok;
}

CUVIL_EXPORT const char *cuvil_status_message(int status) {
  switch (status) {
  case CUVIL_OK: return "ok";
  case CUVIL_ERROR_INVALID_ARGUMENT: return "invalid argument (a null pointer or bad input data)";
  case CUVIL_ERROR_BATCH_OUT_OF_RANGE: return "batch size out of the compiled range";
  case CUVIL_ERROR_WORKSPACE_TOO_SMALL: return "workspace smaller than cuvil_model_workspace_size()";
  case CUVIL_ERROR_UNSUPPORTED_CPU: return CUVIL_CPU_MESSAGE;
  case CUVIL_ERROR_OUT_OF_MEMORY: return "out of memory";
  case CUVIL_ERROR_WEIGHTS_UNAVAILABLE: return "the weights file beside the .so (<name>.weights.bin) is missing, unreadable or of the wrong size";
  case CUVIL_ERROR_BUSY: return "the context is running another call (use one context per thread)";
  case CUVIL_ERROR_TOO_MANY_THREADS: return "more threads than cuvil_context_max_threads() (4 per CPU online, at most 1024)";
  default: return "unknown status";
  }
}

CUVIL_EXPORT const char *cuvil_model_metadata(void) { return cuvil_metadata_json; }
CUVIL_EXPORT int cuvil_model_num_inputs(void) { return CUVIL_MODEL_NUM_INPUTS; }
CUVIL_EXPORT int cuvil_model_num_outputs(void) { return CUVIL_MODEL_NUM_OUTPUTS; }
CUVIL_EXPORT size_t cuvil_model_workspace_size(void) { return CUVIL_MODEL_WORKSPACE_SIZE; }

/* Validates a call; on error writes a message into `message`. */
static int cuvil_check(int64_t batch, const void *const *inputs,
                       void *const *outputs, char *message, size_t size) {
  int i;
  if (!cuvil_cpu_supported()) {
    snprintf(message, size, "%s", cuvil_status_message(CUVIL_ERROR_UNSUPPORTED_CPU));
    return CUVIL_ERROR_UNSUPPORTED_CPU;
  }
  if (!CUVIL_WEIGHTS_READY) {
    snprintf(message, size, "%s", cuvil_status_message(CUVIL_ERROR_WEIGHTS_UNAVAILABLE));
    return CUVIL_ERROR_WEIGHTS_UNAVAILABLE;
  }
  if (CUVIL_MODEL_MAX_BATCH > 0 && (batch < 1 || batch > CUVIL_MODEL_MAX_BATCH)) {
    snprintf(message, size, "batch %lld is outside 1..%lld, the range this model was compiled for",
             (long long)batch, (long long)CUVIL_MODEL_MAX_BATCH);
    return CUVIL_ERROR_BATCH_OUT_OF_RANGE;
  }
  if ((CUVIL_MODEL_NUM_INPUTS > 0 && !inputs) || !outputs) {
    snprintf(message, size, "the %s array is NULL", outputs ? "inputs" : "outputs");
    return CUVIL_ERROR_INVALID_ARGUMENT;
  }
  for (i = 0; i < CUVIL_MODEL_NUM_INPUTS; ++i)
    if (!inputs[i]) {
      snprintf(message, size, "input %d is NULL", i);
      return CUVIL_ERROR_INVALID_ARGUMENT;
    }
  for (i = 0; i < CUVIL_MODEL_NUM_OUTPUTS; ++i)
    if (!outputs[i]) {
      snprintf(message, size, "output %d is NULL", i);
      return CUVIL_ERROR_INVALID_ARGUMENT;
    }
  return CUVIL_OK;
}

CUVIL_EXPORT int cuvil_model_run(int64_t batch, const void *const *inputs,
                    void *const *outputs, void *workspace,
                    size_t workspace_size) {
  char message[8];
  int status = cuvil_check(batch, inputs, outputs, message, sizeof(message));
  if (status != CUVIL_OK)
    return status;
  if (!workspace && CUVIL_MODEL_WORKSPACE_SIZE > 0)
    return CUVIL_ERROR_INVALID_ARGUMENT;
  if (workspace_size < CUVIL_MODEL_WORKSPACE_SIZE)
    return CUVIL_ERROR_WORKSPACE_TOO_SMALL;
  return cuvil_internal_run(batch, inputs, outputs, (unsigned char *)workspace,
                            1, NULL);
}

/* Set while a context is alive; cleared (and, with free, overwritten) when
 * it is destroyed, so that a stale pointer is refused where it is cheap. */
#define CUVIL_CONTEXT_ALIVE 0x78746376636c6976ull /* "vilcvctx" */

struct cuvil_context {
  unsigned long long alive;
  int busy; /* one call at a time (atomic) */
  void *workspace; /* `arenas` workspaces of cuvil_arena_stride() bytes */
  int arenas;
  struct cuvil_pool *pool; /* NULL: run on the calling thread */
  int num_threads;
  char error[256];
};

static int cuvil_context_valid(const cuvil_context *context) {
  return context &&
         __atomic_load_n(&context->alive, __ATOMIC_ACQUIRE) == CUVIL_CONTEXT_ALIVE;
}

static size_t cuvil_arena_stride(void) {
  return ((size_t)CUVIL_MODEL_WORKSPACE_SIZE + 63) / 64 * 64;
}

/* One workspace per thread that may run a chunk of the batch at once. */
static int cuvil_context_arenas(int num_threads) {
  int arenas = CUVIL_MODEL_SAMPLE_PARALLEL ? num_threads : 1;
  if (CUVIL_MODEL_MAX_BATCH > 0 && arenas > CUVIL_MODEL_MAX_BATCH)
    arenas = (int)CUVIL_MODEL_MAX_BATCH;
  return arenas < 1 ? 1 : arenas;
}

CUVIL_EXPORT int cuvil_context_max_threads(void) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 1)
    cpus = 1;
  return cpus > 256 ? 1024 : (int)(4 * cpus);
}

CUVIL_EXPORT int cuvil_context_create(int num_threads, cuvil_context **context) {
  cuvil_context *ctx;
  if (!context)
    return CUVIL_ERROR_INVALID_ARGUMENT;
  *context = NULL;
  if (num_threads < 0)
    return CUVIL_ERROR_INVALID_ARGUMENT;
  if (num_threads > cuvil_context_max_threads())
    return CUVIL_ERROR_TOO_MANY_THREADS;
  ctx = (cuvil_context *)calloc(1, sizeof(*ctx));
  if (!ctx)
    return CUVIL_ERROR_OUT_OF_MEMORY;
  /* Heavy kernels split their work over num_threads pthreads (the caller
   * and num_threads - 1 workers); results never depend on the count. */
  ctx->num_threads = num_threads ? num_threads : CUVIL_MODEL_DEFAULT_THREADS;
  if (ctx->num_threads > cuvil_context_max_threads())
    ctx->num_threads = cuvil_context_max_threads();
  if (ctx->num_threads > 1) {
    ctx->pool = cuvil_pool_create(ctx->num_threads);
    if (!ctx->pool) {
      free(ctx);
      return CUVIL_ERROR_OUT_OF_MEMORY;
    }
  }
  ctx->arenas = cuvil_context_arenas(ctx->num_threads);
  if (CUVIL_MODEL_WORKSPACE_SIZE > 0) {
    if (posix_memalign(&ctx->workspace, 64,
                       cuvil_arena_stride() * (size_t)ctx->arenas) != 0) {
      cuvil_pool_destroy(ctx->pool);
      free(ctx);
      return CUVIL_ERROR_OUT_OF_MEMORY;
    }
  }
  __atomic_store_n(&ctx->alive, CUVIL_CONTEXT_ALIVE, __ATOMIC_RELEASE);
  *context = ctx;
  return CUVIL_OK;
}

CUVIL_EXPORT int cuvil_context_run(cuvil_context *context, int64_t batch,
                      const void *const *inputs, void *const *outputs) {
  int status;
  if (!cuvil_context_valid(context))
    return CUVIL_ERROR_INVALID_ARGUMENT;
  /* A second caller must not share the workspace: refuse, never compute
   * garbage. The error message belongs to the caller that holds it. */
  if (__atomic_exchange_n(&context->busy, 1, __ATOMIC_ACQUIRE))
    return CUVIL_ERROR_BUSY;
  context->error[0] = 0;
  status = cuvil_check(batch, inputs, outputs, context->error, sizeof(context->error));
  if (status == CUVIL_OK) {
    status = cuvil_internal_run(batch, inputs, outputs,
                                (unsigned char *)context->workspace,
                                context->arenas, context->pool);
    if (status != CUVIL_OK)
      snprintf(context->error, sizeof(context->error), "%s", cuvil_status_message(status));
  }
  __atomic_store_n(&context->busy, 0, __ATOMIC_RELEASE);
  return status;
}

CUVIL_EXPORT const char *cuvil_context_error(const cuvil_context *context) {
  if (!context)
    return "the context is NULL";
  return cuvil_context_valid(context) ? context->error
                                      : "not a live context (destroyed?)";
}

CUVIL_EXPORT void cuvil_context_destroy(cuvil_context *context) {
  /* NULL, a destroyed context (when detectable) or one that is running a
   * call: nothing to do safely. */
  if (!cuvil_context_valid(context) ||
      __atomic_load_n(&context->busy, __ATOMIC_ACQUIRE))
    return;
  __atomic_store_n(&context->alive, 0, __ATOMIC_RELEASE);
  cuvil_pool_destroy(context->pool);
  free(context->workspace);
  free(context);
}
