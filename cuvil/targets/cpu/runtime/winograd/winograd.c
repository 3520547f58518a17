/*===- winograd.c - Winograd F(4x4, 3x3) ---------------------------------===*
 *
 * Weights transformed per call into the scratch (the artifact stores only
 * the originals), tile transforms on 16 channels as one vector, the 36
 * products on cuvil_gemm_packed.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/winograd/winograd.h"

#include "cuvil/targets/cpu/runtime/contract/contract.h"
#include "cuvil/targets/cpu/runtime/gemm/gemm.h"

#include <string.h>

/* Winograd F(4x4, 3x3) with the points 0, 1, -1, 2, -2 and infinity
 * (Lavin and Gray): Y = A^T [(G g G^T) . (B^T d B)] A.
 * The transforms work on CUVIL_WINO_LANES channels as one vector, so the
 * transform domain keeps channels innermost: V[xi][t][i] for the input
 * tiles, U[xi] packed as a matrix product's B ([ceil(OC / 32)][C][32], the
 * strips cuvil_gemm_packed reads) and M[xi][t][o] = V[xi] @ U[xi]. In
 * NCHW<block>c a tile point's channels then move as one contiguous vector
 * in both directions; in NCHW they are gathered and scattered. */
#define CUVIL_WINO_LANES 16
/* Tiles of a row whose six input rows the input transform buffers at once
 * (6 x 66 points x 16 lanes: 25 KiB, an L1's share). */
#define CUVIL_WINO_CHUNK 16

/* Floats of one point of U (the scratch's layout: contract.h). */
static int64_t cuvil_winograd_u_floats(int64_t c, int64_t oc) {
  return cuvil_strip_columns(oc) * c;
}

struct cuvil_winograd_args {
  int64_t c, h, w, oc, pad_top, pad_left, oh, ow, tiles_x, tiles_y, tiles;
  int64_t in_block, out_block; /* channel blocks (1: NCHW) */
  const float *input, *weight, *bias;
  float *u, *v, *m, *output;
  const cuvil_epilogue *epilogue;
};

/* Channels [first, first + count) (count <= CUVIL_WINO_LANES) of NCHW<block>c
 * planes of `points` points: point p of lane l is at off[l] + p * block.
 * Returns how many lanes at a time are contiguous (16, 8, 4 or 1). */
static int cuvil_wino_lanes(int64_t first, int64_t count, int64_t block,
                            int64_t points, int64_t *off) {
  int64_t l;
  int run;
  for (l = 0; l < count; ++l)
    off[l] = (first + l) / block * points * block + (first + l) % block;
  for (run = 16; run >= 4; run /= 2) {
    int ok = count % run == 0;
    for (l = 0; ok && l < count; ++l)
      ok = off[l] == off[l - l % run] + l % run;
    if (ok)
      return run;
  }
  return 1;
}

/* dst[l] = src[off[l]] for `count` lanes, in runs of `run`. */
static inline void cuvil_wino_gather(float *dst, const float *src,
                                     const int64_t *off, int64_t count,
                                     int run) {
  int64_t l;
  if (run == 16) {
    memcpy(dst, src + off[0], 16 * sizeof(float));
  } else if (run == 8) {
    for (l = 0; l < count; l += 8)
      memcpy(dst + l, src + off[l], 8 * sizeof(float));
  } else if (run == 4) {
    for (l = 0; l < count; l += 4)
      memcpy(dst + l, src + off[l], 4 * sizeof(float));
  } else {
    for (l = 0; l < count; ++l)
      dst[l] = src[off[l]];
  }
}

static inline void cuvil_wino_scatter(float *dst, const float *src,
                                      const int64_t *off, int64_t count,
                                      int run) {
  int64_t l;
  if (run == 16) {
    memcpy(dst + off[0], src, 16 * sizeof(float));
  } else if (run == 8) {
    for (l = 0; l < count; l += 8)
      memcpy(dst + off[l], src + l, 8 * sizeof(float));
  } else if (run == 4) {
    for (l = 0; l < count; l += 4)
      memcpy(dst + off[l], src + l, 4 * sizeof(float));
  } else {
    for (l = 0; l < count; ++l)
      dst[off[l]] = src[l];
  }
}

