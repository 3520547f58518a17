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

#include "cuvil/targets/x86/runtime/threads/threads.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A node's flags: the comparison that sends a row left (0: a leaf), and
 * whether a missing value goes left. */
enum {
  CUVIL_TREE_LEAF = 0,
  CUVIL_TREE_LT = 1,
  CUVIL_TREE_LE = 2,
  CUVIL_TREE_GT = 3,
  CUVIL_TREE_GE = 4,
  CUVIL_TREE_EQ = 5,
  CUVIL_TREE_NE = 6,
  CUVIL_TREE_COMPARISON = 7,
  CUVIL_TREE_MISSING_LEFT = 8
};

enum {
  CUVIL_FOREST_NONE = 0,
  CUVIL_FOREST_LOGISTIC = 1,
  CUVIL_FOREST_SOFTMAX = 2,
  CUVIL_FOREST_EXP = 3
};

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
  /* The comparison every branch makes (CUVIL_TREE_LT or _LE), or 0 when
   * they differ: the vector walks take forests of one comparison,
   * float32 throughout, one value per leaf and NaN as the only missing
   * value. */
  int uniform_comparison;
  int post_transform;
  int has_missing_value;
  double missing_value;
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

/* The walk a model's code uses (RuntimeSelection.cpp defines it). */
#ifndef CUVIL_FOREST_WALK
#define CUVIL_FOREST_WALK cuvil_forest_walk_reference
#endif

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_RUNTIME_TREES_H */
