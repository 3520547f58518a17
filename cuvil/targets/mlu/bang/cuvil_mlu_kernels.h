// cuvil_mlu_kernels.h - the device library Cuvil's generated BANG C calls.
//
// Written by Cuvil into every MLU project folder beside kernels.mlu, which
// instantiates these functions with each layer's shapes and the tiles
// Cuvil's planner chose (cuvil/targets/mlu/plan). The kernels declare the
// on-chip buffers themselves (so cncc, and the emulator, account for every
// byte of NRAM / WRAM / SRAM) and pass them in.
//
// Everything here is the documented BANG C surface: __memcpy and
// __memcpy_async with their directions, __sync, __sync_cluster, and the
// __bang_* vector functions. Vector functions take NRAM pointers aligned to
// CUVIL_ALIGN_BYTES and lengths whose bytes are a multiple of it; tiles
// are planned padded so that every call here satisfies both.
//
// Work is split over tasks as "items": item i runs on task i % taskDim.

#ifndef CUVIL_MLU_KERNELS_H
#define CUVIL_MLU_KERNELS_H

#define CUVIL_ALIGN_BYTES 128

enum cuvil_activation { CUVIL_ACT_NONE = 0, CUVIL_ACT_RELU = 1, CUVIL_ACT_CLIP = 2 };
enum cuvil_binary_op { CUVIL_ADD, CUVIL_SUB, CUVIL_MUL, CUVIL_DIV, CUVIL_MAX, CUVIL_MIN };

// A strided __memcpy moves at most 65536 segments (segnum, the count less
// one, is at most 65535).
#define CUVIL_MAX_SEGMENTS 65536

// Copies `segments` rows of `bytes` each, the rows `dst_stride` and
// `src_stride` bytes apart: one DMA descriptor per 65536 rows. BANG's
// strided __memcpy counts its segments from zero (segnum = segments - 1).
// NRAM2NRAM always takes the strided form: unstrided, mtp_2xx wants 64-byte
// aligned addresses and sizes of whole 128 bytes, strided any byte.
__mlu_func__ void cuvil_copy2d_any(void *dst, const void *src, int bytes,
                                   mluMemcpyDirection_t dir, int dst_stride,
                                   int src_stride, long segments, bool async) {
  for (long done = 0; bytes > 0 && done < segments;
       done += CUVIL_MAX_SEGMENTS) {
    long n = segments - done < CUVIL_MAX_SEGMENTS ? segments - done
                                                   : CUVIL_MAX_SEGMENTS;
    char *d = (char *)dst + done * dst_stride;
    char *s = (char *)src + done * src_stride;
    if (n == 1 && dir != NRAM2NRAM) {
      if (async)
        __memcpy_async(d, s, bytes, dir);
      else
        __memcpy(d, s, bytes, dir);
    } else if (async) {
      __memcpy_async(d, s, bytes, dir, dst_stride, src_stride, (int)n - 1);
    } else {
      __memcpy(d, s, bytes, dir, dst_stride, src_stride, (int)n - 1);
    }
  }
}

__mlu_func__ void cuvil_copy2d(void *dst, const void *src, int bytes,
                               mluMemcpyDirection_t dir, int dst_stride,
                               int src_stride, long segments) {
  cuvil_copy2d_any(dst, src, bytes, dir, dst_stride, src_stride, segments,
                   false);
}

__mlu_func__ void cuvil_copy2d_async(void *dst, const void *src, int bytes,
                                     mluMemcpyDirection_t dir, int dst_stride,
                                     int src_stride, long segments) {
  cuvil_copy2d_any(dst, src, bytes, dir, dst_stride, src_stride, segments,
                   true);
}

__mlu_func__ int cuvil_min(int a, int b) { return a < b ? a : b; }
__mlu_func__ int cuvil_max(int a, int b) { return a > b ? a : b; }

// bias, residual and activation on a tile of `rows` rows of `cols` (a
// multiple of the alignment) values in NRAM.
template <typename T>
__mlu_func__ void cuvil_activate(T *acc, int count, int act, T lo, T hi,
                                 T *tmp, int tmp_count) {
  if (act == CUVIL_ACT_RELU) {
    __bang_active_relu(acc, acc, count);
  } else if (act == CUVIL_ACT_CLIP) {
    for (int at = 0; at < count; at += tmp_count) {
      int n = cuvil_min(tmp_count, count - at);
      __bang_write_value(tmp, n, lo);
      __bang_maxequal(acc + at, acc + at, tmp, n);
      __bang_write_value(tmp, n, hi);
      __bang_minequal(acc + at, acc + at, tmp, n);
    }
  }
}

// Products sum in float32 whatever the storage: a float16 tile is widened
// into a float32 buffer first (float16 sums of a convolution's thousands of
// products would miss mlu-ops' 3e-3 for fp16), and the sums are narrowed
// back to store. For float32 storage these are the buffers themselves.
__mlu_func__ float *cuvil_widen(float *, float *from, int) { return from; }
__mlu_func__ float *cuvil_widen(float *to, half *from, int n) {
  __bang_half2float(to, from, n);
  return to;
}
__mlu_func__ float *cuvil_narrow(float *, float *sums, int) { return sums; }
__mlu_func__ half *cuvil_narrow(half *to, float *sums, int n) {
  __bang_float2half_rn(to, sums, n);
  return to;
}

//===----------------------------------------------------------------------===//
// Matrix products: C[b] = A[b] * B[b or shared] (+ bias[N]) (+ R[b]), act.
//
// Items are (batch, row tile, column tile). Each item sums its K tiles in
// NRAM, the next tile of A and B loaded (ping-pong) while this one is
// multiplied: a row of B scaled by one element of A, added to the row of
// sums (the vector unit's fp32 product; MLU270's tensor unit takes fixed
// point only).
//===----------------------------------------------------------------------===//

