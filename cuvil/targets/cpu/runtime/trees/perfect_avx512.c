/*===- perfect_avx512.c - the AVX-512 perfect walks ----------------------===*
 *
 * 16 rows per zmm register over a transposed block of 128 (the first
 * levels' features by loads and blends, deeper ones by gathers, level
 * tables and leaves by permutes), or, for a few rows, 16 trees per
 * register. docs/trees.md says where the time goes.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/trees/perfect_internal.h"

#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__x86_64__) &&               \
    (!defined(CUVIL_TREES_ONLY) || defined(CUVIL_TREES_KEEP_avx512))
#include <immintrin.h>

/* Each lane's next index on its level below: 2i if the row goes left (the
 * comparison holds, or the value is missing and the word's bit 31 says
 * left), 2i + 1 otherwise. */
__attribute__((target("avx512f"))) static inline __m512i
perfect_step16(__m512i idx, __m512i word, __m512 th, __m512 v, int cmp_le) {
  __mmask16 holds = cmp_le ? _mm512_cmp_ps_mask(v, th, _CMP_LE_OQ)
                           : _mm512_cmp_ps_mask(v, th, _CMP_LT_OQ);
  __mmask16 missing = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  __mmask16 default_left = _mm512_cmplt_epi32_mask(word, _mm512_setzero_si512());
  __mmask16 go_left = (__mmask16)((holds & ~missing) | (missing & default_left));
  __m512i twice = _mm512_add_epi32(idx, idx);
  return _mm512_mask_add_epi32(twice, (__mmask16)~go_left, twice,
                               _mm512_set1_epi32(1));
}

/* perfect_step16 for values without NaN: one comparison, true for a right
 * turn. */
__attribute__((target("avx512f"))) static inline __m512i
perfect_dense_step16(__m512i idx, __m512 th, __m512 v, int cmp_le) {
  __mmask16 right = cmp_le ? _mm512_cmp_ps_mask(v, th, _CMP_NLE_UQ)
                           : _mm512_cmp_ps_mask(v, th, _CMP_NLT_UQ);
  __m512i twice = _mm512_add_epi32(idx, idx);
  return _mm512_mask_add_epi32(twice, right, twice, _mm512_set1_epi32(1));
}

/* A level's node words at each lane's index: a permute of one register for
 * up to 16 nodes, of two for 32, else a gather. */
__attribute__((target("avx512f"))) static inline __m512i
perfect_level_words16(const int32_t *level, int64_t width, __m512i i) {
  if (width <= 16)
    return _mm512_permutexvar_epi32(
        i, _mm512_maskz_loadu_epi32((__mmask16)((1u << width) - 1), level));
  if (width == 32)
    return _mm512_permutex2var_epi32(_mm512_loadu_si512(level), i,
                                     _mm512_loadu_si512(level + 16));
  return _mm512_i32gather_epi32(i, level, 4);
}

__attribute__((target("avx512f"))) static inline __m512
perfect_level_floats16(const float *level, int64_t width, __m512i i) {
  if (width <= 16)
    return _mm512_permutexvar_ps(
        i, _mm512_maskz_loadu_ps((__mmask16)((1u << width) - 1), level));
  if (width == 32)
    return _mm512_permutex2var_ps(_mm512_loadu_ps(level), i,
                                  _mm512_loadu_ps(level + 16));
  return _mm512_i32gather_ps(i, level, 4);
}

/* Node words and thresholds at 16 lanes' nodes (lanes off in `m` read
 * zeros): two 8-lane gathers of the forest's (threshold, word) pairs,
 * split by permutes, where the separate tables take two 16-lane gathers
 * (twice the loads: the cost of a few rows of a large forest). */
