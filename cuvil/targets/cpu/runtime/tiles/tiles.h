/*===- tiles.h - what the register-tile convolution families share -------===*
 *
 * The blocked direct convolutions (conv_blocked, qconv, bconv) compute each
 * output row of 1 or 2 channel blocks in register tiles, one function per
 * (block count NB, width U) so that the accumulators live in registers.
 * Here: the full unrolling their fixed trip counts need, the entry that
 * splits a row's columns into such tiles, and the float32 finish (bias,
 * residual, activation) of the families that sum in float32. A family's
 * row struct has the fields these read (block, in_block, stride_w; bias,
 * residual, out, out_stride, activation, lo, hi for the finish).
 *
 *===----------------------------------------------------------------------===*/

#ifndef CUVIL_RUNTIME_TILES_H
#define CUVIL_RUNTIME_TILES_H

/* Fully unrolls a loop with a constant trip count. */
#if defined(__clang__)
#define CUVIL_UNROLL _Pragma("clang loop unroll(full)")
#elif defined(__GNUC__)
#define CUVIL_UNROLL _Pragma("GCC unroll 32")
#else
#define CUVIL_UNROLL
#endif

#include <stdint.h>

/* The width of tile t of `tiles` over u columns: as even as possible
 * (56 = 4 x 14; with at most 6, 6 x 6 + 4 x 5). */
static inline int64_t cuvil_tile_width(int64_t u, int64_t tiles, int64_t t) {
  return u / tiles + (t < u % tiles);
}

/* One case of an entry's switch: the tile PREFIX_NAME_NB_U on column x0. */
#define CUVIL_TILE_CASE(prefix, name, NB, U)                                   \
  case NB * 64 + U:                                                            \
    prefix##_##name##_##NB##_##U(r, x0);                                       \
    break;

/* The variant PREFIX_NAME(r, nb, x0, u): columns [x0, x0 + u) in tiles of
 * at most UMAX, as even as possible, so that no tile is too narrow to keep
 * the multipliers busy;
 * CASES are its tiles' cases, and IB_CASES (if IB) those for stride SW on
 * input blocks of IB, whose columns are constant offsets from one pointer.
 * Another block size than LANES returns NARROWER (0: the driver runs the
 * reference; or a call of a narrower variant); a block count (1 to 3) or
 * width without a tile among the cases returns 0. */
#define CUVIL_TILE_ENTRY(prefix, row, name, isa, LANES, UMAX, NARROWER, IB,    \
                         SW, CASES, IB_CASES)                                  \
  __attribute__((target(isa))) int prefix##_##name(                            \
      const struct row *r, int64_t nb, int64_t x0, int64_t u) {                \
    int64_t tiles = (u + UMAX - 1) / UMAX, t;                                  \
    int fixed = (IB) && r->in_block == (IB) && r->stride_w == (SW);            \
    if (r->block != LANES)                                                     \
      return NARROWER;                                                         \
    if (nb < 1 || nb > 3)                                                      \
      return 0;                                                                \
    for (t = 0; t < tiles; ++t) {                                              \
      int64_t width = cuvil_tile_width(u, tiles, t);                           \
      if (fixed) {                                                             \
        switch (nb * 64 + width) {                                             \
          IB_CASES                                                             \
        default:                                                               \
          return 0;                                                            \
        }                                                                      \
      } else {                                                                 \
        switch (nb * 64 + width) {                                             \
          CASES                                                                \
        default:                                                               \
          return 0;                                                            \
        }                                                                      \
      }                                                                        \
      x0 += width;                                                             \
    }                                                                          \
    return 1;                                                                  \
  }

/* A float32 tile's NB x U sums `acc` finished and stored, in the unfused
 * ops' order: + bias, + residual, activation (the tile's int loop
 * variables b and j do the counting). Activations beyond a clamp run over
 * each block's stored row, still in L1. */
#define CUVIL_TILE_FINISH_F32(r, acc, x0, vec, LANES, NB, U, zero, loadf,      \
                              storef, addf, maxf, minf, set1f)                 \
  CUVIL_UNROLL for (b = 0; b < NB; ++b) {                                      \
    vec bv = (r)->bias ? loadf((r)->bias + b * LANES) : zero();                \
    float *out = (r)->out + b * (r)->out_stride + (x0) * LANES;                \
    const float *res =                                                         \
        (r)->residual ? (r)->residual + b * (r)->out_stride + (x0) * LANES : 0; \
    CUVIL_UNROLL for (j = 0; j < U; ++j) {                                     \
      vec v = addf(acc[b][j], bv);                                             \
      if (res)                                                                 \
        v = addf(v, loadf(res + j * LANES));                                   \
      if ((r)->activation == CUVIL_ACT_RELU)                                   \
        v = maxf(v, zero());                                                   \
      else if ((r)->activation == CUVIL_ACT_CLIP)                              \
        v = minf(maxf(v, set1f((r)->lo)), set1f((r)->hi));                     \
      storef(out + j * LANES, v);                                              \
    }                                                                          \
    if ((r)->activation > CUVIL_ACT_CLIP)                                      \
      cuvil_activate_f32((r)->activation, (r)->lo, (r)->hi, out, U * LANES);   \
  }

#endif /* CUVIL_RUNTIME_TILES_H */
