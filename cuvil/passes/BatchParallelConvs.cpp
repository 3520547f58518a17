//===- BatchParallelConvs.cpp - merge sibling convolutions ----------------===//
//
// Bandwidth-aware batching: convolutions that read the same tensor with the
// same geometry (an Inception block's 1x1 branches) become one convolution
// over the concatenated weights, followed by a split into the branches'
// results, when BatchingCostModel predicts it pays on the module's target
// (`#cuvil.target`). The input is streamed once instead of once per branch,
// and one larger matrix product replaces several thin ones. A shared
// activation (each branch's conv used only by the same relu or clip) moves
// before the split so that cuvil-fuse-epilogues still fuses it.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/passes/BatchingCostModel.h"
#include "cuvil/passes/ConstantUtil.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <cstring>

namespace cuvil {
#define GEN_PASS_DEF_CUVILBATCHPARALLELCONVS
#include "cuvil/passes/Passes.h.inc"
} // namespace cuvil

using namespace mlir;
namespace l1 = cuvil::l1;

namespace {

/// A candidate branch: the convolution, and the activation that is its only
/// user (or null).
struct Branch {
  l1::Conv2dOp conv;
  Operation *activation = nullptr;
};

int64_t staticBytes(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  int64_t count = 1;
  for (int64_t dim : tensor.getShape())
    count *= ShapedType::isDynamic(dim) ? 1 : dim; // per image for a batch
  return count * 4;
}

/// What must agree for convolutions to merge: geometry, attributes, the
/// activation after them. Empty if the convolution cannot take part.
std::string mergeKey(Branch branch) {
  l1::Conv2dOp conv = branch.conv;
  auto weight = cast<RankedTensorType>(conv.getWeight().getType());
  auto result = cast<RankedTensorType>(conv.getType());
  if (conv.getGroups() != 1 || !weight.hasStaticShape() || !weight.getElementType().isF32() ||
      result.getRank() != 4)
    return "";
  std::string key;
  llvm::raw_string_ostream os(key);
  os << weight.getDimSize(1) << "x" << weight.getDimSize(2) << "x" << weight.getDimSize(3);
  for (int64_t v : conv.getStridesOrDefault())
    os << ",s" << v;
  for (int64_t v : conv.getPaddingOrDefault())
    os << ",p" << v;
  for (int64_t v : conv.getDilationsOrDefault())
    os << ",d" << v;
  if (branch.activation) {
    os << "," << branch.activation->getName().getStringRef();
    for (NamedAttribute attr : branch.activation->getAttrDictionary())
      os << "," << attr.getName().getValue() << "=" << attr.getValue();
  }
  return key;
}


struct BatchParallelConvs : cuvil::impl::CuvilBatchParallelConvsBase<BatchParallelConvs> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    l1::TargetAttr target = l1::TargetAttr::lookupOrDefault(func);

    // Every value of the body is a possible shared input; a value whose op
    // a merge erased is skipped.
    SmallVector<std::pair<Operation *, Value>> sources;
    for (BlockArgument arg : func.getArguments())
      sources.push_back({nullptr, arg});
    for (Operation &op : func.getBody().front())
      for (Value result : op.getResults())
        sources.push_back({&op, result});

