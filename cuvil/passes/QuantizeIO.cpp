//===- QuantizeIO.cpp - integer inputs and outputs ------------------------===//
//
// A quantized model whose caller keeps data in 8 bits (a camera's uint8
// pixels, the next model's int8 features) should not be made to widen it
// to float32 only for the first layer to quantize it again. With integer
// I/O the function's float32 inputs and outputs become per-tensor
// `!quant.uniform` tensors: the C ABI passes their storage, the metadata
// their scale and zero point.
//
// Each boundary takes the type that costs nothing where one exists: the
// type the model already quantizes an input to (its quantize goes) and
// the type an output was dequantized from (the dequantize goes). Otherwise
// calibration's range of the value (`cuvil.io_range`) gives the uint8 type
// activations get.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/ir/Quantization.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace cuvil {
#define GEN_PASS_DEF_CUVILQUANTIZEIO
#include "cuvil/passes/Passes.h.inc"
} // namespace cuvil

using namespace mlir;
namespace l1 = cuvil::l1;

namespace {

constexpr char kRangeAttr[] = "cuvil.io_range";

bool isF32Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

/// The uint8 type of a calibrated range attribute, or null.
quant::UniformQuantizedType typeFromRange(DictionaryAttr attrs) {
  auto range = attrs ? attrs.getAs<DenseF64ArrayAttr>(kRangeAttr) : nullptr;
  if (!range || range.size() != 2)
    return {};
  return l1::activationType(range.getContext(), range[0], range[1]);
}

/// "input 'x'" (the ABI's name when the model gave one).
std::string describe(DictionaryAttr attrs, bool isInput, unsigned index) {
  std::string what = isInput ? "input " : "output ";
  if (auto name = attrs ? attrs.getAs<StringAttr>("cuvil.name") : nullptr)
    return what + "'" + name.str() + "'";
  return what + std::to_string(index);
}

/// The per-tensor type of the first quantize reading `value`, or null.
quant::UniformQuantizedType quantizedByUser(Value value) {
  for (Operation &op : value.getParentBlock()->getOperations()) {
    auto quantize = dyn_cast<l1::QuantizeOp>(op);
    if (quantize && quantize.getInput() == value)
      if (auto type = dyn_cast<quant::UniformQuantizedType>(
              quantize.getType().getElementType()))
        return type;
  }
  return {};
}

struct QuantizeIO : cuvil::impl::CuvilQuantizeIOBase<QuantizeIO> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    for (BlockArgument arg : func.getArguments())
      if (failed(convertInput(func, arg)))
        return signalPassFailure();
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    for (OpOperand &result : ret->getOpOperands())
      if (failed(convertOutput(func, result)))
        return signalPassFailure();
    func.setType(FunctionType::get(&getContext(),
                                   func.getBody().getArgumentTypes(),
                                   ret.getOperandTypes()));
  }

  LogicalResult convertInput(func::FuncOp func, BlockArgument arg) {
    unsigned index = arg.getArgNumber();
    DictionaryAttr attrs = func.getArgAttrDict(index);
    func.removeArgAttr(index, kRangeAttr);
    if (!isF32Tensor(arg.getType()))
      return success();
    quant::UniformQuantizedType type = quantizedByUser(arg);
    if (!type)
      type = typeFromRange(attrs);
    if (!type)
      return func.emitError("integer I/O: ")
             << describe(attrs, true, index)
             << " is float32, and the model neither quantizes it nor has "
                "a calibrated range for it; calibrate the model "
                "(--quantize=int8) or compile without --integer-io";
    auto tensor = cast<RankedTensorType>(arg.getType());
    Type quantized = tensor.clone(type);
    arg.setType(quantized);
    OpBuilder builder = OpBuilder::atBlockBegin(arg.getOwner());
    Value dequantized;
    for (OpOperand &use : llvm::make_early_inc_range(arg.getUses())) {
      auto quantize = dyn_cast<l1::QuantizeOp>(use.getOwner());
      if (quantize && quantize.getType() == quantized) {
        quantize.replaceAllUsesWith(arg);
        quantize.erase();
        continue;
      }
      if (!dequantized)
        dequantized = l1::DequantizeOp::create(builder, arg.getLoc(), arg);
      use.set(dequantized);
    }
    cuvil::addStatistic(func, *this, numInputs, "inputs");
    return success();
  }

  LogicalResult convertOutput(func::FuncOp func, OpOperand &result) {
    unsigned index = result.getOperandNumber();
    DictionaryAttr attrs = func.getResultAttrDict(index);
    func.removeResultAttr(index, StringAttr::get(&getContext(), kRangeAttr));
    Value value = result.get();
    if (!isF32Tensor(value.getType()))
      return success();
    if (auto dequantize = value.getDefiningOp<l1::DequantizeOp>();
        dequantize && isa<quant::UniformQuantizedType>(
                          dequantize.getInput().getType().getElementType())) {
      result.set(dequantize.getInput());
      if (dequantize->use_empty())
        dequantize.erase();
    } else if (quant::UniformQuantizedType type = typeFromRange(attrs)) {
      OpBuilder builder(result.getOwner());
      auto tensor = cast<RankedTensorType>(value.getType());
      result.set(l1::QuantizeOp::create(builder, value.getLoc(),
                                        tensor.clone(type), value));
    } else {
      return func.emitError("integer I/O: ")
             << describe(attrs, false, index)
             << " is float32, not dequantized by the model and has no "
                "calibrated range; calibrate the model (--quantize=int8) or "
                "compile without --integer-io";
    }
    cuvil::addStatistic(func, *this, numOutputs, "outputs");
    return success();
  }
};

} // namespace
