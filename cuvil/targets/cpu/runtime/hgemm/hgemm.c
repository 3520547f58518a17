/*===- hgemm.c - float16 matrix products and convolutions ----------------===*
 *
 * The reference micro-kernel rounds every step from double (cuvil_fma16);
 * the NEON one runs fmla on 8 halves, 4 rows x 32 columns in 16 registers.
 * Both sum each output in order of k from 0, fused, so they agree bit for
 * bit (hgemm_test).
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/hgemm/hgemm.h"

size_t cuvil_hgemm_packed_halves(int64_t k, int64_t n) {
  return (size_t)((n + CUVIL_HGEMM_NR - 1) / CUVIL_HGEMM_NR) * (size_t)k *
         CUVIL_HGEMM_NR;
}

void cuvil_hgemm_pack_b(int64_t k, int64_t n, const uint16_t *b, int64_t b_row,
                        uint16_t *packed) {
  int64_t strips = (n + CUVIL_HGEMM_NR - 1) / CUVIL_HGEMM_NR, s, l, j;
  for (s = 0; s < strips; ++s)
    for (l = 0; l < k; ++l)
      for (j = 0; j < CUVIL_HGEMM_NR; ++j) {
        int64_t col = s * CUVIL_HGEMM_NR + j;
        packed[(s * k + l) * CUVIL_HGEMM_NR + j] =
            col < n ? b[l * b_row + col] : (uint16_t)0;
      }
}

void cuvil_hgemm4_reference(int64_t rows, int64_t k, const uint16_t *a,
                            int64_t a_row, const uint16_t *strip, uint16_t *c,
                            int64_t c_row, int64_t cols) {
  int64_t r, j, l;
  for (r = 0; r < rows; ++r)
    for (j = 0; j < cols; ++j) {
      uint16_t acc = 0;
      for (l = 0; l < k; ++l)
        acc = cuvil_fma16(a[r * a_row + l], strip[l * CUVIL_HGEMM_NR + j], acc);
      c[r * c_row + j] = acc;
    }
}

#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__aarch64__)
#include <arm_neon.h>

/* ROWS rows x 32 columns in 4 x ROWS registers of 8 halves; 8 k per A load
 * (fmla by element). ROWS is a constant: one copy per row count. */
#define CUVIL_HGEMM4_NEON_STEP(l, LANE)                                        \
  do {                                                                         \
    const float16_t *b_ = (const float16_t *)strip + (l) * CUVIL_HGEMM_NR;      \
    float16x8_t b0_ = vld1q_f16(b_), b1_ = vld1q_f16(b_ + 8),                  \
                b2_ = vld1q_f16(b_ + 16), b3_ = vld1q_f16(b_ + 24);            \
    for (r = 0; r < ROWS; ++r) {                                               \
      acc[r][0] = vfmaq_laneq_f16(acc[r][0], b0_, av[r], LANE);                \
      acc[r][1] = vfmaq_laneq_f16(acc[r][1], b1_, av[r], LANE);                \
      acc[r][2] = vfmaq_laneq_f16(acc[r][2], b2_, av[r], LANE);                \
      acc[r][3] = vfmaq_laneq_f16(acc[r][3], b3_, av[r], LANE);                \
    }                                                                          \
  } while (0)

__attribute__((target("+neon,+fullfp16"), always_inline)) static inline void
cuvil_hgemm4_neon_rows(const int ROWS, int64_t k, const uint16_t *a,
                       int64_t a_row, const uint16_t *strip, uint16_t *c,
                       int64_t c_row, int64_t cols) {
  float16x8_t acc[4][4], av[4];
  uint16_t tail[CUVIL_HGEMM_NR];
  int64_t l = 0;
  int r, v;
  for (r = 0; r < ROWS; ++r)
    for (v = 0; v < 4; ++v)
      acc[r][v] = vdupq_n_f16(0);
  for (; l + 8 <= k; l += 8) {
    for (r = 0; r < ROWS; ++r)
      av[r] = vld1q_f16((const float16_t *)a + r * a_row + l);
    CUVIL_HGEMM4_NEON_STEP(l, 0);
    CUVIL_HGEMM4_NEON_STEP(l + 1, 1);
    CUVIL_HGEMM4_NEON_STEP(l + 2, 2);
    CUVIL_HGEMM4_NEON_STEP(l + 3, 3);
    CUVIL_HGEMM4_NEON_STEP(l + 4, 4);
    CUVIL_HGEMM4_NEON_STEP(l + 5, 5);
    CUVIL_HGEMM4_NEON_STEP(l + 6, 6);
    CUVIL_HGEMM4_NEON_STEP(l + 7, 7);
  }
  for (; l < k; ++l) {
    for (r = 0; r < ROWS; ++r)
      av[r] = vld1q_dup_f16((const float16_t *)a + r * a_row + l);
    CUVIL_HGEMM4_NEON_STEP(l, 0);
  }
  for (r = 0; r < ROWS; ++r) {
    uint16_t *out = c + r * c_row;
    if (cols == CUVIL_HGEMM_NR) {
      for (v = 0; v < 4; ++v)
        vst1q_f16((float16_t *)out + 8 * v, acc[r][v]);
    } else {
      for (v = 0; v < 4; ++v)
        vst1q_f16((float16_t *)tail + 8 * v, acc[r][v]);
      memcpy(out, tail, (size_t)cols * sizeof(uint16_t));
    }
  }
}
#undef CUVIL_HGEMM4_NEON_STEP

