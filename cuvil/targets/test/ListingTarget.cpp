//===- ListingTarget.cpp - a minimal target that proves the interface ------===//
//
// What a new target needs and nothing more: it registers, resolves its
// device, adds a level2 pass of its own, and serializes the planned level2
// module, here as a text listing of the calls and where their buffers sit
// in the arena. The driver is not touched: TargetInterfaceTest compiles
// through cuvil::compile with a registry holding this target alone.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/test/ListingTarget.h"

#include "cuvil/ir/CuvilL2Ops.h"

#include "absl/strings/str_cat.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"

namespace cuvil::testing {
namespace {

/// The target's own level2 pass: marks every micro-kernel call, so that the
/// test can see the target's passes ran between lowering and planning.
struct MarkCalls
    : mlir::PassWrapper<MarkCalls, mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MarkCalls)
  llvm::StringRef getArgument() const override {
    return "cuvil-listing-mark-calls";
  }
  void runOnOperation() override {
    mlir::Builder builder(&getContext());
    getOperation().walk([&](l2::UKernelCallOp call) {
      call->setAttr("listing.seen", builder.getUnitAttr());
    });
  }
};

/// "name@offset" of the buffer a call reads or writes.
std::string describe(mlir::Value buffer) {
  if (auto view = buffer.getDefiningOp<l2::ViewOp>())
    return absl::StrCat("arena+", view.getOffset());
  if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(buffer))
    return absl::StrCat("arg", arg.getArgNumber());
  if (auto global = buffer.getDefiningOp<mlir::memref::GetGlobalOp>())
    return absl::StrCat("@", global.getName().str());
  return "?";
}

class ListingTarget : public TargetBackend {
public:
  llvm::StringRef getName() const override { return "listing"; }
  llvm::StringRef getDescription() const override {
    return "a text listing of the planned level2 calls (a test target)";
  }
  std::vector<std::string> getTriples() const override {
    return {"listing-unknown-none"};
  }
  std::vector<EmitKindInfo> getEmitKinds() const override {
    return {{"listing", "one line per call", {".txt"}}};
  }
  absl::Status checkOptions(const TargetOptions &options,
                            llvm::StringRef) const override {
    if (options.externalWeights)
      return absl::InvalidArgumentError(
          "the listing target has no weights to keep apart");
    return absl::OkStatus();
  }
  absl::StatusOr<l1::TargetAttr>
  resolveTarget(mlir::MLIRContext *context,
                const TargetOptions &options) const override {
    if (options.cpu != "native" && options.cpu != "paper")
      return absl::InvalidArgumentError(absl::StrCat(
          "the listing target runs on 'paper', not '", options.cpu, "'"));
    l1::TargetAttr target = l1::TargetAttr::getDefault(context, "listing");
    return l1::TargetAttr::get(
        context, "listing", "listing-unknown-none", "paper",
        target.getFeatures(), /*vectorBits=*/0, target.getL1Bytes(),
        target.getL2Bytes(), target.getL3Bytes(), /*cores=*/1,
        target.getMemoryBytesPerSecond(), target.getL2BytesPerSecond(),
        target.getKernelOverheadSeconds(), target.getBatchingThreshold(),
        target.getInt8WeightMax(), target.getConfig());
  }
  void registerPasses() const override {
    mlir::PassRegistration<MarkCalls>();
  }
  void buildLevel2Pipeline(mlir::OpPassManager &pm) const override {
    pm.addPass(std::make_unique<MarkCalls>());
  }
  absl::StatusOr<std::vector<ArtifactFile>>
  serialize(mlir::ModuleOp module, llvm::StringRef emit, const TargetOptions &,
            const SerializeInfo &info) const override {
    info.stage("listing the calls");
    std::string text = absl::StrCat("model ", info.modelHash, "\n");
    for (auto func : module.getOps<mlir::func::FuncOp>()) {
      if (auto arena = func->getAttrOfType<mlir::IntegerAttr>("cuvil.arena_bytes"))
        absl::StrAppend(&text, "arena ", arena.getInt(), " bytes\n");
      func.walk([&](l2::UKernelCallOp call) {
        absl::StrAppend(&text, call.getKernel().str(),
                        call->hasAttr("listing.seen") ? "" : " (unmarked)");
        for (mlir::Value in : call.getInputs())
          absl::StrAppend(&text, " in:", describe(in));
        for (mlir::Value out : call.getOutputs())
          absl::StrAppend(&text, " out:", describe(out));
        text += "\n";
      });
    }
    return std::vector<ArtifactFile>{{".txt", std::move(text)}};
  }
};

} // namespace

void registerListingTarget(TargetRegistry &registry) {
  registry.add(std::make_unique<ListingTarget>());
}

} // namespace cuvil::testing
