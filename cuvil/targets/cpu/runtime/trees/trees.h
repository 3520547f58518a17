/*===- trees.h - decision forests: cuvil.tree_ensemble ---------------------===*
 *
 * A forest is the op's tables as they are (cuvil/ir/CuvilOps.td): nodes
 * [N][3] of (feature or leaf row, left child, flags), one threshold per
 * node, trees [T][2] of (root, first target), leaves [L][values]. Rows
 * are summed tree by tree in order from the base values, in float32 or
 * float64 (the leaves' type), so a row's result is the library's whatever
 * the batch, the variant or the number of threads.
 *
 *===----------------------------------------------------------------------===*/

#ifndef CUVIL_RUNTIME_TREES_H
#define CUVIL_RUNTIME_TREES_H

#include "cuvil/targets/cpu/runtime/threads/threads.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A node's flags: the comparison that sends a row left (0: a leaf),
 * whether a missing value goes left, and whether a value within
 * CUVIL_TREE_ZERO (LightGBM's kZeroThreshold) of zero is missing too. */
enum {
  CUVIL_TREE_LEAF = 0,
  CUVIL_TREE_LT = 1,
  CUVIL_TREE_LE = 2,
  CUVIL_TREE_GT = 3,
  CUVIL_TREE_GE = 4,
  CUVIL_TREE_EQ = 5,
  CUVIL_TREE_NE = 6,
  CUVIL_TREE_MEMBER = 7, /* a categorical split (CuvilOps.td) */
  CUVIL_TREE_COMPARISON = 7,
  CUVIL_TREE_MISSING_LEFT = 8,
  CUVIL_TREE_ZERO_MISSING = 16,
  CUVIL_TREE_WHOLE_CATEGORIES = 32
};
#define CUVIL_TREE_ZERO 1e-35f

enum {
  CUVIL_FOREST_NONE = 0,
  CUVIL_FOREST_LOGISTIC = 1,
  CUVIL_FOREST_SOFTMAX = 2,
  CUVIL_FOREST_EXP = 3
};

/* Rows per parallel task and per vector block; the vector walks keep each
 * target's sums of a block on the stack (up to 64 targets: at most 32 KiB;
 * the perfect walk's copy of a block of rows of up to 128 features, 64
 * KiB more at the widest). */
enum { CUVIL_FOREST_BLOCK = 128, CUVIL_FOREST_MAX_VECTOR_TARGETS = 64 };

typedef struct cuvil_forest {
  int64_t features, trees, values, targets;
  const int32_t *nodes;
  /* float, or double if thresholds_f64. */
  const void *thresholds;
  const int32_t *roots;
  /* float, or double if acc_f64: the leaves, and one base per target. */
  const void *leaves;
  const void *base;
  int input_f64, thresholds_f64, acc_f64;
  /* The comparison every branch makes (CUVIL_TREE_LT or _LE, and no
   * CUVIL_TREE_ZERO_MISSING), or 0 when they differ: the vector walks take
   * forests of one comparison,
   * float32 throughout, one value per leaf and NaN as the only missing
   * value. */
  int uniform_comparison;
  int post_transform;
  int has_missing_value;
  double missing_value;
  /* AVERAGE (random forests): `base` is zeros, the sums are divided by the
   * number of trees and `offset` (the op's base values) added. */
  int average;
  const void *offset;
  /* The categorical splits' sets (each its word count, then its words);
   * a CUVIL_TREE_MEMBER node's threshold is its set's offset. */
  const int32_t *categories;
} cuvil_forest;

/* Sums `rows` (< 2^31 / features) rows of float32 `x` into `out`
 * [rows][targets] (margins, before the post transform): one of the vector
 * walks below, for a forest of uniform_comparison. */
typedef void (*cuvil_forest_walk_fn)(const cuvil_forest *forest, int64_t rows,
                                     const float *x, float *out);

void cuvil_forest_walk_reference(const cuvil_forest *forest, int64_t rows,
                                 const float *x, float *out);
void cuvil_forest_walk_avx2(const cuvil_forest *forest, int64_t rows,
                            const float *x, float *out);
void cuvil_forest_walk_avx512(const cuvil_forest *forest, int64_t rows,
                              const float *x, float *out);

/* Predicts `rows` rows of `x` (float or double by input_f64) into `out`
 * [rows][targets] of the accumulation type, post transform applied, the
 * rows split across `pool`. `walk` runs the forests it can (see above);
 * the others walk one row at a time. */
void cuvil_forest_predict(cuvil_pool *pool, cuvil_forest_walk_fn walk,
                          const cuvil_forest *forest, int64_t rows,
                          const void *x, void *out);

/* A row's post transform in float32: XGBoost's formulas (common/math.h:
 * Sigmoid, Softmax summed in double, expf). */
void cuvil_forest_transform_f32(int transform, float *row, int64_t targets);

/* After the sums of `rows` rows in `out` (float, or double if acc_f64):
 * AVERAGE's division by the trees and `offset`, then the post transform. */
void cuvil_forest_finish(int acc_f64, int average, int64_t trees,
                         const void *offset, int transform, void *out,
                         int64_t rows, int64_t targets);

/* A forest laid out as perfect trees of one depth (cuvil-cpu-layout-forests,
 * for forests of one comparison on float32 features and thresholds, a
 * missing value goes its node's way): node i of a level
 * sits at (1 << level) - 1 + i, its children at 2i and 2i + 1 of the next
 * level, so a walk needs no child table, no leaf test and the same number
 * of steps for every row. A leaf above the last level was replaced by a
 * subtree whose leaves all hold its value (whatever its nodes test, the
 * value is the same). Leaves are float32, or float64 (scikit-learn's,
 * summed in float64; the AVX-512 walks take them, the others walk such a
 * forest one row at a time), of one value or several. */
enum { CUVIL_PERFECT_MISSING_LEFT = (int32_t)0x80000000 };

typedef struct cuvil_perfect_forest {
  int64_t features, trees, targets, depth;
  /* [trees][2^depth - 1]: the feature, | CUVIL_PERFECT_MISSING_LEFT. */
  const int32_t *nodes;
  const float *thresholds; /* [trees][2^depth - 1] */
  /* [trees][2^depth - 1]: the threshold's bits | the word << 32, or NULL.
   * The few-rows walks read a node with one load from it. */
  const int64_t *pairs;
  /* [trees][2^depth][values]: float, or double if acc_f64. */
  const void *leaves;
  const int32_t *targets_of; /* [trees]: the target each tree adds to */
  const void *base;        /* [targets], the leaves' type */
  int comparison;          /* CUVIL_TREE_LT or CUVIL_TREE_LE */
  int post_transform;
  int acc_f64;
  /* AVERAGE (random forests): `base` is zeros, the sums are divided by the
   * number of trees and `offset` ([targets], the leaves' type) added. */
  int average;
  const void *offset;
  /* Numbers per leaf, added to targets [targets_of[t], + values) (a
   * classifier's class probabilities). The AVX-512 walks take more than
   * one; the others walk such a forest one row at a time. */
  int64_t values;
  /* A value that is missing besides NaN (XGBoost's `missing`): the walks
   * read it as NaN (rows copied for the vector walks). */
  int has_missing_value;
  double missing_value;
} cuvil_perfect_forest;

/* Sums `rows` (< 2^31 / features) rows of `x` into `out` [rows][targets]
 * (float, or double if acc_f64; margins, before the post transform). */
typedef void (*cuvil_perfect_walk_fn)(const cuvil_perfect_forest *forest,
                                      int64_t rows, const float *x, void *out);

void cuvil_perfect_walk_reference(const cuvil_perfect_forest *forest,
                                  int64_t rows, const float *x, void *out);
void cuvil_perfect_walk_avx2(const cuvil_perfect_forest *forest, int64_t rows,
                             const float *x, void *out);
void cuvil_perfect_walk_avx512(const cuvil_perfect_forest *forest,
                               int64_t rows, const float *x, void *out);

/* cuvil_forest_predict for a perfect forest: blocks of rows split across
 * `pool`, the average and post transform applied. */
void cuvil_perfect_forest_predict(cuvil_pool *pool, cuvil_perfect_walk_fn walk,
                                  const cuvil_perfect_forest *forest,
                                  int64_t rows, const float *x, void *out);

/* The walks a model's code uses (RuntimeSelection.cpp defines them). A
 * model compiles only its own (CUVIL_TREES_ONLY, then CUVIL_TREES_KEEP_avx2
 * or _avx512: each walk is ~100 KB of unrolled code that clang spends
 * seconds on); tests and benchmarks all. */
#ifndef CUVIL_FOREST_WALK
#define CUVIL_FOREST_WALK cuvil_forest_walk_reference
#endif
#ifndef CUVIL_PERFECT_WALK
#define CUVIL_PERFECT_WALK cuvil_perfect_walk_reference
#endif

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_RUNTIME_TREES_H */