__attribute__((target("avx512f"), always_inline)) static inline void
perfect_nodes16(const cuvil_perfect_forest *f, __m512i node, __mmask16 m,
                __m512i *word, __m512 *th) {
  if (!f->pairs) {
    *word = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, node,
                                        f->nodes, 4);
    *th = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, node, f->thresholds,
                                   4);
    return;
  }
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20,
                                         22, 24, 26, 28, 30);
  __m512i lo =
      _mm512_mask_i32gather_epi64(_mm512_setzero_si512(), (__mmask8)m,
                                  _mm512_castsi512_si256(node), f->pairs, 8);
  __m512i hi = _mm512_mask_i32gather_epi64(
      _mm512_setzero_si512(), (__mmask8)(m >> 8),
      _mm512_extracti64x4_epi64(node, 1), f->pairs, 8);
  *th = _mm512_castsi512_ps(_mm512_permutex2var_epi32(lo, even, hi));
  *word = _mm512_permutex2var_epi32(
      lo, _mm512_add_epi32(even, _mm512_set1_epi32(1)), hi);
}

/* A few rows: 16 trees per register (one lane per tree), four registers
 * at once, their leaves then added in tree order (gathered and summed in a
 * register for one float32 sum, a chain of additions that overlaps the
 * next trees' walk). What bounds a row of a large forest is each level's
 * gather of nodes, which the next level waits on (docs/trees.md). A row
 * without NaN takes the one-comparison step. */
