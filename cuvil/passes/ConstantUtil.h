//===- ConstantUtil.h - reading and writing constant tensors ----*- C++ -*-===//
//
// Passes that rewrite weights at compile time (prepacking, folding batch
// norm) read a constant's bytes and store new ones as 64-byte aligned
// dense resources, the form the importers give weights.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_PASSES_CONSTANTUTIL_H
#define CUVIL_PASSES_CONSTANTUTIL_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>
#include <string>
#include <vector>

namespace cuvil {

/// The f32 elements of `value` if it is an f32 cuvil.constant.
mlir::FailureOr<std::vector<float>> getF32Constant(mlir::Value value);

/// The value of a splat float cuvil.constant, if `value` is one.
std::optional<llvm::APFloat> getSplatFloat(mlir::Value value);

/// The bytes of `values` (host order), for createResourceConstant.
std::string toBytes(const std::vector<float> &values);

/// A new cuvil.constant of `type` holding `bytes` as a 64-byte aligned
/// dense resource named after `name` (made unique by MLIR).
mlir::Value createResourceConstant(mlir::OpBuilder &builder, mlir::Location loc,
                                   mlir::RankedTensorType type,
                                   llvm::StringRef name,
                                   const std::string &bytes);

} // namespace cuvil

#endif // CUVIL_PASSES_CONSTANTUTIL_H
