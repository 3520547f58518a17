#include "cuvil/ir/Registration.h"

#include "cuvil/ir/CuvilDialect.h"
#include "cuvil/ir/CuvilL2Dialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace cuvil {
namespace {

/// Quantized types as memref element types: level2 buffers keep the scales
/// and zero points of what they store (MemRefElementTypeInterface is a
/// marker; upstream quant types do not declare it).
template <typename QuantType>
struct QuantizedMemRefElement
    : mlir::MemRefElementTypeInterface::ExternalModel<
          QuantizedMemRefElement<QuantType>, QuantType> {};

} // namespace

void registerCuvilDialects(mlir::DialectRegistry &registry) {
  registry.addExtension(+[](mlir::MLIRContext *context,
                            mlir::quant::QuantDialect *) {
    mlir::quant::UniformQuantizedType::attachInterface<
        QuantizedMemRefElement<mlir::quant::UniformQuantizedType>>(*context);
    mlir::quant::UniformQuantizedPerAxisType::attachInterface<
        QuantizedMemRefElement<mlir::quant::UniformQuantizedPerAxisType>>(
        *context);
  });
  registry.insert<
      l1::CuvilDialect, l2::CuvilL2Dialect, mlir::arith::ArithDialect,
      mlir::bufferization::BufferizationDialect, mlir::func::FuncDialect,
      mlir::linalg::LinalgDialect, mlir::math::MathDialect,
      mlir::memref::MemRefDialect, mlir::quant::QuantDialect,
      mlir::scf::SCFDialect,
      mlir::tensor::TensorDialect, mlir::vector::VectorDialect>();
}

} // namespace cuvil