/* U for output channels [16 * begin, 16 * end): lane l of a vector is output
 * channel o0 + l, and each input channel's 36 transformed vectors land in
 * their strips. Lanes past OC are zero, as the packed layout wants. */
static void cuvil_winograd_weights(void *p, int64_t begin, int64_t end) {
  const struct cuvil_winograd_args *x = (const struct cuvil_winograd_args *)p;
  int64_t g, i, r, col, l, k, uf = cuvil_winograd_u_floats(x->c, x->oc);
  for (g = begin; g < end; ++g) {
    int64_t o0 = g * CUVIL_WINO_LANES;
    int64_t lanes =
        x->oc - o0 < CUVIL_WINO_LANES ? x->oc - o0 : CUVIL_WINO_LANES;
    float *strip =
        x->u + (o0 / CUVIL_STRIP) * x->c * CUVIL_STRIP + o0 % CUVIL_STRIP;
    /* The strip's other half has no channels when OC ends in this one. */
    int clear = o0 % CUVIL_STRIP == 0 && o0 + CUVIL_WINO_LANES >= x->oc;
    for (i = 0; i < x->c; ++i) {
      float gw[9][CUVIL_WINO_LANES], t[6][3][CUVIL_WINO_LANES],
          u[36][CUVIL_WINO_LANES];
      const float *src = x->weight + (o0 * x->c + i) * 9;
      for (k = 0; k < 9; ++k)
        for (l = 0; l < CUVIL_WINO_LANES; ++l)
          gw[k][l] = l < lanes ? src[l * x->c * 9 + k] : 0.0f;
      for (col = 0; col < 3; ++col)
        for (l = 0; l < CUVIL_WINO_LANES; ++l) {
          float g0 = gw[col][l], g1 = gw[3 + col][l], g2 = gw[6 + col][l];
          t[0][col][l] = g0 * 0.25f;
          t[1][col][l] = -(g0 + g1 + g2) * (1.0f / 6);
          t[2][col][l] = -(g0 - g1 + g2) * (1.0f / 6);
          t[3][col][l] = g0 * (1.0f / 24) + g1 * (1.0f / 12) + g2 * (1.0f / 6);
          t[4][col][l] = g0 * (1.0f / 24) - g1 * (1.0f / 12) + g2 * (1.0f / 6);
          t[5][col][l] = g2;
        }
      for (r = 0; r < 6; ++r)
        for (l = 0; l < CUVIL_WINO_LANES; ++l) {
          float g0 = t[r][0][l], g1 = t[r][1][l], g2 = t[r][2][l];
          u[r * 6 + 0][l] = g0 * 0.25f;
          u[r * 6 + 1][l] = -(g0 + g1 + g2) * (1.0f / 6);
          u[r * 6 + 2][l] = -(g0 - g1 + g2) * (1.0f / 6);
          u[r * 6 + 3][l] = g0 * (1.0f / 24) + g1 * (1.0f / 12) + g2 * (1.0f / 6);
          u[r * 6 + 4][l] = g0 * (1.0f / 24) - g1 * (1.0f / 12) + g2 * (1.0f / 6);
          u[r * 6 + 5][l] = g2;
        }
      for (r = 0; r < 36; ++r) {
        float *dst = strip + r * uf + i * CUVIL_STRIP;
        memcpy(dst, u[r], sizeof u[r]);
        if (clear)
          memset(dst + CUVIL_WINO_LANES, 0,
                 (CUVIL_STRIP - CUVIL_WINO_LANES) * sizeof(float));
      }
    }
  }
}

/* V for items [begin, end) of (input channel group, tile row): the six input
 * rows under up to CUVIL_WINO_CHUNK tiles go to a zero-padded buffer of
 * channel vectors, then each tile's 36 vectors B^T d B go to V[xi][t]. */