__attribute__((target("+neon,+fullfp16"))) void
cuvil_hgemm4_neon_fp16(int64_t rows, int64_t k, const uint16_t *a,
                       int64_t a_row, const uint16_t *strip, uint16_t *c,
                       int64_t c_row, int64_t cols) {
  switch (rows) {
  case 1:
    cuvil_hgemm4_neon_rows(1, k, a, a_row, strip, c, c_row, cols);
    break;
  case 2:
    cuvil_hgemm4_neon_rows(2, k, a, a_row, strip, c, c_row, cols);
    break;
  case 3:
    cuvil_hgemm4_neon_rows(3, k, a, a_row, strip, c, c_row, cols);
    break;
  default:
    cuvil_hgemm4_neon_rows(4, k, a, a_row, strip, c, c_row, cols);
  }
}
#endif

/* Tiles [begin, end) of (4-row group, strip) pairs, strips innermost: a
 * group's rows of A stay in cache across its strips. */
struct cuvil_hgemm_args {
  cuvil_hgemm4_fn kernel;
  int64_t m, n, k, a_row, c_row, strips;
  const uint16_t *a, *packed;
  uint16_t *c;
};

static void cuvil_hgemm_tiles(void *p, int64_t begin, int64_t end) {
  const struct cuvil_hgemm_args *x = (const struct cuvil_hgemm_args *)p;
  int64_t t;
  for (t = begin; t < end; ++t) {
    int64_t r0 = t / x->strips * 4, s = t % x->strips;
    int64_t rows = x->m - r0 < 4 ? x->m - r0 : 4;
    int64_t cols = x->n - s * CUVIL_HGEMM_NR < CUVIL_HGEMM_NR
                       ? x->n - s * CUVIL_HGEMM_NR
                       : CUVIL_HGEMM_NR;
    x->kernel(rows, x->k, x->a + r0 * x->a_row, x->a_row,
              x->packed + s * x->k * CUVIL_HGEMM_NR,
              x->c + r0 * x->c_row + s * CUVIL_HGEMM_NR, x->c_row, cols);
  }
}

void cuvil_hgemm_f16(cuvil_pool *pool, cuvil_hgemm4_fn kernel, int64_t m,
                     int64_t n, int64_t k, const uint16_t *a, int64_t a_row,
                     const uint16_t *packed_b, uint16_t *c, int64_t c_row) {
  struct cuvil_hgemm_args x;
  if (m <= 0 || n <= 0)
    return;
  x.kernel = kernel;
  x.m = m;
  x.n = n;
  x.k = k;
  x.a = a;
  x.a_row = a_row;
  x.packed = packed_b;
  x.c = c;
  x.c_row = c_row;
  x.strips = (n + CUVIL_HGEMM_NR - 1) / CUVIL_HGEMM_NR;
  cuvil_parallel_for(pool, (m + 3) / 4 * x.strips, cuvil_hgemm_tiles, &x);
}

size_t cuvil_hconv_scratch_halves(int64_t c, int64_t kh, int64_t kw,
                                  int64_t oh, int64_t ow) {
  return cuvil_hgemm_packed_halves(c * kh * kw, oh * ow);
}

/* Image `img`'s patches, packed as B: position p of row (ci, ky, kx) at
 * [p / 32][row][p % 32], zero where the window reads padding and past the
 * last position. */
