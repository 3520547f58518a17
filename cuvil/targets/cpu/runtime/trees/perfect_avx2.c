/*===- perfect_avx2.c - the AVX2 perfect walks ----------------------------===*
 *
 * perfect_avx512.c's design in 8 lanes: a transposed block of 64 rows, or,
 * for a few rows, 8 trees per register.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/trees/perfect_internal.h"

#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__x86_64__) &&               \
    (!defined(CUVIL_TREES_ONLY) || defined(CUVIL_TREES_KEEP_avx2))
#include <immintrin.h>

/* perfect_step16 for 8 lanes: 2i + 1, less one where the row goes left
 * (go_left is -1 there). */
__attribute__((target("avx2"))) static inline __m256i
perfect_step8(__m256i idx, __m256i word, __m256 th, __m256 v, int cmp_le) {
  __m256 holds = cmp_le ? _mm256_cmp_ps(v, th, _CMP_LE_OQ)
                        : _mm256_cmp_ps(v, th, _CMP_LT_OQ);
  __m256 missing = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
  __m256 default_left =
      _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_setzero_si256(), word));
  __m256i go_left = _mm256_castps_si256(_mm256_or_ps(
      _mm256_andnot_ps(missing, holds), _mm256_and_ps(missing, default_left)));
  return _mm256_add_epi32(
      _mm256_add_epi32(_mm256_add_epi32(idx, idx), _mm256_set1_epi32(1)),
      go_left);
}

/* perfect_step8 for values without NaN: one comparison, -1 where the row
 * goes right, so 2i - (-1). */
__attribute__((target("avx2"))) static inline __m256i
perfect_dense_step8(__m256i idx, __m256 th, __m256 v, int cmp_le) {
  __m256i right =
      _mm256_castps_si256(cmp_le ? _mm256_cmp_ps(v, th, _CMP_NLE_UQ)
                                 : _mm256_cmp_ps(v, th, _CMP_NLT_UQ));
  return _mm256_sub_epi32(_mm256_add_epi32(idx, idx), right);
}

/* A level's words for 8 lanes: one permute for up to 8 nodes, else a
 * gather. */
__attribute__((target("avx2"))) static inline __m256i
perfect_level_words8(const int32_t *level, int64_t width, __m256i i) {
  if (width <= 8) {
    __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)width),
                                      _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    return _mm256_permutevar8x32_epi32(_mm256_maskload_epi32(level, mask), i);
  }
  return _mm256_i32gather_epi32(level, i, 4);
}

__attribute__((target("avx2"))) static inline __m256
perfect_level_floats8(const float *level, int64_t width, __m256i i) {
  if (width <= 8) {
    __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)width),
                                      _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    return _mm256_permutevar8x32_ps(_mm256_maskload_ps(level, mask), i);
  }
  return _mm256_i32gather_ps(level, i, 4);
}

/* Node words and thresholds at 8 lanes' nodes (lanes off in `m` read
 * zeros): two 4-lane gathers of the forest's (threshold, word) pairs,
 * split by shuffles (half the loads of two 8-lane gathers). */
__attribute__((target("avx2"), always_inline)) static inline void
perfect_nodes8(const cuvil_perfect_forest *f, __m256i node, __m256i m,
               __m256i *word, __m256 *th) {
  if (!f->pairs) {
    *word = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), f->nodes, node,
                                        m, 4);
    *th = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), f->thresholds, node,
                                   _mm256_castsi256_ps(m), 4);
    return;
  }
  const long long *pairs = (const long long *)f->pairs;
  __m256 lo = _mm256_castsi256_ps(_mm256_mask_i32gather_epi64(
      _mm256_setzero_si256(), pairs, _mm256_castsi256_si128(node),
      _mm256_cvtepi32_epi64(_mm256_castsi256_si128(m)), 8));
  __m256 hi = _mm256_castsi256_ps(_mm256_mask_i32gather_epi64(
      _mm256_setzero_si256(), pairs, _mm256_extracti128_si256(node, 1),
      _mm256_cvtepi32_epi64(_mm256_extracti128_si256(m, 1)), 8));
  /* Per 128-bit half (pairs 0 1 | 2 3 of lo, 4 5 | 6 7 of hi): 0 1 4 5 |
   * 2 3 6 7, then the middle quarters swapped. */
  *th = _mm256_castpd_ps(_mm256_permute4x64_pd(
      _mm256_castps_pd(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0))),
      _MM_SHUFFLE(3, 1, 2, 0)));
  *word = _mm256_castpd_si256(_mm256_permute4x64_pd(
      _mm256_castps_pd(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1))),
      _MM_SHUFFLE(3, 1, 2, 0)));
}

