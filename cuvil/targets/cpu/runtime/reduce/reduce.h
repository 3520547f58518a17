/*===- reduce.h - softmax, normalizations and reductions ------------------===*
 *
 * Over the middle dimension of [outer, axis, inner] (or rows), in an order
 * that depends only on the data, never on the thread count.
 *
 *===----------------------------------------------------------------------===*/

#ifndef CUVIL_RUNTIME_REDUCE_H
#define CUVIL_RUNTIME_REDUCE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Softmax (log_softmax if `log`) over the middle dim of [outer, axis, inner]. */
void cuvil_softmax_f32(int log, int64_t outer, int64_t axis, int64_t inner,
                       const float *input, float *output);

/* Normalizes each of `outer` rows of `inner` elements; scale/bias have
 * `inner` elements or are NULL. */
void cuvil_layer_norm_f32(int64_t outer, int64_t inner, const float *input,
                          const float *scale, const float *bias, double epsilon,
                          float *output);

/* Inference batch norm over [n, c, spatial], or NCHW<block>c
 * ([n][c / block][spatial][block]) for block > 1. */
void cuvil_batch_norm_f32(int64_t n, int64_t c, int64_t spatial,
                          int64_t block, const float *input, const float *scale,
                          const float *bias, const float *mean,
                          const float *variance, double epsilon, float *output);

/* Reduces the middle dim of [outer, reduced, inner]: kind 0 sum, 1 mean,
 * 2 max, 3 min. */
void cuvil_reduce_f32(int kind, int64_t outer, int64_t reduced, int64_t inner,
                      const float *input, float *output);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_RUNTIME_REDUCE_H */
