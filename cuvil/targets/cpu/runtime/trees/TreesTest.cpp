// The forest walks against an independent evaluator: trees as linked nodes
// in random order, walked recursively in double, summed in the library's
// order, then laid out into the op's tables breadth first. Every vector
// walk the CPU runs must give the reference's bits, for any row count and
// with missing values; a pool of threads must not change them.
extern "C" {
#include "cuvil/targets/cpu/runtime/trees/trees.h"
}

#include "cuvil/targets/cpu/runtime/cpu_has.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

struct Node {
  bool leaf = false;
  int feature = 0, comparison = CUVIL_TREE_LT;
  bool missingLeft = false;
  double threshold = 0;
  int left = -1, right = -1; // indices in Tree::nodes
  std::vector<double> values;
};

struct Tree {
  std::vector<Node> nodes; // any order; nodes[root] is the root
  int root = 0, target = 0;
};

struct Spec {
  int features = 5, values = 1, targets = 1, comparisons = 6;
  bool f64Thresholds = false, f64Acc = false;
  double missingValue = std::numeric_limits<double>::quiet_NaN();
};

bool compare(double x, double t, int c) {
  switch (c) {
  case CUVIL_TREE_LT: return x < t;
  case CUVIL_TREE_LE: return x <= t;
  case CUVIL_TREE_GT: return x > t;
  case CUVIL_TREE_GE: return x >= t;
  case CUVIL_TREE_EQ: return x == t;
  default: return x != t;
  }
}

const Node &walk(const Tree &tree, int i, const float *row, const Spec &spec) {
  const Node &n = tree.nodes[i];
  if (n.leaf)
    return n;
  double x = row[n.feature];
  bool missing = std::isnan(x) || x == spec.missingValue;
  bool left = missing ? n.missingLeft : compare(x, n.threshold, n.comparison);
  return walk(tree, left ? n.left : n.right, row, spec);
}

/// Random thresholds on a grid the inputs also use, so ties happen.
double gridValue(std::mt19937 &rng) {
  return std::uniform_int_distribution<int>(-8, 8)(rng) * 0.25;
}

Tree randomTree(std::mt19937 &rng, const Spec &spec, int depth) {
  Tree tree;
  // Built depth first; nodes pushed in a scrambled order.
  std::function<int(int)> grow = [&](int level) -> int {
    Node n;
    if (level == depth || std::uniform_int_distribution<int>(0, 4)(rng) == 0) {
      n.leaf = true;
      for (int v = 0; v < spec.values; ++v)
        n.values.push_back(std::uniform_real_distribution<double>(-1, 1)(rng));
    } else {
      n.feature = std::uniform_int_distribution<int>(0, spec.features - 1)(rng);
      n.comparison =
          spec.comparisons == 1
              ? CUVIL_TREE_LT
              : std::uniform_int_distribution<int>(1, spec.comparisons)(rng);
      n.missingLeft = rng() & 1;
      n.threshold = gridValue(rng);
      if (!spec.f64Thresholds)
        n.threshold = static_cast<float>(n.threshold);
      else
        n.threshold += 1e-9; // not a float
      n.left = grow(level + 1);
      n.right = grow(level + 1);
    }
    tree.nodes.push_back(n);
    return static_cast<int>(tree.nodes.size()) - 1;
  };
  tree.root = grow(0);
  tree.target = std::uniform_int_distribution<int>(
      0, spec.targets - spec.values)(rng);
  return tree;
}

/// The op's tables, breadth first per tree (children adjacent).
struct Tables {
  std::vector<int32_t> nodes, roots;
  std::vector<float> thresholdsF;
  std::vector<double> thresholdsD;
  std::vector<float> leavesF, baseF;
  std::vector<double> leavesD, baseD;
  cuvil_forest forest;
};