__attribute__((target("avx512f"))) static void
perfect_by_trees_avx512(const cuvil_perfect_forest *f, int64_t rows,
                        const float *x, void *out) {
  enum { K = 4, W = 16 };
  const int64_t inner = ((int64_t)1 << f->depth) - 1;
  const int cmp_le = perfect_le(f);
  const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                          11, 12, 13, 14, 15);
  const __m512i feature_bits = _mm512_set1_epi32(CUVIL_PERFECT_FEATURE);
  const int one_sum = perfect_one_sum(f);
  int32_t leaves[K * W];
  float values[K * W];
  float copy[f->features];
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = perfect_clean_row(f, x + r * f->features, copy);
    void *o = perfect_start_row(f, out, r);
    const int dense = perfect_row_dense(row, f->features);
    float sum = one_sum ? *(const float *)o : 0.0f;
    /* A row of up to 32 features in two registers: its values by permutes
     * rather than gathers. */
    int64_t lo = f->features < 16 ? f->features : 16;
    int64_t hi = f->features <= 32 ? f->features - lo : 0;
    __m512 row_lo = _mm512_maskz_loadu_ps((__mmask16)((1u << lo) - 1), row);
    __m512 row_hi =
        _mm512_maskz_loadu_ps((__mmask16)((1u << hi) - 1), row + 16);
    for (int64_t t0 = 0; t0 < f->trees; t0 += K * W) {
      /* Each lane's tree's first node and its index on the level; the
       * loops over the K registers unrolled, so they stay in registers. */
      __m512i tree[K], first[K], idx[K];
      __mmask16 m[K];
      CUVIL_UNROLL for (int k = 0; k < K; ++k) {
        int64_t n = f->trees - t0 - k * W;
        m[k] = n >= W ? (__mmask16)0xFFFF
               : n <= 0 ? (__mmask16)0
                        : (__mmask16)((1u << n) - 1);
        tree[k] = _mm512_add_epi32(lanes,
                                   _mm512_set1_epi32((int32_t)(t0 + k * W)));
        first[k] =
            _mm512_mullo_epi32(tree[k], _mm512_set1_epi32((int32_t)inner));
        idx[k] = _mm512_setzero_si512();
      }
      for (int64_t level = 0; level < f->depth; ++level) {
        __m512i level_first = _mm512_set1_epi32((1 << level) - 1);
        CUVIL_UNROLL for (int k = 0; k < K; ++k) {
          __m512i node =
              _mm512_add_epi32(_mm512_add_epi32(first[k], level_first), idx[k]);
          __m512i word;
          __m512 th;
          perfect_nodes16(f, node, m[k], &word, &th);
          /* The permute reads the index's low five bits: no mask needed. */
          __m512 v = f->features <= 32
                         ? _mm512_permutex2var_ps(row_lo, word, row_hi)
                         : _mm512_mask_i32gather_ps(
                               _mm512_setzero_ps(), m[k],
                               _mm512_and_si512(word, feature_bits), row, 4);
          idx[k] = dense ? perfect_dense_step16(idx[k], th, v, cmp_le)
                         : perfect_step16(idx[k], word, th, v, cmp_le);
        }
      }
      int64_t n = f->trees - t0 < K * W ? f->trees - t0 : K * W;
      CUVIL_UNROLL for (int k = 0; k < K; ++k) {
        __m512i leaf =
            _mm512_add_epi32(_mm512_add_epi32(first[k], tree[k]), idx[k]);
        if (one_sum)
          _mm512_storeu_ps(values + k * W,
                           _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m[k],
                                                    leaf, f->leaves, 4));
        else
          _mm512_storeu_si512(leaves + k * W, leaf);
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

/* The first levels read the rows' features from the block's columns by
 * loads and a tree of blends on the index's bits (2^level - 1 blends)
 * rather than by a gather: a 16-lane gather takes about 22 cycles on a
 * Zen 4, as long as a few dozen blends (docs/trees.md). */
enum { CUVIL_PERFECT_LOADED_LEVELS = 5 };

/* `table[i]` for each lane, for a table of 2^log2_width entries (at most
 * 256) held in registers: one permute of a register for up to 16, of two
 * for 32, then a tree of blends on bits 5 to 7 of i. Reads no entry past
 * the table. */
__attribute__((target("avx512f"), always_inline)) static inline __m512
perfect_lookup16(const float *table, int log2_width, __m512i i) {
  if (log2_width <= 4)
    return _mm512_permutexvar_ps(
        i, _mm512_maskz_loadu_ps((__mmask16)((1u << (1 << log2_width)) - 1),
                                 table));
  __m512 part[8];
  int parts = 1 << (log2_width - 5);
  for (int p = 0; p < parts; ++p)
    part[p] = _mm512_permutex2var_ps(_mm512_loadu_ps(table + 32 * p), i,
                                     _mm512_loadu_ps(table + 32 * p + 16));
  for (int bit = 5; parts > 1; ++bit, parts /= 2) {
    __mmask16 high = _mm512_test_epi32_mask(i, _mm512_set1_epi32(1 << bit));
    for (int p = 0; p < parts / 2; ++p)
      part[p] = _mm512_mask_blend_ps(high, part[2 * p], part[2 * p + 1]);
  }
  return part[0];
}

/* Column `i` (of 2^level, at `columns`) of 16 rows, each lane its own, by
 * loads and a tree of blends on i's bits. */
__attribute__((target("avx512f"), always_inline)) static inline __m512
perfect_select16(const float *const *columns, int level, int64_t row,
                 __m512i i) {
  __m512 part[1 << (CUVIL_PERFECT_LOADED_LEVELS - 1)];
  if (level == 0)
    return _mm512_loadu_ps(columns[0] + row);
  __mmask16 odd = _mm512_test_epi32_mask(i, _mm512_set1_epi32(1));
  int parts = 1 << (level - 1);
  for (int p = 0; p < parts; ++p)
    part[p] = _mm512_mask_blend_ps(odd, _mm512_loadu_ps(columns[2 * p] + row),
                                   _mm512_loadu_ps(columns[2 * p + 1] + row));
  for (int bit = 1; parts > 1; ++bit, parts /= 2) {
    __mmask16 high = _mm512_test_epi32_mask(i, _mm512_set1_epi32(1 << bit));
    for (int p = 0; p < parts / 2; ++p)
      part[p] = _mm512_mask_blend_ps(high, part[2 * p], part[2 * p + 1]);
  }
  return part[0];
}

/* One level of one tree for register k (rows 16k to 16k + 15) of the
 * block: its next index. Without missing values a step is one comparison
 * that is true for a right turn; with them, perfect_step16. */
__attribute__((target("avx512f"), always_inline)) static inline __m512i
perfect_level16(const int32_t *words, const float *thresholds, int level,
                const float *const *columns, const float *xt, int k,
                __m512i idx, int cmp_le, int has_missing) {
  enum { W = 16 };
  const __m512i feature_bits = _mm512_set1_epi32(CUVIL_PERFECT_FEATURE);
  const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                          11, 12, 13, 14, 15);
  const int loaded = level < CUVIL_PERFECT_LOADED_LEVELS;
  const int permuted = level <= 7;
  __m512 th = permuted ? perfect_lookup16(thresholds, level, idx)
                       : _mm512_i32gather_ps(idx, thresholds, 4);
  __m512i word = _mm512_setzero_si512();
  if (!loaded || has_missing)
    word = permuted ? _mm512_castps_si512(
                          perfect_lookup16((const float *)words, level, idx))
                    : _mm512_i32gather_epi32(idx, words, 4);
  __m512 v;
  if (loaded)
    v = perfect_select16(columns, level, k * W, idx);
  else
    v = _mm512_i32gather_ps(
        _mm512_add_epi32(_mm512_slli_epi32(_mm512_and_si512(word, feature_bits),
                                           CUVIL_PERFECT_TBLOCK_LOG2),
                         _mm512_add_epi32(lanes, _mm512_set1_epi32(k * W))),
        xt, 4);
  return has_missing ? perfect_step16(idx, word, th, v, cmp_le)
                     : perfect_dense_step16(idx, th, v, cmp_le);
}

