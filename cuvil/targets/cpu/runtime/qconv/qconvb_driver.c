/*===- qconvb_driver.c - int8 blocked convolutions: weights, image, rows -===*
 *
 * cuvil_qconv2d_blocked around qconvb.c's tiles: weights packed for them at
 * compile time, the image converted to the tiles' input block (padded with
 * the zero point, int8 flipped to uint8) when it must be, and the output
 * rows, in pairs of channel blocks, over the context's threads.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/qconv/qconv.h"

#include "cuvil/targets/cpu/runtime/contract/contract.h"

#include <string.h>

int64_t cuvil_qconvb_input_block(int64_t in_block) {
  return in_block >= 8 ? in_block : 4;
}

size_t cuvil_qconvb_packed_bytes(int64_t oc, int64_t c, int64_t kh, int64_t kw,
                                 int64_t in_block, int64_t block) {
  int64_t ib = cuvil_qconvb_input_block(in_block);
  return (size_t)(oc / block * ((c + ib - 1) / ib) * kh * kw * ib * block);
}

void cuvil_qconvb_pack(int64_t oc, int64_t c, int64_t kh, int64_t kw,
                       const int8_t *oihw, int64_t in_block, int64_t block,
                       int8_t *packed, int32_t *sums) {
  int64_t ib = cuvil_qconvb_input_block(in_block), planes = (c + ib - 1) / ib;
  int64_t taps = kh * kw, o, i, t;
  memset(packed, 0,
         cuvil_qconvb_packed_bytes(oc, c, kh, kw, in_block, block));
  for (o = 0; o < oc; ++o) {
    int32_t sum = 0;
    for (i = 0; i < c; ++i)
      for (t = 0; t < taps; ++t) {
        int8_t v = oihw[(o * c + i) * taps + t];
        int64_t lane = i % ib;
        /* [o / B][i / ib][t][lane / 4][o % B][lane % 4] */
        packed[((((o / block) * planes + i / ib) * taps + t) * (ib / 4) +
                lane / 4) *
                   block * 4 +
               (o % block) * 4 + lane % 4] = v;
        sum += v;
      }
    sums[o] = sum;
  }
  (void)planes;
}

/* Whether the tiles need a converted copy of the image, and its extents. */
static int cuvil_qconvb_converts(int64_t in_block, int x_signed, int64_t h,
                                 int64_t w, int64_t hp, int64_t wp,
                                 int64_t pad_top, int64_t pad_left) {
  return in_block < 8 || x_signed || pad_top != 0 || pad_left != 0 ||
         hp > h || wp > w;
}

int64_t cuvil_qconvb_scratch_bytes(int64_t c, int64_t in_block, int x_signed,
                                   int64_t h, int64_t w, int64_t kh,
                                   int64_t kw, int64_t stride_h,
                                   int64_t stride_w, int64_t pad_top,
                                   int64_t pad_left, int64_t dil_h,
                                   int64_t dil_w, int64_t oh, int64_t ow) {
  int64_t ib = cuvil_qconvb_input_block(in_block);
  int64_t hp = cuvil_conv_extent(oh, kh, stride_h, dil_h);
  int64_t wp = cuvil_conv_extent(ow, kw, stride_w, dil_w);
  if (!cuvil_qconvb_converts(in_block, x_signed, h, w, hp, wp, pad_top,
                             pad_left))
    return 0;
  return (c + ib - 1) / ib * hp * wp * ib;
}

/* The image the tiles read, the rows they compute. */
struct cuvil_qconvb_args {
  cuvil_qconvb_fn tile;
  struct cuvil_qconvb_row base;
  const uint8_t *input, *image;
  const int8_t *weight;
  const int32_t *sums;
  const float *scale, *bias, *residual;
  const uint8_t *residual8;
  uint8_t *converted, *output;
  int64_t c, h, w, hp, wp, pad_top, pad_left, src_block, out_bytes;
  uint8_t flip, pad;
  int64_t oh, ow, stride_h, blocks, groups;
};

/* Row iy of a plain image's channels [4q, 4q + 4) into `count` pixels of
 * 4 bytes from `dst` (the image's first column), flipped to uint8, the
 * channels past c the zero point: as 32-bit words, which vectorize (a byte
 * store every 4th byte does not). */
