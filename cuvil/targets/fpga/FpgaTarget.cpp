//===- FpgaTarget.cpp - FPGAs through high-level synthesis ----------------===//
//
// Level1 ends with the design's fixed-point types (FixedPoint.h). From the
// planned level2 module: the chain of layers (model/Network.h), planned
// onto the device (plan/Plan.h), written as an HLS project
// (emit/HlsProject.h). Level2 adds cuvil-fpga-plan-design, which records the
// plan on the neutral lowering's calls; layers are read off those calls,
// whose buffers become the design's arrays (memory planning's arena has no
// meaning in hardware).
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/fpga/FpgaTarget.h"

#include "cuvil/support/SourceEscape.h"
#include "cuvil/support/StatusMacros.h"
#include "cuvil/targets/fpga/FixedPoint.h"
#include "cuvil/targets/fpga/FpgaSettings.h"
#include "cuvil/targets/fpga/device/Device.h"
#include "cuvil/targets/fpga/emit/HlsProject.h"
#include "cuvil/targets/fpga/model/Network.h"
#include "cuvil/targets/fpga/plan/Plan.h"
#include "cuvil/targets/fpga/rtl/VerilogProject.h"
#include "cuvil/targets/fpga/transforms/Passes.h"
#include "cuvil/targets/fpga/transforms/PlanConfig.h"

#include "absl/strings/str_cat.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <algorithm>
#include <optional>
#include <random>

namespace cuvil::fpga {
namespace {

/// Deterministic test inputs, uniform in a range the input type holds.
std::vector<std::vector<double>> testVectors(const DesignPlan &design,
                                             int64_t size, int count) {
  double max = design.input.toDouble(static_cast<int64_t>(design.input.maxRaw()));
  double range = std::min(4.0, 0.75 * max);
  std::mt19937 random(20261202);
  std::uniform_real_distribution<float> uniform(
      design.input.isSigned ? -range : 0, range);
  std::vector<std::vector<double>> samples(count);
  for (std::vector<double> &sample : samples)
    for (int64_t i = 0; i < size; ++i)
      sample.push_back(uniform(random));
  return samples;
}

/// The project names the Verilog top module: not a keyword, not a layer's.
absl::Status checkVerilogName(const std::string &name) {
  static const char *const kKeywords[] = {
      "always", "and", "assign", "begin", "buf", "case", "casex", "casez",
      "cmos", "deassign", "default", "defparam", "disable", "edge", "else",
      "end", "endcase", "endfunction", "endgenerate", "endmodule",
      "endprimitive", "endspecify", "endtable", "endtask", "event", "for",
      "force", "forever", "fork", "function", "generate", "genvar", "if",
      "initial", "inout", "input", "integer", "join", "localparam", "module",
      "nand", "negedge", "nor", "not", "or", "output", "parameter",
      "posedge", "reg", "release", "repeat", "signed", "specify", "task",
      "time", "tri", "wait", "wand", "while", "wire", "wor", "xnor", "xor"};
  bool keyword = std::find(std::begin(kKeywords), std::end(kKeywords), name) !=
                 std::end(kKeywords);
  // layerN, layerN_core and cuvil_add name the design's other modules.
  std::string base = name;
  if (base.size() > 5 && base.compare(base.size() - 5, 5, "_core") == 0)
    base.resize(base.size() - 5);
  bool layer = base.size() > 5 && base.rfind("layer", 0) == 0 &&
               base.find_first_not_of("0123456789", 5) == std::string::npos;
  if (keyword || layer || name == "cuvil_add")
    return absl::InvalidArgumentError(absl::StrCat(
        "--project=", name, " cannot name the Verilog top module: ",
        keyword ? "it is a Verilog keyword"
                : "layerN, layerN_core and cuvil_add name the design's modules",
        "; choose another name"));
  return absl::OkStatus();
}

/// Planning the recorded layers again keeps their decisions: the weights
/// live where level2 says.
absl::Status checkRecordedPlan(const DesignPlan &design) {
  for (const LayerPlan &plan : design.layers) {
    const std::optional<Layer::Decision> &planned = plan.layer->planned;
    if (!planned)
      return absl::InternalError(absl::StrCat(
          "layer ", describeLayer(plan),
          " has no fpga.plan: cuvil-fpga-plan-design plans level2"));
    if (plan.layer->hasWeights() && planned->memory != plan.memory)
      return absl::InternalError(absl::StrCat(
          "layer ", describeLayer(plan), ": level2 keeps its weights in ",
          planned->memory, ", the plan in ", plan.memory));
  }
  return absl::OkStatus();
}

std::vector<std::string> recordedDecisions(mlir::ModuleOp module) {
  std::vector<std::string> decisions;
  module.walk([&](mlir::func::FuncOp func) {
    if (auto recorded = func->getAttrOfType<mlir::ArrayAttr>(kDecisionsAttr))
      for (auto decision : recorded.getAsRange<mlir::StringAttr>())
        decisions.push_back(decision.str());
  });
  return decisions;
}

class FpgaTarget : public TargetBackend {
public:
  llvm::StringRef getName() const override { return "fpga"; }
  llvm::StringRef getDescription() const override {
    return "FPGAs: a Vitis HLS (Xilinx) or oneAPI (Intel) project (C++ "
           "with pragmas, testbench, build scripts, report), or Verilog RTL "
           "with its testbench, in fixed point, scheduled under the "
           "--device's resource budget";
  }
  std::vector<std::string> getTriples() const override { return {}; }
  std::string describeDevices() const override {
    return fpga::describeDevices();
  }

