/*===- trees.c - decision forests: the walks and the driver --------------===*
 *
 * The reference walks one row at a time through every tree and handles
 * every forest. The vector walks (after QuickScorer's and lleaves's lesson
 * that branchy per-node code is what makes tree inference slow) step many
 * rows through one tree at once: gather each lane's node, its feature and
 * threshold, compare, let a missing value take its default, step to
 * `left` or `left + 1`; lanes at a leaf stop. They are branch free per
 * node and sum the trees in the same order as the reference, so every
 * variant gives the same bits.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/trees/trees.h"

#include <math.h>
#include <string.h>


static int forest_compare(double x, double t, int32_t comparison) {
  switch (comparison) {
  case CUVIL_TREE_LT:
    return x < t;
  case CUVIL_TREE_LE:
    return x <= t;
  case CUVIL_TREE_GT:
    return x > t;
  case CUVIL_TREE_GE:
    return x >= t;
  case CUVIL_TREE_EQ:
    return x == t;
  default:
    return x != t;
  }
}

/* Whether `v`'s category (truncated; -1 < v < 2^31, as LightGBM's
 * CategoricalDecision truncates, or 0 <= v with `whole`, as XGBoost's
 * Decision checks; else none) is in the set at `offset` of `sets`. */
static int forest_member(const int32_t *sets, double offset, double v,
                         int whole) {
  if (!((whole ? v >= 0.0 : v > -1.0) && v < 2147483648.0))
    return 0;
  int64_t c = (int64_t)v;
  const int32_t *set = sets + (int64_t)offset;
  if (c / 32 >= set[0])
    return 0;
  return (int)(((uint32_t)set[1 + c / 32] >> (c % 32)) & 1u);
}

/* One step of row `x` (of the input's type) from `node`: the next node, or
 * -1 - its leaf row at a leaf. Comparing in double is exact for float
 * features and thresholds too. */
static inline int32_t forest_step(const cuvil_forest *f, int32_t node,
                                  const void *x) {
  const int32_t *nodes = f->nodes;
  int32_t flags = nodes[3 * node + 2];
  int32_t comparison = flags & CUVIL_TREE_COMPARISON;
  if (comparison == CUVIL_TREE_LEAF)
    return -1 - nodes[3 * node];
  int32_t feature = nodes[3 * node];
  double v = f->input_f64 ? ((const double *)x)[feature]
                          : (double)((const float *)x)[feature];
  double t = f->thresholds_f64 ? ((const double *)f->thresholds)[node]
                               : (double)((const float *)f->thresholds)[node];
  int missing = v != v || (f->has_missing_value && v == f->missing_value) ||
                ((flags & CUVIL_TREE_ZERO_MISSING) && v >= -CUVIL_TREE_ZERO &&
                 v <= CUVIL_TREE_ZERO);
  int left = missing ? (flags & CUVIL_TREE_MISSING_LEFT) != 0
             : comparison == CUVIL_TREE_MEMBER
                 ? forest_member(f->categories, t, v,
                                 flags & CUVIL_TREE_WHOLE_CATEGORIES)
                 : forest_compare(v, t, comparison);
  return nodes[3 * node + 1] + (left ? 0 : 1);
}

static const void *forest_row(const cuvil_forest *f, const void *x,
                              int64_t row) {
  return f->input_f64 ? (const void *)((const double *)x + row * f->features)
                      : (const void *)((const float *)x + row * f->features);
}

/* Rows walked through one tree together: independent walks interleaved,
 * so that one row's wait on a load or a mispredicted branch overlaps the
 * others' steps. */
enum { FOREST_LANES = 8 };

/* The leaf rows that `rows` (<= FOREST_LANES) rows from `x` reach from
 * `root`. */
static void forest_leaves(const cuvil_forest *f, int32_t root, const void *x,
                          int64_t rows, int32_t *leaf) {
  int32_t node[FOREST_LANES];
  const void *row[FOREST_LANES];
  for (int64_t r = 0; r < rows; ++r) {
    node[r] = root;
    row[r] = forest_row(f, x, r);
  }
  for (int moving = 1; moving;) {
    moving = 0;
    for (int64_t r = 0; r < rows; ++r) {
      if (node[r] < 0)
        continue;
      node[r] = forest_step(f, node[r], row[r]);
      moving = 1;
    }
  }
  for (int64_t r = 0; r < rows; ++r)
    leaf[r] = -1 - node[r];
}