void layOut(const std::vector<Tree> &trees, const Spec &spec,
            const std::vector<double> &base, Tables &t) {
  int32_t leafRows = 0;
  for (const Tree &tree : trees) {
    int32_t rootIndex = static_cast<int32_t>(t.nodes.size() / 3);
    t.roots.push_back(rootIndex);
    t.roots.push_back(tree.target);
    std::deque<int> queue{tree.root};
    int32_t next = rootIndex + 1;
    while (!queue.empty()) {
      const Node &n = tree.nodes[queue.front()];
      queue.pop_front();
      if (n.leaf) {
        t.nodes.insert(t.nodes.end(), {leafRows++, 0, 0});
        for (double v : n.values) {
          t.leavesF.push_back(static_cast<float>(v));
          t.leavesD.push_back(v);
        }
      } else {
        t.nodes.insert(t.nodes.end(),
                       {n.feature, next,
                        n.comparison | (n.missingLeft ? CUVIL_TREE_MISSING_LEFT : 0)});
        next += 2;
        queue.push_back(n.left);
        queue.push_back(n.right);
      }
      t.thresholdsF.push_back(static_cast<float>(n.threshold));
      t.thresholdsD.push_back(n.threshold);
    }
  }
  for (double b : base) {
    t.baseF.push_back(static_cast<float>(b));
    t.baseD.push_back(b);
  }
  cuvil_forest &f = t.forest;
  std::memset(&f, 0, sizeof f);
  f.features = spec.features;
  f.trees = static_cast<int64_t>(trees.size());
  f.values = spec.values;
  f.targets = spec.targets;
  f.nodes = t.nodes.data();
  f.roots = t.roots.data();
  f.thresholds_f64 = spec.f64Thresholds;
  f.thresholds = spec.f64Thresholds ? static_cast<const void *>(t.thresholdsD.data())
                                    : t.thresholdsF.data();
  f.acc_f64 = spec.f64Acc;
  f.leaves = spec.f64Acc ? static_cast<const void *>(t.leavesD.data()) : t.leavesF.data();
  f.base = spec.f64Acc ? static_cast<const void *>(t.baseD.data()) : t.baseF.data();
  f.has_missing_value = !std::isnan(spec.missingValue);
  f.missing_value = spec.missingValue;
  f.uniform_comparison = spec.comparisons == 1 ? CUVIL_TREE_LT : 0;
}

/// Rows on the thresholds' grid, one value in `missingOneIn` NaN (none if
/// 0).
std::vector<float> randomRows(std::mt19937 &rng, int rows, int features,
                              int missingOneIn = 10) {
  std::vector<float> x(static_cast<size_t>(rows) * features);
  for (float &v : x)
    v = missingOneIn &&
                std::uniform_int_distribution<int>(1, missingOneIn)(rng) == 1
            ? std::numeric_limits<float>::quiet_NaN()
            : static_cast<float>(gridValue(rng));
  return x;
}

/// The expected margins: trees in order from the base, in the sum type.
template <typename T>
std::vector<T> expected(const std::vector<Tree> &trees, const Spec &spec,
                        const std::vector<double> &base,
                        const std::vector<float> &x, int rows) {
  std::vector<T> out;
  for (int r = 0; r < rows; ++r) {
    std::vector<T> acc(base.begin(), base.end());
    for (const Tree &tree : trees) {
      const Node &leaf = walk(tree, tree.root, &x[r * spec.features], spec);
      for (int v = 0; v < spec.values; ++v)
        acc[tree.target + v] += static_cast<T>(leaf.values[v]);
    }
    out.insert(out.end(), acc.begin(), acc.end());
  }
  return out;
}

std::vector<Tree> randomForest(std::mt19937 &rng, const Spec &spec, int count,
                               int depth) {
  std::vector<Tree> trees;
  for (int i = 0; i < count; ++i)
    trees.push_back(randomTree(rng, spec, depth));
  return trees;
}

TEST(Trees, ReferenceMatchesRecursiveWalkForEveryComparisonAndType) {
  std::mt19937 rng(7);
  for (bool f64Thresholds : {false, true})
    for (bool f64Acc : {false, true})
      for (double missingValue : {std::nan(""), 0.5}) {
        Spec spec;
        spec.values = 2;
        spec.targets = 3;
        spec.f64Thresholds = f64Thresholds;
        spec.f64Acc = f64Acc;
        spec.missingValue = missingValue;
        std::vector<Tree> trees = randomForest(rng, spec, 9, 5);
        std::vector<double> base{0.5, -0.25, 1e-3};
        Tables t;
        layOut(trees, spec, base, t);
        int rows = 100;
        std::vector<float> x = randomRows(rng, rows, spec.features);
        SCOPED_TRACE(std::to_string(f64Thresholds) + std::to_string(f64Acc) +
                     std::to_string(missingValue));
        if (f64Acc) {
          std::vector<double> out(rows * spec.targets);
          cuvil_forest_predict(nullptr, cuvil_forest_walk_reference, &t.forest,
                               rows, x.data(), out.data());
          EXPECT_EQ(out, expected<double>(trees, spec, base, x, rows));
        } else {
          std::vector<float> out(rows * spec.targets);
          cuvil_forest_predict(nullptr, cuvil_forest_walk_reference, &t.forest,
                               rows, x.data(), out.data());
          EXPECT_EQ(out, expected<float>(trees, spec, base, x, rows));
        }
      }
}

