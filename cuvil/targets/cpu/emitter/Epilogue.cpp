//===- Epilogue.cpp - a call's fused epilogue as a cuvil_epilogue ---------===//

#include "cuvil/targets/cpu/emitter/Emitter.h"

#include "mlir/Dialect/Quant/IR/QuantTypes.h"

namespace cuvil::cpu::emitter {

Epilogue getEpilogue(const KernelCall &call) {
  using cuvil::l2::EpilogueStep;
  Epilogue epilogue;
  cuvil::l2::EpilogueAttr steps = call.op.getEpilogueAttr();
  if (!steps)
    return epilogue;
  // The verifier checked the order and the inputs: the steps' inputs are
  // the last ones, col_bias first.
  epilogue.present = true;
  epilogue.inputs = steps.getNumExtraInputs();
  size_t next = call.ins.size() - epilogue.inputs;
  for (EpilogueStep step : steps.getSteps()) {
    switch (step) {
    case EpilogueStep::col_bias:
      epilogue.colBias = call.ins[next++];
      break;
    case EpilogueStep::add:
      epilogue.residual = call.ins[next++];
      break;
    case EpilogueStep::relu:
      epilogue.activation = "CUVIL_ACT_RELU";
      break;
    case EpilogueStep::clip:
      epilogue.activation = "CUVIL_ACT_CLIP";
      if (mlir::FloatAttr lo = steps.getClipMin())
        epilogue.lo = lo.getValueAsDouble();
      if (mlir::FloatAttr hi = steps.getClipMax())
        epilogue.hi = hi.getValueAsDouble();
      break;
    case EpilogueStep::hardswish:
      epilogue.activation = "CUVIL_ACT_HARDSWISH";
      break;
    case EpilogueStep::hardsigmoid:
      // lo and hi carry alpha and beta (the op's defaults if absent).
      epilogue.activation = "CUVIL_ACT_HARDSIGMOID";
      epilogue.lo =
          steps.getAlpha() ? steps.getAlpha().getValueAsDouble() : 1.0 / 6.0;
      epilogue.hi = steps.getBeta() ? steps.getBeta().getValueAsDouble() : 0.5;
      break;
    case EpilogueStep::sigmoid:
      epilogue.activation = "CUVIL_ACT_SIGMOID";
      break;
    case EpilogueStep::silu:
      epilogue.activation = "CUVIL_ACT_SILU";
      break;
    case EpilogueStep::quantize:
      epilogue.quantize = true;
      break;
    }
  }
  return epilogue;
}

std::string Epilogue::initializer(const std::string &rowBias,
                                  const std::string &colBiasName) const {
  std::string col = !colBiasName.empty() ? colBiasName
                    : colBias            ? colBias->name
                                         : std::string("NULL");
  // A quantized residual (8 bits per tensor: the emitter checked) goes in
  // the fields after col_bias, read dequantized.
  auto quantized = residual ? mlir::dyn_cast<mlir::quant::UniformQuantizedType>(
                                  residual->type.getElementType())
                            : nullptr;
  std::string residual8;
  if (quantized)
    residual8 = ", " + residual->name + ", " +
                (quantized.isSigned() ? "1" : "0") + ", " +
                literal(quantized.getScale(), quantized.getExpressedType()) +
                ", " + std::to_string(quantized.getZeroPoint()) + ".0f";
  return "{" + rowBias + ", " +
         (residual && !quantized ? residual->name : std::string("NULL")) +
         ", " + activation + ", " + floatLiteral(lo) + ", " + floatLiteral(hi) +
         ", " + col + residual8 + "}";
}

} // namespace cuvil::cpu::emitter