static void cuvil_winograd_inputs(void *p, int64_t begin, int64_t end) {
  const struct cuvil_winograd_args *x = (const struct cuvil_winograd_args *)p;
  float line[6][4 * CUVIL_WINO_CHUNK + 2][CUVIL_WINO_LANES];
  int64_t item, t0, tt, r, col, l, points = x->h * x->w, step = x->tiles * x->c;
  memset(line, 0, sizeof line);
  for (item = begin; item < end; ++item) {
    int64_t i0 = item / x->tiles_y * CUVIL_WINO_LANES, ty = item % x->tiles_y,
            off[16];
    int64_t lanes = x->c - i0 < CUVIL_WINO_LANES ? x->c - i0 : CUVIL_WINO_LANES;
    int run = cuvil_wino_lanes(i0, lanes, x->in_block, points, off);
    for (t0 = 0; t0 < x->tiles_x; t0 += CUVIL_WINO_CHUNK) {
      int64_t nt = x->tiles_x - t0 < CUVIL_WINO_CHUNK ? x->tiles_x - t0
                                                      : CUVIL_WINO_CHUNK;
      for (r = 0; r < 6; ++r) {
        int64_t yy = ty * 4 - x->pad_top + r;
        for (col = 0; col < 4 * nt + 2; ++col) {
          int64_t xx = t0 * 4 - x->pad_left + col;
          if (yy >= 0 && yy < x->h && xx >= 0 && xx < x->w)
            cuvil_wino_gather(line[r][col],
                              x->input + (yy * x->w + xx) * x->in_block, off,
                              lanes, run);
          else
            memset(line[r][col], 0, sizeof line[r][col]);
        }
      }
      for (tt = 0; tt < nt; ++tt) {
        float s[6][6][CUVIL_WINO_LANES], v[36][CUVIL_WINO_LANES];
        float *dst = x->v + (ty * x->tiles_x + t0 + tt) * x->c + i0;
        for (col = 0; col < 6; ++col) {
          int64_t at = 4 * tt + col;
          for (l = 0; l < CUVIL_WINO_LANES; ++l) {
            float d0 = line[0][at][l], d1 = line[1][at][l], d2 = line[2][at][l],
                  d3 = line[3][at][l], d4 = line[4][at][l], d5 = line[5][at][l];
            s[0][col][l] = 4 * d0 - 5 * d2 + d4;
            s[1][col][l] = -4 * d1 - 4 * d2 + d3 + d4;
            s[2][col][l] = 4 * d1 - 4 * d2 - d3 + d4;
            s[3][col][l] = -2 * d1 - d2 + 2 * d3 + d4;
            s[4][col][l] = 2 * d1 - d2 - 2 * d3 + d4;
            s[5][col][l] = 4 * d1 - 5 * d3 + d5;
          }
        }
        for (r = 0; r < 6; ++r)
          for (l = 0; l < CUVIL_WINO_LANES; ++l) {
            float d0 = s[r][0][l], d1 = s[r][1][l], d2 = s[r][2][l],
                  d3 = s[r][3][l], d4 = s[r][4][l], d5 = s[r][5][l];
            v[r * 6 + 0][l] = 4 * d0 - 5 * d2 + d4;
            v[r * 6 + 1][l] = -4 * d1 - 4 * d2 + d3 + d4;
            v[r * 6 + 2][l] = 4 * d1 - 4 * d2 - d3 + d4;
            v[r * 6 + 3][l] = -2 * d1 - d2 + 2 * d3 + d4;
            v[r * 6 + 4][l] = 2 * d1 - d2 - 2 * d3 + d4;
            v[r * 6 + 5][l] = 4 * d1 - 5 * d3 + d5;
          }
        if (lanes == CUVIL_WINO_LANES)
          for (r = 0; r < 36; ++r)
            memcpy(dst + r * step, v[r], sizeof v[r]);
        else
          for (r = 0; r < 36; ++r)
            memcpy(dst + r * step, v[r], (size_t)lanes * sizeof(float));
      }
    }
  }
}