/* A few rows: 8 trees per register (one lane per tree), four registers at
 * once, their leaves then added in tree order (perfect_by_trees_avx512's
 * one float32 sum and dense rows likewise). */
__attribute__((target("avx2"))) static void
perfect_by_trees_avx2(const cuvil_perfect_forest *f, int64_t rows,
                      const float *x, void *out) {
  enum { K = 4, W = 8 };
  const int64_t inner = ((int64_t)1 << f->depth) - 1;
  const int cmp_le = perfect_le(f);
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i feature_bits = _mm256_set1_epi32(CUVIL_PERFECT_FEATURE);
  const int one_sum = perfect_one_sum(f);
  int32_t leaves[K * W];
  float values[K * W];
  float copy[f->features];
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = perfect_clean_row(f, x + r * f->features, copy);
    void *o = perfect_start_row(f, out, r);
    const int dense = perfect_row_dense(row, f->features);
    float sum = one_sum ? *(const float *)o : 0.0f;
    for (int64_t t0 = 0; t0 < f->trees; t0 += K * W) {
      /* Each lane's tree's first node and its index on the level, the
       * loops over the K registers unrolled (perfect_by_trees_avx512). */
      __m256i tree[K], first[K], idx[K], m[K];
      CUVIL_UNROLL for (int k = 0; k < K; ++k) {
        tree[k] = _mm256_add_epi32(lanes,
                                   _mm256_set1_epi32((int32_t)(t0 + k * W)));
        m[k] = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)f->trees),
                                  tree[k]);
        first[k] =
            _mm256_mullo_epi32(tree[k], _mm256_set1_epi32((int32_t)inner));
        idx[k] = _mm256_setzero_si256();
      }
      for (int64_t level = 0; level < f->depth; ++level) {
        __m256i level_first = _mm256_set1_epi32((1 << level) - 1);
        CUVIL_UNROLL for (int k = 0; k < K; ++k) {
          __m256i node =
              _mm256_add_epi32(_mm256_add_epi32(first[k], level_first), idx[k]);
          __m256i word;
          __m256 th;
          perfect_nodes8(f, node, m[k], &word, &th);
          __m256 v = _mm256_mask_i32gather_ps(
              _mm256_setzero_ps(), row, _mm256_and_si256(word, feature_bits),
              _mm256_castsi256_ps(m[k]), 4);
          idx[k] = dense ? perfect_dense_step8(idx[k], th, v, cmp_le)
                         : perfect_step8(idx[k], word, th, v, cmp_le);
        }
      }
      int64_t n = f->trees - t0 < K * W ? f->trees - t0 : K * W;
      CUVIL_UNROLL for (int k = 0; k < K; ++k) {
        __m256i leaf =
            _mm256_add_epi32(_mm256_add_epi32(first[k], tree[k]), idx[k]);
        if (one_sum)
          _mm256_storeu_ps(values + k * W,
                           _mm256_mask_i32gather_ps(
                               _mm256_setzero_ps(), (const float *)f->leaves,
                               leaf, _mm256_castsi256_ps(m[k]), 4));
        else
          _mm256_storeu_si256((__m256i *)(leaves + k * W), leaf);
      }
      if (one_sum)
        sum = perfect_add_in_order(sum, values, n);
      else
        perfect_add_leaves(f, o, t0, n, leaves);
    }
    if (one_sum)
      *(float *)o = sum;
  }
}

