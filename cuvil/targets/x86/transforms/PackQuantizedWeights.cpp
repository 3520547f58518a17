//===- PackQuantizedWeights.cpp - int8 and bf16 weights of products -------===//
//
// The reduced-precision products' weights, packed for their kernels once,
// at compile time, by the runtime's own packing functions (linked into
// cuvilc).
//
// A "quantized_matmul" or "quantized_conv2d" call reads its weights
// through a storage cast of a constant global (the importer's int8
// initializer; a convolution's OIHW is packed as [C * KH * KW][O]). The weights are
// packed here, once, by the runtime's own cuvil_qgemm_pack_b (linked into
// cuvilc), with their column sums; the output scale of each column (the
// activation's scale times the column's) becomes a third global. The call
// then reads (a, packed, sums, scales, then any fused epilogue's inputs),
// writes (y, A-panel scratch) and is marked packed_b.
//
// A bfloat16 "matmul" (acc_type f32, cuvil-convert-products-to-bf16) reads
// a constant bf16 [K, N] global, packed by cuvil_bgemm_pack_b; the call
// then reads (a, packed, then any fused epilogue's inputs) and writes (y,
// A-panel scratch).
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilL2Ops.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/support/ElementsBytes.h"
#include "cuvil/targets/x86/transforms/Passes.h"

extern "C" {
#include "cuvil/targets/x86/runtime/bgemm/bgemm.h"
#include "cuvil/targets/x86/runtime/qgemm/qgemm.h"
}

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"

#include <cstring>

namespace cuvil::x86 {
#define GEN_PASS_DEF_CUVILX86PACKQUANTIZEDWEIGHTS
#include "cuvil/targets/x86/transforms/Passes.h.inc"
} // namespace cuvil::x86

using namespace mlir;

