//===- LowerFixedPoint.cpp - int8 products for the tensor unit ------------===//
//
// MLU2xx's tensor unit multiplies fixed-point tensors: a value is its
// integer times 2^position. An int8 product of the level1 design (power-
// of-two scales, zero point 0: cuvil-quantize-products's `power-of-two`)
// becomes a call of the device library's fixed-point kernels:
//  - its input is the float32 buffer the model quantized (the `quantize`
//    call that wrote the 8-bit one goes once nothing else reads it): the
//    kernel quantizes each tile on chip, at `input_position`;
//  - its weights, a constant, are packed as the tensor unit reads them:
//    a product's [K, N] as [Np][Kp] (N padded to 64 rows, K to 128), a
//    convolution's OIHW as [OCp][KH][KW][Cp] (channels padded to 64), with
//    zeros; `weight_position` records their scale.
// quantized_matmul becomes fixed_matmul, quantized_conv2d fixed_conv2d.
// Any other scale (an imported QDQ model's) is an error naming the layer.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilL2Ops.h"
#include "cuvil/passes/GlobalConstants.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/support/ElementsBytes.h"
#include "cuvil/targets/mlu/transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>

namespace cuvil::mlu {
#define GEN_PASS_DEF_CUVILMLULOWERFIXEDPOINT
#include "cuvil/targets/mlu/transforms/Passes.h.inc"
} // namespace cuvil::mlu

using namespace mlir;
namespace l2 = cuvil::l2;

namespace {

int64_t roundUp(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

/// The call among `buffer`'s users that writes it with `kernel`, or null.
l2::UKernelCallOp writerOf(Value buffer, StringRef kernel) {
  for (Operation *user : buffer.getUsers())
    if (auto call = dyn_cast<l2::UKernelCallOp>(user);
        call && call.getKernel() == kernel &&
        llvm::is_contained(call.getOutputs(), buffer))
      return call;
  return {};
}

/// The fix_position of a per-tensor int8 type with zero point 0 and a
/// power-of-two scale, or failure.
FailureOr<int64_t> positionOf(Type element) {
  auto type = dyn_cast<quant::UniformQuantizedType>(element);
  if (!type || type.getStorageTypeIntegralWidth() != 8 || !type.isSigned() ||
      type.getZeroPoint() != 0)
    return failure();
  int exponent = 0;
  double mantissa = std::frexp(type.getScale(), &exponent);
  if (mantissa != 0.5 || exponent - 1 < -127 || exponent - 1 > 127)
    return failure();
  return exponent - 1;
}

struct LowerFixedPoint
    : cuvil::mlu::impl::CuvilMluLowerFixedPointBase<LowerFixedPoint> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<l2::UKernelCallOp> calls;
    module.walk([&](l2::UKernelCallOp call) {
      if (call.getKernel() == "quantized_matmul" ||
          call.getKernel() == "quantized_conv2d")
        calls.push_back(call);
    });
    for (l2::UKernelCallOp call : calls)
      if (failed(lower(call, symbols)))
        return signalPassFailure();
  }

  InFlightDiagnostic refuse(l2::UKernelCallOp call, const Twine &why) {
    return call.emitOpError()
           << "'" << call.getKernel()
           << "' cannot run on the MLU's tensor unit: " << why;
  }

