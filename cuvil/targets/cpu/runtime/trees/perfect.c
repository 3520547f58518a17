/*===- perfect.c - decision forests laid out as perfect trees ------------===*
 *
 * Every row takes `depth` steps per tree: at each level, the node's word
 * (feature and missing direction) and threshold, the row's feature, one
 * comparison, and the index doubles plus the direction. Here: that walk
 * one row at a time (the reference, and the walk of what the vector walks
 * leave) and the prediction over blocks of rows; the vector walks are in
 * perfect_avx512.c and perfect_avx2.c. Sums run tree by tree in order, as
 * in trees.c, so the bits are the same whatever the walk.
 *
 *===----------------------------------------------------------------------===*/

#include "cuvil/targets/cpu/runtime/trees/perfect_internal.h"

static int perfect_goes_left(const cuvil_perfect_forest *f, int32_t word,
                             float threshold, float v) {
  if (v != v || (f->has_missing_value && (double)v == f->missing_value))
    return word < 0;
  return f->comparison == CUVIL_TREE_LE ? v <= threshold : v < threshold;
}

/* Tree t's leaf for `row`, numbered across the forest (t * 2^depth + i;
 * its values start at that times f->values). */
static int64_t perfect_leaf(const cuvil_perfect_forest *f, int64_t t,
                            const float *row) {
  const int64_t inner = ((int64_t)1 << f->depth) - 1;
  const int32_t *nodes = f->nodes + t * inner;
  const float *thresholds = f->thresholds + t * inner;
  int64_t i = 0;
  for (int64_t level = 0; level < f->depth; ++level) {
    int64_t node = ((int64_t)1 << level) - 1 + i;
    int32_t word = nodes[node];
    float v = row[word & CUVIL_PERFECT_FEATURE];
    i = 2 * i + (perfect_goes_left(f, word, thresholds[node], v) ? 0 : 1);
  }
  return t * (inner + 1) + i;
}

void cuvil_perfect_walk_reference(const cuvil_perfect_forest *f, int64_t rows,
                                  const float *x, void *out) {
  /* perfect_goes_left reads the missing value itself: no row copy. */
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = x + r * f->features;
    void *o = perfect_start_row(f, out, r);
    for (int64_t t = 0; t < f->trees; ++t)
      perfect_add_leaf(f, o, t, perfect_leaf(f, t, row));
  }
}

typedef struct {
  cuvil_perfect_walk_fn walk;
  const cuvil_perfect_forest *forest;
  int64_t rows;
  const float *x;
  void *out;
} perfect_task;

static void perfect_predict_blocks(void *arg, int64_t begin, int64_t end) {
  const perfect_task *task = (const perfect_task *)arg;
  const cuvil_perfect_forest *f = task->forest;
  int64_t first = begin * CUVIL_FOREST_BLOCK;
  int64_t last = end * CUVIL_FOREST_BLOCK;
  if (last > task->rows)
    last = task->rows;
  const float *x = task->x + first * f->features;
  void *out = (char *)task->out +
              first * f->targets * (f->acc_f64 ? sizeof(double) : sizeof(float));
  task->walk(f, last - first, x, out);
  cuvil_forest_finish(f->acc_f64, f->average, f->trees, f->offset,
                      f->post_transform, out, last - first, f->targets);
}

void cuvil_perfect_forest_predict(cuvil_pool *pool, cuvil_perfect_walk_fn walk,
                                  const cuvil_perfect_forest *forest,
                                  int64_t rows, const float *x, void *out) {
  perfect_task task = {walk, forest, rows, x, out};
  int64_t blocks = (rows + CUVIL_FOREST_BLOCK - 1) / CUVIL_FOREST_BLOCK;
  if (blocks == 1)
    perfect_predict_blocks(&task, 0, 1);
  else
    cuvil_parallel_for(pool, blocks, perfect_predict_blocks, &task);
}