namespace {

/// The constant global a buffer holds: itself, or what the storage cast
/// that writes it reads.
memref::GlobalOp constantSource(Value buffer, SymbolTable &symbols,
                                cuvil::l2::UKernelCallOp &storageCast) {
  Value source = buffer;
  for (Operation *user : buffer.getUsers())
    if (auto call = dyn_cast<cuvil::l2::UKernelCallOp>(user);
        call && call.getKernel() == "storage_cast" &&
        call.getOutputs()[0] == buffer) {
      storageCast = call;
      source = call.getInputs()[0];
    }
  auto getGlobal = source.getDefiningOp<memref::GetGlobalOp>();
  if (!getGlobal)
    return {};
  auto global = symbols.lookup<memref::GlobalOp>(getGlobal.getName());
  if (!global || !global.getConstant() || !global.getInitialValue())
    return {};
  return global;
}

/// Each column's output scale: the activation's times the weights'.
std::vector<float> columnScales(Type activation, Type weights, int64_t n) {
  double a = cast<quant::UniformQuantizedType>(activation).getScale();
  std::vector<float> scales(n);
  if (auto perTensor = dyn_cast<quant::UniformQuantizedType>(weights)) {
    std::fill(scales.begin(), scales.end(),
              static_cast<float>(a * perTensor.getScale()));
    return scales;
  }
  ArrayRef<double> w =
      cast<quant::UniformQuantizedPerAxisType>(weights).getScales();
  for (int64_t j = 0; j < n; ++j)
    scales[j] = static_cast<float>(a * w[j]);
  return scales;
}

struct PackQuantizedWeights
    : cuvil::x86::impl::CuvilX86PackQuantizedWeightsBase<PackQuantizedWeights> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<cuvil::l2::UKernelCallOp> calls;
    module.walk([&](cuvil::l2::UKernelCallOp call) {
      if ((call.getKernel() == "quantized_matmul" ||
           call.getKernel() == "quantized_conv2d" || isBf16Product(call)) &&
          !call.getPackedB())
        calls.push_back(call);
    });
    for (cuvil::l2::UKernelCallOp call : calls)
      if (failed(isBf16Product(call) ? packBf16(call, symbols)
                                     : pack(call, symbols)))
        return signalPassFailure();
  }

  static bool isBf16Product(cuvil::l2::UKernelCallOp call) {
    return call.getKernel() == "matmul" && call.getParam("acc_type");
  }

  /// An A-panel scratch buffer of `bytes` before `call`.
  static Value allocScratch(cuvil::l2::UKernelCallOp call, size_t bytes) {
    OpBuilder builder(call);
    return memref::AllocOp::create(
        builder, call.getLoc(),
        MemRefType::get({static_cast<int64_t>(bytes)},
                        IntegerType::get(call.getContext(), 8)),
        builder.getI64IntegerAttr(64));
  }

  /// Erases `global`, read through `weights`, if nothing else reads it.
  static void eraseIfUnused(Value weights, memref::GlobalOp global,
                            SymbolTable &symbols) {
    if (Operation *getGlobal = weights.getDefiningOp();
        getGlobal && getGlobal->use_empty())
      getGlobal->erase();
    if (SymbolTable::symbolKnownUseEmpty(global, symbols.getOp()))
      symbols.erase(global);
  }

  LogicalResult packBf16(cuvil::l2::UKernelCallOp call, SymbolTable &symbols) {
    Value a = call.getInputs()[0], w = call.getInputs()[1];
    auto aType = cast<MemRefType>(a.getType());
    auto wType = cast<MemRefType>(w.getType());
    if (!aType.getElementType().isBF16() || !wType.getElementType().isBF16() ||
        wType.getRank() != 2 || !wType.hasStaticShape() || aType.getRank() < 2)
      return call.emitOpError("multiplies bfloat16 [..., M, K] activations "
                              "by static bfloat16 [K, N] weights on the x86 "
                              "target");
    cuvil::l2::UKernelCallOp storageCast;
    memref::GlobalOp global = constantSource(w, symbols, storageCast);
    if (!global || storageCast)
      return call.emitOpError("multiplies bfloat16 only against constant "
                              "weights on the x86 target");
    int64_t k = wType.getDimSize(0), n = wType.getDimSize(1);
    absl::StatusOr<std::string> bytes =
        cuvil::getElementsBytes(*global.getInitialValue());
    if (!bytes.ok() || bytes->size() != static_cast<size_t>(2 * k * n))
      return call.emitOpError("has bfloat16 weights the x86 target cannot "
                              "read");
    std::vector<uint16_t> b(k * n), packed(cuvil_bgemm_packed_bytes(k, n) / 2);
    std::memcpy(b.data(), bytes->data(), bytes->size());
    cuvil_bgemm_pack_b(k, n, b.data(), n, packed.data());
    Value packedB = addGlobal(
        call, symbols, global.getSymName() + "_bpacked",
        MemRefType::get({static_cast<int64_t>(packed.size())},
                        IntegerType::get(call.getContext(), 16)),
        ArrayRef<char>(reinterpret_cast<const char *>(packed.data()),
                       2 * packed.size()));
    int64_t rows = aType.hasStaticShape() ? aType.getNumElements() / k : -1;
    Value scratch = allocScratch(call, cuvil_bgemm_scratch_bytes(rows, k));
    SmallVector<Value> inputs = {a, packedB};
    llvm::append_range(inputs, call.getInputs().drop_front(2));
    OpBuilder builder(call);
    auto packedCall = call.cloneWith(builder, inputs,
                                     ValueRange{call.getOutputs()[0], scratch});
    packedCall.setPackedB(true);
    call.erase();
    eraseIfUnused(w, global, symbols);
    cuvil::addStatistic(getOperation(), *this, numPacked, "packed");
    return success();
  }

  /// A new private constant global of `type` holding `bytes`.
  Value addGlobal(cuvil::l2::UKernelCallOp call, SymbolTable &symbols,
                  const Twine &name, MemRefType type, ArrayRef<char> bytes) {
    AsmResourceBlob blob =
        HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, 64);
    auto value = DenseResourceElementsAttr::get(
        RankedTensorType::get(type.getShape(), type.getElementType()),
        name.str(), std::move(blob));
    auto func = call->getParentOfType<func::FuncOp>();
    OpBuilder builder(func);
    auto global = memref::GlobalOp::create(
        builder, call.getLoc(), name.str(), builder.getStringAttr("private"),
        type, value, /*constant=*/true, builder.getI64IntegerAttr(64));
    symbols.insert(global); // Renames on a clash.
    builder.setInsertionPoint(call);
    return memref::GetGlobalOp::create(builder, call.getLoc(), type,
                                       global.getSymName());
  }

  LogicalResult pack(cuvil::l2::UKernelCallOp call, SymbolTable &symbols) {
    Value a = call.getInputs()[0], w = call.getInputs()[1];
    auto aType = cast<MemRefType>(a.getType());
    auto wType = cast<MemRefType>(w.getType());
    bool conv = call.getKernel() == "quantized_conv2d";
    // What the level1 op verified, for level2 written by hand.
    if (!isa<quant::UniformQuantizedType>(aType.getElementType()) ||
        !isa<quant::QuantizedType>(wType.getElementType()) ||
        wType.getRank() != (conv ? 4 : 2) || !wType.hasStaticShape())
      return call.emitOpError(conv ? "convolves a per-tensor quantized input "
                                     "by static quantized OIHW weights"
                                   : "multiplies a per-tensor quantized lhs "
                                     "by static quantized [K, N] weights");
    cuvil::l2::UKernelCallOp storageCast;
    memref::GlobalOp global = constantSource(w, symbols, storageCast);
    if (!global)
      return call.emitOpError("multiplies int8 only against constant "
                              "weights on the x86 target");
    // B [K, N]: a product's weights, or a convolution's OIHW as
    // [C * KH * KW][O].
    int64_t k = wType.getDimSize(0), n = wType.getDimSize(1);
    if (conv) {
      n = wType.getDimSize(0);
      k = wType.getNumElements() / n;
    }
    absl::StatusOr<std::string> bytes =
        cuvil::getElementsBytes(*global.getInitialValue());
    if (!bytes.ok() || bytes->size() != static_cast<size_t>(k * n))
      return call.emitOpError("has int8 weights the x86 target cannot read");
    if (conv) {
      std::string columns(bytes->size(), '\0');
      for (int64_t o = 0; o < n; ++o)
        for (int64_t r = 0; r < k; ++r)
          columns[r * n + o] = (*bytes)[o * k + r];
      *bytes = std::move(columns);
    }
    std::vector<char> packed(cuvil_qgemm_packed_bytes(k, n));
    std::vector<int32_t> sums(n);
    cuvil_qgemm_pack_b(k, n, reinterpret_cast<const int8_t *>(bytes->data()),
                       n, reinterpret_cast<int8_t *>(packed.data()),
                       sums.data());
    std::vector<float> scales =
        columnScales(aType.getElementType(), wType.getElementType(), n);
    MLIRContext *context = call.getContext();
    StringRef base = global.getSymName();
    Value packedB = addGlobal(
        call, symbols, base + "_qpacked",
        MemRefType::get({static_cast<int64_t>(packed.size())},
                        IntegerType::get(context, 8)),
        packed);
    Value colSums = addGlobal(
        call, symbols, base + "_qsums",
        MemRefType::get({n}, IntegerType::get(context, 32)),
        ArrayRef<char>(reinterpret_cast<const char *>(sums.data()), 4 * n));
    Value colScales = addGlobal(
        call, symbols, base + "_qscales",
        MemRefType::get({n}, Float32Type::get(context)),
        ArrayRef<char>(reinterpret_cast<const char *>(scales.data()), 4 * n));
    // One A panel per chunk of rows: as many as the rows need when they
    // are static, the most a call uses otherwise; a convolution's image
    // unfolded before them.
    int64_t rows = aType.hasStaticShape() ? aType.getNumElements() / k : -1;
    size_t scratchBytes = cuvil_qgemm_scratch_bytes(rows, k);
    if (conv) {
      auto outType = cast<MemRefType>(call.getOutputs()[0].getType());
      int64_t oh = outType.getDimSize(2), ow = outType.getDimSize(3);
      if (ShapedType::isDynamic(oh) || ShapedType::isDynamic(ow))
        return call.emitOpError("needs static spatial sizes on the x86 target");
      scratchBytes = cuvil_qconv2d_scratch_bytes(
          wType.getDimSize(1), wType.getDimSize(2), wType.getDimSize(3), oh, ow);
    }
    Value scratch = allocScratch(call, scratchBytes);
    OpBuilder builder(call);
    // A fused epilogue's inputs (bias, residual) stay last.
    SmallVector<Value> inputs = {a, packedB, colSums, colScales};
    llvm::append_range(inputs, call.getInputs().drop_front(2));
    auto packedCall = call.cloneWith(builder, inputs,
                                     ValueRange{call.getOutputs()[0], scratch});
    packedCall.setPackedB(true);
    if (conv)
      packedCall->setAttr("cuvil.kernel_size",
                          builder.getDenseI64ArrayAttr(
                              {wType.getDimSize(2), wType.getDimSize(3)}));
    call.erase();
    // The unpacked weights, if nothing else reads them.
    if (storageCast && llvm::all_of(w.getUsers(), [&](Operation *user) {
          return user == storageCast.getOperation();
        })) {
      Value source = storageCast.getInputs()[0];
      storageCast.erase();
      if (Operation *alloc = w.getDefiningOp(); alloc && alloc->use_empty())
        alloc->erase();
      eraseIfUnused(source, global, symbols);
    }
    cuvil::addStatistic(getOperation(), *this, numPacked, "packed");
    return success();
  }
};

} // namespace