/* Sums `rows` rows of either input type in float32 (T float) or float64:
 * per row, tree by tree in order from the base values. */
#define FOREST_WALK(name, T)                                                   \
  static void name(const cuvil_forest *f, int64_t rows, const void *x,        \
                   T *out) {                                                   \
    const T *leaves = (const T *)f->leaves;                                    \
    int32_t leaf[FOREST_LANES];                                                \
    for (int64_t first = 0; first < rows; first += FOREST_LANES) {             \
      int64_t lanes = rows - first < FOREST_LANES ? rows - first : FOREST_LANES; \
      const void *block = forest_row(f, x, first);                             \
      for (int64_t r = 0; r < lanes; ++r)                                      \
        memcpy(out + (first + r) * f->targets, f->base,                        \
               (size_t)f->targets * sizeof(T));                                \
      for (int64_t t = 0; t < f->trees; ++t) {                                 \
        forest_leaves(f, f->roots[2 * t], block, lanes, leaf);                 \
        for (int64_t r = 0; r < lanes; ++r) {                                  \
          T *o = out + (first + r) * f->targets + f->roots[2 * t + 1];         \
          for (int64_t v = 0; v < f->values; ++v)                              \
            o[v] += leaves[leaf[r] * f->values + v];                           \
        }                                                                      \
      }                                                                        \
    }                                                                          \
  }

FOREST_WALK(forest_walk_f32, float)
FOREST_WALK(forest_walk_f64, double)

void cuvil_forest_walk_reference(const cuvil_forest *f, int64_t rows,
                                 const float *x, float *out) {
  forest_walk_f32(f, rows, x, out);
}

void cuvil_forest_transform_f32(int transform, float *o, int64_t n) {
  if (transform == CUVIL_FOREST_LOGISTIC) {
    for (int64_t i = 0; i < n; ++i)
      o[i] = 1.0f / (1.0f + expf(-o[i]));
  } else if (transform == CUVIL_FOREST_EXP) {
    for (int64_t i = 0; i < n; ++i)
      o[i] = expf(o[i]);
  } else if (transform == CUVIL_FOREST_SOFTMAX) {
    float top = o[0];
    for (int64_t i = 1; i < n; ++i)
      top = fmaxf(o[i], top);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      o[i] = expf(o[i] - top);
      sum += o[i];
    }
    for (int64_t i = 0; i < n; ++i)
      o[i] /= (float)sum;
  }
}

static void forest_transform_f64(int transform, double *o, int64_t n) {
  if (transform == CUVIL_FOREST_LOGISTIC) {
    for (int64_t i = 0; i < n; ++i)
      o[i] = 1.0 / (1.0 + exp(-o[i]));
  } else if (transform == CUVIL_FOREST_EXP) {
    for (int64_t i = 0; i < n; ++i)
      o[i] = exp(o[i]);
  } else if (transform == CUVIL_FOREST_SOFTMAX) {
    double top = o[0], sum = 0.0;
    for (int64_t i = 1; i < n; ++i)
      top = fmax(o[i], top);
    for (int64_t i = 0; i < n; ++i) {
      o[i] = exp(o[i] - top);
      sum += o[i];
    }
    for (int64_t i = 0; i < n; ++i)
      o[i] /= sum;
  }
}

/* Whether the vector walks take `f` (trees.h). */
static int forest_vectorizable(const cuvil_forest *f) {
  return !f->input_f64 && !f->thresholds_f64 && !f->acc_f64 &&
         f->uniform_comparison != 0 && f->values == 1 &&
         !f->has_missing_value &&
         f->targets <= CUVIL_FOREST_MAX_VECTOR_TARGETS &&
         f->features < INT32_MAX / CUVIL_FOREST_BLOCK;
}

typedef struct {
  cuvil_forest_walk_fn walk;
  const cuvil_forest *forest;
  int64_t rows;
  const void *x;
  void *out;
} forest_task;

