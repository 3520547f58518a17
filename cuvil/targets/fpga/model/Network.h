//===- Network.h - a planned module as a chain of FPGA layers ---*- C++ -*-===//
//
// The FPGA target builds a dataflow design: one hardware function per
// layer, each feeding the next. This reads that chain off the planned
// level2 module (micro-kernel calls named after their level1 ops, on
// buffers): dense layers (gemm / matmul with constant weights, with a
// fused ReLU), standalone ReLUs, softmax, and the flatten / reshape views
// between them. What the FPGA target cannot build yet is refused here,
// naming the op and the model's source location.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_FPGA_MODEL_NETWORK_H
#define CUVIL_TARGETS_FPGA_MODEL_NETWORK_H

#include "absl/status/statusor.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cuvil::fpga {

enum class LayerKind { Dense, Relu, Softmax };

const char *layerKindName(LayerKind kind); // "Dense", "Activation", "Softmax"

struct Layer {
  LayerKind kind = LayerKind::Dense;
  /// The model's node name ("/fc1/Gemm"; untrusted text: generated code
  /// only quotes it in comments) and source location, for reports,
  /// messages and per-layer settings.
  std::string node;
  std::string location;
  /// Values in and out (a softmax or ReLU: nIn == nOut).
  int64_t nIn = 0, nOut = 0;
  /// Dense: weights[i * nOut + j] multiplies input i into output j; bias
  /// per output (zeros without one); a ReLU on the result.
  std::vector<double> weights;
  std::vector<double> bias;
  bool relu = false;
};

struct Network {
  /// The model's input and output names (untrusted text).
  std::string inputName, outputName;
  int64_t inputSize = 0, outputSize = 0;
  std::vector<Layer> layers;
};

/// The chain of layers of the planned level2 `module`. InvalidArgument
/// (with the op's location) for ops the FPGA target cannot build.
absl::StatusOr<Network> extractNetwork(mlir::ModuleOp module);

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_MODEL_NETWORK_H
