//===- FuseConvInputCasts.cpp - bf16 convolutions round their own input ---===//
//
// A bfloat16 convolution (conv2d with acc_type, cuvil-convert-products-
// to-bf16) reads its input through a float32 -> bfloat16 cast. The x86
// kernel (runtime/bconv) converts the image into its scratch on every call
// anyway (blocked by channel pairs, zero padded) and rounds float32 there
// exactly as the cast does, so the convolution reads the cast's float32
// source instead: no pass over the activation, no bf16 buffer, and the
// float32 input may share its producer's blocked layout. A cast that
// nothing else reads is erased.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilL2Ops.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/targets/cpu/transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace cuvil::cpu {
#define GEN_PASS_DEF_CUVILCPUFUSECONVINPUTCASTS
#include "cuvil/targets/cpu/transforms/Passes.h.inc"
} // namespace cuvil::cpu

using namespace mlir;
using cuvil::l2::UKernelCallOp;

namespace {

/// The float32 -> bfloat16 cast that writes `buffer` (its only writer), or
/// null.
UKernelCallOp castWriting(Value buffer) {
  if (!buffer.getDefiningOp<memref::AllocOp>())
    return {};
  UKernelCallOp writer;
  for (Operation *user : buffer.getUsers()) {
    auto call = dyn_cast<UKernelCallOp>(user);
    if (!call || !llvm::is_contained(call.getOutputs(), buffer))
      continue;
    if (writer)
      return {};
    writer = call;
  }
  if (!writer || writer.getKernel() != "cast" ||
      writer.getInputs().size() != 1 || writer.getOutputs().size() != 1)
    return {};
  auto from = cast<MemRefType>(writer.getInputs()[0].getType());
  auto to = cast<MemRefType>(buffer.getType());
  if (!from.getElementType().isF32() || !to.getElementType().isBF16() ||
      from.getShape() != to.getShape() || !from.getLayout().isIdentity() ||
      !to.getLayout().isIdentity())
    return {};
  return writer;
}

struct FuseConvInputCasts
    : cuvil::cpu::impl::CuvilCpuFuseConvInputCastsBase<FuseConvInputCasts> {
  void runOnOperation() override {
    SmallVector<UKernelCallOp> convs;
    getOperation().walk([&](UKernelCallOp call) {
      if (call.getKernel() == "conv2d" && call.getParam("acc_type") &&
          !call.getInputs().empty())
        convs.push_back(call);
    });
    for (UKernelCallOp conv : convs) {
      Value input = conv.getInputs()[0];
      UKernelCallOp cast = castWriting(input);
      if (!cast)
        continue;
      conv.getInputsMutable()[0].assign(cast.getInputs()[0]);
      cuvil::addStatistic(getOperation(), *this, numFused, "fused");
      // The cast's buffer is written by it alone: erase both once unread.
      if (llvm::all_of(input.getUsers(),
                       [&](Operation *user) { return user == cast; })) {
        cast.erase();
        input.getDefiningOp()->erase();
      }
    }
  }
};

} // namespace