    for (auto [owner, source] : sources) {
      if (owner && erased.contains(owner))
        continue;
      std::vector<std::pair<std::string, SmallVector<Branch>>> groups;
      for (Operation *user : source.getUsers()) {
        auto conv = dyn_cast<l1::Conv2dOp>(user);
        if (!conv || conv.getInput() != source || conv->getBlock() != &func.getBody().front())
          continue;
        if (failed(cuvil::getF32Constant(conv.getWeight())) ||
            (conv.getBias() && failed(cuvil::getF32Constant(conv.getBias()))))
          continue;
        Branch branch{conv, nullptr};
        if (conv.getResult().hasOneUse()) {
          Operation *only = *conv.getResult().getUsers().begin();
          if (isa<l1::ReluOp, l1::ClipOp>(only))
            branch.activation = only;
        }
        std::string key = mergeKey(branch);
        if (key.empty())
          continue;
        auto group = llvm::find_if(groups, [&](auto &g) { return g.first == key; });
        if (group == groups.end())
          groups.push_back({key, {}}), group = std::prev(groups.end());
        group->second.push_back(branch);
      }
      for (auto &entry : groups) {
        SmallVector<Branch> &branches = entry.second;
        if (branches.size() < 2)
          continue;
        cuvil::ParallelBranches traffic;
        traffic.inputBytes = staticBytes(source.getType());
        for (Branch &branch : branches) {
          traffic.weightBytes.push_back(staticBytes(branch.conv.getWeight().getType()));
          traffic.outputBytes.push_back(staticBytes(branch.conv.getType()));
        }
        cuvil::BatchingEstimate estimate = cuvil::estimateBatching(target, traffic);
        if (!estimate.pays) {
          cuvil::addStatistic(getOperation(), *this, numRejected, "rejected");
          continue;
        }
        merge(branches);
        cuvil::addStatistic(getOperation(), *this, numMerged, "merged");
        cuvil::addStatistic(getOperation(), *this, numConvsMerged, "convs-merged",
                            branches.size());
      }
    }
  }

  llvm::DenseSet<Operation *> erased;

  void merge(SmallVector<Branch> &branches) {
    // Program order: the merged convolution goes where the first one was.
    llvm::sort(branches, [](Branch a, Branch b) { return a.conv->isBeforeInBlock(b.conv); });
    l1::Conv2dOp first = branches.front().conv;
    auto firstType = cast<RankedTensorType>(first.getType());
    auto weightType = cast<RankedTensorType>(first.getWeight().getType());
    std::vector<float> weights, biases;
    SmallVector<int64_t> sizes;
    SmallVector<Location> locs;
    for (Branch &branch : branches) {
      std::vector<float> w = *cuvil::getF32Constant(branch.conv.getWeight());
      int64_t channels = cast<RankedTensorType>(branch.conv.getType()).getDimSize(1);
      weights.insert(weights.end(), w.begin(), w.end());
      if (Value bias = branch.conv.getBias()) {
        std::vector<float> b = *cuvil::getF32Constant(bias);
        biases.insert(biases.end(), b.begin(), b.end());
      } else {
        biases.insert(biases.end(), channels, 0.0f);
      }
      sizes.push_back(channels);
      locs.push_back(branch.conv.getLoc());
    }
    int64_t total = static_cast<int64_t>(biases.size());

    OpBuilder builder(first);
    Location loc = builder.getFusedLoc(locs);
    Value weight = cuvil::createResourceConstant(
        builder, loc,
        RankedTensorType::get({total, weightType.getDimSize(1), weightType.getDimSize(2),
                               weightType.getDimSize(3)},
                              weightType.getElementType()),
        "conv_weight_batched", cuvil::toBytes(weights));
    Value bias = cuvil::createResourceConstant(
        builder, loc, RankedTensorType::get({total}, weightType.getElementType()),
        "conv_bias_batched", cuvil::toBytes(biases));
    auto merged = cast<l1::Conv2dOp>(builder.clone(*first));
    merged->setLoc(loc);
    merged.getWeightMutable().assign(weight);
    if (merged.getBias())
      merged.getBiasMutable().assign(bias);
    else
      merged.getBiasMutable().append(bias);
    SmallVector<int64_t> shape(firstType.getShape());
    shape[1] = total;
    merged.getResult().setType(RankedTensorType::get(shape, firstType.getElementType()));
    Value combined = merged.getResult();
    if (Operation *activation = branches.front().activation) {
      Operation *shared = builder.clone(*activation);
      shared->setOperand(0, combined);
      shared->getResult(0).setType(combined.getType());
      combined = shared->getResult(0);
    }
    auto split = l1::SplitOp::create(builder, loc, combined, builder.getI64IntegerAttr(1),
                                     builder.getDenseI64ArrayAttr(sizes));
    for (auto [branch, piece] : llvm::zip(branches, split.getResults())) {
      Operation *last = branch.activation ? branch.activation : branch.conv.getOperation();
      last->getResult(0).replaceAllUsesWith(piece);
      if (branch.activation) {
        erased.insert(branch.activation);
        branch.activation->erase();
      }
      erased.insert(branch.conv);
      branch.conv->erase();
    }
  }
};

} // namespace
