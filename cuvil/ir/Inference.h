//===- Inference.h - level1 shape inference helpers -------------*- C++ -*-===//
//
// Private to cuvil/ir: what the level1 ops' inference and verifiers share
// (CuvilOps.cpp, ShapeOps.cpp): diagnostics in the user's terms, axes,
// broadcasting, window sizes.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_IR_INFERENCE_H
#define CUVIL_IR_INFERENCE_H

#include "cuvil/ir/CuvilOps.h"

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringExtras.h"

#include <numeric>
#include <optional>
#include <string>

namespace cuvil::l1::inference {

using namespace mlir;

constexpr int64_t kDynamic = ShapedType::kDynamic;

/// "1x?x224" for diagnostics.
inline std::string formatShape(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      shape, os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << '?';
        else
          os << d;
      },
      "x");
  return text;
}

/// "[-1, 4]" for attribute lists, where -1 is a literal, not a dynamic dim.
inline std::string formatList(ArrayRef<int64_t> values) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(values, os);
  os << ']';
  return text;
}

inline std::string formatType(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

/// "f32, f32" (unquoted, unlike streaming a TypeRange into a diagnostic).
inline std::string formatTypes(TypeRange types) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(types, os, [&](Type type) { type.print(os); });
  return text;
}

/// Emits "'<op>' op <message>" at `loc` (if any) and fails.
template <typename... Args>
LogicalResult inferError(std::optional<Location> loc, StringRef opName,
                         Args &&...args) {
  return emitOptionalError(loc, "'", opName, "' op ",
                           std::forward<Args>(args)...);
}

/// Inference runs before operand type constraints are verified (e.g. while
/// parsing), so it must check operand types itself rather than cast.
inline FailureOr<RankedTensorType> getTensorType(Value value,
                                          std::optional<Location> loc,
                                          StringRef opName, StringRef what) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type) {
    (void)inferError(loc, opName, "expects ", what,
                     " to be a ranked tensor, got ",
                     formatType(value.getType()));
    return failure();
  }
  return type;
}

/// Normalizes `axis` in [-rank, rank) to [0, rank).
inline FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                 std::optional<Location> loc, StringRef opName,
                                 StringRef what = "axis") {
  if (axis < -rank || axis >= rank) {
    (void)inferError(loc, opName, what, " ", axis, " is out of range for rank ",
                     rank, " (expected in [", -rank, ", ", rank, "))");
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

/// Normalizes a list of distinct axes.
inline FailureOr<SmallVector<int64_t>> normalizeAxes(ArrayRef<int64_t> axes,
                                              int64_t rank,
                                              std::optional<Location> loc,
                                              StringRef opName) {
  SmallVector<int64_t> result;
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t axis : axes) {
    FailureOr<int64_t> normalized = normalizeAxis(axis, rank, loc, opName);
    if (failed(normalized))
      return failure();
    if (!seen.insert(*normalized).second) {
      (void)inferError(loc, opName, "axis ", axis, " is repeated");
      return failure();
    }
    result.push_back(*normalized);
  }
  return result;
}

/// Numpy broadcasting of two shapes; fails on a static mismatch.
inline FailureOr<SmallVector<int64_t>> broadcast(ArrayRef<int64_t> a,
                                          ArrayRef<int64_t> b,
                                          std::optional<Location> loc,
                                          StringRef opName) {
  SmallVector<int64_t> result;
  if (!OpTrait::util::getBroadcastedShape(a, b, result)) {
    (void)inferError(loc, opName, "cannot broadcast shapes ", formatShape(a),
                     " and ", formatShape(b));
    return failure();
  }
  return result;
}

/// Product of dims, or kDynamic if any is dynamic.
inline int64_t product(ArrayRef<int64_t> dims) {
  int64_t result = 1;
  for (int64_t d : dims) {
    if (ShapedType::isDynamic(d))
      return kDynamic;
    result *= d;
  }
  return result;
}

/// Output size of a sliding window along one spatial dimension.
inline FailureOr<int64_t> windowOutputSize(int64_t in, int64_t kernel, int64_t stride,
                                    int64_t padBegin, int64_t padEnd,
                                    int64_t dilation, bool ceilMode,
                                    std::optional<Location> loc,
                                    StringRef opName) {
  if (ShapedType::isDynamic(in) || ShapedType::isDynamic(kernel))
    return kDynamic;
  int64_t span = in + padBegin + padEnd - dilation * (kernel - 1) - 1;
  if (span < 0) {
    (void)inferError(loc, opName, "window of size ", kernel, " (dilation ",
                     dilation, ") does not fit input size ", in,
                     " with padding ", padBegin, "+", padEnd);
    return failure();
  }
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // PyTorch: the last window must start inside the input or left padding.
  if (ceilMode && (out - 1) * stride >= in + padBegin)
    --out;
  return out;
}

/// Checks a list-valued attribute's length and, optionally, positivity.
inline LogicalResult checkAttrList(ArrayRef<int64_t> values, size_t expectedSize,
                            int64_t minValue, StringRef name,
                            std::optional<Location> loc, StringRef opName) {
  if (values.size() != expectedSize)
    return inferError(loc, opName, "expects ", expectedSize, " values in '",
                      name, "', got ", values.size());
  for (int64_t v : values)
    if (v < minValue)
      return inferError(loc, opName, "expects '", name,
                        "' values >= ", minValue, ", got ", v);
  return success();
}

inline SmallVector<int64_t> withDefault(ArrayRef<int64_t> values, size_t size,
                                 int64_t defaultValue) {
  if (values.empty())
    return SmallVector<int64_t>(size, defaultValue);
  return SmallVector<int64_t>(values);
}

inline LogicalResult checkSameElementType(ArrayRef<RankedTensorType> types,
                                   std::optional<Location> loc,
                                   StringRef opName) {
  for (RankedTensorType type : types.drop_front())
    if (type.getElementType() != types.front().getElementType())
      return inferError(loc, opName,
                        "expects operands of one element type, got ",
                        formatType(types.front()), " and ", formatType(type));
  return success();
}

/// The NCHW result of a 2-D convolution of `inType` by OIHW `wType` (plus a
/// bias of [O]), of `element` (CuvilOps.cpp: conv2d and quantized_conv2d).
LogicalResult inferConv2dType(StringRef name, std::optional<Location> loc,
                              RankedTensorType inType, RankedTensorType wType,
                              std::optional<RankedTensorType> bType,
                              ArrayRef<int64_t> strides,
                              ArrayRef<int64_t> padding,
                              ArrayRef<int64_t> dilations, int64_t groups,
                              Type element, SmallVectorImpl<Type> &types);

} // namespace cuvil::l1::inference

#endif // CUVIL_IR_INFERENCE_H
