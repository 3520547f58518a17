/*===- perfect.c - decision forests laid out as perfect trees ------------===*
 *
 * Every row takes `depth` steps per tree: at each level, the node's word
 * (feature and missing direction) and threshold, the row's feature, one
 * comparison, and the index doubles plus the direction. The vector walks
 * fetch a level of up to 16 (or 32) nodes by a permute of registers loaded
 * once per tree and level rather than by a gather, so shallow levels cost
 * one gather (the rows' features) per register of rows. Sums run tree by
 * tree in order, as in trees.c, so the bits are the same.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/x86/runtime/trees/trees.h"

#include <string.h>

enum { CUVIL_PERFECT_FEATURE = 0x7fffffff };

static int perfect_goes_left(const cuvil_perfect_forest *f, int32_t word,
                             float threshold, float v) {
  if (v != v)
    return word < 0;
  return f->comparison == CUVIL_TREE_LE ? v <= threshold : v < threshold;
}

void cuvil_perfect_walk_reference(const cuvil_perfect_forest *f, int64_t rows,
                                  const float *x, float *out) {
  const int64_t inner = ((int64_t)1 << f->depth) - 1;
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = x + r * f->features;
    float *o = out + r * f->targets;
    memcpy(o, f->base, (size_t)f->targets * sizeof(float));
    for (int64_t t = 0; t < f->trees; ++t) {
      const int32_t *nodes = f->nodes + t * inner;
      const float *thresholds = f->thresholds + t * inner;
      int64_t i = 0;
      for (int64_t level = 0; level < f->depth; ++level) {
        int64_t node = ((int64_t)1 << level) - 1 + i;
        int32_t word = nodes[node];
        float v = row[word & CUVIL_PERFECT_FEATURE];
        i = 2 * i + (perfect_goes_left(f, word, thresholds[node], v) ? 0 : 1);
      }
      o[f->targets_of[t]] += f->leaves[t * (inner + 1) + i];
    }
  }
}

typedef struct {
  cuvil_perfect_walk_fn walk;
  const cuvil_perfect_forest *forest;
  int64_t rows;
  const float *x;
  float *out;
} perfect_task;

static void perfect_predict_blocks(void *arg, int64_t begin, int64_t end) {
  const perfect_task *task = (const perfect_task *)arg;
  const cuvil_perfect_forest *f = task->forest;
  int64_t first = begin * CUVIL_FOREST_BLOCK;
  int64_t last = end * CUVIL_FOREST_BLOCK;
  if (last > task->rows)
    last = task->rows;
  const float *x = task->x + first * f->features;
  float *out = task->out + first * f->targets;
  task->walk(f, last - first, x, out);
  for (int64_t r = 0; r < last - first; ++r)
    cuvil_forest_transform_f32(f->post_transform, out + r * f->targets,
                               f->targets);
}

void cuvil_perfect_forest_predict(cuvil_pool *pool, cuvil_perfect_walk_fn walk,
                                  const cuvil_perfect_forest *forest,
                                  int64_t rows, const float *x, float *out) {
  perfect_task task = {walk, forest, rows, x, out};
  int64_t blocks = (rows + CUVIL_FOREST_BLOCK - 1) / CUVIL_FOREST_BLOCK;
  if (blocks == 1)
    perfect_predict_blocks(&task, 0, 1);
  else
    cuvil_parallel_for(pool, blocks, perfect_predict_blocks, &task);
}

#if defined(CUVIL_ENABLE_SIMD_KERNELS)
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

/* A few rows: 16 trees per register (one lane per tree), four registers
 * at once, their leaves then added in tree order. */