/* Adds each lane of register k's leaf (of 2^depth) to `target`. */
__attribute__((target("avx512f"), always_inline)) static inline void
perfect_leaves16(const float *leaves, int depth, int k, __m512i idx,
                 float *target) {
  enum { W = 16 };
  __m512 value = depth <= 8 ? perfect_lookup16(leaves, depth, idx)
                            : _mm512_i32gather_ps(idx, leaves, 4);
  _mm512_storeu_ps(target + k * W,
                   _mm512_add_ps(_mm512_loadu_ps(target + k * W), value));
}

/* Adds each lane of register k's leaf values to `target`'s rows, target v
 * at `target` + v * CUVIL_PERFECT_TBLOCK, by gathers: float64 leaves (two
 * registers of 8 per 16 rows) and leaves of several values. */
__attribute__((target("avx512f"), always_inline)) static inline void
perfect_leaves16_gathered(const cuvil_perfect_forest *f, const void *leaves,
                          int k, __m512i idx, void *target) {
  enum { W = 16, B = CUVIL_PERFECT_TBLOCK };
  const int64_t values = f->values;
  for (int64_t v = 0; v < values; ++v) {
    __m512i at = _mm512_add_epi32(
        _mm512_mullo_epi32(idx, _mm512_set1_epi32((int32_t)values)),
        _mm512_set1_epi32((int32_t)v));
    if (f->acc_f64) {
      const double *l = (const double *)leaves;
      double *o = (double *)target + v * B + k * W;
      __m512d lo = _mm512_i32gather_pd(_mm512_castsi512_si256(at), l, 8);
      __m512d hi = _mm512_i32gather_pd(_mm512_extracti64x4_epi64(at, 1), l, 8);
      _mm512_storeu_pd(o, _mm512_add_pd(_mm512_loadu_pd(o), lo));
      _mm512_storeu_pd(o + 8, _mm512_add_pd(_mm512_loadu_pd(o + 8), hi));
    } else {
      float *o = (float *)target + v * B + k * W;
      __m512 value = _mm512_i32gather_ps(at, (const float *)leaves, 4);
      _mm512_storeu_ps(o, _mm512_add_ps(_mm512_loadu_ps(o), value));
    }
  }
}

/* A tree's walk of the block and its leaves added to `target` (float, or
 * double if the forest's leaves are). */
