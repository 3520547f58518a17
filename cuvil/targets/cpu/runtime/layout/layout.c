/*===- layout.c - NCHW <-> NCHW<B>c ---------------------------------------===*
 *
 * Zero past the last channel when blocking, so that blocked kernels may
 * read whole blocks.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/layout/layout.h"

/* Plain [n][c][spatial] <-> blocked [n][ceil(c / block)][spatial][block]. */
void cuvil_reorder_f32(int to_blocked, int64_t n, int64_t c, int64_t spatial,
                       int64_t block, const float *src, float *dst) {
  int64_t blocks = (c + block - 1) / block, b, q, s, l;
  for (b = 0; b < n; ++b)
    for (q = 0; q < blocks; ++q)
      for (s = 0; s < spatial; ++s)
        for (l = 0; l < block; ++l) {
          int64_t ch = q * block + l;
          int64_t at = ((b * blocks + q) * spatial + s) * block + l;
          if (to_blocked)
            dst[at] = ch < c ? src[(b * c + ch) * spatial + s] : 0.0f;
          else if (ch < c)
            dst[(b * c + ch) * spatial + s] = src[at];
        }
}
