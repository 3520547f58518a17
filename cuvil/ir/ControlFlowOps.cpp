//===- ControlFlowOps.cpp - level1 structured control flow ----------------===//
//
// Verification of cuvil.if and cuvil.loop (ControlFlowOps.td), and the fold
// of an if whose condition is a constant into the branch it takes.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace cuvil::l1;

namespace {

/// Checks that `region`'s yield gives `expected` (the region's `what`).
LogicalResult checkYield(Operation *op, Region &region, StringRef what,
                         TypeRange expected) {
  Operation *yield = region.front().getTerminator();
  TypeRange yielded = yield->getOperandTypes();
  if (yielded.size() != expected.size())
    return op->emitOpError() << what << " yields " << yielded.size()
                             << " values, expected " << expected.size();
  for (auto [i, pair] : llvm::enumerate(llvm::zip(yielded, expected)))
    if (std::get<0>(pair) != std::get<1>(pair))
      return op->emitOpError()
             << what << " yields " << std::get<0>(pair) << " as value #" << i
             << ", expected " << std::get<1>(pair)
             << " (each value must keep one shape and element type; a shape "
                "that depends on the data cannot be compiled)";
  return success();
}

/// Replaces an if on a constant condition by the branch it takes.
struct FoldConstantIf : OpRewritePattern<IfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(IfOp op,
                                PatternRewriter &rewriter) const override {
    DenseElementsAttr condition;
    if (!matchPattern(op.getCondition(), m_Constant(&condition)) ||
        condition.getNumElements() != 1)
      return failure();
    Region &taken = *condition.getValues<bool>().begin() ? op.getThenRegion()
                                                          : op.getElseRegion();
    Block &block = taken.front();
    Operation *yield = block.getTerminator();
    SmallVector<Value> results(yield->getOperands());
    rewriter.eraseOp(yield);
    rewriter.inlineBlockBefore(&block, op);
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

bool cuvil::l1::isOneElementTensor(Type type, Type element) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType() == element &&
         tensor.hasStaticShape() && tensor.getNumElements() == 1 &&
         tensor.getRank() <= 1;
}

LogicalResult IfOp::verifyRegions() {
  Type i1 = IntegerType::get(getContext(), 1);
  if (!isOneElementTensor(getCondition().getType(), i1))
    return emitOpError("expects a condition of one i1 (rank 0 or [1]), got ")
           << getCondition().getType();
  if (failed(checkYield(*this, getThenRegion(), "the then branch",
                        getResultTypes())) ||
      failed(checkYield(*this, getElseRegion(), "the else branch",
                        getResultTypes())))
    return failure();
  return success();
}

void IfOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                       MLIRContext *context) {
  patterns.add<FoldConstantIf>(context);
}

LogicalResult LoopOp::verifyRegions() {
  MLIRContext *context = getContext();
  Type i1 = IntegerType::get(context, 1), i64 = IntegerType::get(context, 64);
  if (getCondition().getType() != RankedTensorType::get({}, i1))
    return emitOpError("expects a condition of type tensor<i1>, got ")
           << getCondition().getType();
  if (Value max = getMaxTripCount();
      max && !isOneElementTensor(max.getType(), i64))
    return emitOpError("expects a trip count of one i64 (rank 0 or [1]), got ")
           << max.getType();
  if (getBody().empty())
    return emitOpError("expects a body");
  // (iteration, condition, carried...).
  SmallVector<Type> arguments = {RankedTensorType::get({}, i64),
                                 RankedTensorType::get({}, i1)};
  llvm::append_range(arguments, getInits().getTypes());
  Block &body = getBodyBlock();
  if (body.getArgumentTypes() != TypeRange(arguments)) {
    InFlightDiagnostic error = emitOpError("expects body arguments (");
    llvm::interleaveComma(arguments, error);
    return error << ") (iteration, condition, carried values), got ("
                 << body.getArgumentTypes() << ")";
  }
  if (!body.mightHaveTerminator() || !isa<YieldOp>(body.getTerminator()))
    return emitOpError("expects its body to end in cuvil.yield");
  size_t carried = getInits().size();
  if (getNumResults() < carried)
    return emitOpError("has ")
           << getNumResults() << " results for " << carried
           << " carried values";
  if (TypeRange(getResultTypes()).take_front(carried) != getInits().getTypes())
    return emitOpError("results must begin with the carried values' types");
  // The body yields (condition, carried..., one row per scan output).
  SmallVector<Type> yields = {RankedTensorType::get({}, i1)};
  llvm::append_range(yields, getInits().getTypes());
  unsigned scans = getNumScans();
  std::optional<int64_t> rows = getScanRows();
  if (scans && !rows)
    return emitOpError("has scan outputs but no scan_rows");
  if (rows && *rows < 0)
    return emitOpError("has a negative scan_rows ") << *rows;
  for (Type result : TypeRange(getResultTypes()).drop_front(carried)) {
    auto stacked = cast<RankedTensorType>(result);
    if (stacked.getRank() == 0 || stacked.getDimSize(0) != *rows)
      return emitOpError("scan output ")
             << result << " must stack " << *rows << " rows along dimension 0";
    yields.push_back(RankedTensorType::get(stacked.getShape().drop_front(),
                                           stacked.getElementType()));
  }
  return checkYield(*this, getBody(), "the body", yields);
}