/* M[xi] = V[xi] @ U[xi] for rows [begin, end) of the 36 products stacked
 * (row r: point r / T, tile r % T). */
static void cuvil_winograd_products(void *p, int64_t begin, int64_t end) {
  const struct cuvil_winograd_args *x = (const struct cuvil_winograd_args *)p;
  int64_t uf = cuvil_winograd_u_floats(x->c, x->oc), r = begin;
  while (r < end) {
    int64_t xi = r / x->tiles, first = r % x->tiles;
    int64_t last =
        end - xi * x->tiles < x->tiles ? end - xi * x->tiles : x->tiles;
    cuvil_gemm_packed(first, last, x->oc, x->c, x->v + xi * x->tiles * x->c,
                      x->c, 1, x->u + xi * uf, x->m + xi * x->tiles * x->oc,
                      x->oc);
    r = xi * x->tiles + last;
  }
}

/* Items [begin, end) of (output channel group, tile row): Y = A^T M A per
 * tile, then bias and the epilogue in the order cuvil_epilogue_row applies
 * them, each output point's channels as one vector. */
static void cuvil_winograd_outputs(void *p, int64_t begin, int64_t end) {
  const struct cuvil_winograd_args *x = (const struct cuvil_winograd_args *)p;
  const cuvil_epilogue *e = x->epilogue;
  int64_t item, tx, r, col, l, step = x->tiles * x->oc, ob = x->out_block;
  for (item = begin; item < end; ++item) {
    int64_t o0 = item / x->tiles_y * CUVIL_WINO_LANES, ty = item % x->tiles_y,
            off[16];
    int64_t lanes =
        x->oc - o0 < CUVIL_WINO_LANES ? x->oc - o0 : CUVIL_WINO_LANES;
    int run = cuvil_wino_lanes(o0, lanes, ob, x->oh * x->ow, off);
    float bias[CUVIL_WINO_LANES];
    for (l = 0; l < CUVIL_WINO_LANES; ++l)
      bias[l] = x->bias && l < lanes ? x->bias[o0 + l] : 0.0f;
    for (tx = 0; tx < x->tiles_x; ++tx) {
      const float *mp = x->m + (ty * x->tiles_x + tx) * x->oc + o0;
      float m[36][CUVIL_WINO_LANES], s[4][6][CUVIL_WINO_LANES],
          y[4][4][CUVIL_WINO_LANES];
      if (lanes == CUVIL_WINO_LANES) {
        for (r = 0; r < 36; ++r)
          memcpy(m[r], mp + r * step, sizeof m[r]);
      } else {
        memset(m, 0, sizeof m);
        for (r = 0; r < 36; ++r)
          memcpy(m[r], mp + r * step, (size_t)lanes * sizeof(float));
      }
      for (col = 0; col < 6; ++col)
        for (l = 0; l < CUVIL_WINO_LANES; ++l) {
          float m0 = m[col][l], m1 = m[6 + col][l], m2 = m[12 + col][l],
                m3 = m[18 + col][l], m4 = m[24 + col][l], m5 = m[30 + col][l];
          s[0][col][l] = m0 + m1 + m2 + m3 + m4;
          s[1][col][l] = m1 - m2 + 2 * m3 - 2 * m4;
          s[2][col][l] = m1 + m2 + 4 * m3 + 4 * m4;
          s[3][col][l] = m1 - m2 + 8 * m3 - 8 * m4 + m5;
        }
      for (r = 0; r < 4; ++r)
        for (l = 0; l < CUVIL_WINO_LANES; ++l) {
          float m0 = s[r][0][l], m1 = s[r][1][l], m2 = s[r][2][l],
                m3 = s[r][3][l], m4 = s[r][4][l], m5 = s[r][5][l];
          y[r][0][l] = m0 + m1 + m2 + m3 + m4;
          y[r][1][l] = m1 - m2 + 2 * m3 - 2 * m4;
          y[r][2][l] = m1 + m2 + 4 * m3 + 4 * m4;
          y[r][3][l] = m1 - m2 + 8 * m3 - 8 * m4 + m5;
        }
      for (r = 0; r < 4 && ty * 4 + r < x->oh; ++r)
        for (col = 0; col < 4 && tx * 4 + col < x->ow; ++col) {
          int64_t at = ((ty * 4 + r) * x->ow + tx * 4 + col) * ob;
          float *v = y[r][col], res[CUVIL_WINO_LANES];
          for (l = 0; l < CUVIL_WINO_LANES; ++l)
            v[l] += bias[l];
          if (e && e->residual) {
            cuvil_wino_gather(res, e->residual + at, off, lanes, run);
            for (l = 0; l < CUVIL_WINO_LANES; ++l)
              v[l] += l < lanes ? res[l] : 0.0f;
          }
          if (e && e->activation == CUVIL_ACT_RELU)
            for (l = 0; l < CUVIL_WINO_LANES; ++l)
              v[l] = v[l] > 0.0f ? v[l] : 0.0f;
          else if (e && e->activation == CUVIL_ACT_CLIP)
            for (l = 0; l < CUVIL_WINO_LANES; ++l)
              v[l] = v[l] < e->lo ? e->lo : v[l] > e->hi ? e->hi : v[l];
          else if (e && e->activation > CUVIL_ACT_CLIP)
            cuvil_activate_f32(e->activation, e->lo, e->hi, v,
                               CUVIL_WINO_LANES);
          cuvil_wino_scatter(x->output + at, v, off, lanes, run);
        }
    }
  }
}

