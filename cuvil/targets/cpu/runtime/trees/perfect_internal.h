/*===- perfect_internal.h - what the perfect walks share ----------------===*
 *
 * The perfect walks (perfect.c, perfect_avx512.c, perfect_avx2.c) over one
 * cuvil_perfect_forest (trees.h): a node word's feature bits, the block
 * sizes, and the scalar steps every walk ends with (a row's start from
 * the base values, its copy with the missing value as NaN, the leaves
 * added in tree order). Private to the trees family.
 *
 *===----------------------------------------------------------------------===*/

#ifndef CUVIL_RUNTIME_TREES_PERFECT_INTERNAL_H
#define CUVIL_RUNTIME_TREES_PERFECT_INTERNAL_H

#include "cuvil/targets/cpu/runtime/tiles/tiles.h"
#include "cuvil/targets/cpu/runtime/trees/trees.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

enum { CUVIL_PERFECT_FEATURE = 0x7fffffff };

/* Rows per block of the transposed walk, and the widest rows it takes (the
 * block, feature-major, is 64 KiB on the stack). */
enum {
  CUVIL_PERFECT_TBLOCK_LOG2 = 7,
  CUVIL_PERFECT_TBLOCK = 1 << CUVIL_PERFECT_TBLOCK_LOG2,
  CUVIL_PERFECT_TFEATURES = 128
};

/* Whether the vector walks compare with <= (else <). A model whose perfect
 * forests all compare one way (CUVIL_PERFECT_COMPARISON, which its code
 * defines) compiles each walk for that comparison only: the other copy is
 * seconds of clang's time. perfect_compiled_for says whether a forest is
 * one the walks were compiled for (that comparison, no deeper than
 * CUVIL_PERFECT_MAX_DEPTH); one that is not takes the reference walk. */
static inline int perfect_le(const cuvil_perfect_forest *f) {
#ifdef CUVIL_PERFECT_COMPARISON
  (void)f;
  return CUVIL_PERFECT_COMPARISON == CUVIL_TREE_LE;
#else
  return f->comparison == CUVIL_TREE_LE;
#endif
}

/* The deepest perfect forest of the model (CUVIL_PERFECT_MAX_DEPTH, which
 * its code defines too): the walks' code for deeper levels is left out,
 * halving clang's time for XGBoost's default depth of 6. */
#ifndef CUVIL_PERFECT_MAX_DEPTH
#define CUVIL_PERFECT_MAX_DEPTH 64
#endif

static inline int perfect_compiled_for(const cuvil_perfect_forest *f) {
#ifdef CUVIL_PERFECT_COMPARISON
  if (f->comparison != CUVIL_PERFECT_COMPARISON)
    return 0;
#endif
  return f->depth <= CUVIL_PERFECT_MAX_DEPTH;
}

/* Runs STEP(k) for each of the block's `live` registers of rows, written
 * out rather than looped: indexed only by constants, the registers' idx
 * stay in registers through a tree's levels. (Kept on the stack, each
 * gather can wait behind the previous register's store: up to a third
 * slower, by how the stack falls.) */
#define PERFECT_EACH_LIVE(live, STEP)                                          \
  do {                                                                         \
    STEP(0)                                                                    \
    if ((live) > 1) {                                                          \
      STEP(1)                                                                  \
    }                                                                          \
    if ((live) > 2) {                                                          \
      STEP(2)                                                                  \
    }                                                                          \
    if ((live) > 3) {                                                          \
      STEP(3)                                                                  \
    }                                                                          \
    if ((live) > 4) {                                                          \
      STEP(4)                                                                  \
    }                                                                          \
    if ((live) > 5) {                                                          \
      STEP(5)                                                                  \
    }                                                                          \
    if ((live) > 6) {                                                          \
      STEP(6)                                                                  \
    }                                                                          \
    if ((live) > 7) {                                                          \
      STEP(7)                                                                  \
    }                                                                          \
  } while (0)

/* The columns of a transposed block (`block` rows per feature) that a
 * level of the first `loaded` levels reads by loads: node j's feature's. */
static inline void perfect_level_columns(const int32_t *words, int level,
                                         int loaded, const float *xt,
                                         int64_t block, const float **columns) {
  if (level < loaded)
    for (int j = 0; j < 1 << level; ++j)
      columns[j] = xt + (int64_t)(words[j] & CUVIL_PERFECT_FEATURE) * block;
}

/* Row `r` of `out` (the leaves' type), set to the base values. */
static inline void *perfect_start_row(const cuvil_perfect_forest *f,
                                      void *out, int64_t r) {
  size_t size = f->acc_f64 ? sizeof(double) : sizeof(float);
  void *o = (char *)out + r * f->targets * size;
  memcpy(o, f->base, (size_t)f->targets * size);
  return o;
}

/* The missing value as the float32 rows hold it, or NaN if none (or if no
 * float32 equals it). */
static inline float perfect_missing_f32(const cuvil_perfect_forest *f) {
  float m = (float)f->missing_value;
  return f->has_missing_value && (double)m == f->missing_value ? m : NAN;
}

/* `row` with the missing value as NaN, in `copy` ([features]), or `row`
 * itself when there is no missing value to replace. */
static inline const float *perfect_clean_row(const cuvil_perfect_forest *f,
                                             const float *row, float *copy) {
  float m = perfect_missing_f32(f);
  if (m != m)
    return row;
  for (int64_t c = 0; c < f->features; ++c)
    copy[c] = row[c] == m ? NAN : row[c];
  return copy;
}

/* Adds tree t's leaf `leaf` to row `o`. */
static inline void perfect_add_leaf(const cuvil_perfect_forest *f, void *o,
                                    int64_t t, int64_t leaf) {
  const int64_t values = f->values;
  if (f->acc_f64) {
    double *target = (double *)o + f->targets_of[t];
    const double *value = (const double *)f->leaves + leaf * values;
    for (int64_t v = 0; v < values; ++v)
      target[v] += value[v];
  } else {
    float *target = (float *)o + f->targets_of[t];
    const float *value = (const float *)f->leaves + leaf * values;
    for (int64_t v = 0; v < values; ++v)
      target[v] += value[v];
  }
}

/* Whether the walks may keep a row's sums in one float32 register: one
 * target, one value per leaf, float32 leaves (a binary classifier's or a
 * regression's margin). Each tree's leaf then comes by a gather. */
static inline int perfect_one_sum(const cuvil_perfect_forest *f) {
  return !f->acc_f64 && f->values == 1 && f->targets == 1;
}

/* `sum` plus values[0..n), added in order (the trees' order). */
static inline float perfect_add_in_order(float sum, const float *values,
                                         int64_t n) {
  for (int64_t j = 0; j < n; ++j)
    sum += values[j];
  return sum;
}

/* Whether `row` (missing value already NaN) has no NaN: its steps are then
 * one comparison each. */
static inline int perfect_row_dense(const float *row, int64_t features) {
  int dense = 1;
  for (int64_t c = 0; c < features; ++c)
    dense &= row[c] == row[c];
  return dense;
}

/* Adds trees [t0, t0 + n)'s leaves to row `o`, in order. */
static inline void perfect_add_leaves(const cuvil_perfect_forest *f,
                                      void *o, int64_t t0, int64_t n,
                                      const int32_t *leaf) {
  for (int64_t j = 0; j < n; ++j)
    perfect_add_leaf(f, o, t0 + j, leaf[j]);
}

#endif /* CUVIL_RUNTIME_TREES_PERFECT_INTERNAL_H */
