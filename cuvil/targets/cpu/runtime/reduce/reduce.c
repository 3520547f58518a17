/*===- reduce.c - reductions over vector lanes ----------------------------===*
 *
 * Softmax, layer and batch norm, sum / mean / max / min.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/reduce/reduce.h"

#include "cuvil/targets/cpu/runtime/math/vecmath.h"

#include <math.h>

/* Reductions keep CUVIL_LANES partial results (sums, maxima) that the
 * compiler turns into vector registers, combined in a fixed order at the end:
 * the result depends only on the data, never on the thread count. */
#define CUVIL_LANES 16

/* The maximum of `count` floats at stride 1. */
static float cuvil_max_f32(const float *x, int64_t count) {
  float lanes[CUVIL_LANES], best = -INFINITY;
  int64_t i, l, body = count / CUVIL_LANES * CUVIL_LANES;
  for (l = 0; l < CUVIL_LANES; ++l)
    lanes[l] = -INFINITY;
  for (i = 0; i < body; i += CUVIL_LANES)
    for (l = 0; l < CUVIL_LANES; ++l)
      lanes[l] = x[i + l] > lanes[l] ? x[i + l] : lanes[l];
  for (; i < count; ++i)
    best = x[i] > best ? x[i] : best;
  for (l = 0; l < CUVIL_LANES; ++l)
    best = lanes[l] > best ? lanes[l] : best;
  return best;
}

/* The sum of `count` floats at stride 1. */
static float cuvil_sum_f32(const float *x, int64_t count) {
  float lanes[CUVIL_LANES], sum = 0.0f;
  int64_t i, l, body = count / CUVIL_LANES * CUVIL_LANES;
  for (l = 0; l < CUVIL_LANES; ++l)
    lanes[l] = 0.0f;
  for (i = 0; i < body; i += CUVIL_LANES)
    for (l = 0; l < CUVIL_LANES; ++l)
      lanes[l] += x[i + l];
  for (l = 0; l < CUVIL_LANES; ++l)
    sum += lanes[l];
  for (; i < count; ++i)
    sum += x[i];
  return sum;
}

void cuvil_softmax_f32(int log, int64_t outer, int64_t axis, int64_t inner,
                       const float *input, float *output) {
  int64_t o, a, i0, i;
  if (inner == 1) {
    /* The common case (the last axis): contiguous rows. */
    for (o = 0; o < outer; ++o) {
      const float *in = input + o * axis;
      float *out = output + o * axis;
      float max = cuvil_max_f32(in, axis), sum;
      for (a = 0; a < axis; ++a)
        out[a] = cuvil_expf(in[a] - max);
      sum = cuvil_sum_f32(out, axis);
      if (log) {
        float shift = max + logf(sum);
        for (a = 0; a < axis; ++a)
          out[a] = in[a] - shift;
      } else {
        float inv = 1.0f / sum;
        for (a = 0; a < axis; ++a)
          out[a] *= inv;
      }
    }
    return;
  }
  /* Otherwise CUVIL_LANES positions of the inner dimensions at a time, each
   * reduced over the axis in order. */
  for (o = 0; o < outer; ++o)
    for (i0 = 0; i0 < inner; i0 += CUVIL_LANES) {
      int64_t width = inner - i0 < CUVIL_LANES ? inner - i0 : CUVIL_LANES;
      const float *in = input + o * axis * inner + i0;
      float *out = output + o * axis * inner + i0;
      float max[CUVIL_LANES], sum[CUVIL_LANES];
      for (i = 0; i < width; ++i) {
        max[i] = -INFINITY;
        sum[i] = 0.0f;
      }
      for (a = 0; a < axis; ++a)
        for (i = 0; i < width; ++i)
          max[i] = in[a * inner + i] > max[i] ? in[a * inner + i] : max[i];
      for (a = 0; a < axis; ++a)
        for (i = 0; i < width; ++i) {
          float e = cuvil_expf(in[a * inner + i] - max[i]);
          sum[i] += e;
          out[a * inner + i] = e;
        }
      for (i = 0; i < width; ++i)
        sum[i] = log ? max[i] + logf(sum[i]) : 1.0f / sum[i];
      for (a = 0; a < axis; ++a)
        for (i = 0; i < width; ++i)
          out[a * inner + i] =
              log ? in[a * inner + i] - sum[i] : out[a * inner + i] * sum[i];
    }
}