TEST(Trees, DoubleInputsCompareInDouble) {
  Spec spec;
  spec.f64Thresholds = true;
  spec.f64Acc = true;
  spec.features = 1;
  // One split at 0.1 (a double): 0.1f > 0.1, so a float input goes right,
  // while the double 0.1 goes left.
  Tree tree;
  Node split, left, right;
  split.threshold = 0.1;
  split.comparison = CUVIL_TREE_LE;
  split.left = 1;
  split.right = 2;
  left.leaf = right.leaf = true;
  left.values = {1.0};
  right.values = {2.0};
  tree.nodes = {split, left, right};
  Tables t;
  layOut({tree}, spec, {0.0}, t);
  double xd = 0.1;
  float xf = 0.1f;
  double out = 0;
  t.forest.input_f64 = 1;
  cuvil_forest_predict(nullptr, cuvil_forest_walk_reference, &t.forest, 1, &xd, &out);
  EXPECT_EQ(out, 1.0);
  t.forest.input_f64 = 0;
  cuvil_forest_predict(nullptr, cuvil_forest_walk_reference, &t.forest, 1, &xf, &out);
  EXPECT_EQ(out, 2.0);
}

TEST(Trees, TransformsAreXgboostsFormulas) {
  Spec spec;
  spec.targets = 3;
  spec.values = 1;
  std::mt19937 rng(3);
  std::vector<Tree> trees = randomForest(rng, spec, 12, 4);
  std::vector<double> base{0.5, 0.5, 0.5};
  Tables t;
  layOut(trees, spec, base, t);
  int rows = 20;
  std::vector<float> x = randomRows(rng, rows, spec.features);
  std::vector<float> margins = expected<float>(trees, spec, base, x, rows);
  t.forest.post_transform = CUVIL_FOREST_SOFTMAX;
  std::vector<float> out(rows * 3);
  cuvil_forest_predict(nullptr, cuvil_forest_walk_reference, &t.forest, rows,
                       x.data(), out.data());
  for (int r = 0; r < rows; ++r) {
    const float *m = &margins[r * 3];
    float top = std::max(std::max(m[0], m[1]), m[2]);
    double sum = 0;
    float e[3];
    for (int i = 0; i < 3; ++i)
      sum += e[i] = std::exp(m[i] - top);
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(out[r * 3 + i], e[i] / static_cast<float>(sum));
  }
  t.forest.post_transform = CUVIL_FOREST_EXP;
  cuvil_forest_predict(nullptr, cuvil_forest_walk_reference, &t.forest, rows,
                       x.data(), out.data());
  for (int i = 0; i < rows * 3; ++i)
    EXPECT_EQ(out[i], std::exp(margins[i]));
}

using WalkVariant = std::tuple<std::string, std::string, cuvil_forest_walk_fn>;

