//===- MluTarget.cpp - Cambricon MLUs through BANG C and CNRT -------------===//
//
// Level2 gets one pass, cuvil-mlu-plan-kernels (tiles, NRAM buffers, task
// split per call); serialize reads the planned module as layers on GDRAM
// buffers (emit/ReadModel.cpp) and writes the project folder.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/mlu/MluTarget.h"

#include "cuvil/support/StatusMacros.h"
#include "cuvil/targets/mlu/chips/Chip.h"
#include "cuvil/targets/mlu/emit/Project.h"
#include "cuvil/targets/mlu/transforms/Passes.h"

#include "absl/strings/str_cat.h"
#include "mlir/IR/Builders.h"

namespace cuvil::mlu {
namespace {

class MluTarget : public TargetBackend {
public:
  llvm::StringRef getName() const override { return "mlu"; }
  llvm::StringRef getDescription() const override {
    return "Cambricon MLUs: a project folder of BANG C kernels, CNRT host "
           "code and a C API for cncc, with the tiles planned into each "
           "--device's NRAM; verified on the host through Cuvil's emulator";
  }
  std::vector<std::string> getTriples() const override { return {}; }
  std::string describeDevices() const override { return describeChips(); }

  std::vector<EmitKindInfo> getEmitKinds() const override {
    EmitKindInfo folder{"mlu",
                        "the project folder (-o DIR): kernels.mlu, host.cpp, "
                        "model.h, weights.bin, CMakeLists.txt for cncc, a "
                        "Makefile for the emulator, README.md, report.json "
                        "and report.txt",
                        {"/"},
                        /*stages=*/2,
                        /*binary=*/true};
    folder.directory = true;
    return {folder};
  }

  absl::Status checkOptions(const TargetOptions &options,
                            llvm::StringRef emit) const override {
    if (options.cpu.empty() || options.cpu == "native")
      return absl::InvalidArgumentError(
          "--target=mlu needs --device=NAME (mlu270, mlu290 or mlu370; "
          "cuvilc --list-devices lists them)");
    if (options.externalWeights)
      return absl::InvalidArgumentError(
          "--external-weights applies to the CPU targets; an MLU project "
          "always keeps its weights in weights.bin");
    if (!options.symbolPrefix.empty())
      return absl::InvalidArgumentError(
          "--symbol-prefix applies to the CPU targets' C ABI");
    RETURN_IF_ERROR(lookupChip(options.cpu).status());
    for (const auto &[name, value] : options.settings) {
      if (name != "precision")
        return absl::InvalidArgumentError(absl::StrCat(
            "the MLU target has no setting '", name, "' (it takes precision)"));
      if (value != "fp32" && value != "fp16" && value != "int8")
        return absl::InvalidArgumentError(
            absl::StrCat("precision '", value,
                         "' is not one the MLU target knows: fp32, "
                         "fp16 or int8"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<l1::TargetAttr>
  resolveTarget(mlir::MLIRContext *context,
                const TargetOptions &options) const override {
    ASSIGN_OR_RETURN(Chip chip, lookupChip(options.cpu));
    mlir::Builder b(context);
    auto precision = options.settings.find("precision");
    mlir::DictionaryAttr config = b.getDictionaryAttr({
        b.getNamedAttr("arch", b.getStringAttr(chip.arch)),
        b.getNamedAttr("precision",
                       b.getStringAttr(precision == options.settings.end()
                                           ? "fp32"
                                           : precision->second)),
        b.getNamedAttr("nram_bytes", b.getI64IntegerAttr(chip.nramBytes)),
        b.getNamedAttr("wram_bytes", b.getI64IntegerAttr(chip.wramBytes)),
        b.getNamedAttr("sram_bytes", b.getI64IntegerAttr(chip.sramBytes)),
        b.getNamedAttr("clusters", b.getI64IntegerAttr(chip.clusters)),
        b.getNamedAttr("cores_per_cluster",
                       b.getI64IntegerAttr(chip.coresPerCluster)),
    });
    l1::TargetAttr defaults = l1::TargetAttr::getDefault(context, "mlu");
    return l1::TargetAttr::get(
        context, "mlu", absl::StrCat("mlu-cambricon-", chip.arch), chip.name,
        defaults.getFeatures(), /*vectorBits=*/kAlignBytes * 8,
        defaults.getL1Bytes(), chip.nramBytes, chip.sramBytes, chip.cores(),
        llvm::APFloat(chip.gdramBytesPerSecond), defaults.getL2BytesPerSecond(),
        llvm::APFloat(chip.launchSeconds), defaults.getBatchingThreshold(),
        defaults.getInt8WeightMax(), config);
  }

  // MLU2xx's tensor unit: fixed point per tensor, no groups or dilation;
  // each product quantizes its float32 input on chip.
  Int8Form int8Form() const override {
    Int8Form form;
    form.powerOfTwoScales = true;
    form.groupedConvolutions = false;
    form.requantizingEpilogues = false;
    return form;
  }
  bool asksInt8(const TargetOptions &options) const override {
    auto precision = options.settings.find("precision");
    return precision != options.settings.end() && precision->second == "int8";
  }

  // Products and convolutions apply these in their finish
  // (cuvil_epilogue_activate), on sums still in NRAM.
  std::vector<std::string> epilogueActivations() const override {
    return {"relu", "clip", "hardswish", "hardsigmoid", "sigmoid", "silu"};
  }

  // Elementwise ops run one kernel each: the device library has no
  // generator for fused maps yet.
  bool generatesFusedMaps() const override { return false; }

  void registerPasses() const override {
    registerCuvilMluLowerFixedPoint();
    registerCuvilMluPlanKernels();
  }
  void buildLevel2Pipeline(mlir::OpPassManager &pm) const override {
    pm.addPass(createCuvilMluLowerFixedPoint());
    pm.addPass(createCuvilMluPlanKernels());
  }

  absl::StatusOr<std::vector<ArtifactFile>>
  serialize(mlir::ModuleOp module, llvm::StringRef emit,
            const TargetOptions &options,
            const SerializeInfo &info) const override {
    ASSIGN_OR_RETURN(Chip chip, lookupChip(options.cpu));
    info.stage("reading the planned layers");
    ASSIGN_OR_RETURN(MluModel model, readModel(module, chip));
    model.modelHash = info.modelHash;
    model.compilerVersion = info.compilerVersion;
    info.stage("writing the BANG C project");
    return writeProject(model);
  }
};

} // namespace

void registerMluTarget(TargetRegistry &registry) {
  registry.add(std::make_unique<MluTarget>());
}

} // namespace cuvil::mlu