static void cuvil_qconvb_interleave4(const struct cuvil_qconvb_args *a,
                                     int64_t q, int64_t iy, uint8_t *dst,
                                     int64_t count) {
  const uint8_t *p[4];
  uint32_t keep = 0, fill, flip;
  int64_t x, s;
  for (s = 0; s < 4; ++s) {
    int present = q * 4 + s < a->c;
    p[s] = a->input + (((present ? q * 4 + s : q * 4) * a->h + iy) * a->w);
    keep |= present ? 0xffu << (8 * s) : 0;
  }
  fill = (uint32_t)a->pad * 0x01010101u & ~keep;
  flip = (uint32_t)a->flip * 0x01010101u;
  for (x = 0; x < count; ++x) {
    uint32_t v = (uint32_t)p[0][x] | (uint32_t)p[1][x] << 8 |
                 (uint32_t)p[2][x] << 16 | (uint32_t)p[3][x] << 24;
    v = ((v ^ flip) & keep) | fill;
    memcpy(dst + 4 * x, &v, 4);
  }
}

/* Image blocks [begin, end) into the converted image: blocked by the
 * tiles' input block, padded with the zero point, int8 flipped to uint8. */
static void cuvil_qconvb_convert(void *p, int64_t begin, int64_t end) {
  const struct cuvil_qconvb_args *a = (const struct cuvil_qconvb_args *)p;
  int64_t ib = a->base.in_block, sb = a->src_block, q, y, x, s;
  for (q = begin; q < end; ++q) {
    uint8_t *dst = a->converted + q * a->hp * a->wp * ib;
    for (y = 0; y < a->hp; ++y) {
      int64_t iy = y - a->pad_top;
      uint8_t *row = dst + y * a->wp * ib;
      if (iy < 0 || iy >= a->h) {
        memset(row, a->pad, (size_t)(a->wp * ib));
        continue;
      }
      if (sb == ib) {
        /* Blocks as they are: the row's pixels, each ib bytes, between
         * padding (int8 flipped to uint8 on the way). */
        int64_t x0 = a->pad_left < a->wp ? a->pad_left : a->wp;
        int64_t x1 = a->pad_left + a->w < a->wp ? a->pad_left + a->w : a->wp;
        const uint8_t *src = a->input + ((q * a->h + iy) * a->w) * ib;
        memset(row, a->pad, (size_t)(x0 * ib));
        if (x1 > x0) {
          if (a->flip)
            for (x = 0; x < (x1 - x0) * ib; ++x)
              row[x0 * ib + x] = (uint8_t)(src[x] ^ a->flip);
          else
            memcpy(row + x0 * ib, src, (size_t)((x1 - x0) * ib));
        } else {
          x1 = x0;
        }
        memset(row + x1 * ib, a->pad, (size_t)((a->wp - x1) * ib));
        continue;
      }
      if (sb == 1) {
        /* A plain image: each channel's row into every ib-th byte. */
        int64_t x0 = a->pad_left < a->wp ? a->pad_left : a->wp;
        int64_t x1 = a->pad_left + a->w < a->wp ? a->pad_left + a->w : a->wp;
        memset(row, a->pad, (size_t)(a->wp * ib));
        if (ib == 4 && x1 > x0) { /* a stem's: whole pixels at a time */
          cuvil_qconvb_interleave4(a, q, iy, row + x0 * 4, x1 - x0);
          continue;
        }
        for (s = 0; s < ib && q * ib + s < a->c; ++s) {
          const uint8_t *src = a->input + ((q * ib + s) * a->h + iy) * a->w;
          for (x = x0; x < x1; ++x)
            row[x * ib + s] = (uint8_t)(src[x - a->pad_left] ^ a->flip);
        }
        continue;
      }
      for (x = 0; x < a->wp; ++x) {
        int64_t ix = x - a->pad_left;
        for (s = 0; s < ib; ++s) {
          int64_t ch = q * ib + s;
          row[x * ib + s] =
              ix < 0 || ix >= a->w || ch >= a->c
                  ? a->pad
                  : (uint8_t)(a->input[(((ch / sb) * a->h + iy) * a->w + ix) *
                                           sb +
                                       ch % sb] ^
                              a->flip);
        }
      }
    }
  }
}

/* Output rows [begin, end) of (channel block group, row) pairs: a group's
 * weights stay in cache across its rows. */
static void cuvil_qconvb_rows(void *p, int64_t begin, int64_t end) {
  const struct cuvil_qconvb_args *a = (const struct cuvil_qconvb_args *)p;
  int64_t t, B = a->base.block;
  for (t = begin; t < end; ++t) {
    int64_t g = t / a->oh, y = t % a->oh, first = g * 2;
    int64_t nb = a->blocks - first < 2 ? 1 : 2;
    int64_t at = first * a->base.out_stride + y * a->ow * B;
    struct cuvil_qconvb_row r = a->base;
    r.in = a->image + y * a->stride_h * r.row_stride;
    r.weight = a->weight + first * r.weight_stride;
    r.sums = a->sums + first * B;
    r.scale = a->scale + first * B;
    r.bias = a->bias ? a->bias + first * B : 0;
    r.out = a->output + at * a->out_bytes;
    r.residual = a->residual ? a->residual + at : 0;
    r.residual8 = a->residual8 ? a->residual8 + at : 0;
    if (!a->tile || !a->tile(&r, nb, 0, a->ow))
      cuvil_qconvb_reference(&r, nb, 0, a->ow);
  }
}