__attribute__((target("avx512f"))) static void
perfect_by_trees_avx512(const cuvil_perfect_forest *f, int64_t rows,
                        const float *x, float *out) {
  enum { K = 4, W = 16 };
  const int64_t inner = ((int64_t)1 << f->depth) - 1;
  const int cmp_le = f->comparison == CUVIL_TREE_LE;
  const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                          11, 12, 13, 14, 15);
  const __m512i feature_bits = _mm512_set1_epi32(CUVIL_PERFECT_FEATURE);
  float values[K * W];
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = x + r * f->features;
    float *o = out + r * f->targets;
    memcpy(o, f->base, (size_t)f->targets * sizeof(float));
    for (int64_t t0 = 0; t0 < f->trees; t0 += K * W) {
      __m512i tree[K], idx[K];
      __mmask16 m[K];
      for (int k = 0; k < K; ++k) {
        int64_t n = f->trees - t0 - k * W;
        m[k] = n >= W ? (__mmask16)0xFFFF
               : n <= 0 ? (__mmask16)0
                        : (__mmask16)((1u << n) - 1);
        tree[k] = _mm512_add_epi32(lanes,
                                   _mm512_set1_epi32((int32_t)(t0 + k * W)));
        idx[k] = _mm512_setzero_si512();
      }
      for (int64_t level = 0; level < f->depth; ++level) {
        __m512i level_first = _mm512_set1_epi32((1 << level) - 1);
        for (int k = 0; k < K; ++k) {
          __m512i node = _mm512_add_epi32(
              _mm512_add_epi32(
                  _mm512_mullo_epi32(tree[k], _mm512_set1_epi32((int32_t)inner)),
                  level_first),
              idx[k]);
          __m512i word = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(),
                                                     m[k], node, f->nodes, 4);
          __m512 th = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m[k], node,
                                               f->thresholds, 4);
          __m512 v = _mm512_mask_i32gather_ps(
              _mm512_setzero_ps(), m[k], _mm512_and_si512(word, feature_bits),
              row, 4);
          idx[k] = perfect_step16(idx[k], word, th, v, cmp_le);
        }
      }
      for (int k = 0; k < K; ++k) {
        __m512i leaf = _mm512_add_epi32(
            _mm512_mullo_epi32(tree[k], _mm512_set1_epi32((int32_t)(inner + 1))),
            idx[k]);
        _mm512_storeu_ps(values + k * W,
                         _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m[k],
                                                  leaf, f->leaves, 4));
      }
      int64_t n = f->trees - t0 < K * W ? f->trees - t0 : K * W;
      for (int64_t j = 0; j < n; ++j)
        o[f->targets_of[t0 + j]] += values[j];
    }
  }
}

/* Rows per block of the transposed walk, and the widest rows it takes (the
 * block, feature-major, is 64 KiB on the stack). */
enum {
  CUVIL_PERFECT_TBLOCK_LOG2 = 7,
  CUVIL_PERFECT_TBLOCK = 1 << CUVIL_PERFECT_TBLOCK_LOG2,
  CUVIL_PERFECT_TFEATURES = 128
};

/* The first levels with few nodes read the rows' features by loads rather
 * than gathers (a gather of 16 lanes costs as much as a dozen loads). */
enum { CUVIL_PERFECT_LOADED_LEVELS = 4 };

/* A level's nodes (up to 32) in two registers, for permutes. */
typedef struct {
  __m512i words_lo, words_hi;
  __m512 thresholds_lo, thresholds_hi;
} perfect_level_regs;

__attribute__((target("avx512f"))) static inline perfect_level_regs
perfect_load_level(const int32_t *words, const float *thresholds,
                   int64_t width) {
  perfect_level_regs l;
  __mmask16 lo = (__mmask16)(width >= 16 ? 0xFFFF : (1u << width) - 1);
  __mmask16 hi = (__mmask16)(width >= 32 ? 0xFFFF : 0);
  l.words_lo = _mm512_maskz_loadu_epi32(lo, words);
  l.words_hi = _mm512_maskz_loadu_epi32(hi, words + 16);
  l.thresholds_lo = _mm512_maskz_loadu_ps(lo, thresholds);
  l.thresholds_hi = _mm512_maskz_loadu_ps(hi, thresholds + 16);
  return l;
}

/* Eight registers of 16 rows over a feature-major copy of the block: the
 * first levels' features by one load per node and a blend, the next by
 * gathers from the copy; the nodes of levels of up to 32 by permutes of
 * registers loaded once per level, the leaves of a tree of up to 6
 * levels likewise; one target's sums in registers. */