struct cuvil_gemm_shape {
  int batch, M, N, K;
  long a_batch, b_batch, c_batch; // element strides between batches (b: 0 shared)
  int Mt, Nt, Kt;                 // tiles; Nt a multiple of the alignment
  int act;
};

template <typename T>
__mlu_func__ void cuvil_gemm_load(const cuvil_gemm_shape &s, const T *a,
                                  const T *b, int bi, int m0, int ms, int n0,
                                  int ns, int k0, T *na, T *nb, bool async) {
  int ks = cuvil_min(s.Kt, s.K - k0);
  const T *ap = a + bi * s.a_batch + (long)m0 * s.K + k0;
  const T *bp = b + bi * s.b_batch + (long)k0 * s.N + n0;
  if (async) {
    cuvil_copy2d_async(na, ap, ks * sizeof(T), GDRAM2NRAM, s.Kt * sizeof(T),
                       s.K * sizeof(T), ms);
    cuvil_copy2d_async(nb, bp, ns * sizeof(T), GDRAM2NRAM, s.Nt * sizeof(T),
                       s.N * sizeof(T), ks);
  } else {
    cuvil_copy2d(na, ap, ks * sizeof(T), GDRAM2NRAM, s.Kt * sizeof(T),
                 s.K * sizeof(T), ms);
    cuvil_copy2d(nb, bp, ns * sizeof(T), GDRAM2NRAM, s.Nt * sizeof(T),
                 s.N * sizeof(T), ks);
  }
}

// na: 2 x Mt*Kt, nb: 2 x Kt*Nt, vec: Nt, res: Mt*Nt (only with a
// residual), out: Mt*Nt (float16 only) of T; bf: Kt*Nt (float16 only), acc:
// Mt*Nt, tmp: Nt, vecf: Nt (float16 only) of float.
template <typename T>
__mlu_func__ void cuvil_gemm(const cuvil_gemm_shape &s, T *c, const T *a,
                             const T *b, const T *bias, const T *res, float lo,
                             float hi, T *nram_a, T *nram_b, float *bf,
                             float *acc, float *tmp, T *vec, float *vecf,
                             T *nram_res, T *out) {
  int mtiles = (s.M + s.Mt - 1) / s.Mt, ntiles = (s.N + s.Nt - 1) / s.Nt;
  int ktiles = (s.K + s.Kt - 1) / s.Kt;
  int items = s.batch * mtiles * ntiles;
  for (int item = taskId; item < items; item += taskDim) {
    int bi = item / (mtiles * ntiles);
    int m0 = (item / ntiles) % mtiles * s.Mt, n0 = item % ntiles * s.Nt;
    int ms = cuvil_min(s.Mt, s.M - m0), ns = cuvil_min(s.Nt, s.N - n0);
    __bang_write_value(acc, s.Mt * s.Nt, 0.0f);
    cuvil_gemm_load(s, a, b, bi, m0, ms, n0, ns, 0, nram_a, nram_b, false);
    for (int kt = 0; kt < ktiles; ++kt) {
      int cur = kt % 2;
      if (kt + 1 < ktiles)
        cuvil_gemm_load(s, a, b, bi, m0, ms, n0, ns, (kt + 1) * s.Kt,
                        nram_a + (1 - cur) * s.Mt * s.Kt,
                        nram_b + (1 - cur) * s.Kt * s.Nt, true);
      T *ta = nram_a + cur * s.Mt * s.Kt;
      float *fb = cuvil_widen(bf, nram_b + cur * s.Kt * s.Nt, s.Kt * s.Nt);
      int ks = cuvil_min(s.Kt, s.K - kt * s.Kt);
      for (int m = 0; m < ms; ++m)
        for (int k = 0; k < ks; ++k) {
          __bang_mul_scalar(tmp, fb + k * s.Nt, (float)ta[m * s.Kt + k], s.Nt);
          __bang_add(acc + m * s.Nt, acc + m * s.Nt, tmp, s.Nt);
        }
      __sync();
    }
    if (bias) {
      __memcpy(vec, (void *)(bias + n0), ns * sizeof(T), GDRAM2NRAM);
      float *fv = cuvil_widen(vecf, vec, s.Nt);
      for (int m = 0; m < ms; ++m)
        __bang_add(acc + m * s.Nt, acc + m * s.Nt, fv, s.Nt);
    }
    T *cp = c + bi * s.c_batch + (long)m0 * s.N + n0;
    if (res) {
      cuvil_copy2d(nram_res, res + (cp - c), ns * sizeof(T), GDRAM2NRAM,
                   s.Nt * sizeof(T), s.N * sizeof(T), ms);
      for (int m = 0; m < ms; ++m)
        __bang_add(acc + m * s.Nt, acc + m * s.Nt,
                   cuvil_widen(tmp, nram_res + m * s.Nt, s.Nt), s.Nt);
    }
    cuvil_activate(acc, s.Mt * s.Nt, s.act, lo, hi, tmp, s.Nt);
    cuvil_copy2d(cp, cuvil_narrow(out, acc, s.Mt * s.Nt), ns * sizeof(T),
                 NRAM2GDRAM, s.N * sizeof(T), s.Nt * sizeof(T), ms);
  }
}

//===----------------------------------------------------------------------===//
// Sliding windows (convolution, pooling) on NCHW, by patches: for a tile
// of output rows, each (channel, kh, kw) is a row of the patch matrix in
// NRAM (padding stays the fill value), built by NRAM-to-NRAM copies.
//===----------------------------------------------------------------------===//

struct cuvil_window_shape {
  int N, C, H, W, OC, OH, OW, KH, KW, SH, SW, PT, PL, DH, DW, G;
  int OCt, Ht, Ct; // output channels, output rows, input channels per tile
  int Pt;          // Ht * OW padded to the alignment
  int RowsIn;      // input rows a tile of Ht output rows reads
  int act;
};

