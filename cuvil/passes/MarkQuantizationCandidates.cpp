//===- MarkQuantizationCandidates.cpp - what int8 calibration observes ---===//
//
// Post-training quantization starts here: every linear layer and
// convolution level1 can compute in integers gets
// `cuvil.calibration_point = i`. The driver then
// observes each marked op's activation over the calibration data and sets
// its range (cuvil-quantize-products). Everything else stays float32, and
// the user is told which ops and why, so that no layer is silently left
// slow or silently made inexact.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/passes/LinearLayers.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/passes/Passes.h"
#include "cuvil/support/Diagnostics.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace cuvil {
#define GEN_PASS_DEF_CUVILMARKQUANTIZATIONCANDIDATES
#include "cuvil/passes/Passes.h.inc"
} // namespace cuvil

using namespace mlir;
namespace l1 = cuvil::l1;

namespace {

bool isGroupedOrDilated(Operation *op) {
  auto conv = dyn_cast<l1::Conv2dOp>(op);
  return conv &&
         (conv.getGroups() != 1 ||
          llvm::any_of(conv.getDilations(), [](int64_t d) { return d != 1; }));
}

struct MarkQuantizationCandidates
    : cuvil::impl::CuvilMarkQuantizationCandidatesBase<
          MarkQuantizationCandidates> {
  using CuvilMarkQuantizationCandidatesBase::
      CuvilMarkQuantizationCandidatesBase;

  void runOnOperation() override {
    int64_t next = 0;
    getOperation().walk([&](Operation *op) {
      if (!cuvil::isQuantizableKind(op))
        return;
      std::string node = cuvil::describeLocation(op->getLoc()).node;
      if (std::optional<std::string> entry =
              cuvil::keptInFp32(op, node, keepFp32)) {
        op->emitWarning("kept in float32, as asked (keep-fp32 '")
            << *entry << "')";
        return;
      }
      // Calibration observes the values of the function's own body.
      if (op->getParentOfType<cuvil::l1::IfOp>() ||
          op->getParentOfType<cuvil::l1::LoopOp>()) {
        op->emitWarning("stays float32: it is inside an if or a loop, whose "
                        "values calibration does not observe");
        return;
      }
      if (std::optional<std::string> why = cuvil::whyNotIntegerLinear(op)) {
        op->emitWarning("stays float32: ") << *why;
        return;
      }
      if (!groupedConvolutions && isGroupedOrDilated(op)) {
        op->emitWarning("stays float32: this target's int8 convolutions "
                        "have no groups or dilation");
        return;
      }
      op->setAttr("cuvil.calibration_point",
                  IntegerAttr::get(IntegerType::get(op->getContext(), 64),
                                   next++));
      cuvil::addStatistic(getOperation(), *this, numMarked, "marked");
    });
  }
};

} // namespace