static void forest_predict_blocks(void *arg, int64_t begin, int64_t end) {
  const forest_task *task = (const forest_task *)arg;
  const cuvil_forest *f = task->forest;
  int64_t first = begin * CUVIL_FOREST_BLOCK;
  int64_t last = end * CUVIL_FOREST_BLOCK;
  if (last > task->rows)
    last = task->rows;
  int64_t rows = last - first;
  const void *x = forest_row(f, task->x, first);
  if (f->acc_f64) {
    forest_walk_f64(f, rows, x, (double *)task->out + first * f->targets);
  } else {
    float *out = (float *)task->out + first * f->targets;
    if (forest_vectorizable(f))
      task->walk(f, rows, (const float *)x, out);
    else
      forest_walk_f32(f, rows, x, out);
  }
  cuvil_forest_finish(f->acc_f64, f->average, f->trees, f->offset,
                      f->post_transform,
                      (char *)task->out + first * f->targets *
                                              (f->acc_f64 ? 8 : 4),
                      rows, f->targets);
}

void cuvil_forest_finish(int acc_f64, int average, int64_t trees,
                         const void *offset, int transform, void *out,
                         int64_t rows, int64_t targets) {
  int64_t n = rows * targets;
  if (acc_f64) {
    double *o = (double *)out;
    for (int64_t i = 0; average && i < n; ++i)
      o[i] = o[i] / (double)trees + ((const double *)offset)[i % targets];
    for (int64_t r = 0; r < rows; ++r)
      forest_transform_f64(transform, o + r * targets, targets);
    return;
  }
  float *o = (float *)out;
  for (int64_t i = 0; average && i < n; ++i)
    o[i] = o[i] / (float)trees + ((const float *)offset)[i % targets];
  for (int64_t r = 0; r < rows; ++r)
    cuvil_forest_transform_f32(transform, o + r * targets, targets);
}

void cuvil_forest_predict(cuvil_pool *pool, cuvil_forest_walk_fn walk,
                          const cuvil_forest *forest, int64_t rows,
                          const void *x, void *out) {
  forest_task task = {walk, forest, rows, x, out};
  int64_t blocks = (rows + CUVIL_FOREST_BLOCK - 1) / CUVIL_FOREST_BLOCK;
  cuvil_parallel_for(pool, blocks, forest_predict_blocks, &task);
}

#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__x86_64__)
#include <immintrin.h>