__attribute__((target("avx512f"))) static void
perfect_transposed_avx512(const cuvil_perfect_forest *f, int64_t rows,
                          const float *x, float *out) {
  enum { K = 8, W = 16, B = CUVIL_PERFECT_TBLOCK };
  const int64_t inner = ((int64_t)1 << f->depth) - 1;
  const int cmp_le = f->comparison == CUVIL_TREE_LE;
  const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                          11, 12, 13, 14, 15);
  const __m512i feature_bits = _mm512_set1_epi32(CUVIL_PERFECT_FEATURE);
  float xt[f->features * B]; /* sized by the row: a few KiB of stack */
  float acc[f->targets * B];
  for (int64_t r0 = 0; r0 < rows; r0 += B) {
    int64_t block_rows = rows - r0 < B ? rows - r0 : B;
    /* The registers that hold rows of this block. */
    const int live = (int)((block_rows + W - 1) / W);
    for (int64_t r = 0; r < B; ++r)
      for (int64_t c = 0; c < f->features; ++c)
        xt[c * B + r] = r < block_rows ? x[(r0 + r) * f->features + c] : 0.0f;
    for (int64_t t = 0; t < f->targets; ++t)
      for (int k = 0; k < K; ++k)
        _mm512_storeu_ps(acc + t * B + k * W, _mm512_set1_ps(f->base[t]));
    for (int64_t t = 0; t < f->trees; ++t) {
      const int32_t *nodes = f->nodes + t * inner;
      const float *thresholds = f->thresholds + t * inner;
      __m512i idx[K];
      for (int k = 0; k < K; ++k)
        idx[k] = _mm512_setzero_si512();
      for (int64_t level = 0; level < f->depth; ++level) {
        int64_t width = (int64_t)1 << level;
        const int32_t *level_nodes = nodes + width - 1;
        const float *level_thresholds = thresholds + width - 1;
        perfect_level_regs l = perfect_load_level(
            level_nodes, level_thresholds, width <= 32 ? width : 0);
        const float *columns[1 << CUVIL_PERFECT_LOADED_LEVELS];
        if (level < CUVIL_PERFECT_LOADED_LEVELS)
          for (int64_t j = 0; j < width; ++j)
            columns[j] = xt + (level_nodes[j] & CUVIL_PERFECT_FEATURE) * B;
        for (int k = 0; k < live; ++k) {
          __m512i word;
          __m512 th;
          if (width <= 32) {
            word = _mm512_permutex2var_epi32(l.words_lo, idx[k], l.words_hi);
            th = _mm512_permutex2var_ps(l.thresholds_lo, idx[k],
                                        l.thresholds_hi);
          } else {
            word = _mm512_i32gather_epi32(idx[k], level_nodes, 4);
            th = _mm512_i32gather_ps(idx[k], level_thresholds, 4);
          }
          __m512 v;
          if (level < CUVIL_PERFECT_LOADED_LEVELS) {
            v = _mm512_loadu_ps(columns[0] + k * W);
            for (int64_t j = 1; j < width; ++j)
              v = _mm512_mask_mov_ps(
                  v, _mm512_cmpeq_epi32_mask(idx[k], _mm512_set1_epi32((int32_t)j)),
                  _mm512_loadu_ps(columns[j] + k * W));
          } else {
            v = _mm512_i32gather_ps(
                _mm512_add_epi32(
                    _mm512_slli_epi32(_mm512_and_si512(word, feature_bits),
                                      CUVIL_PERFECT_TBLOCK_LOG2),
                    _mm512_add_epi32(lanes, _mm512_set1_epi32(k * W))),
                xt, 4);
          }
          idx[k] = perfect_step16(idx[k], word, th, v, cmp_le);
        }
      }
      const float *leaves = f->leaves + t * (inner + 1);
      float *target = acc + (int64_t)f->targets_of[t] * B;
      int64_t width = inner + 1 <= 64 ? inner + 1 : 0;
      perfect_level_regs l0 = perfect_load_level(
          (const int32_t *)leaves, leaves, width < 32 ? width : 32);
      perfect_level_regs l1 = perfect_load_level(
          (const int32_t *)leaves + 32, leaves + 32, width == 64 ? 32 : 0);
      for (int k = 0; k < live; ++k) {
        __m512 value;
        if (inner + 1 <= 64) /* two or four registers, and a blend */
          value = _mm512_mask_mov_ps(
              _mm512_permutex2var_ps(l0.thresholds_lo, idx[k], l0.thresholds_hi),
              _mm512_test_epi32_mask(idx[k], _mm512_set1_epi32(32)),
              _mm512_permutex2var_ps(l1.thresholds_lo, idx[k], l1.thresholds_hi));
        else
          value = _mm512_i32gather_ps(idx[k], leaves, 4);
        _mm512_storeu_ps(target + k * W,
                         _mm512_add_ps(_mm512_loadu_ps(target + k * W), value));
      }
    }
    for (int64_t r = 0; r < block_rows; ++r)
      for (int64_t t = 0; t < f->targets; ++t)
        out[(r0 + r) * f->targets + t] = acc[t * B + r];
  }
}

/* Eight registers of 16 rows: a block of 128 (eight gathers in flight hide
 * their latency). Fewer than 8 rows go by trees; rows of up to 128
 * features through a transposed block. */
