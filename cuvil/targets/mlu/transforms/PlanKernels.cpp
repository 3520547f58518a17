//===- PlanKernels.cpp - cuvil-mlu-plan-kernels ---------------------------===//
//
// Records each micro-kernel call's plan on the MLU chip the module targets
// (plan/KernelPlan.h) as `mlu.plan`, so that --emit=mlir-level2 shows the
// tiles, buffers in NRAM and the task split the serializer then generates.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilAttrs.h"
#include "cuvil/targets/mlu/plan/KernelPlan.h"
#include "cuvil/targets/mlu/transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace cuvil::mlu {
#define GEN_PASS_DEF_CUVILMLUPLANKERNELS
#include "cuvil/targets/mlu/transforms/Passes.h.inc"
} // namespace cuvil::mlu

namespace cuvil::mlu {
namespace {

struct PlanKernelsPass : impl::CuvilMluPlanKernelsBase<PlanKernelsPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    l1::TargetAttr target = l1::TargetAttr::lookup(module);
    absl::StatusOr<Chip> chip =
        lookupChip(target ? target.getCpu() : llvm::StringRef());
    if (!target || !chip.ok()) {
      module.emitError("cuvil-mlu-plan-kernels needs a #cuvil.target whose "
                       "cpu is an MLU chip: ")
          << (chip.ok() ? std::string("the module has none")
                        : std::string(chip.status().message()));
      return signalPassFailure();
    }
    // Control flow first: the ops computing its condition (booleans)
    // would otherwise be refused, far from the cause.
    mlir::WalkResult flow = module.walk([&](mlir::Operation *op) {
      if (!llvm::isa<l2::IfOp, l2::LoopOp>(op))
        return mlir::WalkResult::advance();
      op->emitError("control flow (an ONNX If, Loop or Scan; a scripted if, "
                    "for or while on tensors) cannot run on the MLU target "
                    "yet; the CPU targets compile it");
      return mlir::WalkResult::interrupt();
    });
    if (flow.wasInterrupted())
      return signalPassFailure();
    bool failed = false;
    int64_t elementBytes = elementBytesOf(module);
    mlir::Builder b(&getContext());
    mlir::Type element = elementBytes == 2 ? mlir::Type(b.getF16Type())
                                           : mlir::Type(b.getF32Type());
    module.walk([&](l2::UKernelCallOp call) {
      mlir::FailureOr<Problem> problem = describeCall(call, elementBytes);
      if (mlir::failed(problem)) {
        failed = true;
        return;
      }
      absl::StatusOr<KernelPlan> plan = planKernel(*problem, *chip);
      if (!plan.ok()) {
        call.emitOpError() << "'" << call.getKernel()
                           << "' does not fit the MLU: "
                           << std::string(plan.status().message());
        failed = true;
        return;
      }
      call->setAttr("mlu.plan", plan->toAttr(&getContext(), element));
      ++numPlanned;
      numDoubleBuffered += plan->doubleBuffered;
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
} // namespace cuvil::mlu