std::vector<WalkVariant> walkVariants() {
  return {
#define CUVIL_FOREST_WALK_VARIANT(name, target, features)                      \
  {#name, features, cuvil_forest_walk_##name},
#include "cuvil/targets/cpu/runtime/trees/trees.inc"
#undef CUVIL_FOREST_WALK_VARIANT
  };
}

TEST(Trees, VectorWalksGiveTheReferenceBits) {
  std::mt19937 rng(11);
  for (int comparison : {CUVIL_TREE_LT, CUVIL_TREE_LE})
    for (int targets : {1, 4}) {
      Spec spec;
      spec.features = 28;
      spec.targets = targets;
      spec.comparisons = 1;
      std::vector<Tree> trees = randomForest(rng, spec, 40, 7);
      for (Tree &tree : trees)
        for (Node &n : tree.nodes)
          n.comparison = comparison;
      std::vector<double> base(targets, 0.5);
      Tables t;
      layOut(trees, spec, base, t);
      t.forest.uniform_comparison = comparison;
      for (int rows : {1, 15, 17, 31, 64, 65, 200, 1000}) {
        std::vector<float> x = randomRows(rng, rows, spec.features);
        std::vector<float> want = expected<float>(trees, spec, base, x, rows);
        for (const auto &[name, features, walk] : walkVariants()) {
          if (!cuvil::runtime_testing::cpuHas(features))
            continue;
          SCOPED_TRACE(name + " rows=" + std::to_string(rows));
          std::vector<float> out(rows * targets, -1.0f);
          cuvil_forest_predict(nullptr, walk, &t.forest, rows, x.data(),
                               out.data());
          EXPECT_EQ(0, std::memcmp(out.data(), want.data(),
                                   want.size() * sizeof(float)));
        }
      }
    }
}

/// The perfect layout of trees.h, built from the linked trees.
struct PerfectTables {
  std::vector<int32_t> nodes, targets;
  std::vector<float> thresholds, leaves, base;
  std::vector<int64_t> pairs; // forest.pairs's, set by withPairs

  std::vector<double> leavesD, baseD, offsetD;
  cuvil_perfect_forest forest;
};

int treeDepth(const Tree &tree, int i) {
  const Node &n = tree.nodes[i];
  return n.leaf ? 0
                : 1 + std::max(treeDepth(tree, n.left), treeDepth(tree, n.right));
}

void placePerfect(const Tree &tree, int i, int level, int64_t index, int depth,
                  int32_t *nodes, float *thresholds, float *leaves) {
  const Node &n = tree.nodes[i];
  if (n.leaf) {
    // Every leaf under this position holds the values.
    int64_t span = int64_t(1) << (depth - level), values = n.values.size();
    for (int64_t i = index * span; i < (index + 1) * span; ++i)
      for (int64_t v = 0; v < values; ++v)
        leaves[i * values + v] = static_cast<float>(n.values[v]);
    return;
  }
  int64_t node = (int64_t(1) << level) - 1 + index;
  nodes[node] = n.feature | (n.missingLeft ? CUVIL_PERFECT_MISSING_LEFT : 0);
  thresholds[node] = static_cast<float>(n.threshold);
  placePerfect(tree, n.left, level + 1, 2 * index, depth, nodes, thresholds,
               leaves);
  placePerfect(tree, n.right, level + 1, 2 * index + 1, depth, nodes,
               thresholds, leaves);
}

void layOutPerfect(const std::vector<Tree> &trees, const Spec &spec,
                   const std::vector<double> &base, int comparison,
                   PerfectTables &p) {
  int depth = 1;
  for (const Tree &tree : trees)
    depth = std::max(depth, treeDepth(tree, tree.root));
  int64_t inner = (int64_t(1) << depth) - 1;
  // Nodes under a shallow leaf test feature 0 against 0: any answer.
  p.nodes.assign(trees.size() * inner, 0);
  p.thresholds.assign(trees.size() * inner, 0.0f);
  p.leaves.assign(trees.size() * (inner + 1) * spec.values, 0.0f);
  for (size_t t = 0; t < trees.size(); ++t) {
    placePerfect(trees[t], trees[t].root, 0, 0, depth, &p.nodes[t * inner],
                 &p.thresholds[t * inner],
                 &p.leaves[t * (inner + 1) * spec.values]);
    p.targets.push_back(trees[t].target);
  }
  for (double b : base)
    p.base.push_back(static_cast<float>(b));
  // The interleaved copy of LayoutForests: threshold bits, word << 32.
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &p.thresholds[i], sizeof bits);
    p.pairs.push_back(int64_t(bits) |
                      int64_t(uint64_t(uint32_t(p.nodes[i])) << 32));
  }
  p.forest = {spec.features,
              int64_t(trees.size()),
              spec.targets,
              depth,
              p.nodes.data(),
              p.thresholds.data(),
              /*pairs=*/nullptr,
              p.leaves.data(),
              p.targets.data(),
              p.base.data(),
              comparison,
              CUVIL_FOREST_NONE,
              /*acc_f64=*/0,
              /*average=*/0,
              /*offset=*/nullptr,
              /*values=*/spec.values,
              /*has_missing_value=*/!std::isnan(spec.missingValue),
              /*missing_value=*/spec.missingValue};
}

