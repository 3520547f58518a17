//===- PrepackWeights.cpp - constant weights in the kernels' layout
//--------===//
//
// Rewrites constant operands at compile time into the layout the x86
// kernels read fastest, so no run-time transpose or strided walk remains:
//   - `cuvil.gemm` with `trans_b` and a constant B (torch.nn.Linear weights,
//     [N, K]) gets B transposed to [K, N] and `trans_b` dropped: the matrix
//     product then streams B rows with unit stride;
//   - `cuvil.transpose` of a constant becomes the transposed constant.
// The bytes are permuted generically (any element type of 8 bits or more);
// results are exactly the same values.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/passes/ConstantUtil.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/passes/Passes.h"
#include "cuvil/support/ElementsBytes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <cstring>
#include <string>

namespace cuvil {
#define GEN_PASS_DEF_CUVILPREPACKWEIGHTS
#include "cuvil/passes/Passes.h.inc"
} // namespace cuvil

using namespace mlir;
namespace l1 = cuvil::l1;

namespace {

/// `bytes` (shape `shape`, `width` bytes per element) permuted: result
/// dimension i is input dimension perm[i].
std::string permute(const std::string &bytes, ArrayRef<int64_t> shape,
                    ArrayRef<int64_t> perm, int64_t width) {
  int64_t rank = shape.size();
  SmallVector<int64_t> inStrides(rank, 1), outShape(rank);
  for (int64_t d = rank - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * shape[d + 1];
  for (int64_t d = 0; d < rank; ++d)
    outShape[d] = shape[perm[d]];
  std::string out(bytes.size(), '\0');
  SmallVector<int64_t> index(rank, 0);
  int64_t count = bytes.size() / width;
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t source = 0;
    for (int64_t d = 0; d < rank; ++d)
      source += index[d] * inStrides[perm[d]];
    std::memcpy(&out[flat * width], &bytes[source * width], width);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < outShape[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

/// The constant `value` permuted by `perm`, or null if it is not a constant
/// this pass can read.
Value transposedConstant(OpBuilder &builder, Location loc, Value value,
                         ArrayRef<int64_t> perm, StringRef name) {
  auto constant = value.getDefiningOp<l1::ConstantOp>();
  auto type = dyn_cast<RankedTensorType>(value.getType());
  // Bit-sized elements (i1) have no byte stride to permute by.
  if (!constant || !type || !type.hasStaticShape() ||
      type.getElementTypeBitWidth() % 8 != 0)
    return {};
  absl::StatusOr<std::string> bytes =
      cuvil::getElementsBytes(constant.getValue());
  if (!bytes.ok())
    return {};
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(type.getDimSize(d));
  return cuvil::createResourceConstant(
      builder, loc, RankedTensorType::get(shape, type.getElementType()), name,
      permute(*bytes, type.getShape(), perm,
              type.getElementTypeBitWidth() / 8));
}

struct PrepackWeights : cuvil::impl::CuvilPrepackWeightsBase<PrepackWeights> {
  void runOnOperation() override {
    int counter = 0;
    auto freshName = [&](StringRef base) {
      return (base + "_prepacked_" + Twine(counter++)).str();
    };
    SmallVector<l1::GemmOp> gemms;
    SmallVector<l1::TransposeOp> transposes;
    getOperation().walk([&](Operation *op) {
      if (auto gemm = dyn_cast<l1::GemmOp>(op); gemm && gemm.getTransB())
        gemms.push_back(gemm);
      if (auto transpose = dyn_cast<l1::TransposeOp>(op))
        transposes.push_back(transpose);
    });
    for (l1::GemmOp gemm : gemms) {
      OpBuilder builder(gemm);
      Value b = transposedConstant(builder, gemm.getLoc(), gemm.getB(), {1, 0},
                                   freshName("gemm_b"));
      if (!b)
        continue;
      gemm.getBMutable().assign(b);
      gemm.removeTransBAttr();
      cuvil::addStatistic(getOperation(), *this, numPrepacked, "prepacked");
    }
    for (l1::TransposeOp transpose : transposes) {
      OpBuilder builder(transpose);
      Value folded =
          transposedConstant(builder, transpose.getLoc(), transpose.getInput(),
                             transpose.getPerm(), freshName("transpose"));
      if (!folded)
        continue;
      transpose.getResult().replaceAllUsesWith(folded);
      transpose.erase();
      cuvil::addStatistic(getOperation(), *this, numPrepacked, "prepacked");
    }
  }
};

} // namespace
