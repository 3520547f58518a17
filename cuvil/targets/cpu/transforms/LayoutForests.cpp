//===- LayoutForests.cpp - tree ensembles as perfect trees ----------------===//
//
// A `tree_ensemble` call whose forest the vector walks take (one
// comparison, `<` or `<=`; float32 features; at most kMaxTargets targets;
// missing values NaN or one value, no zero-as-missing) and whose deepest tree
// has at most kMaxDepth levels gets its tables rewritten, at compile time,
// as perfect trees of that depth (runtime/trees/trees.h): node words
// (feature, missing direction in bit 31) and float32 thresholds by level
// (float64 ones narrowed exactly: narrowThreshold), 2^depth leaves per
// tree (float32, or float64 for an AVX-512 target; [2^depth][values] for
// leaves of several values, AVX-512 too), a leaf above the last level
// copied into every leaf below it. The call then reads [x, words,
// thresholds, targets, leaves], and for an x86 target with AVX2 a copy of
// the thresholds and words interleaved (pairs), and is marked
// `cuvil.forest_depth` and `cuvil.forest_comparison`; deeper or mixed forests
// keep the general tables (a deeper forest of one comparison is marked
// `cuvil.forest_comparison`, which the table walk's vector forms take).
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilAttrs.h"
#include "cuvil/ir/CuvilL2Ops.h"
#include "cuvil/passes/GlobalConstants.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/support/ElementsBytes.h"
#include "cuvil/targets/cpu/transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace cuvil::cpu {
#define GEN_PASS_DEF_CUVILCPULAYOUTFORESTS
#include "cuvil/targets/cpu/transforms/Passes.h.inc"
} // namespace cuvil::cpu

using namespace mlir;