/// The same forest with float64 leaves (the trees' own values) summed in
/// float64, averaged (from zeros, then / trees + `base`) if `average`.
void layOutPerfectF64(const std::vector<Tree> &trees, const Spec &spec,
                      const std::vector<double> &base, int comparison,
                      bool average, PerfectTables &p) {
  layOutPerfect(trees, spec, base, comparison, p);
  int64_t leaves = int64_t(1) << p.forest.depth;
  for (size_t t = 0; t < trees.size(); ++t) {
    // Each perfect leaf holds the value of the tree's leaf it copies:
    // found again by walking the tree to it along the leaf's path.
    for (int64_t i = 0; i < leaves; ++i) {
      int node = trees[t].root;
      for (int64_t level = p.forest.depth - 1; !trees[t].nodes[node].leaf;
           --level) {
        const Node &n = trees[t].nodes[node];
        node = (i >> level) & 1 ? n.right : n.left;
      }
      for (double v : trees[t].nodes[node].values)
        p.leavesD.push_back(v);
    }
  }
  p.baseD.assign(base.size(), 0.0);
  p.offsetD = base;
  if (!average)
    p.baseD = base;
  p.forest.leaves = p.leavesD.data();
  p.forest.base = p.baseD.data();
  p.forest.acc_f64 = 1;
  p.forest.average = average;
  p.forest.offset = p.offsetD.data();
}

using PerfectVariant = std::tuple<std::string, std::string, cuvil_perfect_walk_fn>;

/// `p.forest` without, then with, the few-rows walks' interleaved nodes:
/// both must give the same bits.
std::vector<cuvil_perfect_forest> withAndWithoutPairs(const PerfectTables &p) {
  cuvil_perfect_forest paired = p.forest;
  paired.pairs = p.pairs.data();
  return {p.forest, paired};
}

