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
// This file (products, sliding windows) includes the rest,
// cuvil_mlu_kernels_rows.h (rows and elementwise).

#ifndef CUVIL_MLU_KERNELS_H
#define CUVIL_MLU_KERNELS_H

#define CUVIL_ALIGN_BYTES 128

enum cuvil_activation {
  CUVIL_ACT_NONE = 0,
  CUVIL_ACT_RELU = 1,
  CUVIL_ACT_CLIP = 2,
  CUVIL_ACT_SIGMOID = 3,
  CUVIL_ACT_SILU = 4,
  CUVIL_ACT_HARDSIGMOID = 5,
  CUVIL_ACT_HARDSWISH = 6
};
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

// A product's or convolution's activation on `count` float32 sums, in
// chunks of `chunk` (tmp and tmp2 hold a chunk each; tmp2 only for the
// hard ones): cuvil_activate's relu and clip; sigmoid; SiLU, x sigmoid(x);
// hard sigmoid, clip(lo x + hi, 0, 1) (lo and hi its alpha and beta); hard
// swish, x times the hard sigmoid (lo 1/6, hi 1/2).
__mlu_func__ void cuvil_epilogue_activate(float *acc, int count, int act,
                                          float lo, float hi, float *tmp,
                                          float *tmp2, int chunk) {
  if (act <= CUVIL_ACT_CLIP) {
    cuvil_activate(acc, count, act, lo, hi, tmp, chunk);
    return;
  }
  for (int at = 0; at < count; at += chunk) {
    int n = cuvil_min(chunk, count - at);
    float *a = acc + at;
    if (act == CUVIL_ACT_SIGMOID) {
      __bang_active_sigmoid(a, a, n);
    } else if (act == CUVIL_ACT_SILU) {
      __bang_active_sigmoid(tmp, a, n);
      __bang_mul(a, a, tmp, n);
    } else {
      __bang_mul_scalar(tmp, a, lo, n);
      __bang_add_scalar(tmp, tmp, hi, n);
      cuvil_activate(tmp, n, CUVIL_ACT_CLIP, 0.0f, 1.0f, tmp2, n);
      if (act == CUVIL_ACT_HARDSWISH)
        __bang_mul(a, a, tmp, n);
      else
        __memcpy(a, tmp, n * sizeof(float), NRAM2NRAM);
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

// Loads the tiles at k0 of an item: A's rows [m0, m0 + ms) of batch bi,
// and B's from `wb`, the item's columns at row 0 (`w_stride` elements a
// row, read by `w_dir`: GDRAM, or a cluster's staged copy in SRAM).
template <typename T>
__mlu_func__ void
cuvil_gemm_load(const cuvil_gemm_shape &s, const T *a, const T *wb,
                long w_stride, mluMemcpyDirection_t w_dir, int bi, int m0,
                int ms, int ns, int k0, T *na, T *nb, bool async) {
  int ks = cuvil_min(s.Kt, s.K - k0);
  const T *ap = a + bi * s.a_batch + (long)m0 * s.K + k0;
  const T *bp = wb + k0 * w_stride;
  cuvil_copy2d_any(na, ap, ks * sizeof(T), GDRAM2NRAM, s.Kt * sizeof(T),
                   s.K * sizeof(T), ms, async);
  cuvil_copy2d_any(nb, bp, ns * sizeof(T), w_dir, s.Nt * sizeof(T),
                   w_stride * sizeof(T), ks, async);
}

// An item's sums `acc` (ms of Mt rows of Nt, ns columns used) plus the
// bias from `bias` and the residual rows from `res` (row stride n), the
// activation, stored to `c` (row stride n): the products' shared finish.
template <typename T>
__mlu_func__ void cuvil_gemm_finish(T *c, const T *bias, const T *res, int ms,
                                    int ns, int Mt, int Nt, int n, int act,
                                    float lo, float hi, float *acc, float *tmp,
                                    T *vec, float *vecf, T *nram_res, T *out,
                                    float *act2) {
  if (bias) {
    __memcpy(vec, (void *)bias, ns * sizeof(T), GDRAM2NRAM);
    float *fv = cuvil_widen(vecf, vec, Nt);
    for (int m = 0; m < ms; ++m)
      __bang_add(acc + m * Nt, acc + m * Nt, fv, Nt);
  }
  if (res) {
    cuvil_copy2d(nram_res, res, ns * sizeof(T), GDRAM2NRAM, Nt * sizeof(T),
                 n * sizeof(T), ms);
    for (int m = 0; m < ms; ++m)
      __bang_add(acc + m * Nt, acc + m * Nt,
                 cuvil_widen(tmp, nram_res + m * Nt, Nt), Nt);
  }
  cuvil_epilogue_activate(acc, Mt * Nt, act, lo, hi, tmp, act2, Nt);
  cuvil_copy2d(c, cuvil_narrow(out, acc, Mt * Nt), ns * sizeof(T), NRAM2GDRAM,
               n * sizeof(T), Nt * sizeof(T), ms);
}

// Copies block rows [0, rows) of `bytes` each from GDRAM (`src_stride`
// bytes apart) into the cluster's SRAM (`dst_stride` apart), each core of
// the cluster a share of the rows, then waits for the cluster: weights one
// GDRAM read per cluster instead of one per item.
__mlu_func__ void cuvil_stage_in_sram(void *sram, const void *src, int bytes,
                                      int rows, int dst_stride,
                                      int src_stride) {
  int share = (rows + coreDim - 1) / coreDim, r0 = coreId * share;
  if (rows - r0 > 0)
    cuvil_copy2d((char *)sram + (long)r0 * dst_stride,
                 (const char *)src + (long)r0 * src_stride, bytes, GDRAM2SRAM,
                 dst_stride, src_stride, cuvil_min(share, rows - r0));
  __sync_cluster();
}

// One item (batch bi, rows [m0, ...), columns [n0, ...)), its B columns
// from `wb` (see cuvil_gemm_load). na: 2 x Mt*Kt, nb: 2 x Kt*Nt, vec: Nt,
// res: Mt*Nt (only with a residual), out: Mt*Nt (float16 only) of T; bf:
// Kt*Nt (float16 only), acc: Mt*Nt, tmp: Nt, vecf: Nt (float16 only) of
// float.
template <typename T>
__mlu_func__ void
cuvil_gemm_item(const cuvil_gemm_shape &s, T *c, const T *a, const T *wb,
                long w_stride, mluMemcpyDirection_t w_dir, const T *bias,
                const T *res, float lo, float hi, int bi, int m0, int n0,
                T *nram_a, T *nram_b, float *bf, float *acc, float *tmp, T *vec,
                float *vecf, T *nram_res, T *out, float *act2) {
  int ktiles = (s.K + s.Kt - 1) / s.Kt;
  int ms = cuvil_min(s.Mt, s.M - m0), ns = cuvil_min(s.Nt, s.N - n0);
  __bang_write_value(acc, s.Mt * s.Nt, 0.0f);
  cuvil_gemm_load(s, a, wb, w_stride, w_dir, bi, m0, ms, ns, 0, nram_a, nram_b,
                  false);
  for (int kt = 0; kt < ktiles; ++kt) {
    int cur = kt % 2;
    if (kt + 1 < ktiles)
      cuvil_gemm_load(s, a, wb, w_stride, w_dir, bi, m0, ms, ns,
                      (kt + 1) * s.Kt, nram_a + (1 - cur) * s.Mt * s.Kt,
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
  long at = bi * s.c_batch + (long)m0 * s.N + n0;
  cuvil_gemm_finish(c + at, bias ? bias + n0 : 0, res ? res + at : 0, ms, ns,
                    s.Mt, s.Nt, s.N, s.act, lo, hi, acc, tmp, vec, vecf,
                    nram_res, out, act2);
}

// Block tasks: items (batch, row tile, column tile) over the tasks, each
// reading its B tiles from GDRAM. Buffers as cuvil_gemm_item's.
template <typename T>
__mlu_func__ void cuvil_gemm(const cuvil_gemm_shape &s, T *c, const T *a,
                             const T *b, const T *bias, const T *res, float lo,
                             float hi, T *nram_a, T *nram_b, float *bf,
                             float *acc, float *tmp, T *vec, float *vecf,
                             T *nram_res, T *out, float *act2) {
  int mtiles = (s.M + s.Mt - 1) / s.Mt, ntiles = (s.N + s.Nt - 1) / s.Nt;
  for (int item = taskId; item < s.batch * mtiles * ntiles; item += taskDim) {
    int bi = item / (mtiles * ntiles);
    int m0 = (item / ntiles) % mtiles * s.Mt, n0 = item % ntiles * s.Nt;
    cuvil_gemm_item(s, c, a, b + bi * s.b_batch + n0, s.N, GDRAM2NRAM, bias,
                    res, lo, hi, bi, m0, n0, nram_a, nram_b, bf, acc, tmp, vec,
                    vecf, nram_res, out, act2);
  }
}

// Union1 tasks: for each column block (batch, column tile), every cluster
// stages B's K x Nt block in its SRAM (sb: K*Nt of T), then the row tiles
// go over all the tasks, reading B from SRAM; the cluster waits before
// the next block overwrites it.
template <typename T>
__mlu_func__ void
cuvil_gemm_staged(const cuvil_gemm_shape &s, T *c, const T *a, const T *b,
                  const T *bias, const T *res, float lo, float hi, T *nram_a,
                  T *nram_b, float *bf, float *acc, float *tmp, T *vec,
                  float *vecf, T *nram_res, T *out, float *act2, T *sb) {
  int mtiles = (s.M + s.Mt - 1) / s.Mt, ntiles = (s.N + s.Nt - 1) / s.Nt;
  for (int block = 0; block < s.batch * ntiles; ++block) {
    int bi = block / ntiles, n0 = block % ntiles * s.Nt;
    cuvil_stage_in_sram(sb, b + bi * s.b_batch + n0,
                        cuvil_min(s.Nt, s.N - n0) * sizeof(T), s.K,
                        s.Nt * sizeof(T), s.N * sizeof(T));
    for (int mt = taskId; mt < mtiles; mt += taskDim)
      cuvil_gemm_item(s, c, a, sb, s.Nt, SRAM2NRAM, bias, res, lo, hi, bi,
                      mt * s.Mt, n0, nram_a, nram_b, bf, acc, tmp, vec, vecf,
                      nram_res, out, act2);
    __sync_cluster();
  }
}

//===----------------------------------------------------------------------===//
// int8 products on the tensor unit (MLU2xx computes fixed point only there):
// C = A W^T (+ bias[N]) (+ R), act. A is quantized row by row to int8 at
// position pos_a (to nearest, ties to even: cuvil_to_int8); W is int8 at
// position pos_w, stored [Np][Kp]: N padded to a multiple of 64 and K to a
// multiple of 128 (the conversion's count), with zeros. Items are (row
// tile, column tile): an item's Nt columns of weights go to WRAM once, and
// each of its rows is converted and multiplied by __bang_mlp, which sums
// exactly and scales by 2^(pos_a + pos_w). Bias, residual and activation
// then run in float32, as in cuvil_gemm.
//===----------------------------------------------------------------------===//

struct cuvil_gemm_int8_shape {
  int M, N, K;
  int Np, Kp;       // N padded to a multiple of 64, K to a multiple of 128
  int Mt, Nt;       // tiles; Nt a multiple of 64
  int pos_a, pos_w; // fix_positions: a value is its integer times 2^pos
  int act;
};

// 2^e, for e in [-126, 127].
__mlu_func__ float cuvil_pow2(int e) {
  union {
    int i;
    float f;
  } u;
  u.i = (e + 127) << 23;
  return u.f;
}

// q = x / 2^pos rounded to nearest with ties to even (cuvil.quantize's
// rounding; MLU2xx's conversions have no _rn, and _rd rounds ties away
// from zero), saturated. Adding and subtracting 1.5 * 2^(23 + pos) leaves
// x a multiple of 2^pos, rounded by the float32 adds to nearest even
// (|x| below 2^(22 + pos): beyond, x saturates either way); _rd then
// converts it exactly. x (n of them, a multiple of 128) is scratch.
__mlu_func__ void cuvil_to_int8(int8_t *q, float *x, int n, int pos) {
  float magic = 1.5f * cuvil_pow2(23 + pos);
  __bang_add_scalar(x, x, magic, n);
  __bang_add_scalar(x, x, -magic, n);
  __bang_float2int8_rd(q, x, n, pos);
}

// One item: rows [m0, m0 + Mt) by weight rows [n0, n0 + Nt), those at
// `wb` (Kp bytes a row) read into WRAM by `w_dir` (GDRAM2WRAM, or
// SRAM2WRAM from the cluster's staged copy). row: Kp, acc: Mt*Nt, tmp:
// Nt, vec: Nt, nram_res: Mt*Nt (only with a residual) of float; q: Kp
// int8; wt: Nt*Kp int8 in WRAM. (vecf and out are the float16 finish's,
// unused.)
__mlu_func__ void
cuvil_gemm_int8_item(const cuvil_gemm_int8_shape &s, float *c, const float *a,
                     const int8_t *wb, mluMemcpyDirection_t w_dir,
                     const float *bias, const float *res, float lo, float hi,
                     int m0, int n0, float *row, int8_t *q, float *acc,
                     float *tmp, float *vec, float *vecf, float *nram_res,
                     float *out, int8_t *wt, float *act2) {
  int ms = cuvil_min(s.Mt, s.M - m0), ns = cuvil_min(s.Nt, s.N - n0);
  int rows = cuvil_min(s.Nt, s.Np - n0); // whole 64s, zero past N
  __memcpy(wt, (void *)wb, rows * s.Kp, w_dir);
  for (int m = 0; m < ms; ++m) {
    __bang_write_value(row, s.Kp, 0.0f);
    __memcpy(row, (void *)(a + (long)(m0 + m) * s.K), s.K * sizeof(float),
             GDRAM2NRAM);
    cuvil_to_int8(q, row, s.Kp, s.pos_a);
    __bang_mlp(acc + m * s.Nt, q, wt, rows, s.Kp, s.pos_a + s.pos_w);
  }
  long at = (long)m0 * s.N + n0;
  cuvil_gemm_finish(c + at, bias ? bias + n0 : 0, res ? res + at : 0, ms, ns,
                    s.Mt, s.Nt, s.N, s.act, lo, hi, acc, tmp, vec, vecf,
                    nram_res, out, act2);
}

// Block tasks: items (row tile, column tile) over the tasks, weights from
// GDRAM. Buffers as cuvil_gemm_int8_item's.
__mlu_func__ void cuvil_gemm_int8(const cuvil_gemm_int8_shape &s, float *c,
                                  const float *a, const int8_t *w,
                                  const float *bias, const float *res, float lo,
                                  float hi, float *row, int8_t *q, float *acc,
                                  float *tmp, float *vec, float *vecf,
                                  float *nram_res, float *out, int8_t *wt,
                                  float *act2) {
  int mtiles = (s.M + s.Mt - 1) / s.Mt, ntiles = (s.N + s.Nt - 1) / s.Nt;
  for (int item = taskId; item < mtiles * ntiles; item += taskDim) {
    int m0 = item / ntiles * s.Mt, n0 = item % ntiles * s.Nt;
    cuvil_gemm_int8_item(s, c, a, w + (long)n0 * s.Kp, GDRAM2WRAM, bias, res,
                         lo, hi, m0, n0, row, q, acc, tmp, vec, vecf, nram_res,
                         out, wt, act2);
  }
}

// Union1 tasks: for each column tile, every cluster stages its Nt weight
// rows in SRAM (sw: Nt*Kp int8), then the row tiles go over all the tasks,
// each copying the rows SRAM2WRAM; the cluster waits before the next.
__mlu_func__ void
cuvil_gemm_int8_staged(const cuvil_gemm_int8_shape &s, float *c, const float *a,
                       const int8_t *w, const float *bias, const float *res,
                       float lo, float hi, float *row, int8_t *q, float *acc,
                       float *tmp, float *vec, float *vecf, float *nram_res,
                       float *out, int8_t *wt, float *act2, int8_t *sw) {
  int mtiles = (s.M + s.Mt - 1) / s.Mt, ntiles = (s.N + s.Nt - 1) / s.Nt;
  for (int block = 0; block < ntiles; ++block) {
    int n0 = block * s.Nt;
    cuvil_stage_in_sram(sw, w + (long)n0 * s.Kp, s.Kp,
                        cuvil_min(s.Nt, s.Np - n0), s.Kp, s.Kp);
    for (int mt = taskId; mt < mtiles; mt += taskDim)
      cuvil_gemm_int8_item(s, c, a, sw, SRAM2WRAM, bias, res, lo, hi, mt * s.Mt,
                           n0, row, q, acc, tmp, vec, vecf, nram_res, out, wt,
                           act2);
    __sync_cluster();
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

// A window's outputs [OCt][Pt] in acc: bias, residual and activation in
// float32, then stored to channels [oc, oc + ocs) of image n from row oh0.
template <typename T>
__mlu_func__ void cuvil_window_finish(const cuvil_window_shape &s, T *y,
                                      const T *bias, const T *res, float lo,
                                      float hi, int n, int oc, int ocs, int oh0,
                                      int hs, float *acc, float *tmp, T *vec,
                                      T *nres, T *out, float *act2) {
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
  cuvil_epilogue_activate(acc, s.OCt * s.Pt, s.act, lo, hi, tmp, act2, s.Pt);
  cuvil_window_rows(s, y, cuvil_narrow(out, acc, s.OCt * s.Pt), n, oc, ocs, oh0,
                    hs, true);
}

// One convolution item: image n, group g, output channels [oc0, ...) of
// the group, output rows [oh0, ...). Its weights come from `wp`, the
// item's first output channel ([ocs][C / G][KH][KW], C / G * KH * KW a
// row), read by `w_dir` (GDRAM, or a cluster's staged copy in SRAM).
// Weights [OC][C / G][KH][KW], bias [OC] or null, residual of the output's
// shape or null. Of T: nx: 2 x Ct*RowsIn*W, nw: 2 x OCt*Ct*KH*KW, p:
// Ct*KH*KW*Pt, vec: OCt (padded), res: OCt*Pt, out: OCt*Pt (float16 only);
// of float: pf: Ct*KH*KW*Pt (float16 only), acc: OCt*Pt, tmp: Pt.
template <typename T>
__mlu_func__ void
cuvil_conv2d_item(const cuvil_window_shape &s, T *y, const T *x, const T *wp,
                  mluMemcpyDirection_t w_dir, const T *bias, const T *res,
                  float lo, float hi, int n, int g, int oc0, int oh0, T *nx,
                  T *nw, T *p, float *pf, float *acc, float *tmp, T *vec,
                  T *nres, T *out, float *act2) {
  int cg = s.C / s.G, ocg = s.OC / s.G, taps = s.KH * s.KW;
  int ctiles = (cg + s.Ct - 1) / s.Ct;
  int ocs = cuvil_min(s.OCt, ocg - oc0), hs = cuvil_min(s.Ht, s.OH - oh0);
  int oc = g * ocg + oc0, ih0 = oh0 * s.SH - s.PT;
  int row = cg * taps * sizeof(T), tile = s.Ct * taps * sizeof(T);
  __bang_write_value(acc, s.OCt * s.Pt, 0.0f);
  cuvil_window_load_input(s, x, n, g * cg, cuvil_min(s.Ct, cg), ih0, nx, false);
  cuvil_copy2d(nw, wp, cuvil_min(s.Ct, cg) * taps * sizeof(T), w_dir, tile, row,
               ocs);
  for (int ct = 0; ct < ctiles; ++ct) {
    int cur = ct % 2, c0 = ct * s.Ct, cs = cuvil_min(s.Ct, cg - c0);
    T *cx = nx + cur * s.Ct * s.RowsIn * s.W,
      *cw = nw + cur * s.OCt * s.Ct * taps;
    if (ct + 1 < ctiles) {
      int c1 = c0 + s.Ct, cs1 = cuvil_min(s.Ct, cg - c1);
      cuvil_window_load_input(s, x, n, g * cg + c1, cs1, ih0,
                              nx + (1 - cur) * s.Ct * s.RowsIn * s.W, true);
      cuvil_copy2d_async(nw + (1 - cur) * s.OCt * s.Ct * taps, wp + c1 * taps,
                         cs1 * taps * sizeof(T), w_dir, tile, row, ocs);
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
  cuvil_window_finish(s, y, bias, res, lo, hi, n, oc, ocs, oh0, hs, acc, tmp,
                      vec, nres, out, act2);
}

// Block tasks: items (image, group, output channel tile, row tile) over
// the tasks, weights from GDRAM. Buffers as cuvil_conv2d_item's.
template <typename T>
__mlu_func__ void cuvil_conv2d(const cuvil_window_shape &s, T *y, const T *x,
                               const T *w, const T *bias, const T *res,
                               float lo, float hi, T *nx, T *nw, T *p,
                               float *pf, float *acc, float *tmp, T *vec,
                               T *nres, T *out, float *act2) {
  int cg = s.C / s.G, ocg = s.OC / s.G, taps = s.KH * s.KW;
  int octiles = (ocg + s.OCt - 1) / s.OCt, htiles = (s.OH + s.Ht - 1) / s.Ht;
  for (int item = taskId; item < s.N * s.G * octiles * htiles;
       item += taskDim) {
    int n = item / (s.G * octiles * htiles);
    int g = item / (octiles * htiles) % s.G;
    int oc0 = item / htiles % octiles * s.OCt, oh0 = item % htiles * s.Ht;
    cuvil_conv2d_item(s, y, x, w + (long)(g * ocg + oc0) * cg * taps,
                      GDRAM2NRAM, bias, res, lo, hi, n, g, oc0, oh0, nx, nw, p,
                      pf, acc, tmp, vec, nres, out, act2);
  }
}

// Union1 tasks: for each weight block (group, output channel tile), every
// cluster stages its OCt rows of weights in SRAM (sw: OCt*C/G*KH*KW of T),
// then the (image, row tile) items go over all the tasks, reading the
// weights from SRAM; the cluster waits before the next block.
template <typename T>
__mlu_func__ void
cuvil_conv2d_staged(const cuvil_window_shape &s, T *y, const T *x, const T *w,
                    const T *bias, const T *res, float lo, float hi, T *nx,
                    T *nw, T *p, float *pf, float *acc, float *tmp, T *vec,
                    T *nres, T *out, float *act2, T *sw) {
  int cg = s.C / s.G, ocg = s.OC / s.G, taps = s.KH * s.KW;
  int octiles = (ocg + s.OCt - 1) / s.OCt, htiles = (s.OH + s.Ht - 1) / s.Ht;
  int row = cg * taps * sizeof(T);
  for (int block = 0; block < s.G * octiles; ++block) {
    int g = block / octiles, oc0 = block % octiles * s.OCt;
    cuvil_stage_in_sram(sw, w + (long)(g * ocg + oc0) * cg * taps, row,
                        cuvil_min(s.OCt, ocg - oc0), row, row);
    for (int item = taskId; item < s.N * htiles; item += taskDim)
      cuvil_conv2d_item(s, y, x, sw, SRAM2NRAM, bias, res, lo, hi,
                        item / htiles, g, oc0, item % htiles * s.Ht, nx, nw, p,
                        pf, acc, tmp, vec, nres, out, act2);
    __sync_cluster();
  }
}

//===----------------------------------------------------------------------===//
// int8 convolutions on the tensor unit (one group, no dilation). An item is
// (image, tile of OCt output channels, a multiple of 64, tile of Ht output
// rows). Its input rows are loaded Ct channels at a time (a multiple of
// 64) as float32, quantized at pos_x (cuvil_to_int8) and scattered into a
// zero-padded [rows_in][Wp][Ct] int8 tile, the HWC order __bang_conv reads
// (Wp = (OW - 1) * SW + KW: the padded width the windows read); the chunk's
// weights [OCt][KH][KW][Ct] go to WRAM, and __bang_conv gives the chunk's
// [hs][OW][OCt] sums, scaled by 2^(pos_x + pos_w), added over the chunks in
// float32. The sums are then turned into [OCt][Pt] rows for cuvil_conv2d's
// finish (bias, residual, activation, store).
//===----------------------------------------------------------------------===//

struct cuvil_fixed_conv {
  int Cp, OCp, Wp;  // C and OC padded to 64, the padded input width
  int pos_x, pos_w; // fix_positions of the input and the weights
};

// Zeroes `bytes` (a multiple of 128) of NRAM of any type.
__mlu_func__ void cuvil_zero_bytes(void *p, int bytes) {
  __bang_write_value((float *)p, bytes / 4, 0.0f);
}

// One item: image n, output channels [oc, oc + OCt), output rows [oh0,
// ...); its weights ([OCt][KH][KW][Cp] int8) at `wb`, read into WRAM chunk
// by chunk by `w_dir` (GDRAM2WRAM, or SRAM2WRAM from the cluster's staged
// copy). nx: min(Ct, C)*RowsIn*W floats (padded to 128 elements) and q as
// many int8; xh: RowsIn*Wp*Ct int8 (padded to 128 bytes); wt (WRAM):
// OCt*KH*KW*Ct int8; part, acc: OCt*Pt floats (>= Ht*OW*OCt); tmp: Pt,
// vec: OCt, nres: OCt*Pt floats.
__mlu_func__ void cuvil_conv2d_int8_item(
    const cuvil_window_shape &s, const cuvil_fixed_conv &f, float *y,
    const float *x, const int8_t *wb, mluMemcpyDirection_t w_dir,
    const float *bias, const float *res, float lo, float hi, int n, int oc,
    int oh0, float *nx, int8_t *q, int8_t *xh, int8_t *wt, float *part,
    float *acc, float *tmp, float *vec, float *nres, float *act2) {
  int taps = s.KH * s.KW, ctiles = (s.C + s.Ct - 1) / s.Ct;
  // nx and q hold a chunk's real channels (a stem's 3 of its 64).
  int nq = (cuvil_min(s.Ct, s.C) * s.RowsIn * s.W + 127) / 128 * 128;
  int nxh = (s.RowsIn * f.Wp * s.Ct + 127) / 128 * 128;
  int cols = cuvil_min(s.W, f.Wp - s.PL); // input columns a window reads
  int ih0 = oh0 * s.SH - s.PT;
  int ocs = cuvil_min(s.OCt, s.OC - oc), hs = cuvil_min(s.Ht, s.OH - oh0);
  int rows = cuvil_min(s.OCt, f.OCp - oc); // whole 64s, zero past OC
  int rows_in = (hs - 1) * s.SH + s.KH, positions = hs * s.OW;
  __bang_write_value(acc, s.OCt * s.Pt, 0.0f);
  for (int ct = 0; ct < ctiles; ++ct) {
    int c0 = ct * s.Ct, cs = cuvil_min(s.Ct, s.C - c0);
    __bang_write_value(nx, nq, 0.0f); // rows outside the image: zero
    cuvil_window_load_input(s, x, n, c0, cs, ih0, nx, false);
    cuvil_to_int8(q, nx, nq, f.pos_x);
    cuvil_zero_bytes(xh, nxh); // the padding, and channels past cs
    for (int c = 0; c < cs; ++c)
      for (int r = 0; r < rows_in; ++r)
        cuvil_copy2d(xh + ((long)r * f.Wp + s.PL) * s.Ct + c,
                     q + ((long)c * s.RowsIn + r) * s.W, 1, NRAM2NRAM, s.Ct, 1,
                     cols);
    cuvil_copy2d(wt, wb + c0, s.Ct, w_dir, s.Ct, f.Cp, (long)rows * taps);
    __bang_conv(part, xh, wt, s.Ct, rows_in, f.Wp, s.KH, s.KW, s.SW, s.SH, rows,
                f.pos_x + f.pos_w);
    __bang_add(acc, acc, part, positions * rows);
  }
  // [position][rows] -> [channel][Pt], into part.
  for (int o = 0; o < ocs; ++o)
    cuvil_copy2d(part + o * s.Pt, acc + o, sizeof(float), NRAM2NRAM,
                 sizeof(float), rows * sizeof(float), positions);
  cuvil_window_finish(s, y, bias, res, lo, hi, n, oc, ocs, oh0, hs, part, tmp,
                      vec, nres, (float *)0, act2);
}

// Block tasks: items (image, output channel tile, row tile) over the
// tasks, weights from GDRAM. Buffers as cuvil_conv2d_int8_item's.
__mlu_func__ void
cuvil_conv2d_int8(const cuvil_window_shape &s, const cuvil_fixed_conv &f,
                  float *y, const float *x, const int8_t *w, const float *bias,
                  const float *res, float lo, float hi, float *nx, int8_t *q,
                  int8_t *xh, int8_t *wt, float *part, float *acc, float *tmp,
                  float *vec, float *nres, float *act2) {
  int taps = s.KH * s.KW, octiles = (s.OC + s.OCt - 1) / s.OCt;
  int htiles = (s.OH + s.Ht - 1) / s.Ht;
  for (int item = taskId; item < s.N * octiles * htiles; item += taskDim) {
    int oc = item / htiles % octiles * s.OCt;
    cuvil_conv2d_int8_item(s, f, y, x, w + (long)oc * taps * f.Cp, GDRAM2WRAM,
                           bias, res, lo, hi, item / (octiles * htiles), oc,
                           item % htiles * s.Ht, nx, q, xh, wt, part, acc, tmp,
                           vec, nres, act2);
  }
}

// Union1 tasks: for each output channel tile, every cluster stages its
// weights in SRAM (sw: OCt*KH*KW*Cp int8), then the (image, row tile)
// items go over all the tasks, each copying its chunks SRAM2WRAM; the
// cluster waits before the next tile.
__mlu_func__ void
cuvil_conv2d_int8_staged(const cuvil_window_shape &s, const cuvil_fixed_conv &f,
                         float *y, const float *x, const int8_t *w,
                         const float *bias, const float *res, float lo,
                         float hi, float *nx, int8_t *q, int8_t *xh, int8_t *wt,
                         float *part, float *acc, float *tmp, float *vec,
                         float *nres, float *act2, int8_t *sw) {
  int taps = s.KH * s.KW, octiles = (s.OC + s.OCt - 1) / s.OCt;
  int htiles = (s.OH + s.Ht - 1) / s.Ht;
  for (int block = 0; block < octiles; ++block) {
    int oc = block * s.OCt, row = taps * f.Cp;
    cuvil_stage_in_sram(sw, w + (long)oc * row, row,
                        cuvil_min(s.OCt, f.OCp - oc), row, row);
    for (int item = taskId; item < s.N * htiles; item += taskDim)
      cuvil_conv2d_int8_item(s, f, y, x, sw, SRAM2WRAM, bias, res, lo, hi,
                             item / htiles, oc, item % htiles * s.Ht, nx, q, xh,
                             wt, part, acc, tmp, vec, nres, act2);
    __sync_cluster();
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

// Rows (softmax, normalizations, means, copies) and elementwise kernels:
// beside this file in the repository and in every MLU project folder.
#include "cuvil_mlu_kernels_rows.h"

#endif // CUVIL_MLU_KERNELS_H
