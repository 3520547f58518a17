//===- Calibration.h - post-training int8 quantization ----------*- C++ -*-===//
//
// Static post-training quantization: the layers cuvil-mark-quantization-
// candidates marked are observed on representative inputs, and each gets
// the range of its activation (cuvil.activation_range), which
// cuvil-quantize-products turns into int8.
//
// The observing runs the float32 model itself: a copy of the module with
// every observed activation added as an output is compiled for this
// machine, loaded through the C ABI and run on the calibration batches, so
// the ranges are those of exactly the arithmetic the model runs.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_QUANTIZATION_CALIBRATION_H
#define CUVIL_QUANTIZATION_CALIBRATION_H

#include "cuvil/quantization/Observers.h"

#include "absl/status/statusor.h"
#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <string>
#include <vector>

namespace cuvil::quantization {

struct CalibrationOptions {
  /// A .npz (numpy.savez) with one array per model input, by name; dimension
  /// 0 counts samples.
  std::string dataPath;
  ObserverKind observer = ObserverKind::kMinMax;
  double percentile = 99.99;
  /// Integer I/O: also observe the model's float32 inputs and outputs and
  /// set their ranges (`cuvil.io_range` on the function's arguments and
  /// results), for cuvil-quantize-io.
  bool observeIo = false;
};

/// One quantized (or kept) layer, as `--quantization-report` shows it.
struct LayerReport {
  std::string node;     ///< the model's node name
  std::string op;       ///< level1 op ("cuvil.gemm")
  std::string location; ///< the user's source line, if known
  double observedMin = 0, observedMax = 0; ///< over the calibration data
  double lo = 0, hi = 0;                   ///< the observer's range
  // What was compiled (from the final level1 IR).
  bool quantized = false;
  std::string activationType; ///< "!quant.uniform<u8:f32, 0.02:128>"
  double scale = 0;
  int64_t zeroPoint = 0;
  double weightScaleMin = 0, weightScaleMax = 0;
  int64_t columns = 0;
};

/// A model input or output under integer I/O.
struct IoReport {
  std::string name;
  bool input = true;
  bool observed = false; ///< calibration observed it (else the model's type)
  double observedMin = 0, observedMax = 0;
  std::string type;    ///< "!quant.uniform<u8:f32, 0.02:128>"
  std::string storage; ///< its C ABI dtype: "uint8", "int8"
  double scale = 0;
  int64_t zeroPoint = 0;
};

struct QuantizationReport {
  std::string observer;
  int64_t samples = 0, calls = 0;
  /// Weights are symmetric int8 in [-weightMax, weightMax]: the target's
  /// `int8_weight_max` (64 where its int8 products need 7-bit weights).
  int64_t weightMax = 127;
  std::vector<LayerReport> layers;
  /// Inputs and outputs passed quantized (integer I/O), in ABI order.
  std::vector<IoReport> io;
  /// Ops kept in float32 and why, one line each.
  std::vector<std::string> float32;

  std::string toText() const;
  std::string toJson() const;
};

/// Compiles a float32 module (level1) for this machine and returns the path
/// of the loadable .so, which the caller removes afterwards.
using HostCompiler =
    std::function<absl::StatusOr<std::string>(mlir::ModuleOp module)>;

/// Observes the activations of `module`'s marked ops over the calibration
/// data (compiling a copy with `compile`) and sets their ranges. Errors:
/// data that does not match the model's inputs (named), a failed build.
absl::StatusOr<QuantizationReport>
calibrate(mlir::ModuleOp module, const CalibrationOptions &options,
          const HostCompiler &compile,
          const std::function<void(absl::string_view)> &progress);

/// Fills the compiled types of the report's layers from `module`, the
/// level1 IR after its pipeline (its cuvil.quantized_matmul ops).
void describeCompiledLayers(mlir::ModuleOp module, QuantizationReport &report);

} // namespace cuvil::quantization

#endif // CUVIL_QUANTIZATION_CALIBRATION_H