void cuvil_layer_norm_f32(int64_t outer, int64_t inner, const float *input,
                          const float *scale, const float *bias, double epsilon,
                          float *output) {
  for (int64_t o = 0; o < outer; ++o) {
    const float *in = input + o * inner;
    float *out = output + o * inner;
    /* Mean and variance in double, over 8 lanes. */
    double lanes[8], mean = 0.0, var = 0.0;
    int64_t i, l, body = inner / 8 * 8;
    for (l = 0; l < 8; ++l)
      lanes[l] = 0.0;
    for (i = 0; i < body; i += 8)
      for (l = 0; l < 8; ++l)
        lanes[l] += in[i + l];
    for (l = 0; l < 8; ++l)
      mean += lanes[l];
    for (; i < inner; ++i)
      mean += in[i];
    mean /= (double)inner;
    for (l = 0; l < 8; ++l)
      lanes[l] = 0.0;
    for (i = 0; i < body; i += 8)
      for (l = 0; l < 8; ++l) {
        double d = in[i + l] - mean;
        lanes[l] += d * d;
      }
    for (l = 0; l < 8; ++l)
      var += lanes[l];
    for (; i < inner; ++i) {
      double d = in[i] - mean;
      var += d * d;
    }
    var /= (double)inner;
    float inv = (float)(1.0 / sqrt(var + epsilon));
    float m = (float)mean;
    for (i = 0; i < inner; ++i) {
      float v = (in[i] - m) * inv;
      if (scale)
        v *= scale[i];
      if (bias)
        v += bias[i];
      out[i] = v;
    }
  }
}

/* A channel's batch norm as out = in * s + t. */
static void cuvil_batch_norm_affine(const float *scale, const float *bias,
                                    const float *mean, const float *variance,
                                    double epsilon, int64_t ch, float *s,
                                    float *t) {
  *s = (float)(scale[ch] / sqrt((double)variance[ch] + epsilon));
  *t = bias[ch] - mean[ch] * *s;
}

void cuvil_batch_norm_f32(int64_t n, int64_t c, int64_t spatial,
                          int64_t block, const float *input, const float *scale,
                          const float *bias, const float *mean,
                          const float *variance, double epsilon, float *output) {
  if (block > 1) {
    float s[64], t[64];
    for (int64_t cb = 0; cb < c / block; ++cb) {
      int64_t l, i, b;
      for (l = 0; l < block; ++l)
        cuvil_batch_norm_affine(scale, bias, mean, variance, epsilon,
                                cb * block + l, &s[l], &t[l]);
      for (b = 0; b < n; ++b) {
        int64_t at = (b * (c / block) + cb) * spatial * block;
        for (i = 0; i < spatial * block; i += block)
          for (l = 0; l < block; ++l)
            output[at + i + l] = input[at + i + l] * s[l] + t[l];
      }
    }
    return;
  }
  for (int64_t ch = 0; ch < c; ++ch) {
    float s, t;
    cuvil_batch_norm_affine(scale, bias, mean, variance, epsilon, ch, &s, &t);
    for (int64_t b = 0; b < n; ++b) {
      const float *in = input + (b * c + ch) * spatial;
      float *out = output + (b * c + ch) * spatial;
      for (int64_t i = 0; i < spatial; ++i)
        out[i] = in[i] * s + t;
    }
  }
}

void cuvil_reduce_f32(int kind, int64_t outer, int64_t reduced, int64_t inner,
                      const float *input, float *output) {
  for (int64_t o = 0; o < outer; ++o) {
    float *out = output + o * inner;
    const float *in = input + o * reduced * inner;
    if (inner == 1 && (kind == 0 || kind == 1 || kind == 2)) {
      /* Reducing the last axis: a contiguous row, over vector lanes. */
      out[0] = kind == 2 ? cuvil_max_f32(in, reduced) : cuvil_sum_f32(in, reduced);
      if (kind == 1)
        out[0] /= (float)reduced;
      continue;
    }
    for (int64_t i = 0; i < inner; ++i)
      out[i] = kind == 2 ? -INFINITY : kind == 3 ? INFINITY : 0.0f;
    for (int64_t r = 0; r < reduced; ++r) {
      const float *row = in + r * inner;
      for (int64_t i = 0; i < inner; ++i) {
        float v = row[i];
        if (kind == 2)
          out[i] = v > out[i] ? v : out[i];
        else if (kind == 3)
          out[i] = v < out[i] ? v : out[i];
        else
          out[i] += v;
      }
    }
    if (kind == 1)
      for (int64_t i = 0; i < inner; ++i)
        out[i] /= (float)reduced;
  }
}