__attribute__((target("avx512f"), always_inline)) static inline void
perfect_tree16(const cuvil_perfect_forest *f, int64_t t, const float *xt,
               void *target, int live, int has_missing, int cmp_le) {
  enum { K = 8 };
  const int64_t inner = ((int64_t)1 << f->depth) - 1;
  const int32_t *nodes = f->nodes + t * inner;
  const float *thresholds = f->thresholds + t * inner;
  const float *columns[1 << CUVIL_PERFECT_LOADED_LEVELS];
  __m512i idx[K];
  for (int k = 0; k < K; ++k)
    idx[k] = _mm512_setzero_si512();
  /* Each level a call with its number constant, so that the trees of
   * blends and permutes unroll into registers. */
  for (int level = 0; level < f->depth; ++level) {
    const int32_t *w = nodes + ((int64_t)1 << level) - 1;
    const float *th = thresholds + ((int64_t)1 << level) - 1;
    switch (level) {
#define PERFECT_STEP16(k)                                                      \
  idx[k] =                                                                     \
      perfect_level16(w, th, n, columns, xt, k, idx[k], cmp_le, has_missing);
#define PERFECT_LEVEL16(level_n)                                               \
  case level_n:                                                                \
    if (level_n >= CUVIL_PERFECT_MAX_DEPTH)                                    \
      break; /* no such level in this model's forests */                       \
    {                                                                          \
      const int n = level_n;                                                   \
      perfect_level_columns(w, n, CUVIL_PERFECT_LOADED_LEVELS, xt,             \
                            CUVIL_PERFECT_TBLOCK, columns);                    \
      PERFECT_EACH_LIVE(live, PERFECT_STEP16);                                 \
      break;                                                                   \
    }
      /* clang-format off */
      PERFECT_LEVEL16(0) PERFECT_LEVEL16(1) PERFECT_LEVEL16(2)
      PERFECT_LEVEL16(3) PERFECT_LEVEL16(4) PERFECT_LEVEL16(5)
      PERFECT_LEVEL16(6) PERFECT_LEVEL16(7)
    default:
      PERFECT_LEVEL16(8)
      /* clang-format on */
#undef PERFECT_LEVEL16
#undef PERFECT_STEP16
    }
  }
  if (f->acc_f64 || f->values != 1) {
    size_t size = f->acc_f64 ? sizeof(double) : sizeof(float);
    const void *leaves =
        (const char *)f->leaves + t * (inner + 1) * f->values * size;
#define PERFECT_GATHERED16(k)                                                  \
  perfect_leaves16_gathered(f, leaves, k, idx[k], target);
    PERFECT_EACH_LIVE(live, PERFECT_GATHERED16);
#undef PERFECT_GATHERED16
    return;
  }
  const float *leaves = (const float *)f->leaves + t * (inner + 1);
  switch (f->depth) {
#define PERFECT_ADD16(k)                                                       \
  perfect_leaves16(leaves, n, k, idx[k], (float *)target);
#define PERFECT_LEAVES16(depth_n)                                              \
  case depth_n:                                                                \
    if (depth_n > CUVIL_PERFECT_MAX_DEPTH)                                     \
      break;                                                                   \
    {                                                                          \
      const int n = depth_n;                                                   \
      PERFECT_EACH_LIVE(live, PERFECT_ADD16);                                  \
      break;                                                                   \
    }
    /* clang-format off */
    PERFECT_LEAVES16(1) PERFECT_LEAVES16(2) PERFECT_LEAVES16(3)
    PERFECT_LEAVES16(4) PERFECT_LEAVES16(5) PERFECT_LEAVES16(6)
    PERFECT_LEAVES16(7) PERFECT_LEAVES16(8)
  default:
    PERFECT_LEAVES16(9)
    /* clang-format on */
#undef PERFECT_LEAVES16
#undef PERFECT_ADD16
  }
}

/* Transposes 16 registers of 16 floats: four rounds of exchanges, round h
 * swapping bit h of the row and of the column where they differ. */
