//===- Quantization.h - quantized types in Cuvil's IR -----------*- C++ -*-===//
//
// Level1 computes on quantized values as tensors of upstream `!quant.uniform`
// element types; level2 buffers keep those types (memrefs of them: the
// dialect registration makes them memref element types) and targets read
// storage, scales and zero points from them.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_IR_QUANTIZATION_H
#define CUVIL_IR_QUANTIZATION_H

#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include <optional>
#include <string>

namespace cuvil::l1 {

/// The integer type a (possibly quantized) element type is stored as: a
/// quantized type's storage (signless for signed storage, `ui<N>` for
/// unsigned, as Cuvil's integer tensors are), any other type itself.
mlir::Type storageElementType(mlir::Type type);

/// Checks that `type` (the `role` of `op`: "input", "result") is a tensor of
/// a uniform quantized type Cuvil computes on.
mlir::LogicalResult verifyQuantizedTensor(mlir::Operation *op,
                                          llvm::StringRef role,
                                          mlir::RankedTensorType type);

/// Why `cuvil.quantized_matmul` cannot multiply these operands (8-bit per
/// tensor lhs [..., M, K]; symmetric int8 rhs [K, N] per tensor or per
/// column; K static, equal and at most 65536), or nullopt if it can.
std::optional<std::string>
quantizedMatmulMismatch(mlir::RankedTensorType lhs, mlir::RankedTensorType rhs);

/// The most taps a depthwise `cuvil.quantized_conv2d` window has: every
/// product (x - zp) * w is a whole number of magnitude <= 255 * 128, so a
/// float32 sum of this many is exact (below 2^24) and targets may sum in
/// float32.
constexpr int64_t kMaxDepthwiseTaps = 512;

/// Whether a convolution of these operands is depthwise: groups = C, one
/// filter per channel.
bool isDepthwise(mlir::RankedTensorType input, mlir::RankedTensorType weight,
                 int64_t groups);

/// Why `cuvil.quantized_conv2d` cannot convolve these operands (8-bit per
/// tensor NCHW input; symmetric int8 OIHW weight per tensor or per output
/// channel, static; C/G * KH * KW at most 65536, a depthwise window at
/// most kMaxDepthwiseTaps taps), or nullopt.
std::optional<std::string>
quantizedConv2dMismatch(mlir::RankedTensorType input,
                        mlir::RankedTensorType weight, int64_t groups);

/// `scale` as the float32 the kernels hold, never zero, subnormal or not
/// finite (1 then).
double kernelScale(double scale);

/// The type an activation observed over [lo, hi] is quantized to: uint8
/// per tensor over [min(lo, 0), max(hi, 0)], so that zero (padding, ReLU)
/// is exact.
mlir::quant::UniformQuantizedType activationType(mlir::MLIRContext *context,
                                                 double lo, double hi);

/// The smallest power of two s with max_abs <= limit * s (1 when max_abs is
/// zero or not finite): a fixed-point scale, 2^position.
double powerOfTwoScale(double maxAbs, double limit);

/// The fixed-point type of an activation observed over [lo, hi]: int8 per
/// tensor, zero point 0, scale powerOfTwoScale(max(|lo|, |hi|), 127).
mlir::quant::UniformQuantizedType
fixedPointActivationType(mlir::MLIRContext *context, double lo, double hi);

} // namespace cuvil::l1

#endif // CUVIL_IR_QUANTIZATION_H
