//===- LinearLayers.h - the layers int8 quantization converts ---*- C++ -*-===//
//
// Post-training quantization converts the layers level1 can compute in
// integers: a matmul or gemm of a float32 activation by constant float32
// weights (cuvil.quantized_matmul) and a conv2d (grouped or not) by constant
// weights (cuvil.quantized_conv2d). The marking pass picks them and
// the quantizing pass rewrites them; both ask here, so they agree, as
// does the bfloat16 conversion.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_PASSES_LINEARLAYERS_H
#define CUVIL_PASSES_LINEARLAYERS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

#include <optional>
#include <string>
#include <vector>

namespace cuvil {

/// `y = activation @ weights (+ bias)`, weights [k, n] row-major with the
/// gemm's alpha folded in, bias already scaled by beta (null if none).
struct LinearLayer {
  mlir::Value activation;
  std::vector<float> weights;
  int64_t k = 0, n = 0;
  mlir::Value bias;
};

/// Whether `op` is a product quantization considers (matmul, gemm,
/// conv2d).
bool isQuantizableKind(mlir::Operation *op);

/// Why `op`, a product, has no integer form ("its weights are computed at
/// run time", ...), or nullopt if it has.
std::optional<std::string> whyNotIntegerLinear(mlir::Operation *op);

/// Why `op` is not a linear layer of a float32 activation by constant
/// float32 weights (what getLinearLayer reads), or nullopt if it is.
std::optional<std::string> whyNotConstantLinear(mlir::Operation *op);

/// The entry of `keepFp32` that names `op` (at `node`): its node name, a
/// module path inside it (`fc1` in `/fc1/Gemm`, torch.onnx's names), its
/// level1 op name or its ONNX operator (case-insensitive).
std::optional<std::string> keptInFp32(mlir::Operation *op,
                                      llvm::StringRef node,
                                      llvm::ArrayRef<std::string> keepFp32);

/// K of a matmul or gemm with static weights.
int64_t getLinearLayerK(mlir::Operation *op);

/// The layer a matmul or gemm `op` computes; `op` must pass
/// whyNotIntegerLinear. A beta
/// other than 1 scales a constant bias into a new constant before `op`.
LinearLayer getLinearLayer(mlir::Operation *op);

} // namespace cuvil

#endif // CUVIL_PASSES_LINEARLAYERS_H