// Loads input rows [ih0, ih0 + RowsIn) of channels [c, c + cs) of image n
// into x (rows outside the image are left for the patch's fill).
template <typename T>
__mlu_func__ void cuvil_window_load_input(const cuvil_window_shape &s,
                                          const T *x, int n, int c, int cs,
                                          int ih0, T *nx, bool async) {
  int lo = cuvil_max(ih0, 0), hi = cuvil_min(ih0 + s.RowsIn, s.H);
  if (hi <= lo)
    return;
  const T *src = x + (((long)n * s.C + c) * s.H + lo) * s.W;
  T *dst = nx + (lo - ih0) * s.W;
  int bytes = (hi - lo) * s.W * sizeof(T);
  if (async)
    cuvil_copy2d_async(dst, src, bytes, GDRAM2NRAM, s.RowsIn * s.W * sizeof(T),
                       s.H * s.W * sizeof(T), cs);
  else
    cuvil_copy2d(dst, src, bytes, GDRAM2NRAM, s.RowsIn * s.W * sizeof(T),
                 s.H * s.W * sizeof(T), cs);
}

// Patch rows for channels [0, cs) of the loaded input nx, output rows
// [oh0, oh0 + hs): p[(ci * KH + kh) * KW + kw][r * OW + ow].
template <typename T>
__mlu_func__ void cuvil_window_patches(const cuvil_window_shape &s, const T *nx,
                                       int cs, int oh0, int hs, T fill, T *p) {
  int ih0 = oh0 * s.SH - s.PT;
  __bang_write_value(p, cs * s.KH * s.KW * s.Pt, fill);
  for (int ci = 0; ci < cs; ++ci)
    for (int kh = 0; kh < s.KH; ++kh)
      for (int kw = 0; kw < s.KW; ++kw) {
        T *row = p + ((ci * s.KH + kh) * s.KW + kw) * s.Pt;
        int off = kw * s.DW - s.PL; // iw = ow * SW + off
        int ow_lo = off >= 0 ? 0 : (-off + s.SW - 1) / s.SW;
        int ow_hi = (s.W - 1 - off) < 0 ? -1 : cuvil_min(s.OW - 1, (s.W - 1 - off) / s.SW);
        int count = ow_hi - ow_lo + 1;
        if (count <= 0)
          continue;
        for (int r = 0; r < hs; ++r) {
          int ih = (oh0 + r) * s.SH - s.PT + kh * s.DH;
          if (ih < 0 || ih >= s.H)
            continue;
          const T *src =
              nx + (ci * s.RowsIn + (ih - ih0)) * s.W + ow_lo * s.SW + off;
          T *dst = row + r * s.OW + ow_lo;
          if (s.SW == 1)
            cuvil_copy2d(dst, src, count * sizeof(T), NRAM2NRAM,
                         count * sizeof(T), count * sizeof(T), 1);
          else
            cuvil_copy2d(dst, src, sizeof(T), NRAM2NRAM, sizeof(T),
                         s.SW * sizeof(T), count);
        }
      }
}

// Stores (or loads, for a residual) rows of Ht * OW outputs of channels
// [oc, oc + ocs) of image n, at row oh0, between GDRAM and a [OCt][Pt] tile.
template <typename T>
__mlu_func__ void cuvil_window_rows(const cuvil_window_shape &s, T *gdram,
                                    T *tile, int n, int oc, int ocs, int oh0,
                                    int hs, bool store) {
  T *g = gdram + (((long)n * s.OC + oc) * s.OH + oh0) * s.OW;
  if (store)
    cuvil_copy2d(g, tile, hs * s.OW * sizeof(T), NRAM2GDRAM,
                 s.OH * s.OW * sizeof(T), s.Pt * sizeof(T), ocs);
  else
    cuvil_copy2d(tile, g, hs * s.OW * sizeof(T), GDRAM2NRAM, s.Pt * sizeof(T),
                 s.OH * s.OW * sizeof(T), ocs);
}