#if !defined(CUVIL_TREES_ONLY) || defined(CUVIL_TREES_KEEP_avx512)
/* Four registers of 16 rows: a block. */
__attribute__((target("avx512f"))) void
cuvil_forest_walk_avx512(const cuvil_forest *f, int64_t rows, const float *x,
                         float *out) {
  enum { K = 4, W = 16 };
  const int32_t *nodes = f->nodes;
  const float *thresholds = (const float *)f->thresholds;
  const float *leaves = (const float *)f->leaves;
  const float *base = (const float *)f->base;
  const int cmp_le = f->uniform_comparison == CUVIL_TREE_LE;
  const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                          11, 12, 13, 14, 15);
  const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi32(1);
  const __m512i comparison = _mm512_set1_epi32(CUVIL_TREE_COMPARISON);
  const __m512i missing_left = _mm512_set1_epi32(CUVIL_TREE_MISSING_LEFT);
  float acc[f->targets * K * W];
  for (int64_t r0 = 0; r0 < rows; r0 += K * W) {
    const float *xb = x + r0 * f->features;
    __mmask16 valid[K];
    __m512i xoff[K];
    for (int k = 0; k < K; ++k) {
      int64_t left_rows = rows - r0 - k * W;
      valid[k] = left_rows >= W  ? (__mmask16)0xFFFF
                 : left_rows <= 0 ? (__mmask16)0
                                  : (__mmask16)((1u << left_rows) - 1);
      xoff[k] = _mm512_mullo_epi32(
          _mm512_add_epi32(lanes, _mm512_set1_epi32(k * W)),
          _mm512_set1_epi32((int32_t)f->features));
    }
    for (int64_t t = 0; t < f->targets; ++t)
      for (int k = 0; k < K; ++k)
        _mm512_storeu_ps(acc + (t * K + k) * W, _mm512_set1_ps(base[t]));
    for (int64_t t = 0; t < f->trees; ++t) {
      __m512i idx[K];
      __mmask16 active[K];
      for (int k = 0; k < K; ++k) {
        idx[k] = _mm512_set1_epi32(f->roots[2 * t]);
        active[k] = valid[k];
      }
      for (int any = 1; any;) {
        any = 0;
        for (int k = 0; k < K; ++k) {
          if (!active[k])
            continue;
          __m512i n3 = _mm512_add_epi32(_mm512_add_epi32(idx[k], idx[k]),
                                        idx[k]);
          __m512i flags =
              _mm512_mask_i32gather_epi32(zero, active[k], n3, nodes + 2, 4);
          active[k] = _mm512_mask_test_epi32_mask(active[k], flags, comparison);
          if (!active[k])
            continue;
          any = 1;
          __mmask16 a = active[k];
          __m512i feature = _mm512_mask_i32gather_epi32(zero, a, n3, nodes, 4);
          __m512i left = _mm512_mask_i32gather_epi32(zero, a, n3, nodes + 1, 4);
          __m512 th = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), a, idx[k],
                                               thresholds, 4);
          __m512 v = _mm512_mask_i32gather_ps(
              _mm512_setzero_ps(), a, _mm512_add_epi32(xoff[k], feature), xb,
              4);
          __mmask16 holds = cmp_le ? _mm512_mask_cmp_ps_mask(a, v, th, _CMP_LE_OQ)
                                   : _mm512_mask_cmp_ps_mask(a, v, th, _CMP_LT_OQ);
          __mmask16 missing = _mm512_mask_cmp_ps_mask(a, v, v, _CMP_UNORD_Q);
          __mmask16 default_left =
              _mm512_mask_test_epi32_mask(a, flags, missing_left);
          __mmask16 go_left = (__mmask16)((holds & ~missing) |
                                          (missing & default_left));
          __m512i next =
              _mm512_mask_add_epi32(left, (__mmask16)(a & ~go_left), left, one);
          idx[k] = _mm512_mask_mov_epi32(idx[k], a, next);
        }
      }
      float *target = acc + (int64_t)f->roots[2 * t + 1] * K * W;
      for (int k = 0; k < K; ++k) {
        __m512i n3 = _mm512_add_epi32(_mm512_add_epi32(idx[k], idx[k]), idx[k]);
        __m512i row = _mm512_mask_i32gather_epi32(zero, valid[k], n3, nodes, 4);
        __m512 value = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), valid[k],
                                                row, leaves, 4);
        _mm512_storeu_ps(target + k * W,
                         _mm512_add_ps(_mm512_loadu_ps(target + k * W), value));
      }
    }
    int64_t block_rows = rows - r0 < K * W ? rows - r0 : K * W;
    for (int64_t r = 0; r < block_rows; ++r)
      for (int64_t t = 0; t < f->targets; ++t)
        out[(r0 + r) * f->targets + t] = acc[t * K * W + r];
  }
}

#endif