__attribute__((target("avx512f"))) void
cuvil_perfect_walk_avx512(const cuvil_perfect_forest *f, int64_t rows,
                          const float *x, float *out) {
  enum { K = 8, W = 16 };
  if (rows < 8 &&
      f->trees * (((int64_t)1 << f->depth)) < INT32_MAX - 16 * 1024) {
    perfect_by_trees_avx512(f, rows, x, out);
    return;
  }
  if (f->features <= CUVIL_PERFECT_TFEATURES) {
    perfect_transposed_avx512(f, rows, x, out);
    return;
  }
  const int64_t inner = ((int64_t)1 << f->depth) - 1;
  const int cmp_le = f->comparison == CUVIL_TREE_LE;
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
        _mm512_storeu_ps(acc + (t * K + k) * W, _mm512_set1_ps(f->base[t]));
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
      const float *leaves = f->leaves + t * (inner + 1);
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

/* A few rows: 8 trees per register (one lane per tree), four registers at
 * once, their leaves then added in tree order. */
__attribute__((target("avx2"))) static void
perfect_by_trees_avx2(const cuvil_perfect_forest *f, int64_t rows,
                      const float *x, float *out) {
  enum { K = 4, W = 8 };
  const int64_t inner = ((int64_t)1 << f->depth) - 1;
  const int cmp_le = f->comparison == CUVIL_TREE_LE;
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i feature_bits = _mm256_set1_epi32(CUVIL_PERFECT_FEATURE);
  float values[K * W];
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = x + r * f->features;
    float *o = out + r * f->targets;
    memcpy(o, f->base, (size_t)f->targets * sizeof(float));
    for (int64_t t0 = 0; t0 < f->trees; t0 += K * W) {
      __m256i tree[K], idx[K], m[K];
      for (int k = 0; k < K; ++k) {
        tree[k] = _mm256_add_epi32(lanes,
                                   _mm256_set1_epi32((int32_t)(t0 + k * W)));
        m[k] = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)f->trees),
                                  tree[k]);
        idx[k] = _mm256_setzero_si256();
      }
      for (int64_t level = 0; level < f->depth; ++level) {
        __m256i level_first = _mm256_set1_epi32((1 << level) - 1);
        for (int k = 0; k < K; ++k) {
          __m256i node = _mm256_add_epi32(
              _mm256_add_epi32(
                  _mm256_mullo_epi32(tree[k], _mm256_set1_epi32((int32_t)inner)),
                  level_first),
              idx[k]);
          __m256i word = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(),
                                                     f->nodes, node, m[k], 4);
          __m256 th = _mm256_mask_i32gather_ps(_mm256_setzero_ps(),
                                               f->thresholds, node,
                                               _mm256_castsi256_ps(m[k]), 4);
          __m256 v = _mm256_mask_i32gather_ps(
              _mm256_setzero_ps(), row, _mm256_and_si256(word, feature_bits),
              _mm256_castsi256_ps(m[k]), 4);
          idx[k] = perfect_step8(idx[k], word, th, v, cmp_le);
        }
      }
      for (int k = 0; k < K; ++k) {
        __m256i leaf = _mm256_add_epi32(
            _mm256_mullo_epi32(tree[k], _mm256_set1_epi32((int32_t)(inner + 1))),
            idx[k]);
        _mm256_storeu_ps(values + k * W,
                         _mm256_mask_i32gather_ps(_mm256_setzero_ps(), f->leaves,
                                                  leaf, _mm256_castsi256_ps(m[k]),
                                                  4));
      }
      int64_t n = f->trees - t0 < K * W ? f->trees - t0 : K * W;
      for (int64_t j = 0; j < n; ++j)
        o[f->targets_of[t0 + j]] += values[j];
    }
  }
}

/* Four registers of 8 rows: a block of 32. Fewer than 8 rows go by
 * trees. */
__attribute__((target("avx2"))) void
cuvil_perfect_walk_avx2(const cuvil_perfect_forest *f, int64_t rows,
                        const float *x, float *out) {
  enum { K = 4, W = 8 };
  if (rows < 8 &&
      f->trees * (((int64_t)1 << f->depth)) < INT32_MAX - 32 * 1024) {
    perfect_by_trees_avx2(f, rows, x, out);
    return;
  }
  const int64_t inner = ((int64_t)1 << f->depth) - 1;
  const int cmp_le = f->comparison == CUVIL_TREE_LE;
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
        _mm256_storeu_ps(acc + (t * K + k) * W, _mm256_set1_ps(f->base[t]));
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
      const float *leaves = f->leaves + t * (inner + 1);
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