// Convolution: weights [OC][C / G][KH][KW], bias [OC] or null, residual of
// the output's shape or null. Of T: nx: 2 x Ct*RowsIn*W, nw: 2 x
// OCt*Ct*KH*KW, p: Ct*KH*KW*Pt, vec: OCt (padded), res: OCt*Pt, out: OCt*Pt
// (float16 only); of float: pf: Ct*KH*KW*Pt (float16 only), acc: OCt*Pt,
// tmp: Pt.
template <typename T>
__mlu_func__ void cuvil_conv2d(const cuvil_window_shape &s, T *y, const T *x,
                               const T *w, const T *bias, const T *res,
                               float lo, float hi, T *nx, T *nw, T *p,
                               float *pf, float *acc, float *tmp, T *vec,
                               T *nres, T *out) {
  int cg = s.C / s.G, ocg = s.OC / s.G, taps = s.KH * s.KW;
  int octiles = (ocg + s.OCt - 1) / s.OCt, htiles = (s.OH + s.Ht - 1) / s.Ht;
  int ctiles = (cg + s.Ct - 1) / s.Ct;
  int items = s.N * s.G * octiles * htiles;
  for (int item = taskId; item < items; item += taskDim) {
    int n = item / (s.G * octiles * htiles);
    int g = item / (octiles * htiles) % s.G;
    int oc0 = item / htiles % octiles * s.OCt, oh0 = item % htiles * s.Ht;
    int ocs = cuvil_min(s.OCt, ocg - oc0), hs = cuvil_min(s.Ht, s.OH - oh0);
    int oc = g * ocg + oc0, ih0 = oh0 * s.SH - s.PT;
    const T *wp = w + (long)oc * cg * taps;
    __bang_write_value(acc, s.OCt * s.Pt, 0.0f);
    cuvil_window_load_input(s, x, n, g * cg, cuvil_min(s.Ct, cg), ih0, nx,
                            false);
    cuvil_copy2d(nw, wp, cuvil_min(s.Ct, cg) * taps * sizeof(T), GDRAM2NRAM,
                 s.Ct * taps * sizeof(T), cg * taps * sizeof(T), ocs);
    for (int ct = 0; ct < ctiles; ++ct) {
      int cur = ct % 2, c0 = ct * s.Ct, cs = cuvil_min(s.Ct, cg - c0);
      T *cx = nx + cur * s.Ct * s.RowsIn * s.W, *cw = nw + cur * s.OCt * s.Ct * taps;
      if (ct + 1 < ctiles) {
        int c1 = c0 + s.Ct, cs1 = cuvil_min(s.Ct, cg - c1);
        cuvil_window_load_input(s, x, n, g * cg + c1, cs1, ih0,
                                nx + (1 - cur) * s.Ct * s.RowsIn * s.W, true);
        cuvil_copy2d_async(nw + (1 - cur) * s.OCt * s.Ct * taps, wp + c1 * taps,
                           cs1 * taps * sizeof(T), GDRAM2NRAM,
                           s.Ct * taps * sizeof(T), cg * taps * sizeof(T), ocs);
      }
      cuvil_window_patches(s, cx, cs, oh0, hs, (T)0, p);
      float *fp = cuvil_widen(pf, p, cs * taps * s.Pt);
      for (int o = 0; o < ocs; ++o)
        for (int k = 0; k < cs * taps; ++k) {
          __bang_mul_scalar(tmp, fp + k * s.Pt, (float)cw[o * s.Ct * taps + k],
                            s.Pt);
          __bang_add(acc + o * s.Pt, acc + o * s.Pt, tmp, s.Pt);
        }
      __sync();
    }
    if (bias) {
      __memcpy(vec, (void *)(bias + oc), ocs * sizeof(T), GDRAM2NRAM);
      for (int o = 0; o < ocs; ++o)
        __bang_add_scalar(acc + o * s.Pt, acc + o * s.Pt, (float)vec[o], s.Pt);
    }
    if (res) {
      cuvil_window_rows(s, (T *)res, nres, n, oc, ocs, oh0, hs, false);
      for (int o = 0; o < ocs; ++o)
        __bang_add(acc + o * s.Pt, acc + o * s.Pt,
                   cuvil_widen(tmp, nres + o * s.Pt, s.Pt), s.Pt);
    }
    cuvil_activate(acc, s.OCt * s.Pt, s.act, lo, hi, tmp, s.Pt);
    cuvil_window_rows(s, y, cuvil_narrow(out, acc, s.OCt * s.Pt), n, oc, ocs,
                      oh0, hs, true);
  }
}

// Pooling (OC == C, G == C, OCt == Ct == 1): max, or the sum of the window
// times a reciprocal count per output position (recip [OH * OW], average
// pooling's divisors computed by the compiler). nx: 2 x RowsIn*W,
// p: KH*KW*Pt, acc: Pt, tmp: Pt.
template <typename T>
__mlu_func__ void cuvil_pool2d(const cuvil_window_shape &s, T *y, const T *x,
                               const T *recip, bool is_max, T *nx, T *p,
                               T *acc, T *tmp) {
  int taps = s.KH * s.KW, htiles = (s.OH + s.Ht - 1) / s.Ht;
  int items = s.N * s.C * htiles;
  T fill = is_max ? (T)(-__builtin_inff()) : (T)0;
  for (int item = taskId; item < items; item += taskDim) {
    int n = item / (s.C * htiles), c = item / htiles % s.C;
    int oh0 = item % htiles * s.Ht, hs = cuvil_min(s.Ht, s.OH - oh0);
    cuvil_window_load_input(s, x, n, c, 1, oh0 * s.SH - s.PT, nx, false);
    cuvil_window_patches(s, nx, 1, oh0, hs, fill, p);
    __memcpy(acc, p, s.Pt * sizeof(T), NRAM2NRAM);
    for (int k = 1; k < taps; ++k) {
      if (is_max)
        __bang_maxequal(acc, acc, p + k * s.Pt, s.Pt);
      else
        __bang_add(acc, acc, p + k * s.Pt, s.Pt);
    }
    if (!is_max) {
      __memcpy(tmp, (void *)(recip + oh0 * s.OW), hs * s.OW * sizeof(T),
               GDRAM2NRAM);
      __bang_mul(acc, acc, tmp, s.Pt);
    }
    cuvil_window_rows(s, y, acc, n, c, 1, oh0, hs, true);
  }
}

//===----------------------------------------------------------------------===//
// Rows: softmax, layer normalization and means over the last axis, a tile
// of Rt rows of L values, each padded to Lp in NRAM.
//===----------------------------------------------------------------------===//

struct cuvil_rows_shape {
  int rows, L, Lp, Rt;
};

// Rows compute in float32 whatever the storage: a float16 model's rows are
// staged in `stage` (T) and widened (its sums of squares over a 1024-value
// row would overflow float16's 65504). For float32, stage is unused.
__mlu_func__ float *cuvil_stage(float *t, float *) { return t; }
__mlu_func__ half *cuvil_stage(float *, half *stage) { return stage; }

__mlu_func__ int cuvil_vector_count(int n, int bytes) {
  int per = CUVIL_ALIGN_BYTES / bytes;
  return (n + per - 1) / per * per;
}

// count values of T from GDRAM into dst as float32 (dst and stage hold
// count rounded up to a vector).
template <typename T>
__mlu_func__ void cuvil_load_floats(float *dst, const T *src, int count,
                                    T *stage) {
  T *to = cuvil_stage(dst, stage);
  __memcpy(to, (void *)src, count * sizeof(T), GDRAM2NRAM);
  cuvil_widen(dst, to, cuvil_vector_count(count, sizeof(T)));
}