namespace {

/// Deeper trees would take 2^depth leaves each; they keep their tables.
constexpr int64_t kMaxDepth = 10;
/// The vector walks keep a block's sums per target on the stack
/// (CUVIL_FOREST_MAX_VECTOR_TARGETS); more targets (a forest's leaves as
/// its output, one column per tree) keep their tables.
constexpr int64_t kMaxTargets = 64;
// cuvil.tree_ensemble's flags (CuvilOps.td) and the perfect node word.
constexpr int32_t kLessThan = 1, kLessEqual = 2, kComparison = 7,
                  kMissingLeft = 8, kZeroIsMissing = 16;
constexpr uint32_t kWordMissingLeft = 0x80000000u;

/// The contents of a constant buffer (a memref.get_global) as `T`s.
template <typename T>
std::optional<std::vector<T>> readGlobal(Value value, SymbolTable &symbols) {
  auto get = value.getDefiningOp<memref::GetGlobalOp>();
  auto global = get ? symbols.lookup<memref::GlobalOp>(get.getName()) : nullptr;
  if (!global || !global.getConstant() || !global.getInitialValue())
    return std::nullopt;
  absl::StatusOr<std::string> bytes =
      cuvil::getElementsBytes(*global.getInitialValue());
  if (!bytes.ok() || bytes->size() % sizeof(T))
    return std::nullopt;
  std::vector<T> values(bytes->size() / sizeof(T));
  std::memcpy(values.data(), bytes->data(), bytes->size());
  return values;
}

struct Forest {
  std::vector<int32_t> nodes, trees;
  std::vector<float> thresholds;
  /// [leaf rows][values].
  std::vector<double> leaves;
  int64_t values = 1;
};

/// The float32 threshold that makes the same decisions as `t` on float32
/// values: `v <= t` iff `v <= t'` for the largest float32 t' <= t, and `v
/// < t` iff `v < t'` for the smallest t' >= t (no float32 lies between
/// them). Exact, so a scikit-learn forest (float32 features, float64
/// thresholds) walks in float32.
float narrowThreshold(double t, int32_t comparison) {
  float narrow = static_cast<float>(t);
  if (comparison == kLessEqual && static_cast<double>(narrow) > t)
    return std::nextafter(narrow, -std::numeric_limits<float>::infinity());
  if (comparison == kLessThan && static_cast<double>(narrow) < t)
    return std::nextafter(narrow, std::numeric_limits<float>::infinity());
  return narrow;
}

/// The depth of the tree at `node`, or kMaxDepth + 1 for any deeper one
/// (the recursion stops there).
int64_t depthOf(const Forest &f, int32_t node, int64_t level = 0) {
  if ((f.nodes[3 * node + 2] & kComparison) == 0)
    return 0;
  if (level == kMaxDepth)
    return 1;
  int32_t left = f.nodes[3 * node + 1];
  return 1 + std::max(depthOf(f, left, level + 1),
                      depthOf(f, left + 1, level + 1));
}

struct Perfect {
  std::vector<int32_t> words, targets;
  std::vector<float> thresholds;
  std::vector<double> leaves;
};

/// Places the subtree at `node` at position `index` of `level`.
void place(const Forest &f, int32_t node, int64_t level, int64_t index,
           int64_t depth, int32_t *words, float *thresholds, double *leaves) {
  int32_t flags = f.nodes[3 * node + 2];
  if ((flags & kComparison) == 0) {
    int64_t span = int64_t(1) << (depth - level);
    const double *row = &f.leaves[f.nodes[3 * node] * f.values];
    for (int64_t i = index * span; i < (index + 1) * span; ++i)
      std::copy(row, row + f.values, leaves + i * f.values);
    return;
  }
  int64_t position = (int64_t(1) << level) - 1 + index;
  words[position] = static_cast<int32_t>(
      static_cast<uint32_t>(f.nodes[3 * node]) |
      (flags & kMissingLeft ? kWordMissingLeft : 0u));
  thresholds[position] = f.thresholds[node];
  int32_t left = f.nodes[3 * node + 1];
  place(f, left, level + 1, 2 * index, depth, words, thresholds, leaves);
  place(f, left + 1, level + 1, 2 * index + 1, depth, words, thresholds,
        leaves);
}

struct LayoutForests
    : cuvil::cpu::impl::CuvilCpuLayoutForestsBase<LayoutForests> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<cuvil::l2::UKernelCallOp> calls;
    module.walk([&](cuvil::l2::UKernelCallOp call) {
      if (call.getKernel() == "tree_ensemble")
        calls.push_back(call);
    });
    for (cuvil::l2::UKernelCallOp call : calls)
      layOut(call, symbols);
  }

  /// The forest's one comparison (1 `<`, 2 `<=`), or 0 (also when a node
  /// counts zero as missing, which the vector walks do not).
  static int32_t uniformComparison(const Forest &f) {
    int32_t uniform = 0;
    for (size_t i = 2; i < f.nodes.size(); i += 3) {
      if (f.nodes[i] & kZeroIsMissing)
        return 0;
      int32_t c = f.nodes[i] & kComparison;
      if (c == 0)
        continue;
      if (uniform && c != uniform)
        return 0;
      uniform = c;
    }
    return uniform == kLessThan || uniform == kLessEqual ? uniform : 0;
  }

  /// A new constant table of `shape` x `element` holding `size` bytes at
  /// `data`, read before `call`.
  static Value addGlobal(Operation *call, SymbolTable &symbols, StringRef name,
                         ArrayRef<int64_t> shape, Type element,
                         const char *data, size_t size) {
    return cuvil::createConstantGlobalRead(symbols, call, name,
                                           MemRefType::get(shape, element),
                                           ArrayRef<char>(data, size));
  }

  /// A table of float32 or float64 values as doubles.
  static std::optional<std::vector<double>> readNumbers(Value value,
                                                        SymbolTable &symbols) {
    if (cast<MemRefType>(value.getType()).getElementType().isF64())
      return readGlobal<double>(value, symbols);
    auto floats = readGlobal<float>(value, symbols);
    if (!floats)
      return std::nullopt;
    return std::vector<double>(floats->begin(), floats->end());
  }

  void layOut(cuvil::l2::UKernelCallOp call, SymbolTable &symbols) {
    ValueRange ins = call.getInputs();
    auto input = cast<MemRefType>(ins[0].getType());
    auto leavesType = cast<MemRefType>(ins[4].getType());
    // Float64 leaves (summed in float64) and leaves of several values are
    // the AVX-512 walks' only (the others would walk them one row at a
    // time: the tables serve them better).
    bool f64Leaves = leavesType.getElementType().isF64();
    int64_t values = leavesType.getDimSize(1);
    auto target = cuvil::l1::TargetAttr::lookupOrDefault(getOperation());
    if (!input.getElementType().isF32() ||
        ((f64Leaves || values != 1) && !target.hasFeature("avx512f")) ||
        cast<MemRefType>(call.getOutputs()[0].getType()).getDimSize(1) >
            kMaxTargets)
      return;
    auto nodes = readGlobal<int32_t>(ins[1], symbols);
    auto wide = readNumbers(ins[2], symbols);
    auto trees = readGlobal<int32_t>(ins[3], symbols);
    auto leaves = readNumbers(ins[4], symbols);
    if (!nodes || !wide || !trees || !leaves)
      return;
    Forest f{std::move(*nodes), std::move(*trees), {}, std::move(*leaves),
             values};
    int32_t comparison = uniformComparison(f);
    if (!comparison)
      return;
    for (double t : *wide)
      f.thresholds.push_back(narrowThreshold(t, comparison));
    int64_t depth = 1;
    for (size_t t = 0; t < f.trees.size() / 2; ++t)
      depth = std::max(depth, depthOf(f, f.trees[2 * t]));
    // The table walk's vector forms take a forest of one comparison too.
    if (depth > kMaxDepth) {
      call->setAttr("cuvil.forest_comparison",
                    OpBuilder(call).getI64IntegerAttr(comparison));
      return;
    }

    int64_t count = f.trees.size() / 2, inner = (int64_t(1) << depth) - 1;
    Perfect p;
    // Nodes under a shallow leaf test feature 0 against 0: either way
    // leads to a copy of its value.
    p.words.assign(count * inner, 0);
    p.thresholds.assign(count * inner, 0.0f);
    p.leaves.assign(count * (inner + 1) * values, 0.0);
    for (int64_t t = 0; t < count; ++t) {
      place(f, f.trees[2 * t], 0, 0, depth, &p.words[t * inner],
            &p.thresholds[t * inner], &p.leaves[t * (inner + 1) * values]);
      p.targets.push_back(f.trees[2 * t + 1]);
    }

    OpBuilder builder(call);
    Type i32 = builder.getI32Type(), f32 = builder.getF32Type();
    auto bytes = [](const auto &v) {
      return std::make_pair(reinterpret_cast<const char *>(v.data()),
                            v.size() * sizeof(v[0]));
    };
    // Float32 leaves went through double exactly; they go back the same.
    std::vector<float> narrowLeaves;
    if (!f64Leaves)
      narrowLeaves.assign(p.leaves.begin(), p.leaves.end());
    auto [wd, ws] = bytes(p.words);
    auto [td, ts] = bytes(p.thresholds);
    auto [gd, gs] = bytes(p.targets);
    auto [ld, ls] = f64Leaves ? bytes(p.leaves) : bytes(narrowLeaves);
    // One value per leaf, or [values] of them.
    SmallVector<int64_t> leafShape{count, inner + 1};
    if (values != 1)
      leafShape.push_back(values);
    SmallVector<Value> inputs{
        ins[0],
        addGlobal(call, symbols, "forest_words", {count, inner}, i32, wd, ws),
        addGlobal(call, symbols, "forest_thresholds", {count, inner}, f32, td,
                  ts),
        addGlobal(call, symbols, "forest_targets", {count}, i32, gd, gs),
        addGlobal(call, symbols, "forest_leaves", leafShape,
                  leavesType.getElementType(), ld, ls)};
    // The few-rows walks (x86's vector ones) read a node's threshold and
    // word with one load: an interleaved copy, 8 more bytes per node.
    if (target.hasFeature("avx2")) {
      std::vector<uint32_t> pairs(2 * p.words.size());
      for (size_t i = 0; i < p.words.size(); ++i) {
        std::memcpy(&pairs[2 * i], &p.thresholds[i], 4);
        std::memcpy(&pairs[2 * i + 1], &p.words[i], 4);
      }
      auto [pd, ps] = bytes(pairs);
      inputs.push_back(addGlobal(call, symbols, "forest_pairs", {count, inner},
                                 builder.getI64Type(), pd, ps));
    }
    SmallVector<Value> oldTables(ins.drop_front());
    cuvil::l2::UKernelCallOp laidOut =
        call.cloneWith(builder, inputs, call.getOutputs());
    laidOut->setAttr("cuvil.forest_depth", builder.getI64IntegerAttr(depth));
    laidOut->setAttr("cuvil.forest_comparison",
                     builder.getI64IntegerAttr(comparison));
    call.erase();
    for (Value table : oldTables)
      if (auto get = table.getDefiningOp<memref::GetGlobalOp>();
          get && get->use_empty()) {
        auto global = symbols.lookup<memref::GlobalOp>(get.getName());
        get.erase();
        if (global && SymbolTable::symbolKnownUseEmpty(global, getOperation()))
          symbols.erase(global);
      }
    cuvil::addStatistic(getOperation(), *this, numLaidOut, "laid out");
  }
};

} // namespace
