//===- FixedPoint.cpp - an FPGA design's types, chosen at level1 ----------===//

#include "cuvil/targets/fpga/FixedPoint.h"

#include "cuvil/passes/Passes.h"
#include "cuvil/support/Npz.h"
#include "cuvil/support/SourceEscape.h"
#include "cuvil/support/StatusMacros.h"
#include "cuvil/targets/fpga/plan/Plan.h"
#include "cuvil/targets/fpga/transforms/Passes.h"

#include "absl/strings/str_cat.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <cstring>

namespace cuvil::fpga {
namespace {

/// Sets `cuvil.abs_max` on the sole function's first input and on each
/// level1 op a layer comes from, from the float network on the samples.
absl::Status recordRanges(mlir::ModuleOp module, const std::string &path,
                          const PipelineRunner &run) {
  auto funcs = llvm::to_vector(module.getOps<mlir::func::FuncOp>());
  if (funcs.size() != 1 || funcs.front().getNumArguments() < 1)
    return absl::InvalidArgumentError(
        "the FPGA target builds a model of one function with one input");
  mlir::func::FuncOp func = funcs.front();
  mlir::Builder b(module.getContext());
  // Each op's index travels through the lowering onto its call.
  llvm::SmallVector<mlir::Operation *> ops;
  func.walk([&](mlir::Operation *op) {
    if (op == func)
      return;
    op->setAttr(kLevel1IndexAttr, b.getI64IntegerAttr(ops.size()));
    ops.push_back(op);
  });
  mlir::OwningOpRef<mlir::ModuleOp> copy = module.clone();
  for (mlir::Operation *op : ops)
    op->removeAttr(kLevel1IndexAttr);
  RETURN_IF_ERROR(run(*copy, [](mlir::OpPassManager &pm) {
    pm.addPass(createCuvilLowerToLevel2());
  }));
  ASSIGN_OR_RETURN(Network network, extractNetwork(*copy));
  ASSIGN_OR_RETURN(std::vector<std::vector<double>> samples,
                   readCalibration(path, network));
  std::vector<double> ranges = observeRanges(network, samples);
  func.setArgAttr(0, kAbsMaxAttr, b.getF64FloatAttr(ranges[0]));
  for (size_t l = 0; l < network.layers.size(); ++l) {
    int64_t index = network.layers[l].level1Index;
    if (index < 0 || index >= static_cast<int64_t>(ops.size()))
      return absl::InternalError(
          absl::StrCat("layer ", l + 1, " lost the level1 op it came from"));
    ops[index]->setAttr(kAbsMaxAttr, b.getF64FloatAttr(ranges[l + 1]));
  }
  return absl::OkStatus();
}

} // namespace

absl::Status assignFixedPoint(mlir::ModuleOp module,
                              const FpgaSettings &settings,
                              const PipelineRunner &run) {
  const Precision &precision = settings.precision;
  if (precision.autoWidth) {
    if (settings.calibration.empty())
      return absl::InvalidArgumentError(
          "--precision=auto sizes each tensor's integer bits from "
          "representative inputs: give them with --calibration=FILE.npz");
    RETURN_IF_ERROR(recordRanges(module, settings.calibration, run));
  }
  CuvilFpgaAssignFixedPointOptions options;
  options.precision = precision.autoWidth
                          ? absl::StrCat("auto<", precision.autoWidth, ">")
                          : precision.type.str();
  for (const auto &[node, type] : settings.layerPrecision)
    options.layerPrecision.push_back(absl::StrCat(node, "=", type.str()));
  return run(module, [&](mlir::OpPassManager &pm) {
    pm.addPass(createCuvilFpgaAssignFixedPoint(options));
  });
}

absl::StatusOr<std::vector<std::vector<double>>>
readCalibration(const std::string &path, const Network &network) {
  ASSIGN_OR_RETURN(std::vector<NpyArray> arrays, readNpz(path));
  const NpyArray *array = nullptr;
  for (const NpyArray &candidate : arrays)
    if (candidate.name == network.inputName || arrays.size() == 1)
      array = &candidate;
  auto bad = [&](const std::string &why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--calibration ", path, ": ", why, "; write it with numpy.savez(path, ",
        printableText(network.inputName), "=samples), samples of ",
        network.inputSize, " float32 values along dimension 0"));
  };
  if (!array)
    return bad(absl::StrCat("no array named '",
                            printableText(network.inputName), "'"));
  if ((array->dtype != "float32" && array->dtype != "float64") ||
      array->shape.empty() || array->shape[0] < 1 ||
      array->numElements() != array->shape[0] * network.inputSize)
    return bad(absl::StrCat("the array is ", array->dtype, " of ",
                            array->numElements(), " values"));
  std::vector<std::vector<double>> samples(array->shape[0]);
  const char *data = array->data.data();
  for (int64_t n = 0, k = 0; n < array->shape[0]; ++n)
    for (int64_t i = 0; i < network.inputSize; ++i, ++k) {
      if (array->dtype == "float32") {
        float v;
        std::memcpy(&v, data + 4 * k, 4);
        samples[n].push_back(v);
      } else {
        double v;
        std::memcpy(&v, data + 8 * k, 8);
        samples[n].push_back(v);
      }
    }
  return samples;
}

} // namespace cuvil::fpga