// Reduces row[0, Lp) (sum or max) to one value: the row's 128-byte
// chunks folded into lanes by the vector unit, the lanes by the scalar one.
__mlu_func__ float cuvil_reduce_row(const float *row, int Lp, bool is_max,
                                    float *lanes) {
  const int A = CUVIL_ALIGN_BYTES / sizeof(float);
  __memcpy(lanes, (void *)row, A * sizeof(float), NRAM2NRAM);
  for (int j = A; j < Lp; j += A) {
    if (is_max)
      __bang_maxequal(lanes, lanes, (float *)row + j, A);
    else
      __bang_add(lanes, lanes, (float *)row + j, A);
  }
  float r = lanes[0];
  for (int i = 1; i < A; ++i)
    r = is_max ? (lanes[i] > r ? lanes[i] : r) : r + lanes[i];
  return r;
}

template <typename T>
__mlu_func__ void cuvil_rows_load(const cuvil_rows_shape &s, const T *x,
                                  int r0, int rs, float fill, float *t,
                                  T *stage) {
  T *to = cuvil_stage(t, stage);
  __bang_write_value(to, s.Rt * s.Lp, (T)fill);
  cuvil_copy2d(to, x + (long)r0 * s.L, s.L * sizeof(T), GDRAM2NRAM,
               s.Lp * sizeof(T), s.L * sizeof(T), rs);
  cuvil_widen(t, to, s.Rt * s.Lp);
}

template <typename T>
__mlu_func__ void cuvil_rows_store(const cuvil_rows_shape &s, T *y, int r0,
                                   int rs, float *t, T *stage) {
  cuvil_copy2d(y + (long)r0 * s.L, cuvil_narrow(stage, t, s.Rt * s.Lp),
               s.L * sizeof(T), NRAM2GDRAM, s.L * sizeof(T), s.Lp * sizeof(T),
               rs);
}

// softmax or log_softmax of each row. t: Rt*Lp, e: Lp, lanes: one vector,
// of float; stage: Rt*Lp of T (float16 only).
template <typename T>
__mlu_func__ void cuvil_softmax(const cuvil_rows_shape &s, T *y, const T *x,
                                bool log, float *t, float *e, float *lanes,
                                T *stage) {
  for (int r0 = taskId * s.Rt; r0 < s.rows; r0 += taskDim * s.Rt) {
    int rs = cuvil_min(s.Rt, s.rows - r0);
    cuvil_rows_load(s, x, r0, rs, -__builtin_inff(), t, stage);
    for (int r = 0; r < rs; ++r) {
      float *row = t + r * s.Lp;
      float max = cuvil_reduce_row(row, s.Lp, true, lanes);
      __bang_add_scalar(row, row, -max, s.Lp); // padding stays -inf
      __bang_active_exp(e, row, s.Lp);         // and becomes 0 here
      float sum = cuvil_reduce_row(e, s.Lp, false, lanes);
      if (log)
        __bang_add_scalar(row, row, -__builtin_logf(sum), s.Lp);
      else
        __bang_mul_scalar(row, e, 1.0f / sum, s.Lp);
    }
    cuvil_rows_store(s, y, r0, rs, t, stage);
  }
}

// y = (x - mean) / sqrt(var + eps) * gamma + beta over each row; gamma and
// beta [L] (either may be null). Of float: t: Rt*Lp; sq, g, b, mask: Lp
// each (mask is 1 on the row and 0 on its padding, so that padding adds
// nothing to the variance); lanes. stage: Rt*Lp of T (float16 only).
template <typename T>
__mlu_func__ void cuvil_layer_norm(const cuvil_rows_shape &s, T *y, const T *x,
                                   const T *gamma, const T *beta, float eps,
                                   float *t, float *sq, float *g, float *b,
                                   float *mask, float *lanes, T *stage) {
  __bang_write_value(mask, s.Lp, 0.0f);
  for (int i = 0; i < s.L; ++i)
    mask[i] = 1;
  if (gamma)
    cuvil_load_floats(g, gamma, s.L, stage);
  if (beta)
    cuvil_load_floats(b, beta, s.L, stage);
  for (int r0 = taskId * s.Rt; r0 < s.rows; r0 += taskDim * s.Rt) {
    int rs = cuvil_min(s.Rt, s.rows - r0);
    cuvil_rows_load(s, x, r0, rs, 0.0f, t, stage);
    for (int r = 0; r < rs; ++r) {
      float *row = t + r * s.Lp;
      float mean = cuvil_reduce_row(row, s.Lp, false, lanes) / s.L;
      __bang_add_scalar(row, row, -mean, s.Lp);
      __bang_mul(row, row, mask, s.Lp);
      __bang_mul(sq, row, row, s.Lp);
      float var = cuvil_reduce_row(sq, s.Lp, false, lanes) / s.L;
      __bang_mul_scalar(row, row, 1.0f / __builtin_sqrtf(var + eps), s.Lp);
      if (gamma)
        __bang_mul(row, row, g, s.Lp);
      if (beta)
        __bang_add(row, row, b, s.Lp);
    }
    cuvil_rows_store(s, y, r0, rs, t, stage);
  }
}

enum cuvil_reduce_op { CUVIL_REDUCE_SUM, CUVIL_REDUCE_MEAN, CUVIL_REDUCE_MAX };

// y[r] = the sum, mean or max of row r (global pooling, reductions over
// trailing axes). Of float: t: Rt*Lp, out: Rt padded, lanes; stage: Rt*Lp
// of T (float16 only).
template <typename T>
__mlu_func__ void cuvil_rows_reduce(const cuvil_rows_shape &s, T *y,
                                    const T *x, int op, float *t, float *out,
                                    float *lanes, T *stage) {
  bool is_max = op == CUVIL_REDUCE_MAX;
  for (int r0 = taskId * s.Rt; r0 < s.rows; r0 += taskDim * s.Rt) {
    int rs = cuvil_min(s.Rt, s.rows - r0);
    cuvil_rows_load(s, x, r0, rs, is_max ? -__builtin_inff() : 0.0f, t, stage);
    for (int r = 0; r < rs; ++r) {
      float v = cuvil_reduce_row(t + r * s.Lp, s.Lp, is_max, lanes);
      out[r] = op == CUVIL_REDUCE_MEAN ? v / s.L : v;
    }
    __memcpy(y + r0,
             cuvil_narrow(stage, out, cuvil_vector_count(rs, sizeof(T))),
             rs * sizeof(T), NRAM2GDRAM);
  }
}