  std::vector<EmitKindInfo> getEmitKinds() const override {
    EmitKindInfo hls{"hls",
                     "an HLS project folder (-o DIR): firmware, testbench and "
                     "vectors, build_prj.tcl and vivado_synth.tcl (Vitis) or "
                     "CMakeLists.txt (oneAPI), Makefile (make csim), "
                     "README.md, report.json and report.txt",
                     {"/"},
                     /*stages=*/2,
                     /*binary=*/true};
    hls.directory = true;
    EmitKindInfo verilog{"verilog",
                         "Verilog RTL (-o DIR): a module per layer and the "
                         "top on AXI4-Stream, weight ROMs, a self-checking "
                         "testbench and vectors, a Makefile for Icarus "
                         "Verilog, Verilator and Yosys, README.md, "
                         "report.json and report.txt",
                         {"/"},
                         /*stages=*/2,
                         /*binary=*/true};
    verilog.directory = true;
    return {hls, verilog};
  }

  absl::Status checkOptions(const TargetOptions &options,
                            llvm::StringRef emit) const override {
    if (options.cpu.empty() || options.cpu == "native")
      return absl::InvalidArgumentError(
          "--target=fpga needs --device=NAME; cuvilc --list-devices lists "
          "the devices");
    if (options.externalWeights)
      return absl::InvalidArgumentError(
          "--external-weights applies to --target=x86; an FPGA design keeps "
          "its weights on chip");
    if (!options.symbolPrefix.empty())
      return absl::InvalidArgumentError(
          "--symbol-prefix applies to the CPU targets' C ABI; name an FPGA "
          "design's top function with --project");
    RETURN_IF_ERROR(lookupDevice(options.cpu).status());
    return parseFpgaSettings(options.settings).status();
  }