#if !defined(CUVIL_TREES_ONLY) || defined(CUVIL_TREES_KEEP_avx2)
/* Four registers of 8 rows: a block of 32. */
__attribute__((target("avx2"))) void
cuvil_forest_walk_avx2(const cuvil_forest *f, int64_t rows, const float *x,
                       float *out) {
  enum { K = 4, W = 8 };
  const int32_t *nodes = f->nodes;
  const float *thresholds = (const float *)f->thresholds;
  const float *leaves = (const float *)f->leaves;
  const float *base = (const float *)f->base;
  const int cmp_le = f->uniform_comparison == CUVIL_TREE_LE;
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(1);
  const __m256i comparison = _mm256_set1_epi32(CUVIL_TREE_COMPARISON);
  const __m256i missing_left = _mm256_set1_epi32(CUVIL_TREE_MISSING_LEFT);
  float acc[f->targets * K * W];
  for (int64_t r0 = 0; r0 < rows; r0 += K * W) {
    const float *xb = x + r0 * f->features;
    __m256i valid[K], xoff[K];
    for (int k = 0; k < K; ++k) {
      __m256i row = _mm256_add_epi32(lanes, _mm256_set1_epi32(k * W));
      int64_t left_rows = rows - r0;
      valid[k] = _mm256_cmpgt_epi32(
          _mm256_set1_epi32((int32_t)(left_rows < K * W ? left_rows : K * W)),
          row);
      xoff[k] = _mm256_mullo_epi32(row, _mm256_set1_epi32((int32_t)f->features));
    }
    for (int64_t t = 0; t < f->targets; ++t)
      for (int k = 0; k < K; ++k)
        _mm256_storeu_ps(acc + (t * K + k) * W, _mm256_set1_ps(base[t]));
    for (int64_t t = 0; t < f->trees; ++t) {
      __m256i idx[K], active[K];
      for (int k = 0; k < K; ++k) {
        idx[k] = _mm256_set1_epi32(f->roots[2 * t]);
        active[k] = valid[k];
      }
      for (int any = 1; any;) {
        any = 0;
        for (int k = 0; k < K; ++k) {
          if (_mm256_testz_si256(active[k], active[k]))
            continue;
          __m256i n3 = _mm256_add_epi32(_mm256_add_epi32(idx[k], idx[k]),
                                        idx[k]);
          __m256i flags = _mm256_mask_i32gather_epi32(zero, nodes + 2, n3,
                                                      active[k], 4);
          active[k] = _mm256_andnot_si256(
              _mm256_cmpeq_epi32(_mm256_and_si256(flags, comparison), zero),
              active[k]);
          if (_mm256_testz_si256(active[k], active[k]))
            continue;
          any = 1;
          __m256i a = active[k];
          __m256i feature = _mm256_mask_i32gather_epi32(zero, nodes, n3, a, 4);
          __m256i left = _mm256_mask_i32gather_epi32(zero, nodes + 1, n3, a, 4);
          __m256 th = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), thresholds,
                                               idx[k], _mm256_castsi256_ps(a), 4);
          __m256 v = _mm256_mask_i32gather_ps(
              _mm256_setzero_ps(), xb, _mm256_add_epi32(xoff[k], feature),
              _mm256_castsi256_ps(a), 4);
          __m256 holds = cmp_le ? _mm256_cmp_ps(v, th, _CMP_LE_OQ)
                                : _mm256_cmp_ps(v, th, _CMP_LT_OQ);
          __m256 missing = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
          __m256 default_left = _mm256_castsi256_ps(_mm256_cmpeq_epi32(
              _mm256_and_si256(flags, missing_left), missing_left));
          __m256i go_left = _mm256_castps_si256(
              _mm256_or_ps(_mm256_andnot_ps(missing, holds),
                           _mm256_and_ps(missing, default_left)));
          /* left + 1, less one where the row goes left (go_left is -1). */
          __m256i next = _mm256_add_epi32(_mm256_add_epi32(left, one), go_left);
          idx[k] = _mm256_blendv_epi8(idx[k], next, a);
        }
      }
      float *target = acc + (int64_t)f->roots[2 * t + 1] * K * W;
      for (int k = 0; k < K; ++k) {
        __m256i n3 = _mm256_add_epi32(_mm256_add_epi32(idx[k], idx[k]), idx[k]);
        __m256i row = _mm256_mask_i32gather_epi32(zero, nodes, n3, valid[k], 4);
        __m256 value = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), leaves,
                                                row,
                                                _mm256_castsi256_ps(valid[k]), 4);
        _mm256_storeu_ps(target + k * W,
                         _mm256_add_ps(_mm256_loadu_ps(target + k * W), value));
      }
    }
    int64_t block_rows = rows - r0 < K * W ? rows - r0 : K * W;
    for (int64_t r = 0; r < block_rows; ++r)
      for (int64_t t = 0; t < f->targets; ++t)
        out[(r0 + r) * f->targets + t] = acc[t * K * W + r];
  }
}
#endif
#endif /* CUVIL_ENABLE_SIMD_KERNELS */