// Applies `op` between each value of a row tile and one value v (the
// row's): row = row op v, or v op row when reversed.
__mlu_func__ void cuvil_row_scalar_op(float *row, int Lp, int op,
                                      bool reversed, float v, float *tmp) {
  if (reversed && (op == CUVIL_SUB || op == CUVIL_DIV)) {
    if (op == CUVIL_SUB) { // v - row
      __bang_mul_scalar(row, row, -1.0f, Lp);
      __bang_add_scalar(row, row, v, Lp);
    } else { // v / row
      __bang_active_recip(row, row, Lp);
      __bang_mul_scalar(row, row, v, Lp);
    }
    return;
  }
  switch (op) {
  case CUVIL_ADD: __bang_add_scalar(row, row, v, Lp); break;
  case CUVIL_SUB: __bang_add_scalar(row, row, -v, Lp); break;
  case CUVIL_MUL: __bang_mul_scalar(row, row, v, Lp); break;
  case CUVIL_DIV: __bang_mul_scalar(row, row, 1.0f / v, Lp); break;
  case CUVIL_MAX:
  case CUVIL_MIN:
    __bang_write_value(tmp, Lp, v);
    if (op == CUVIL_MAX)
      __bang_maxequal(row, row, tmp, Lp);
    else
      __bang_minequal(row, row, tmp, Lp);
    break;
  }
}

// row = row op vec (or vec op row when reversed), both Lp values; for a
// division not reversed, vec holds the reciprocals.
__mlu_func__ void cuvil_row_vector_op(float *row, float *vec, int Lp, int op,
                                      bool reversed) {
  switch (op) {
  case CUVIL_ADD: __bang_add(row, row, vec, Lp); break;
  case CUVIL_SUB:
    if (reversed)
      __bang_sub(row, vec, row, Lp);
    else
      __bang_sub(row, row, vec, Lp);
    break;
  case CUVIL_MUL: __bang_mul(row, row, vec, Lp); break;
  case CUVIL_DIV:
    if (reversed)
      __bang_active_recip(row, row, Lp);
    __bang_mul(row, row, vec, Lp);
    break;
  case CUVIL_MAX: __bang_maxequal(row, row, vec, Lp); break;
  case CUVIL_MIN: __bang_minequal(row, row, vec, Lp); break;
  }
}

enum cuvil_broadcast_mode { CUVIL_PER_ROW = 0, CUVIL_PER_COLUMN = 1 };

// y[r][l] = a[r][l] op b[r % M] (per row) or a[r][l] op b[l] (per column),
// b op a when reversed. Of float: t: Rt*Lp, bv: all of b (padded), tmp:
// Lp; stage: Rt*Lp or more of T (float16 only).
template <typename T>
__mlu_func__ void cuvil_broadcast(const cuvil_rows_shape &s, T *y, const T *a,
                                  const T *b, int M, int mode, int op,
                                  bool reversed, float *t, float *bv,
                                  float *tmp, T *stage) {
  int count = mode == CUVIL_PER_ROW ? M : s.L;
  cuvil_load_floats(bv, b, count, stage);
  if (mode == CUVIL_PER_COLUMN && op == CUVIL_DIV && !reversed)
    for (int i = 0; i < count; ++i)
      bv[i] = 1.0f / bv[i];
  for (int r0 = taskId * s.Rt; r0 < s.rows; r0 += taskDim * s.Rt) {
    int rs = cuvil_min(s.Rt, s.rows - r0);
    cuvil_rows_load(s, a, r0, rs, 1.0f, t, stage);
    for (int r = 0; r < rs; ++r) {
      float *row = t + r * s.Lp;
      if (mode == CUVIL_PER_ROW)
        cuvil_row_scalar_op(row, s.Lp, op, reversed, bv[(r0 + r) % M], tmp);
      else
        cuvil_row_vector_op(row, bv, s.Lp, op, reversed);
    }
    cuvil_rows_store(s, y, r0, rs, t, stage);
  }
}

// Inference batch normalization: y = (x - mean[c]) / sqrt(var[c] + eps) *
// scale[c] + bias[c], rows r of L values, channel c = r % M. Of float: t:
// Rt*Lp; sc, sh: M padded (each channel's scale and shift, computed once);
// tmp: M padded; stage: Rt*Lp or more of T (float16 only).
template <typename T>
__mlu_func__ void cuvil_batch_norm(const cuvil_rows_shape &s, T *y, const T *x,
                                   const T *scale, const T *bias,
                                   const T *mean, const T *var, float eps,
                                   int M, float *t, float *sc, float *sh,
                                   float *tmp, T *stage) {
  cuvil_load_floats(sc, var, M, stage);
  cuvil_load_floats(sh, scale, M, stage);
  for (int c = 0; c < M; ++c)
    sc[c] = sh[c] / __builtin_sqrtf(sc[c] + eps);
  cuvil_load_floats(sh, mean, M, stage);
  cuvil_load_floats(tmp, bias, M, stage);
  for (int c = 0; c < M; ++c)
    sh[c] = tmp[c] - sh[c] * sc[c];
  for (int r0 = taskId * s.Rt; r0 < s.rows; r0 += taskDim * s.Rt) {
    int rs = cuvil_min(s.Rt, s.rows - r0);
    cuvil_rows_load(s, x, r0, rs, 0.0f, t, stage);
    for (int r = 0; r < rs; ++r) {
      float *row = t + r * s.Lp;
      __bang_mul_scalar(row, row, sc[(r0 + r) % M], s.Lp);
      __bang_add_scalar(row, row, sh[(r0 + r) % M], s.Lp);
    }
    cuvil_rows_store(s, y, r0, rs, t, stage);
  }
}

