/*===- data.c - gather ----------------------------------------------------===*
 *
 * Rows of `element_size` bytes, whatever their type.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/data/data.h"

#include <string.h>

int cuvil_gather(int64_t element_size, int64_t outer, int64_t axis,
                 int64_t inner, const void *data, const void *indices,
                 int indices_are_i64, int64_t count, void *output) {
  const char *src = (const char *)data;
  char *dst = (char *)output;
  int64_t row = inner * element_size;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < count; ++i) {
      int64_t index = indices_are_i64 ? ((const int64_t *)indices)[i]
                                      : ((const int32_t *)indices)[i];
      if (index < 0)
        index += axis;
      if (index < 0 || index >= axis)
        return 1;
      memcpy(dst + (o * count + i) * row, src + (o * axis + index) * row,
             (size_t)row);
    }
  }
  return 0;
}