struct cuvil_hconv_args {
  int64_t c, h, w, kh, kw, stride_h, stride_w, pad_top, pad_left, dil_h,
      dil_w, oh, ow;
  const uint16_t *input;
  uint16_t *patches;
};

static void cuvil_hconv_im2col(void *p, int64_t begin, int64_t end) {
  const struct cuvil_hconv_args *x = (const struct cuvil_hconv_args *)p;
  const int64_t rows = x->c * x->kh * x->kw, positions = x->oh * x->ow;
  const int64_t padded = (positions + CUVIL_HGEMM_NR - 1) / CUVIL_HGEMM_NR *
                         CUVIL_HGEMM_NR;
  const int64_t strip = rows * CUVIL_HGEMM_NR; /* halves from strip to strip */
  int64_t row;
  for (row = begin; row < end; ++row) {
    int64_t ci = row / (x->kh * x->kw), ky = row / x->kw % x->kh,
            kx = row % x->kw, base = kx * x->dil_w - x->pad_left, x0, x1, y,
            pos;
    const uint16_t *plane = x->input + ci * x->h * x->w;
    uint16_t *dst = x->patches + row * CUVIL_HGEMM_NR;
    /* The columns whose tap is inside the row: [x0, x1). */
    for (x0 = 0; x0 < x->ow && x0 * x->stride_w + base < 0; ++x0) {
    }
    for (x1 = x->ow; x1 > x0 && (x1 - 1) * x->stride_w + base >= x->w; --x1) {
    }
    /* Each output row in runs that stay inside one strip: a zero head, the
     * taps (a copy at unit stride), a zero tail. */
    for (y = 0; y < x->oh; ++y) {
      int64_t iy = y * x->stride_h - x->pad_top + ky * x->dil_h, col = 0;
      int inside = iy >= 0 && iy < x->h;
      const uint16_t *in = plane + iy * x->w + base;
      while (col < x->ow) {
        int64_t at = y * x->ow + col, lane = at % CUVIL_HGEMM_NR;
        int64_t stop = col + (CUVIL_HGEMM_NR - lane) < x->ow
                           ? col + (CUVIL_HGEMM_NR - lane)
                           : x->ow;
        int64_t lo = inside ? (x0 > col ? x0 : col) : stop;
        int64_t hi = inside ? (x1 < stop ? x1 : stop) : stop, q;
        uint16_t *d = dst + at / CUVIL_HGEMM_NR * strip + lane - col;
        if (hi < lo)
          hi = lo;
        for (q = col; q < lo; ++q)
          d[q] = 0;
        if (x->stride_w == 1)
          memcpy(d + lo, in + lo, (size_t)(hi - lo) * sizeof(uint16_t));
        else
          for (q = lo; q < hi; ++q)
            d[q] = in[q * x->stride_w];
        for (q = hi; q < stop; ++q)
          d[q] = 0;
        col = stop;
      }
    }
    for (pos = positions; pos < padded; ++pos)
      dst[pos / CUVIL_HGEMM_NR * strip + pos % CUVIL_HGEMM_NR] = 0;
  }
}

void cuvil_conv2d_f16(cuvil_pool *pool, cuvil_hgemm4_fn kernel,
                      uint16_t *scratch, int64_t n, int64_t c, int64_t h,
                      int64_t w, const uint16_t *input, int64_t oc, int64_t kh,
                      int64_t kw, const uint16_t *weight, int64_t stride_h,
                      int64_t stride_w, int64_t pad_top, int64_t pad_left,
                      int64_t dil_h, int64_t dil_w, int64_t oh, int64_t ow,
                      uint16_t *output) {
  struct cuvil_hconv_args x;
  int64_t img, rows = c * kh * kw;
  x.c = c;
  x.h = h;
  x.w = w;
  x.kh = kh;
  x.kw = kw;
  x.stride_h = stride_h;
  x.stride_w = stride_w;
  x.pad_top = pad_top;
  x.pad_left = pad_left;
  x.dil_h = dil_h;
  x.dil_w = dil_w;
  x.oh = oh;
  x.ow = ow;
  x.patches = scratch;
  for (img = 0; img < n; ++img) {
    x.input = input + img * c * h * w;
    cuvil_parallel_for(pool, rows, cuvil_hconv_im2col, &x);
    /* [oc][c kh kw] @ patches [c kh kw][oh ow]. */
    cuvil_hgemm_f16(pool, kernel, oc, oh * ow, rows, weight, rows, scratch,
                    output + img * oc * oh * ow, oh * ow);
  }
}
