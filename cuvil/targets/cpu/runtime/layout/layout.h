/*===- layout.h - reorders between NCHW and NCHW<B>c ----------------------===*
 *
 * The layout copies cuvil-cpu-assign-layouts leaves: a blocked value
 * returned as a plain model output.
 *
 *===----------------------------------------------------------------------===*/

#ifndef CUVIL_RUNTIME_LAYOUT_H
#define CUVIL_RUNTIME_LAYOUT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* NCHW <-> NCHW<block>c over [n][c][spatial]: to_blocked copies plain `src`
 * into blocked `dst` (zero past channel c), else blocked into plain. */
void cuvil_reorder_f32(int to_blocked, int64_t n, int64_t c, int64_t spatial,
                       int64_t block, const float *src, float *dst);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_RUNTIME_LAYOUT_H */
