//===- CuvilOps.h - level1 ops ----------------------------------*- C++ -*-===//

#ifndef CUVIL_IR_CUVILOPS_H
#define CUVIL_IR_CUVILOPS_H

#include "cuvil/ir/CuvilAttrs.h"
#include "cuvil/ir/CuvilDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace cuvil::l1 {
/// Marks ops whose every output element is a function of the input
/// elements at the same index under numpy broadcasting (ElementwiseOps.td):
/// analyses treat them alike without listing them.
template <typename ConcreteType>
class BroadcastElementwise
    : public mlir::OpTrait::TraitBase<ConcreteType, BroadcastElementwise> {};
} // namespace cuvil::l1

#define GET_OP_CLASSES
#include "cuvil/ir/CuvilOps.h.inc"

namespace cuvil::l1 {
/// Whether `type` is a tensor of one `element` (rank 0 or [1]): an if's or
/// loop's condition, a loop's trip count (ControlFlowOps.cpp).
bool isOneElementTensor(mlir::Type type, mlir::Type element);

/// One activation function of a recurrent op (RecurrentOps.td), by its
/// ONNX name ("Sigmoid", "HardSigmoid", ...), with its alpha and beta.
struct RecurrentActivation {
  std::string name;
  double alpha = 0, beta = 0;
};

/// The activations of a recurrent op with `perDirection` functions per
/// direction: `names` (null: the ONNX defaults for `kind`, "rnn", "gru" or
/// "lstm"; names match without case; one direction's list serves both),
/// alphas and betas consumed in order by the functions that take them, the
/// rest their ONNX defaults. Fails with a message in `error`.
mlir::FailureOr<llvm::SmallVector<RecurrentActivation>>
resolveRecurrentActivations(llvm::StringRef kind, mlir::ArrayAttr names,
                            llvm::ArrayRef<double> alphas,
                            llvm::ArrayRef<double> betas, int64_t directions,
                            std::string &error);
} // namespace cuvil::l1

#endif // CUVIL_IR_CUVILOPS_H