std::vector<PerfectVariant> perfectVariants() {
  return {
#define CUVIL_FOREST_WALK_VARIANT(name, target, features)                      \
  {#name, features, cuvil_perfect_walk_##name},
#include "cuvil/targets/cpu/runtime/trees/trees.inc"
#undef CUVIL_FOREST_WALK_VARIANT
  };
}

/// Every perfect walk the CPU runs gives the table walk's bits on `x`.
void expectPerfectWalksExact(const std::vector<Tree> &trees, const Spec &spec,
                             const std::vector<double> &base,
                             const PerfectTables &p, const std::vector<float> &x,
                             int rows) {
  std::vector<float> want = expected<float>(trees, spec, base, x, rows);
  for (const auto &[name, features, walk] : perfectVariants()) {
    if (!cuvil::runtime_testing::cpuHas(features))
      continue;
    for (const cuvil_perfect_forest &forest : withAndWithoutPairs(p)) {
      SCOPED_TRACE(name + " rows=" + std::to_string(rows) +
                   (forest.pairs ? " pairs" : ""));
      std::vector<float> out(rows * spec.targets, -1.0f);
      cuvil_perfect_forest_predict(nullptr, walk, &forest, rows, x.data(),
                                   out.data());
      EXPECT_EQ(
          0, std::memcmp(out.data(), want.data(), want.size() * sizeof(float)));
    }
  }
}

TEST(Trees, PerfectWalksGiveTheTableWalksBits) {
  std::mt19937 rng(13);
  // Depths 1 to 10 cover every way a level's nodes, features and leaves
  // are fetched: one register, two, a tree of blends over up to eight, a
  // gather. 28 features take the transposed block (and a row in two
  // registers), 10 a row in one; 200 the gathers from rows.
  for (int depth : {1, 3, 4, 5, 6, 7, 8, 9, 10})
    for (int comparison : {CUVIL_TREE_LT, CUVIL_TREE_LE})
      for (int targets : {1, 3}) {
        Spec spec;
        spec.features = depth == 6 ? 200 : depth == 4 ? 10 : 28;
        spec.targets = targets;
        // Leaves of two values (gathered) at odd depths.
        spec.values = targets == 3 && depth % 2 ? 2 : 1;
        spec.comparisons = 1;
        std::vector<Tree> trees = randomForest(rng, spec, 25, depth);
        for (Tree &tree : trees)
          for (Node &n : tree.nodes)
            n.comparison = comparison;
        std::vector<double> base(targets, -0.25);
        PerfectTables p;
        layOutPerfect(trees, spec, base, comparison, p);
        SCOPED_TRACE("depth=" + std::to_string(depth));
        for (int rows : {1, 7, 9, 33, 64, 130, 777}) {
          // Rows with missing values; rows without (their blocks take the
          // one-comparison step); one missing value, in the first block.
          expectPerfectWalksExact(trees, spec, base, p,
                                  randomRows(rng, rows, spec.features), rows);
          std::vector<float> dense = randomRows(rng, rows, spec.features, 0);
          expectPerfectWalksExact(trees, spec, base, p, dense, rows);
          dense[std::min(rows - 1, 5) * spec.features + 1] =
              std::numeric_limits<float>::quiet_NaN();
          expectPerfectWalksExact(trees, spec, base, p, dense, rows);
        }
      }
}

TEST(Trees, PerfectWalksTakeAMissingValueAsNaN) {
  std::mt19937 rng(23);
  // 10 features: a row in one register; 28: the transposed blocks; 200:
  // the rows themselves.
  for (int depth : {2, 5, 8})
    for (int features : {10, 28, 200}) {
      Spec spec;
      spec.features = features;
      spec.comparisons = 1;
      spec.missingValue = 0.25; // on the rows' grid: often there
      std::vector<Tree> trees = randomForest(rng, spec, 19, depth);
      std::vector<double> base{0.5};
      PerfectTables p;
      layOutPerfect(trees, spec, base, CUVIL_TREE_LT, p);
      SCOPED_TRACE("depth=" + std::to_string(depth) +
                   " features=" + std::to_string(features));
      for (int rows : {1, 7, 130, 300}) {
        expectPerfectWalksExact(trees, spec, base, p,
                                randomRows(rng, rows, features, 0), rows);
        expectPerfectWalksExact(trees, spec, base, p,
                                randomRows(rng, rows, features), rows);
      }
    }
}

TEST(Trees, PerfectWalksSumFloat64LeavesAndAverage) {
  std::mt19937 rng(17);
  for (int depth : {2, 6, 8})
    for (bool average : {false, true}) {
      // Two values per leaf (a classifier's probabilities) at depth 6.
      Spec spec;
      spec.features = 28;
      spec.targets = 2;
      spec.values = depth == 6 ? 2 : 1;
      spec.comparisons = 1;
      std::vector<Tree> trees = randomForest(rng, spec, 21, depth);
      std::vector<double> base{0.125, -0.3};
      PerfectTables p;
      layOutPerfectF64(trees, spec, base, CUVIL_TREE_LT, average, p);
      for (int rows : {1, 5, 130, 300}) {
        SCOPED_TRACE("depth=" + std::to_string(depth) +
                     " average=" + std::to_string(average) +
                     " rows=" + std::to_string(rows));
        std::vector<float> x =
            randomRows(rng, rows, spec.features, rows == 130 ? 0 : 10);
        std::vector<double> want = expected<double>(
            trees, spec, average ? std::vector<double>(2, 0.0) : base, x,
            rows);
        for (size_t i = 0; average && i < want.size(); ++i)
          want[i] = want[i] / double(trees.size()) + base[i % 2];
        for (const auto &[name, features, walk] : perfectVariants()) {
          if (!cuvil::runtime_testing::cpuHas(features))
            continue;
          for (const cuvil_perfect_forest &forest : withAndWithoutPairs(p)) {
            SCOPED_TRACE(name + (forest.pairs ? " pairs" : ""));
            std::vector<double> out(want.size(), -1.0);
            cuvil_perfect_forest_predict(nullptr, walk, &forest, rows, x.data(),
                                         out.data());
            EXPECT_EQ(0, std::memcmp(out.data(), want.data(),
                                     want.size() * sizeof(double)));
          }
        }
      }
    }
}

TEST(Trees, ThreadsDoNotChangeTheBits) {
  std::mt19937 rng(5);
  Spec spec;
  spec.comparisons = 1;
  spec.features = 8;
  std::vector<Tree> trees = randomForest(rng, spec, 30, 6);
  Tables t;
  layOut(trees, spec, {0.0}, t);
  int rows = 5000;
  std::vector<float> x = randomRows(rng, rows, spec.features);
  std::vector<float> alone(rows), pooled(rows);
  cuvil_pool *pool = cuvil_pool_create(4);
  cuvil_forest_predict(nullptr, cuvil_forest_walk_reference, &t.forest, rows,
                       x.data(), alone.data());
  cuvil_forest_predict(pool, cuvil_forest_walk_reference, &t.forest, rows,
                       x.data(), pooled.data());
  cuvil_pool_destroy(pool);
  EXPECT_EQ(alone, pooled);
  EXPECT_EQ(alone, expected<float>(trees, spec, {0.0}, x, rows));
}

} // namespace
