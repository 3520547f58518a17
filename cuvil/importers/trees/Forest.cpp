//===- Forest.cpp - building cuvil.tree_ensemble from any library ---------===//

#include "cuvil/importers/trees/Forest.h"

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/passes/ConstantUtil.h"

#include "absl/strings/str_cat.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"

#include <cstring>
#include <deque>

namespace cuvil::trees {

using namespace mlir;

namespace {

constexpr size_t kMaxNodes = size_t(1) << 30;

/// The bytes of `values` as `element` (f32 or f64; i32 as is).
template <typename T>
std::string bytesAs(const std::vector<T> &values, Type element) {
  if (element && element.isF32()) {
    std::vector<float> narrow(values.begin(), values.end());
    return std::string(reinterpret_cast<const char *>(narrow.data()),
                       narrow.size() * sizeof(float));
  }
  return std::string(reinterpret_cast<const char *>(values.data()),
                     values.size() * sizeof(T));
}

} // namespace

absl::Status Forest::addTree(llvm::ArrayRef<TreeNode> tree, int64_t root,
                             int32_t target, llvm::ArrayRef<double> leafValues,
                             const std::function<std::string(int64_t)> &where) {
  int64_t n = tree.size();
  if (root < 0 || root >= n)
    return absl::InvalidArgumentError(
        absl::StrCat(where(-1), ": the root is not one of its ", n, " nodes"));
  std::vector<bool> seen(n, false);
  std::deque<int64_t> queue{root};
  seen[root] = true;
  int32_t next = static_cast<int32_t>(thresholds.size()) + 1;
  trees.insert(trees.end(), {static_cast<int32_t>(thresholds.size()), target});
  while (!queue.empty()) {
    const TreeNode &node = tree[queue.front()];
    int64_t i = queue.front();
    queue.pop_front();
    if (node.flags == kLeaf) {
      if (node.leaf < 0 || (node.leaf + 1) * values > int64_t(leafValues.size()))
        return absl::InvalidArgumentError(
            absl::StrCat(where(i), ": leaf values out of range"));
      nodes.insert(nodes.end(),
                   {static_cast<int32_t>(leaves.size() / values), 0, 0});
      leaves.insert(leaves.end(), leafValues.begin() + node.leaf * values,
                    leafValues.begin() + (node.leaf + 1) * values);
      thresholds.push_back(0.0);
      continue;
    }
    for (int64_t child : {node.left, node.right}) {
      if (child < 0 || child >= n || seen[child])
        return absl::InvalidArgumentError(absl::StrCat(
            where(i), ": child ", child, " is not a new node of the tree's ",
            n));
      seen[child] = true;
      queue.push_back(child);
    }
    if (node.feature < 0 || node.feature >= features)
      return absl::InvalidArgumentError(absl::StrCat(
          where(i), ": splits on feature ", node.feature, " of ", features));
    nodes.insert(nodes.end(),
                 {static_cast<int32_t>(node.feature), next, node.flags});
    next += 2;
    if ((node.flags & kComparisonBits) != kMember) {
      thresholds.push_back(node.threshold);
      continue;
    }
    // The set's offset, exact in either threshold type below 2^24.
    if (categories.size() + node.categories.size() + 1 > (size_t(1) << 24))
      return absl::InvalidArgumentError(
          "the model's category sets pass 2^24 words");
    thresholds.push_back(static_cast<double>(categories.size()));
    categories.push_back(static_cast<int32_t>(node.categories.size()));
    for (uint32_t word : node.categories)
      categories.push_back(static_cast<int32_t>(word));
  }
  if (thresholds.size() > kMaxNodes)
    return absl::InvalidArgumentError("the model has more than 2^30 nodes");
  return absl::OkStatus();
}

Value Forest::build(OpBuilder &builder, Location loc, Value input,
                    const ForestSemantics &semantics, StringRef name) {
  if (nodes.empty()) {
    nodes = {0, 0, 0};
    thresholds = {0.0};
    leaves.assign(values, 0.0);
    trees = {0, 0};
  }
  Type i32 = builder.getI32Type();
  int64_t n = thresholds.size();
  auto constant = [&](ArrayRef<int64_t> shape, Type element,
                      const std::string &bytes, StringRef what) {
    return createResourceConstant(builder, loc,
                                  RankedTensorType::get(shape, element),
                                  (name + "_" + what).str(), bytes);
  };
  Value nodeTable = constant({n, 3}, i32, bytesAs(nodes, i32), "nodes");
  Value thresholdTable =
      constant({n}, semantics.thresholdType,
               bytesAs(thresholds, semantics.thresholdType), "thresholds");
  Value treeTable =
      constant({int64_t(trees.size() / 2), 2}, i32, bytesAs(trees, i32), "trees");
  Value leafTable = constant({int64_t(leaves.size()) / values, values},
                             semantics.leafType,
                             bytesAs(leaves, semantics.leafType), "leaves");
  Value categoryTable;
  if (!categories.empty())
    categoryTable = constant({int64_t(categories.size())}, i32,
                             bytesAs(categories, i32), "categories");
  return l1::TreeEnsembleOp::create(
             builder, NameLoc::get(builder.getStringAttr(name), loc), input,
             nodeTable, thresholdTable, treeTable, leafTable, categoryTable,
             builder.getDenseF64ArrayAttr(semantics.baseValues),
             builder.getStringAttr(semantics.postTransform),
             semantics.missingValue
                 ? builder.getF64FloatAttr(*semantics.missingValue)
                 : FloatAttr(),
             builder.getStringAttr(semantics.aggregate))
      .getResult();
}

OwningOpRef<ModuleOp> Forest::buildModule(MLIRContext &context, Location loc,
                                          Type inputType,
                                          const ForestSemantics &semantics,
                                          StringRef name,
                                          ForestOutput output) {
  OpBuilder builder(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  auto input = RankedTensorType::get({ShapedType::kDynamic, features},
                                     inputType);
  auto func = func::FuncOp::create(builder, loc, "main",
                                   builder.getFunctionType({input}, {}));
  func.setArgAttr(0, "cuvil.name", builder.getStringAttr("features"));
  builder.setInsertionPointToStart(func.addEntryBlock());
  Value result = build(builder, loc, func.getArgument(0), semantics, name);
  func::ReturnOp::create(builder, loc, result);
  func.setType(builder.getFunctionType({input}, {result.getType()}));
  func.setResultAttr(0, "cuvil.name",
                     builder.getStringAttr(output == ForestOutput::kLeaf
                                               ? "leaf"
                                           : output == ForestOutput::kMargin
                                               ? "margin"
                                               : "prediction"));
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

} // namespace cuvil::trees
