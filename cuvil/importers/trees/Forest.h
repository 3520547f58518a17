//===- Forest.h - building cuvil.tree_ensemble from any library -*- C++ -*-===//
//
// Every tree importer (XGBoost JSON, ONNX-ML TreeEnsemble*, LightGBM text)
// reads its format into TreeNodes, one tree at a time, and lets a Forest
// renumber them breadth first into the op's tables (children adjacent and
// after their parent, each node reached once) and build the op.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_IMPORTERS_TREES_FOREST_H
#define CUVIL_IMPORTERS_TREES_FOREST_H

#include "absl/status/status.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cuvil::trees {

/// cuvil.tree_ensemble's node flags (CuvilOps.td).
enum : int32_t {
  kLeaf = 0,
  kLessThan = 1,
  kLessEqual = 2,
  kGreater = 3,
  kGreaterEqual = 4,
  kEqual = 5,
  kNotEqual = 6,
  /// A categorical split: left when the value's category is in the set.
  kMember = 7,
  /// The bits of the comparison.
  kComparisonBits = 7,
  kMissingGoesLeft = 8,
  /// A value within 1e-35 of zero is missing here too (LightGBM).
  kZeroIsMissing = 16,
  /// kMember: only values >= 0 are categories (XGBoost); else any value
  /// above -1, truncated (LightGBM).
  kWholeCategories = 32,
};

/// One node of a tree as a library stores it.
struct TreeNode {
  /// The comparison that sends a row left, | kMissingGoesLeft; kLeaf.
  int32_t flags = kLeaf;
  int64_t feature = 0;
  double threshold = 0.0;
  /// Branches: the children, as indices into the tree's nodes.
  int64_t left = -1, right = -1;
  /// Leaves: the row of the tree's leaf values (`values` numbers each).
  int64_t leaf = 0;
  /// kMember: the categories that go left, as a bitset (bit c % 32 of
  /// word c / 32).
  std::vector<uint32_t> categories;
};

/// What an imported forest returns, per row.
enum class ForestOutput {
  /// What the library's predict returns (the objective's transform).
  kPrediction,
  /// The sums before it (XGBoost's output_margin, LightGBM's raw_score).
  kMargin,
  /// Each tree's leaf (XGBoost's and LightGBM's pred_leaf), in tree order:
  /// the importer makes each tree its own target whose leaves hold their
  /// numbers, summed from zero, so the op and every walk stay as they are.
  kLeaf,
};

/// How the op sums and transforms (its attributes besides the tables).
struct ForestSemantics {
  mlir::Type thresholdType, leafType;
  std::vector<double> baseValues;
  std::string postTransform = "none", aggregate = "sum";
  std::optional<double> missingValue;
};

class Forest {
public:
  /// A forest over `features` inputs whose leaves hold `values` numbers.
  Forest(int64_t features, int64_t values)
      : features(features), values(values) {}

  /// Appends a tree whose leaf rows add to targets [target, target +
  /// values), walking `nodes` breadth first from `root`. Fails (naming the
  /// node by `where`) on a child out of range or reached twice, a feature
  /// outside the input, a leaf row outside `leafValues`, or past 2^30
  /// nodes.
  absl::Status addTree(llvm::ArrayRef<TreeNode> nodes, int64_t root,
                       int32_t target, llvm::ArrayRef<double> leafValues,
                       const std::function<std::string(int64_t)> &where);

  int64_t treeCount() const { return trees.size() / 2; }

  /// The op over `input` [batch, features], its tables as resource
  /// constants named after `name`. A forest of no trees predicts the base
  /// values: one leaf of zeros says so.
  mlir::Value build(mlir::OpBuilder &builder, mlir::Location loc,
                    mlir::Value input, const ForestSemantics &semantics,
                    llvm::StringRef name);

  /// A module of one func.func @main: `features` [batch, features] of
  /// `inputType` in, the op's result out, named `prediction`, `margin` or
  /// `leaf` by `output`. Null if it does not verify (the diagnostics say
  /// why).
  mlir::OwningOpRef<mlir::ModuleOp>
  buildModule(mlir::MLIRContext &context, mlir::Location loc,
              mlir::Type inputType, const ForestSemantics &semantics,
              llvm::StringRef name, ForestOutput output);

private:
  int64_t features, values;
  std::vector<int32_t> nodes, trees;
  std::vector<double> thresholds, leaves;
  /// The categorical splits' sets: each its word count, then its words.
  std::vector<int32_t> categories;
};

} // namespace cuvil::trees

#endif // CUVIL_IMPORTERS_TREES_FOREST_H