__attribute__((target("avx512f"), always_inline)) static inline void
perfect_transpose16(__m512 r[16]) {
  const __m512i e = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                      12, 13, 14, 15);
  for (int h = 8; h >= 1; h /= 2) {
    __mmask16 high = _mm512_test_epi32_mask(e, _mm512_set1_epi32(h));
    /* Row i takes row i + h's low half of each pair of blocks, row i + h
     * row i's high half (indices 16 and up name the second register). */
    __m512i lo = _mm512_mask_add_epi32(e, high, e, _mm512_set1_epi32(16 - h));
    __m512i hi = _mm512_mask_blend_epi32(
        high, _mm512_add_epi32(e, _mm512_set1_epi32(h)),
        _mm512_add_epi32(e, _mm512_set1_epi32(16)));
    for (int i = 0; i < 16; ++i)
      if (!(i & h)) {
        __m512 a = r[i], b = r[i + h];
        r[i] = _mm512_permutex2var_ps(a, lo, b);
        r[i + h] = _mm512_permutex2var_ps(a, hi, b);
      }
  }
}

/* Copies `rows` (up to a block) rows of `x` feature-major into `xt`, zeros
 * after them, the value `m` (unless NaN) as NaN, and says whether any
 * value is missing. */
__attribute__((target("avx512f"))) static int
perfect_transpose_block(const float *x, int64_t rows, int64_t features,
                        float m, float *xt) {
  enum { W = 16, B = CUVIL_PERFECT_TBLOCK };
  __mmask16 missing = 0;
  for (int64_t r0 = 0; r0 < B; r0 += W)
    for (int64_t c0 = 0; c0 < features; c0 += W) {
      int64_t width = features - c0 < W ? features - c0 : W;
      __mmask16 columns = (__mmask16)((1u << width) - 1);
      __m512 r[W];
      for (int i = 0; i < W; ++i) {
        r[i] = r0 + i < rows ? _mm512_maskz_loadu_ps(
                                   columns, x + (r0 + i) * features + c0)
                             : _mm512_setzero_ps();
        if (m == m)
          r[i] = _mm512_mask_mov_ps(
              r[i], _mm512_cmp_ps_mask(r[i], _mm512_set1_ps(m), _CMP_EQ_OQ),
              _mm512_set1_ps(NAN));
        missing |= _mm512_cmp_ps_mask(r[i], r[i], _CMP_UNORD_Q);
      }
      perfect_transpose16(r);
      for (int i = 0; i < width; ++i)
        _mm512_storeu_ps(xt + (c0 + i) * B + r0, r[i]);
    }
  return missing != 0;
}

/* Eight registers of 16 rows over a feature-major copy of a block of 128
 * rows: the first levels' features by loads and blends, the next by
 * gathers from the copy; the nodes of levels of up to 128 and the leaves
 * of up to 256 by permutes of registers; a block without a missing value
 * (the usual case) takes the one-comparison step. Each combination of the
 * comparison and the step is a copy of its own, without tests inside. */
__attribute__((target("avx512f"))) static void
perfect_transposed_avx512(const cuvil_perfect_forest *f, int64_t rows,
                          const float *x, void *out) {
  enum { W = 16, B = CUVIL_PERFECT_TBLOCK };
  const int le = perfect_le(f);
  const size_t size = f->acc_f64 ? sizeof(double) : sizeof(float);
  float xt[f->features * B]; /* sized by the row: a few KiB of stack */
  /* Each target's sums of the block, in the leaves' type. */
  double acc[(f->targets * B * size + 7) / 8];
  for (int64_t r0 = 0; r0 < rows; r0 += B) {
    int64_t block_rows = rows - r0 < B ? rows - r0 : B;
    /* The registers that hold rows of this block. */
    const int live = (int)((block_rows + W - 1) / W);
    int missing = perfect_transpose_block(x + r0 * f->features, block_rows,
                                          f->features, perfect_missing_f32(f),
                                          xt);
    for (int64_t t = 0; t < f->targets; ++t)
      for (int64_t r = 0; r < B; ++r)
        memcpy((char *)acc + (t * B + r) * size, (const char *)f->base + t * size,
               size);
    /* The next block's rows, a few lines per tree, come from memory while
     * this block is walked. */
    int64_t next_rows = rows - r0 - B < B ? rows - r0 - B : B;
    const char *next = (const char *)(x + (r0 + B) * f->features);
    int64_t next_lines =
        next_rows > 0 ? (next_rows * f->features * 4 + 63) / 64 : 0;
    int64_t per_tree = (next_lines + f->trees - 1) / f->trees;
    for (int64_t t = 0; t < f->trees; ++t) {
      for (int64_t l = t * per_tree; l < (t + 1) * per_tree && l < next_lines;
           ++l)
        _mm_prefetch(next + 64 * l, _MM_HINT_T0);
      void *target = (char *)acc + (int64_t)f->targets_of[t] * B * size;
      if (missing)
        le ? perfect_tree16(f, t, xt, target, live, 1, 1)
           : perfect_tree16(f, t, xt, target, live, 1, 0);
      else
        le ? perfect_tree16(f, t, xt, target, live, 0, 1)
           : perfect_tree16(f, t, xt, target, live, 0, 0);
    }
    for (int64_t r = 0; r < block_rows; ++r)
      for (int64_t t = 0; t < f->targets; ++t)
        memcpy((char *)out + ((r0 + r) * f->targets + t) * size,
               (const char *)acc + (t * B + r) * size, size);
  }
}

