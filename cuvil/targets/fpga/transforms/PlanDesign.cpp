//===- PlanDesign.cpp - cuvil-fpga-plan-design ----------------------------===//
//
// Records the FPGA planner's decisions (plan/Plan.h) on the level2 calls,
// so that --emit=mlir-level2 shows each layer's reuse factor, strategy,
// schedule and where its weights live, and the serializer builds what
// level2 says.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilAttrs.h"
#include "cuvil/targets/fpga/device/Device.h"
#include "cuvil/targets/fpga/model/Network.h"
#include "cuvil/targets/fpga/plan/Plan.h"
#include "cuvil/targets/fpga/transforms/Passes.h"
#include "cuvil/targets/fpga/transforms/PlanConfig.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"

namespace cuvil::fpga {
#define GEN_PASS_DEF_CUVILFPGAPLANDESIGN
#include "cuvil/targets/fpga/transforms/Passes.h.inc"
} // namespace cuvil::fpga

namespace cuvil::fpga {
namespace {

/// A layer's `fpga.plan`.
mlir::DictionaryAttr describePlan(mlir::Builder &b, const LayerPlan &plan) {
  mlir::MLIRContext *context = b.getContext();
  llvm::SmallVector<mlir::NamedAttribute> entries = {
      b.getNamedAttr("reuse_factor", b.getI64IntegerAttr(plan.reuse)),
      b.getNamedAttr("strategy", b.getStringAttr(strategyName(plan.strategy))),
      b.getNamedAttr("ii", b.getI64IntegerAttr(plan.ii)),
      b.getNamedAttr("latency", b.getI64IntegerAttr(plan.latency)),
      b.getNamedAttr("hints",
                     l2::LoopHintsAttr::get(context, plan.ii, plan.multipliers,
                                            /*parallel=*/false)),
  };
  if (plan.layer->hasWeights() && plan.memory != "logic") {
    std::optional<l2::MemorySpace> space =
        l2::symbolizeMemorySpace(plan.memory);
    entries.push_back(
        b.getNamedAttr("memory", l2::MemorySpaceAttr::get(context, *space)));
  }
  return b.getDictionaryAttr(entries);
}

struct PlanDesignPass : impl::CuvilFpgaPlanDesignBase<PlanDesignPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    l1::TargetAttr target = l1::TargetAttr::lookup(module);
    absl::StatusOr<Device> device =
        lookupDevice(target ? target.getCpu() : llvm::StringRef());
    if (!target || !device.ok()) {
      module.emitError("cuvil-fpga-plan-design needs a #cuvil.target whose "
                       "cpu is an FPGA part: ")
          << (device.ok() ? std::string("the module has none")
                          : std::string(device.status().message()));
      return signalPassFailure();
    }
    // Errors about an op are emitted with it; others name no op.
    bool diagnosed = false;
    mlir::ScopedDiagnosticHandler noticeErrors(
        &getContext(), [&](mlir::Diagnostic &diagnostic) {
          diagnosed |=
              diagnostic.getSeverity() == mlir::DiagnosticSeverity::Error;
          return mlir::failure();
        });
    absl::Status status = plan(module, *device, target);
    if (status.ok())
      return;
    if (!diagnosed)
      module.emitError(std::string(status.message()));
    signalPassFailure();
  }

  absl::Status plan(mlir::ModuleOp module, const Device &device,
                    l1::TargetAttr target) {
    absl::StatusOr<Network> network = extractNetwork(module);
    if (!network.ok())
      return network.status();
    absl::StatusOr<DesignPlan> design =
        planDesign(*network, device, readPlanConfig(target.getConfig()));
    if (!design.ok())
      return design.status();
    mlir::Builder b(&getContext());
    for (const LayerPlan &layer : design->layers) {
      layer.layer->call->setAttr(kPlanAttr, describePlan(b, layer));
      ++numPlanned;
      if (layer.layer->hasWeights() && layer.memory != "logic")
        ++numInMemory;
    }
    llvm::SmallVector<mlir::Attribute> decisions;
    for (const std::string &decision : design->decisions)
      decisions.push_back(b.getStringAttr(decision));
    for (auto func : module.getOps<mlir::func::FuncOp>())
      func->setAttr(kDecisionsAttr, b.getArrayAttr(decisions));
    return absl::OkStatus();
  }
};

} // namespace
} // namespace cuvil::fpga