void cuvil_qconv2d_blocked(cuvil_qconvb_fn tile, cuvil_pool *pool,
                           uint8_t *scratch, int64_t n, int64_t c, int64_t h,
                           int64_t w, const void *x, int64_t in_block,
                           int x_signed, int32_t x_zero, int64_t oc,
                           int64_t kh, int64_t kw, const int8_t *packed,
                           const int32_t *sums, const float *scale,
                           const float *bias, int64_t stride_h,
                           int64_t stride_w, int64_t pad_top, int64_t pad_left,
                           int64_t dil_h, int64_t dil_w, int64_t oh,
                           int64_t ow, void *y, int64_t block,
                           const cuvil_qout *qout,
                           const cuvil_epilogue *epilogue) {
  struct cuvil_qconvb_args a;
  int64_t ib = cuvil_qconvb_input_block(in_block), planes = (c + ib - 1) / ib;
  int64_t blocks = oc / block, b, hp, wp;
  int converts;
  memset(&a, 0, sizeof(a));
  hp = cuvil_conv_extent(oh, kh, stride_h, dil_h);
  wp = cuvil_conv_extent(ow, kw, stride_w, dil_w);
  converts = cuvil_qconvb_converts(in_block, x_signed, h, w, hp, wp, pad_top,
                                   pad_left);
  a.tile = tile;
  a.c = c;
  a.h = h;
  a.w = w;
  a.hp = converts ? hp : h;
  a.wp = converts ? wp : w;
  a.pad_top = pad_top;
  a.pad_left = pad_left;
  a.src_block = in_block;
  a.flip = x_signed ? 0x80 : 0;
  /* The zero point's stored byte, as uint8. */
  a.pad = (uint8_t)((uint8_t)x_zero ^ a.flip);
  a.out_bytes = qout ? 1 : (int64_t)sizeof(float);
  a.oh = oh;
  a.ow = ow;
  a.stride_h = stride_h;
  /* Pairs of blocks (an odd count ends in one): a tile's broadcast input
   * then serves two vectors of weights. */
  a.blocks = blocks;
  a.groups = (blocks + 1) / 2;
  a.weight = packed;
  a.sums = sums;
  a.scale = scale;
  a.bias = bias;
  a.converted = scratch;
  a.base.zero = x_signed ? x_zero + 128 : x_zero;
  a.base.in_blocks = planes;
  a.base.in_block = ib;
  a.base.block = block;
  a.base.row_stride = a.wp * ib;
  a.base.plane_stride = a.hp * a.wp * ib;
  a.base.kh = kh;
  a.base.kw = kw;
  a.base.stride_w = stride_w;
  a.base.dil_h = dil_h;
  a.base.dil_w = dil_w;
  a.base.weight_stride = planes * kh * kw * ib * block;
  a.base.out_stride = oh * ow * block;
  a.base.epilogue = epilogue;
  a.base.qout = qout;
  if (qout && !cuvil_has_residual(epilogue)) {
    a.base.folded = 1;
    cuvil_qout_bounds(qout, epilogue, &a.base.lo, &a.base.hi);
  }
  a.base.fast = cuvil_qout_fast_for(qout, epilogue, a.base.folded);
  a.base.plain = a.base.folded && a.base.fast.rcp != 0.0f &&
                 cuvil_qout_plain_fits(scale, bias, oc, a.base.fast.rcp);
  for (b = 0; b < n; ++b) {
    a.input = (const uint8_t *)x + b * c * h * w;
    a.output = (uint8_t *)y + b * oc * oh * ow * a.out_bytes;
    a.residual = epilogue && epilogue->residual
                     ? epilogue->residual + b * oc * oh * ow
                     : 0;
    a.residual8 = epilogue && epilogue->residual8
                      ? (const uint8_t *)epilogue->residual8 + b * oc * oh * ow
                      : 0;
    if (converts) {
      cuvil_parallel_for(pool, planes, cuvil_qconvb_convert, &a);
      a.image = scratch;
    } else {
      a.image = a.input;
    }
    cuvil_parallel_for(pool, a.groups * oh, cuvil_qconvb_rows, &a);
  }
}