/* Eight registers of 16 rows: a block of 128 (eight gathers in flight hide
 * their latency). Fewer than 8 rows go by trees; rows of up to 128
 * features through a transposed block; wider rows of float64 leaves or
 * leaves of several values one at a time. */
__attribute__((target("avx512f"))) void
cuvil_perfect_walk_avx512(const cuvil_perfect_forest *f, int64_t rows,
                          const float *x, void *out_sums) {
  enum { K = 8, W = 16 };
  if (!perfect_compiled_for(f)) { /* compiled for the other comparison */
    cuvil_perfect_walk_reference(f, rows, x, out_sums);
    return;
  }
  if (rows < 8 &&
      f->trees * (((int64_t)1 << f->depth)) < INT32_MAX - 16 * 1024) {
    perfect_by_trees_avx512(f, rows, x, out_sums);
    return;
  }
  if (f->features <= CUVIL_PERFECT_TFEATURES) {
    perfect_transposed_avx512(f, rows, x, out_sums);
    return;
  }
  if (f->acc_f64 || f->values != 1 || f->has_missing_value) {
    cuvil_perfect_walk_reference(f, rows, x, out_sums);
    return;
  }
  float *out = (float *)out_sums;
  const float *base = (const float *)f->base;
  const int64_t inner = ((int64_t)1 << f->depth) - 1;
  const int cmp_le = perfect_le(f);
  const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                          11, 12, 13, 14, 15);
  const __m512i feature_bits = _mm512_set1_epi32(CUVIL_PERFECT_FEATURE);
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
      const int32_t *nodes = f->nodes + t * inner;
      const float *thresholds = f->thresholds + t * inner;
      __m512i idx[K];
      for (int k = 0; k < K; ++k)
        idx[k] = _mm512_setzero_si512();
      for (int64_t level = 0; level < f->depth; ++level) {
        int64_t width = (int64_t)1 << level;
        for (int k = 0; k < K; ++k) {
          __m512i word = perfect_level_words16(nodes + width - 1, width, idx[k]);
          __m512 th = perfect_level_floats16(thresholds + width - 1, width,
                                             idx[k]);
          __m512 v = _mm512_mask_i32gather_ps(
              _mm512_setzero_ps(), valid[k],
              _mm512_add_epi32(xoff[k], _mm512_and_si512(word, feature_bits)),
              xb, 4);
          idx[k] = perfect_step16(idx[k], word, th, v, cmp_le);
        }
      }
      const float *leaves = (const float *)f->leaves + t * (inner + 1);
      float *target = acc + (int64_t)f->targets_of[t] * K * W;
      for (int k = 0; k < K; ++k) {
        __m512 value = perfect_level_floats16(leaves, inner + 1, idx[k]);
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
#endif /* CUVIL_ENABLE_SIMD_KERNELS */