void cuvil_conv2d_winograd_f32(cuvil_pool *pool, float *scratch, int64_t n, int64_t c,
                               int64_t h, int64_t w, const float *input, int64_t in_block,
                               int64_t oc, const float *weight, const float *bias,
                               int64_t pad_top, int64_t pad_left, int64_t oh, int64_t ow,
                               float *output, int64_t out_block,
                               const cuvil_epilogue *epilogue) {
  struct cuvil_winograd_args x;
  int64_t b, groups_in = (c + CUVIL_WINO_LANES - 1) / CUVIL_WINO_LANES,
             groups_out = (oc + CUVIL_WINO_LANES - 1) / CUVIL_WINO_LANES;
  x.in_block = in_block;
  x.out_block = out_block;
  x.c = c;
  x.h = h;
  x.w = w;
  x.oc = oc;
  x.pad_top = pad_top;
  x.pad_left = pad_left;
  x.oh = oh;
  x.ow = ow;
  x.tiles_x = CUVIL_WINO_TILES(ow);
  x.tiles_y = CUVIL_WINO_TILES(oh);
  x.tiles = x.tiles_y * x.tiles_x;
  x.weight = weight;
  x.bias = bias;
  x.u = scratch;
  x.v = x.u + 36 * cuvil_winograd_u_floats(c, oc);
  x.m = x.v + 36 * c * x.tiles;
  cuvil_parallel_for(pool, groups_out, cuvil_winograd_weights, &x);
  for (b = 0; b < n; ++b) {
    cuvil_epilogue image = {0, 0, CUVIL_ACT_NONE, 0.0f, 0.0f, 0,
                            0, 0, 0.0f,           0.0f};
    x.input = input + b * c * h * w;
    x.output = output + b * oc * oh * ow;
    if (epilogue) {
      image = *epilogue;
      if (image.residual)
        image.residual += b * oc * oh * ow;
    }
    x.epilogue = epilogue ? &image : 0;
    cuvil_parallel_for(pool, groups_in * x.tiles_y, cuvil_winograd_inputs, &x);
    cuvil_parallel_for(pool, 36 * x.tiles, cuvil_winograd_products, &x);
    cuvil_parallel_for(pool, groups_out * x.tiles_y, cuvil_winograd_outputs,
                       &x);
  }
}
