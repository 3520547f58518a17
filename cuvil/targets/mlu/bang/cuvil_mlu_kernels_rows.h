// cuvil_mlu_kernels_rows.h - rows and elementwise kernels of Cuvil's
// MLU device library.
//
// Part of cuvil_mlu_kernels.h, which includes it after its products and
// sliding windows; not to be included alone. Same rules: documented BANG C
// only, NRAM operands aligned to CUVIL_ALIGN_BYTES, items over tasks.

#ifndef CUVIL_MLU_KERNELS_ROWS_H
#define CUVIL_MLU_KERNELS_ROWS_H

#ifndef CUVIL_MLU_KERNELS_H
#error "include cuvil_mlu_kernels.h, which includes this part"
#endif

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
      cuvil_epilogue_activate(ta, ep, CUVIL_ACT_SILU, a, b, tb, tc, ep);
      break;
    case CUVIL_HARDSIGMOID:
      cuvil_epilogue_activate(ta, ep, CUVIL_ACT_HARDSIGMOID, a, b, tb, tc, ep);
      break;
    case CUVIL_HARDSWISH:
      cuvil_epilogue_activate(ta, ep, CUVIL_ACT_HARDSWISH, a, b, tb, tc, ep);
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

#endif // CUVIL_MLU_KERNELS_ROWS_H