  LogicalResult lower(l2::UKernelCallOp call, SymbolTable &symbols) {
    bool conv = call.getKernel() == "quantized_conv2d";
    Value a = call.getInputs()[0], w = call.getInputs()[1];
    auto aType = cast<MemRefType>(a.getType());
    auto wType = cast<MemRefType>(w.getType());
    FailureOr<int64_t> inputPosition = positionOf(aType.getElementType());
    FailureOr<int64_t> weightPosition = positionOf(wType.getElementType());
    if (failed(inputPosition) || failed(weightPosition))
      return refuse(call, "MLU2xx's int8 is fixed point, symmetric int8 per "
                          "tensor with power-of-two scales, and this layer's "
                          "types are ")
             << aType.getElementType() << " and " << wType.getElementType()
             << "; compile the float model with --precision=int8 and "
                "calibration data";
    if (*inputPosition + *weightPosition < -127 ||
        *inputPosition + *weightPosition > 127)
      return refuse(call, "the product's fix_position is outside [-127, 127]");
    l2::UKernelCallOp quantize = writerOf(a, "quantize");
    if (!quantize)
      return refuse(call, "its 8-bit input is not one the model quantizes "
                          "(--integer-io does not apply to the MLU target)");
    l2::UKernelCallOp storageCast = writerOf(w, "storage_cast");
    auto getGlobal =
        storageCast
            ? storageCast.getInputs()[0].getDefiningOp<memref::GetGlobalOp>()
            : memref::GetGlobalOp();
    auto global = getGlobal
                      ? symbols.lookup<memref::GlobalOp>(getGlobal.getName())
                      : memref::GlobalOp();
    if (!global || !global.getConstant() || !global.getInitialValue() ||
        !wType.hasStaticShape())
      return refuse(call, "its weights are not a constant");
    absl::StatusOr<std::string> bytes =
        cuvil::getElementsBytes(*global.getInitialValue());
    if (!bytes.ok() ||
        bytes->size() != static_cast<size_t>(wType.getNumElements()))
      return refuse(call, "its int8 weights cannot be read");
    if (conv && (call.getIntParam("groups", 1) != 1 ||
                 llvm::any_of(call.getIntsParam("dilations", {1, 1}),
                              [](int64_t d) { return d != 1; })))
      return refuse(call, "the tensor unit's convolution has no groups or "
                          "dilation");

    SmallVector<int64_t> shape;
    std::vector<char> packed =
        conv ? packConv(wType.getShape(), *bytes, shape)
             : packMatmul(wType.getShape(), *bytes, shape);
    OpBuilder builder(call);
    Value weights =
        addGlobal(call, symbols, global.getSymName() + "_fixed",
                  MemRefType::get(shape, builder.getI8Type()), packed);
    SmallVector<Value> inputs(call.getInputs());
    inputs[0] = quantize.getInputs()[0];
    inputs[1] = weights;
    builder.setInsertionPoint(call);
    l2::UKernelCallOp fixed =
        call.cloneWith(builder, inputs, call.getOutputs());
    fixed.setKernel(conv ? "fixed_conv2d" : "fixed_matmul");
    NamedAttrList params(call.getParamsAttr() ? call.getParamsAttr()
                                              : builder.getDictionaryAttr({}));
    params.set("input_position", builder.getI64IntegerAttr(*inputPosition));
    params.set("weight_position", builder.getI64IntegerAttr(*weightPosition));
    fixed.setParamsAttr(params.getDictionary(builder.getContext()));
    call.erase();
    eraseIfUnused(quantize, a);
    eraseIfUnused(storageCast, w);
    // The int8 weights as stored, once nothing reads them.
    if (getGlobal.use_empty())
      getGlobal.erase();
    if (SymbolTable::symbolKnownUseEmpty(global, getOperation()))
      symbols.erase(global);
    cuvil::addStatistic(getOperation(), *this, numLowered, "lowered");
    return success();
  }

  /// Erases `writer` once its output `buffer` has no other user.
  static void eraseIfUnused(l2::UKernelCallOp writer, Value buffer) {
    if (llvm::all_of(buffer.getUsers(),
                     [&](Operation *user) { return user == writer; }))
      writer.erase();
  }

  /// [K][N] -> [Np][Kp], N padded to 64 and K to 128 with zeros.
  static std::vector<char> packMatmul(ArrayRef<int64_t> kn,
                                      const std::string &bytes,
                                      SmallVector<int64_t> &shape) {
    int64_t K = kn[0], N = kn[1], Np = roundUp(N, 64), Kp = roundUp(K, 128);
    std::vector<char> out(Np * Kp, 0);
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n)
        out[n * Kp + k] = bytes[k * N + n];
    shape = {Np, Kp};
    return out;
  }

  /// OIHW -> [OCp][KH][KW][Cp], channels padded to 64 with zeros.
  static std::vector<char> packConv(ArrayRef<int64_t> oihw,
                                    const std::string &bytes,
                                    SmallVector<int64_t> &shape) {
    int64_t O = oihw[0], C = oihw[1], KH = oihw[2], KW = oihw[3];
    int64_t Op = roundUp(O, 64), Cp = roundUp(C, 64);
    std::vector<char> out(Op * KH * KW * Cp, 0);
    for (int64_t o = 0; o < O; ++o)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw)
            out[((o * KH + kh) * KW + kw) * Cp + c] =
                bytes[((o * C + c) * KH + kh) * KW + kw];
    shape = {Op, KH, KW, Cp};
    return out;
  }

  /// A new private constant global of `type` holding `bytes`, read before
  /// `call`.
  static Value addGlobal(Operation *call, SymbolTable &symbols,
                         const Twine &name, MemRefType type,
                         ArrayRef<char> bytes) {
    return cuvil::createConstantGlobalRead(symbols, call, name.str(), type,
                                           bytes);
  }
};

} // namespace