/* The AVX2 transposed walk: perfect_transposed_avx512's design in 8 lanes.
 * Levels of up to 8 nodes read the rows' features by loads and blends
 * (a gather of 8 lanes costs about a dozen blends here); level tables
 * and leaves of up to 32 by permutes. */
enum { CUVIL_PERFECT_LOADED_LEVELS8 = 4, CUVIL_PERFECT_TBLOCK8 = 64 };

/* Lanes whose index has bit `bit` set, as a blend mask (the sign bit). */
__attribute__((target("avx2"), always_inline)) static inline __m256
perfect_bit8(__m256i i, int bit) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(i, 31 - bit));
}

/* `table[i]` for each lane, for 2^log2_width (at most 32) entries: one
 * permute of a register for up to 8, then blends on bits 3 and 4. Reads
 * no entry past the table. */
__attribute__((target("avx2"), always_inline)) static inline __m256
perfect_lookup8(const float *table, int log2_width, __m256i i) {
  __m256 part[4];
  int width = 1 << log2_width;
  int parts = width <= 8 ? 1 : width / 8;
  for (int p = 0; p < parts; ++p) {
    __m256i mask = _mm256_cmpgt_epi32(
        _mm256_set1_epi32(width <= 8 ? width : 8),
        _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    part[p] = _mm256_permutevar8x32_ps(
        _mm256_maskload_ps(table + 8 * p, mask), i);
  }
  for (int bit = 3; parts > 1; ++bit, parts /= 2)
    for (int p = 0; p < parts / 2; ++p)
      part[p] = _mm256_blendv_ps(part[2 * p], part[2 * p + 1],
                                 perfect_bit8(i, bit));
  return part[0];
}

/* Column `i` (of 2^level at `columns`) of 8 rows, each lane its own. */
__attribute__((target("avx2"), always_inline)) static inline __m256
perfect_select8(const float *const *columns, int level, int64_t row,
                __m256i i) {
  __m256 part[1 << (CUVIL_PERFECT_LOADED_LEVELS8 - 1)];
  if (level == 0)
    return _mm256_loadu_ps(columns[0] + row);
  int parts = 1 << (level - 1);
  for (int p = 0; p < parts; ++p)
    part[p] = _mm256_blendv_ps(_mm256_loadu_ps(columns[2 * p] + row),
                               _mm256_loadu_ps(columns[2 * p + 1] + row),
                               perfect_bit8(i, 0));
  for (int bit = 1; parts > 1; ++bit, parts /= 2)
    for (int p = 0; p < parts / 2; ++p)
      part[p] = _mm256_blendv_ps(part[2 * p], part[2 * p + 1],
                                 perfect_bit8(i, bit));
  return part[0];
}

/* One level of one tree for register k (rows 8k to 8k + 7) of the block:
 * its next index. */
__attribute__((target("avx2"), always_inline)) static inline __m256i
perfect_level8(const int32_t *words, const float *thresholds, int level,
               const float *const *columns, const float *xt, int k, __m256i idx,
               int cmp_le, int has_missing) {
  enum { W = 8, B = CUVIL_PERFECT_TBLOCK8 };
  const __m256i feature_bits = _mm256_set1_epi32(CUVIL_PERFECT_FEATURE);
  const int loaded = level < CUVIL_PERFECT_LOADED_LEVELS8;
  const int permuted = level <= 5;
  __m256 th = permuted ? perfect_lookup8(thresholds, level, idx)
                       : _mm256_i32gather_ps(thresholds, idx, 4);
  __m256i word = _mm256_setzero_si256();
  if (!loaded || has_missing)
    word = permuted ? _mm256_castps_si256(
                          perfect_lookup8((const float *)words, level, idx))
                    : _mm256_i32gather_epi32(words, idx, 4);
  __m256 v;
  if (loaded)
    v = perfect_select8(columns, level, k * W, idx);
  else
    v = _mm256_i32gather_ps(
        xt,
        _mm256_add_epi32(
            _mm256_mullo_epi32(_mm256_and_si256(word, feature_bits),
                               _mm256_set1_epi32(B)),
            _mm256_setr_epi32(k * W, k * W + 1, k * W + 2, k * W + 3, k * W + 4,
                              k * W + 5, k * W + 6, k * W + 7)),
        4);
  return has_missing ? perfect_step8(idx, word, th, v, cmp_le)
                     : perfect_dense_step8(idx, th, v, cmp_le);
}

/* Adds each lane of register k's leaf (of 2^depth) to `target`. */
__attribute__((target("avx2"), always_inline)) static inline void
perfect_leaves8(const float *leaves, int depth, int k, __m256i idx,
                float *target) {
  enum { W = 8 };
  __m256 value = depth <= 5 ? perfect_lookup8(leaves, depth, idx)
                            : _mm256_i32gather_ps(leaves, idx, 4);
  _mm256_storeu_ps(target + k * W,
                   _mm256_add_ps(_mm256_loadu_ps(target + k * W), value));
}

/* A tree's walk of the block (float32 leaves of one value) and its leaves
 * added to `target`. */
__attribute__((target("avx2"), always_inline)) static inline void
perfect_tree8(const cuvil_perfect_forest *f, int64_t t, const float *xt,
              float *target, int live, int has_missing, int cmp_le) {
  enum { K = 8, B = CUVIL_PERFECT_TBLOCK8 };
  const int64_t inner = ((int64_t)1 << f->depth) - 1;
  const int32_t *nodes = f->nodes + t * inner;
  const float *thresholds = f->thresholds + t * inner;
  const float *columns[1 << CUVIL_PERFECT_LOADED_LEVELS8];
  __m256i idx[K];
  for (int k = 0; k < K; ++k)
    idx[k] = _mm256_setzero_si256();
  for (int level = 0; level < f->depth; ++level) {
    const int32_t *w = nodes + ((int64_t)1 << level) - 1;
    const float *th = thresholds + ((int64_t)1 << level) - 1;
    switch (level) {
#define PERFECT_STEP8(k)                                                       \
  idx[k] =                                                                     \
      perfect_level8(w, th, n, columns, xt, k, idx[k], cmp_le, has_missing);
#define PERFECT_LEVEL8(level_n)                                                \
  case level_n:                                                                \
    if (level_n >= CUVIL_PERFECT_MAX_DEPTH)                                    \
      break; /* no such level in this model's forests */                       \
    {                                                                          \
      const int n = level_n;                                                   \
      perfect_level_columns(w, n, CUVIL_PERFECT_LOADED_LEVELS8, xt, B,         \
                            columns);                                          \
      PERFECT_EACH_LIVE(live, PERFECT_STEP8);                                  \
      break;                                                                   \
    }
      /* clang-format off */
      PERFECT_LEVEL8(0) PERFECT_LEVEL8(1) PERFECT_LEVEL8(2)
      PERFECT_LEVEL8(3) PERFECT_LEVEL8(4) PERFECT_LEVEL8(5)
    default:
      PERFECT_LEVEL8(6)
      /* clang-format on */
#undef PERFECT_LEVEL8
#undef PERFECT_STEP8
    }
  }
  const float *leaves = (const float *)f->leaves + t * (inner + 1);
  switch (f->depth) {
#define PERFECT_ADD8(k) perfect_leaves8(leaves, n, k, idx[k], target);
#define PERFECT_LEAVES8(depth_n)                                               \
  case depth_n:                                                                \
    if (depth_n > CUVIL_PERFECT_MAX_DEPTH)                                     \
      break;                                                                   \
    {                                                                          \
      const int n = depth_n;                                                   \
      PERFECT_EACH_LIVE(live, PERFECT_ADD8);                                   \
      break;                                                                   \
    }
    /* clang-format off */
    PERFECT_LEAVES8(1) PERFECT_LEAVES8(2) PERFECT_LEAVES8(3)
    PERFECT_LEAVES8(4) PERFECT_LEAVES8(5)
  default:
    PERFECT_LEAVES8(6)
    /* clang-format on */
#undef PERFECT_LEAVES8
#undef PERFECT_ADD8
  }
}

/* Transposes 8 registers of 8 floats. */
__attribute__((target("avx2"), always_inline)) static inline void
perfect_transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
    r[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
  }
}