  absl::StatusOr<l1::TargetAttr>
  resolveTarget(mlir::MLIRContext *context,
                const TargetOptions &options) const override {
    ASSIGN_OR_RETURN(Device device, lookupDevice(options.cpu));
    ASSIGN_OR_RETURN(FpgaSettings settings,
                     parseFpgaSettings(options.settings));
    mlir::Builder b(context);
    // The device's budget and the user's plan options (PlanConfig.h).
    double clockNs =
        settings.plan.clockNs > 0 ? settings.plan.clockNs : device.clockNs;
    llvm::SmallVector<mlir::NamedAttribute> config = {
        b.getNamedAttr("lut", b.getI64IntegerAttr(device.logicLuts())),
        b.getNamedAttr("ff", b.getI64IntegerAttr(device.ff)),
        b.getNamedAttr("dsp", b.getI64IntegerAttr(device.dsp)),
        b.getNamedAttr("memory_blocks",
                       b.getI64IntegerAttr(device.memoryBlocks())),
        b.getNamedAttr("clock_ns", b.getF64FloatAttr(clockNs)),
    };
    config.append(planConfig(b, settings.plan));
    mlir::DictionaryAttr budget = b.getDictionaryAttr(config);
    l1::TargetAttr defaults = l1::TargetAttr::getDefault(context, "fpga");
    return l1::TargetAttr::get(
        context, "fpga", absl::StrCat("fpga-", device.vendor, "-hls"),
        device.name, defaults.getFeatures(), defaults.getVectorBits(),
        defaults.getL1Bytes(), defaults.getL2Bytes(), defaults.getL3Bytes(),
        /*cores=*/1, defaults.getMemoryBytesPerSecond(),
        defaults.getL2BytesPerSecond(), defaults.getKernelOverheadSeconds(),
        defaults.getBatchingThreshold(), defaults.getInt8WeightMax(), budget);
  }

  void registerPasses() const override { registerCuvilFpgaPasses(); }

  absl::Status finishLevel1(mlir::ModuleOp module, const TargetOptions &options,
                            const PipelineRunner &run) const override {
    ASSIGN_OR_RETURN(FpgaSettings settings,
                     parseFpgaSettings(options.settings));
    return assignFixedPoint(module, settings, run);
  }
  void buildLevel2Pipeline(mlir::OpPassManager &pm) const override {
    pm.addPass(createCuvilFpgaPlanDesign());
  }

  absl::StatusOr<std::vector<ArtifactFile>>
  serialize(mlir::ModuleOp module, llvm::StringRef emit,
            const TargetOptions &options,
            const SerializeInfo &info) const override {
    ASSIGN_OR_RETURN(Device device, lookupDevice(options.cpu));
    ASSIGN_OR_RETURN(FpgaSettings settings, parseFpgaSettings(options.settings));
    info.stage("planning the design on the device");
    ASSIGN_OR_RETURN(Network network, extractNetwork(module));
    std::vector<std::vector<double>> calibration;
    if (!settings.calibration.empty()) {
      ASSIGN_OR_RETURN(calibration,
                       readCalibration(settings.calibration, network));
    }
    // Layers as cuvil-fpga-plan-design recorded them; the notes are its.
    ASSIGN_OR_RETURN(DesignPlan design,
                     planDesign(network, device, settings.plan));
    RETURN_IF_ERROR(checkRecordedPlan(design));
    design.decisions = recordedDecisions(module);
    for (const std::string &decision : design.decisions)
      info.note(decision);
    bool verilog = emit == "verilog";
    std::optional<RtlDesign> rtl;
    if (verilog) {
      RETURN_IF_ERROR(checkVerilogName(settings.project));
      ASSIGN_OR_RETURN(rtl, planRtl(design));
    }
    info.stage(verilog ? "writing the Verilog" : "writing the HLS project");
    ProjectOptions project;
    project.project = settings.project;
    project.modelHash = info.modelHash;
    project.compilerVersion = info.compilerVersion;
    project.context = module.getContext();
    // Representative inputs make the better test; random ones otherwise.
    if (!calibration.empty())
      project.samples.assign(
          calibration.begin(),
          calibration.begin() +
              std::min<size_t>(calibration.size(), settings.testVectors));
    else
      project.samples =
          testVectors(design, network.inputSize, settings.testVectors);
    if (verilog)
      return writeVerilogProject(*rtl, project);
    return writeHlsProject(design, project);
  }
};

} // namespace

void registerFpgaTarget(TargetRegistry &registry) {
  registry.add(std::make_unique<FpgaTarget>());
}

} // namespace cuvil::fpga