// Copies `rows` rows of `bytes` between GDRAM tensors whose rows are
// `dst_stride` and `src_stride` bytes apart (concatenation and split: one
// operand's part of the other's rows), the rows split over the tasks.
__mlu_func__ void cuvil_copy_rows(void *dst, const void *src, long rows,
                                  int bytes, long dst_stride,
                                  long src_stride) {
  long per = (rows + taskDim - 1) / taskDim;
  long r0 = taskId * per, rs = rows - r0 < per ? rows - r0 : per;
  if (rs > 0)
    cuvil_copy2d((char *)dst + r0 * dst_stride,
                 (const char *)src + r0 * src_stride, bytes, GDRAM2GDRAM,
                 (int)dst_stride, (int)src_stride, rs);
}

//===----------------------------------------------------------------------===//
// Elementwise: y = a op b, b of a's size or one value; tiles of Et values.
//===----------------------------------------------------------------------===//

// ta, tb: Et each.
template <typename T>
__mlu_func__ void cuvil_binary(T *y, const T *a, const T *b, long n,
                               bool scalar_b, int op, int act, T lo, T hi,
                               int Et, T *ta, T *tb) {
  T value = 0;
  if (scalar_b) {
    __memcpy(tb, (void *)b, sizeof(T), GDRAM2NRAM);
    value = tb[0];
    __bang_write_value(tb, Et, value);
  }
  for (long e0 = (long)taskId * Et; e0 < n; e0 += (long)taskDim * Et) {
    int es = (int)(n - e0 < Et ? n - e0 : Et);
    int ep = cuvil_vector_count(es, sizeof(T));
    __memcpy(ta, (void *)(a + e0), es * sizeof(T), GDRAM2NRAM);
    if (!scalar_b)
      __memcpy(tb, (void *)(b + e0), es * sizeof(T), GDRAM2NRAM);
    switch (op) {
    case CUVIL_ADD: __bang_add(ta, ta, tb, ep); break;
    case CUVIL_SUB: __bang_sub(ta, ta, tb, ep); break;
    case CUVIL_MUL: __bang_mul(ta, ta, tb, ep); break;
    case CUVIL_MAX: __bang_maxequal(ta, ta, tb, ep); break;
    case CUVIL_MIN: __bang_minequal(ta, ta, tb, ep); break;
    case CUVIL_DIV:
      if (scalar_b) {
        __bang_mul_scalar(ta, ta, (T)1 / value, ep);
      } else {
        __bang_active_recip(tb, tb, ep);
        __bang_mul(ta, ta, tb, ep);
      }
      break;
    }
    cuvil_activate(ta, ep, act, lo, hi, tb, ep);
    if (act == CUVIL_ACT_CLIP && scalar_b)
      __bang_write_value(tb, Et, value);
    __memcpy(y + e0, ta, es * sizeof(T), NRAM2GDRAM);
  }
}

enum cuvil_unary_op {
  CUVIL_RELU, CUVIL_CLIP, CUVIL_SIGMOID, CUVIL_TANH, CUVIL_EXP, CUVIL_NEG,
  CUVIL_SILU, CUVIL_HARDSIGMOID, CUVIL_HARDSWISH, CUVIL_ABS, CUVIL_ERF
};

// erf(x) on n float32 values (BANG C has no erf): Abramowitz and Stegun
// 7.1.26, erf|x| = 1 - t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) e^(-x^2)
// with t = 1 / (1 + p |x|), absolute error below 1.5e-7. |x| is clamped
// to 10 (erf is 1 there in float32), so that __bang_active_recip's input
// stays within [1, 4.3]; the sign is clip(x * 1e30, -1, 1), no division.
// x: the values (overwritten), tb, tc, td: scratch of n.
__mlu_func__ void cuvil_erf(float *x, int n, float *tb, float *tc, float *td) {
  const float a[5] = {0.254829592f, -0.284496736f, 1.421413741f,
                      -1.453152027f, 1.061405429f};
  __bang_mul_scalar(tb, x, -1.0f, n);
  __bang_maxequal(tb, tb, x, n);                // |x|
  __bang_write_value(tc, n, 10.0f);
  __bang_minequal(tb, tb, tc, n);
  __bang_mul_scalar(tc, tb, 0.3275911f, n);
  __bang_add_scalar(tc, tc, 1.0f, n);
  __bang_active_recip(tc, tc, n);               // t
  __bang_mul(tb, tb, tb, n);
  __bang_mul_scalar(tb, tb, -1.0f, n);
  __bang_active_exp(tb, tb, n);                 // e^(-x^2)
  __bang_mul_scalar(td, tc, a[4], n);
  for (int i = 3; i >= 0; --i) {
    __bang_add_scalar(td, td, a[i], n);
    __bang_mul(td, td, tc, n);
  }
  __bang_mul(td, td, tb, n);
  __bang_mul_scalar(td, td, -1.0f, n);
  __bang_add_scalar(td, td, 1.0f, n);           // erf|x|
  __bang_mul_scalar(x, x, 1e30f, n);
  cuvil_activate(x, n, CUVIL_ACT_CLIP, -1.0f, 1.0f, tb, n); // the sign
  __bang_mul(x, x, td, n);
}