/* perfect_transpose_block for a block of 64 rows, 8 x 8 at a time. */
__attribute__((target("avx2"))) static int
perfect_transpose_block8(const float *x, int64_t rows, int64_t features,
                         float m, float *xt) {
  enum { W = 8, B = CUVIL_PERFECT_TBLOCK8 };
  __m256 missing = _mm256_setzero_ps();
  for (int64_t r0 = 0; r0 < B; r0 += W)
    for (int64_t c0 = 0; c0 < features; c0 += W) {
      int64_t width = features - c0 < W ? features - c0 : W;
      __m256i columns = _mm256_cmpgt_epi32(
          _mm256_set1_epi32((int32_t)width),
          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
      __m256 r[W];
      for (int i = 0; i < W; ++i) {
        r[i] = r0 + i < rows
                   ? _mm256_maskload_ps(x + (r0 + i) * features + c0, columns)
                   : _mm256_setzero_ps();
        if (m == m)
          r[i] = _mm256_blendv_ps(
              r[i], _mm256_set1_ps(NAN),
              _mm256_cmp_ps(r[i], _mm256_set1_ps(m), _CMP_EQ_OQ));
        missing = _mm256_or_ps(missing, _mm256_cmp_ps(r[i], r[i], _CMP_UNORD_Q));
      }
      perfect_transpose8(r);
      for (int i = 0; i < width; ++i)
        _mm256_storeu_ps(xt + (c0 + i) * B + r0, r[i]);
    }
  return _mm256_movemask_ps(missing) != 0;
}

/* Eight registers of 8 rows over a feature-major copy of a block of 64
 * rows, float32 leaves of one value. */
__attribute__((target("avx2"))) static void
perfect_transposed_avx2(const cuvil_perfect_forest *f, int64_t rows,
                        const float *x, float *out) {
  enum { W = 8, B = CUVIL_PERFECT_TBLOCK8 };
  const int le = perfect_le(f);
  const float *base = (const float *)f->base;
  float xt[f->features * B];
  float acc[f->targets * B];
  for (int64_t r0 = 0; r0 < rows; r0 += B) {
    int64_t block_rows = rows - r0 < B ? rows - r0 : B;
    const int live = (int)((block_rows + W - 1) / W);
    int missing = perfect_transpose_block8(x + r0 * f->features, block_rows,
                                           f->features, perfect_missing_f32(f),
                                           xt);
    for (int64_t t = 0; t < f->targets; ++t)
      for (int64_t r = 0; r < B; ++r)
        acc[t * B + r] = base[t];
    for (int64_t t = 0; t < f->trees; ++t) {
      float *target = acc + (int64_t)f->targets_of[t] * B;
      if (missing)
        le ? perfect_tree8(f, t, xt, target, live, 1, 1)
           : perfect_tree8(f, t, xt, target, live, 1, 0);
      else
        le ? perfect_tree8(f, t, xt, target, live, 0, 1)
           : perfect_tree8(f, t, xt, target, live, 0, 0);
    }
    for (int64_t r = 0; r < block_rows; ++r)
      for (int64_t t = 0; t < f->targets; ++t)
        out[(r0 + r) * f->targets + t] = acc[t * B + r];
  }
}

/* Four registers of 8 rows: a block of 32. Fewer than 8 rows go by
 * trees; float64 leaves and leaves of several values one row at a time. */
__attribute__((target("avx2"))) void
cuvil_perfect_walk_avx2(const cuvil_perfect_forest *f, int64_t rows,
                        const float *x, void *out_sums) {
  enum { K = 4, W = 8 };
  if (!perfect_compiled_for(f)) { /* compiled for the other comparison */
    cuvil_perfect_walk_reference(f, rows, x, out_sums);
    return;
  }
  if (rows < 8 &&
      f->trees * (((int64_t)1 << f->depth)) < INT32_MAX - 32 * 1024) {
    perfect_by_trees_avx2(f, rows, x, out_sums);
    return;
  }
  if (f->acc_f64 || f->values != 1) {
    cuvil_perfect_walk_reference(f, rows, x, out_sums);
    return;
  }
  float *out = (float *)out_sums;
  if (f->features <= CUVIL_PERFECT_TFEATURES) {
    perfect_transposed_avx2(f, rows, x, out);
    return;
  }
  if (f->has_missing_value) {
    cuvil_perfect_walk_reference(f, rows, x, out_sums);
    return;
  }
  const float *base = (const float *)f->base;
  const int64_t inner = ((int64_t)1 << f->depth) - 1;
  const int cmp_le = perfect_le(f);
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i feature_bits = _mm256_set1_epi32(CUVIL_PERFECT_FEATURE);
  float acc[f->targets * K * W];
  for (int64_t r0 = 0; r0 < rows; r0 += K * W) {
    const float *xb = x + r0 * f->features;
    int64_t block_rows = rows - r0 < K * W ? rows - r0 : K * W;
    __m256i valid[K], xoff[K];
    for (int k = 0; k < K; ++k) {
      __m256i row = _mm256_add_epi32(lanes, _mm256_set1_epi32(k * W));
      valid[k] =
          _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)block_rows), row);
      xoff[k] = _mm256_mullo_epi32(row, _mm256_set1_epi32((int32_t)f->features));
    }
    for (int64_t t = 0; t < f->targets; ++t)
      for (int k = 0; k < K; ++k)
        _mm256_storeu_ps(acc + (t * K + k) * W, _mm256_set1_ps(base[t]));
    for (int64_t t = 0; t < f->trees; ++t) {
      const int32_t *nodes = f->nodes + t * inner;
      const float *thresholds = f->thresholds + t * inner;
      __m256i idx[K];
      for (int k = 0; k < K; ++k)
        idx[k] = _mm256_setzero_si256();
      for (int64_t level = 0; level < f->depth; ++level) {
        int64_t width = (int64_t)1 << level;
        for (int k = 0; k < K; ++k) {
          __m256i word = perfect_level_words8(nodes + width - 1, width, idx[k]);
          __m256 th = perfect_level_floats8(thresholds + width - 1, width,
                                            idx[k]);
          __m256 v = _mm256_mask_i32gather_ps(
              _mm256_setzero_ps(), xb,
              _mm256_add_epi32(xoff[k], _mm256_and_si256(word, feature_bits)),
              _mm256_castsi256_ps(valid[k]), 4);
          idx[k] = perfect_step8(idx[k], word, th, v, cmp_le);
        }
      }
      const float *leaves = (const float *)f->leaves + t * (inner + 1);
      float *target = acc + (int64_t)f->targets_of[t] * K * W;
      for (int k = 0; k < K; ++k) {
        __m256 value = perfect_level_floats8(leaves, inner + 1, idx[k]);
        _mm256_storeu_ps(target + k * W,
                         _mm256_add_ps(_mm256_loadu_ps(target + k * W), value));
      }
    }
    for (int64_t r = 0; r < block_rows; ++r)
      for (int64_t t = 0; t < f->targets; ++t)
        out[(r0 + r) * f->targets + t] = acc[t * K * W + r];
  }
}
#endif /* CUVIL_ENABLE_SIMD_KERNELS */
