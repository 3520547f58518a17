/*===- data.h - data movement the inline loops do not do ------------------===*
 *
 * Gather, which checks its indices (a model input may hold any).
 *
 *===----------------------------------------------------------------------===*/

#ifndef CUVIL_RUNTIME_DATA_H
#define CUVIL_RUNTIME_DATA_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Gathers rows: data is [outer, axis, inner] of `element_size` bytes,
 * indices (int64 or int32 per `indices_are_i64`) has `count` entries;
 * output is [outer, count, inner]. Returns 0, or 1 if an index is out of
 * range (the output is then unspecified). */
int cuvil_gather(int64_t element_size, int64_t outer, int64_t axis,
                 int64_t inner, const void *data, const void *indices,
                 int indices_are_i64, int64_t count, void *output);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_RUNTIME_DATA_H */