// y = op(x); clip takes [a, b], the hard functions clip(a * x + b, 0, 1).
// In float32 whatever the storage. Of float: ta, tb, tc: Et each; td: Et
// for erf; stage: Et of T (float16 only).
template <typename T>
__mlu_func__ void cuvil_unary(T *y, const T *x, long n, int op, float a,
                              float b, int Et, float *ta, float *tb,
                              float *tc, float *td, T *stage) {
  for (long e0 = (long)taskId * Et; e0 < n; e0 += (long)taskDim * Et) {
    int es = (int)(n - e0 < Et ? n - e0 : Et);
    int ep = cuvil_vector_count(es, sizeof(T));
    T *to = cuvil_stage(ta, stage);
    __memcpy(to, (void *)(x + e0), es * sizeof(T), GDRAM2NRAM);
    cuvil_widen(ta, to, ep);
    switch (op) {
    case CUVIL_RELU: __bang_active_relu(ta, ta, ep); break;
    case CUVIL_CLIP: cuvil_activate(ta, ep, CUVIL_ACT_CLIP, a, b, tb, ep); break;
    case CUVIL_SIGMOID: __bang_active_sigmoid(ta, ta, ep); break;
    case CUVIL_TANH: __bang_active_tanh(ta, ta, ep); break;
    case CUVIL_EXP: __bang_active_exp(ta, ta, ep); break;
    case CUVIL_NEG: __bang_mul_scalar(ta, ta, -1.0f, ep); break;
    case CUVIL_ERF: cuvil_erf(ta, ep, tb, tc, td); break;
    case CUVIL_ABS: // max(x, -x)
      __bang_mul_scalar(tb, ta, -1.0f, ep);
      __bang_maxequal(ta, ta, tb, ep);
      break;
    case CUVIL_SILU:
      __bang_active_sigmoid(tb, ta, ep);
      __bang_mul(ta, ta, tb, ep);
      break;
    case CUVIL_HARDSIGMOID:
    case CUVIL_HARDSWISH:
      __bang_mul_scalar(tb, ta, a, ep);
      __bang_add_scalar(tb, tb, b, ep);
      cuvil_activate(tb, ep, CUVIL_ACT_CLIP, 0.0f, 1.0f, tc, ep);
      if (op == CUVIL_HARDSWISH)
        __bang_mul(ta, ta, tb, ep);
      else
        __memcpy(ta, tb, ep * sizeof(float), NRAM2NRAM);
      break;
    }
    __memcpy(y + e0, cuvil_narrow(stage, ta, ep), es * sizeof(T),
             NRAM2GDRAM);
  }
}

// Constant padding: y has rows of Wo values over `outer` dimensions
// (odims, up to 6, the last being Wo); x's rows of W sit at lo[d] in each.
// Each output row is one task's: a row in the padding is the fill value,
// another its fill value around one input row. row, fill: Wo padded.
struct cuvil_pad_shape {
  int rank;        // of the output, at most 6
  long odims[6];   // output dimensions
  long idims[6];   // input dimensions
  long lo[6];      // padding before, per dimension
};

template <typename T>
__mlu_func__ void cuvil_pad(const cuvil_pad_shape &s, T *y, const T *x,
                            T value, T *row, T *fill) {
  long Wo = s.odims[s.rank - 1], W = s.idims[s.rank - 1];
  long rows = 1;
  for (int d = 0; d + 1 < s.rank; ++d)
    rows *= s.odims[d];
  int Wp = cuvil_vector_count((int)Wo, sizeof(T));
  __bang_write_value(fill, Wp, value);
  __bang_write_value(row, Wp, value);
  for (long r = taskId; r < rows; r += taskDim) {
    long rest = r, src = 0, scale = 1;
    bool inside = true;
    for (int d = s.rank - 2; d >= 0; --d) {
      long i = rest % s.odims[d] - s.lo[d];
      rest /= s.odims[d];
      inside = inside && i >= 0 && i < s.idims[d];
      src += i * scale;
      scale *= s.idims[d];
    }
    if (!inside) {
      __memcpy(y + r * Wo, fill, Wo * sizeof(T), NRAM2GDRAM);
      continue;
    }
    __memcpy(row + s.lo[s.rank - 1], (void *)(x + src * W), W * sizeof(T),
             GDRAM2NRAM);
    __memcpy(y + r * Wo, row, Wo * sizeof(T), NRAM2GDRAM);
  }
}

//===----------------------------------------------------------------------===//
// Data movement, GDRAM to GDRAM and exact: y[i0..i5] = x[sum i_d * stride_d
// + offset] over an output of up to six dimensions (transpose, slice,
// reshape). Rows of the last dimension are one DMA each, element-strided
// when the source's last stride is not one.
//===----------------------------------------------------------------------===//

struct cuvil_gather_shape {
  int rank;         // at most 6
  long dims[6];     // output dimensions
  long strides[6];  // source element strides per output dimension
  long offset;      // source element offset
};

// Fewer rows than tasks: each row is split into pieces, one per task.
template <typename T>
__mlu_func__ void cuvil_gather(const cuvil_gather_shape &s, T *y, const T *x) {
  long rows = 1;
  for (int d = 0; d + 1 < s.rank; ++d)
    rows *= s.dims[d];
  long last = s.rank ? s.dims[s.rank - 1] : 1;
  long lstride = s.rank ? s.strides[s.rank - 1] : 1;
  long pieces = rows >= taskDim ? 1 : (taskDim + rows - 1) / rows;
  long per = (last + pieces - 1) / pieces;
  for (long item = taskId; item < rows * pieces; item += taskDim) {
    long row = item / pieces, e0 = item % pieces * per;
    long count = last - e0 < per ? last - e0 : per;
    if (count <= 0)
      continue;
    long src = s.offset + e0 * lstride, rest = row;
    for (int d = s.rank - 2; d >= 0; --d) {
      src += rest % s.dims[d] * s.strides[d];
      rest /= s.dims[d];
    }
    if (lstride == 1)
      __memcpy(y + row * last + e0, (void *)(x + src), count * sizeof(T),
               GDRAM2GDRAM);
    else
      cuvil_copy2d(y + row * last + e0, x + src, sizeof(T), GDRAM2GDRAM,
                   sizeof(T), lstride * sizeof(T), count);
  }
}

#endif // CUVIL_MLU_KERNELS_H
