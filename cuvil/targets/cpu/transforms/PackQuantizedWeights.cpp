//===- PackQuantizedWeights.cpp - int8 and bf16 weights of products -------===//
//
// The reduced-precision products' weights, packed for their kernels once,
// at compile time, by the runtime's own packing functions (linked into
// cuvilc).
//
// A "quantized_matmul" or "quantized_conv2d" call reads its weights
// through a storage cast of a constant global (the importer's int8
// initializer). They are packed for the kernel the call runs, by the
// runtime's own packing function:
//  - a product, or a plain convolution (im2col, each group's OIHW as
//    [C/G * KH * KW][O/G], one after another): cuvil_qgemm_pack_b, with
//    the A-panel (and unfolded image) scratch;
//  - a blocked direct convolution (`direct_blocked`, set by
//    cuvil-cpu-assign-layouts): cuvil_qconvb_pack for its layouts, the
//    converted image as scratch when the tiles cannot read the input in
//    place, and `cuvil.narrow_weights` when vpmaddubsw's tiles take them;
//  - a depthwise convolution: cuvil_qdwconv_pack, as floats, no scratch.
// Their sums (the activation zero point's correction) and each output's
// scale (the activation's scale times the weights', rounded once to f32)
// become globals too. The call then reads (a, packed, sums, scales, then
// any fused epilogue's inputs), writes (y[, scratch]) and is marked
// packed_b; a convolution records its kernel size (`cuvil.kernel_size`).
//
// A float16 "matmul" (cuvil-convert-products-to-f16: float16 operands
// summed in float16) reads a constant f16 [K, N] global, packed in strips
// by cuvil_hgemm_pack_b; the call then reads (a, packed) and writes (y).
//
// A bfloat16 "matmul" (acc_type f32, cuvil-convert-products-to-bf16) reads
// a constant bf16 [K, N] global, packed by cuvil_bgemm_pack_b; the call
// then reads (a, packed, then any fused epilogue's inputs) and writes (y,
// A-panel scratch). A bfloat16 "conv2d" reads constant bf16 OIHW weights,
// packed by cuvil_bconvb_pack for its input's layout and the channel block
// its tiles compute (`cuvil.channel_block`: the output's, or for a plain
// output the target's vector lanes where the channels allow, the tiles'
// blocks then unblocked through the scratch); it then reads (x, packed,
// [bias], then any fused epilogue's inputs), writes (y, scratch), runs
// `direct_blocked` and records its kernel size.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilAttrs.h"
#include "cuvil/ir/CuvilL2Ops.h"
#include "cuvil/passes/GlobalConstants.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/support/ElementsBytes.h"
#include "cuvil/targets/cpu/RuntimeContract.h"
#include "cuvil/targets/cpu/transforms/Passes.h"

extern "C" {
#include "cuvil/targets/cpu/runtime/bconv/bconv.h"
#include "cuvil/targets/cpu/runtime/bgemm/bgemm.h"
#include "cuvil/targets/cpu/runtime/hgemm/hgemm.h"
#include "cuvil/targets/cpu/runtime/qconv/qconv.h"
#include "cuvil/targets/cpu/runtime/qgemm/qgemm.h"
}

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"

#include <cstring>

namespace cuvil::cpu {
#define GEN_PASS_DEF_CUVILCPUPACKQUANTIZEDWEIGHTS
#include "cuvil/targets/cpu/transforms/Passes.h.inc"
} // namespace cuvil::cpu

using namespace mlir;
using cuvil::cpu::channelBlock;

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
    : cuvil::cpu::impl::CuvilCpuPackQuantizedWeightsBase<PackQuantizedWeights> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<cuvil::l2::UKernelCallOp> calls;
    module.walk([&](cuvil::l2::UKernelCallOp call) {
      if ((call.getKernel() == "quantized_matmul" ||
           call.getKernel() == "quantized_conv2d" || isBf16Product(call) ||
           (cuvil::cpu::isF16Product(call) && call.getKernel() == "matmul")) &&
          !call.getPackedB())
        calls.push_back(call);
    });
    for (cuvil::l2::UKernelCallOp call : calls) {
      bool conv = call.getKernel() == "conv2d";
      if (failed(cuvil::cpu::isF16Product(call) ? packF16(call, symbols)
                 : !isBf16Product(call) ? pack(call, symbols)
                 : conv                 ? packBf16Conv(call, symbols)
                                        : packBf16(call, symbols)))
        return signalPassFailure();
    }
  }

  static bool isBf16Product(cuvil::l2::UKernelCallOp call) {
    return (call.getKernel() == "matmul" || call.getKernel() == "conv2d") &&
           call.getParam("acc_type");
  }

  /// The global holding the constant half-precision (`precision`:
  /// bfloat16, float16) weights `w` reads (directly) and its bytes, `count`
  /// elements; an error on `call` otherwise.
  FailureOr<std::pair<memref::GlobalOp, std::string>>
  readHalfWeights(cuvil::l2::UKernelCallOp call, Value w, SymbolTable &symbols,
                  int64_t count, StringRef precision) {
    cuvil::l2::UKernelCallOp storageCast;
    memref::GlobalOp global = constantSource(w, symbols, storageCast);
    if (!global || storageCast)
      return call.emitOpError("multiplies ")
             << precision << " only against constant weights on the CPU targets";
    absl::StatusOr<std::string> bytes =
        cuvil::getElementsBytes(*global.getInitialValue());
    if (!bytes.ok() || bytes->size() != static_cast<size_t>(2 * count))
      return call.emitOpError("has ")
             << precision << " weights the CPU targets cannot read";
    return std::make_pair(global, std::move(*bytes));
  }

  /// The output channels a bfloat16 convolution with a plain output
  /// computes per tile: the target's 32-bit lanes (16, or 8 when the
  /// channels are multiples of 8 only), or 1 (the reference) below AVX2.
  static int64_t computeBlock(cuvil::l2::UKernelCallOp call, int64_t oc) {
    int64_t lanes =
        cuvil::l1::TargetAttr::lookupOrDefault(
            call->getParentOfType<ModuleOp>())
            .getVectorBits() /
        32;
    while (lanes >= 8 && oc % lanes != 0)
      lanes /= 2;
    return lanes >= 8 ? lanes : 1;
  }

  LogicalResult packBf16Conv(cuvil::l2::UKernelCallOp call,
                             SymbolTable &symbols) {
    Value x = call.getInputs()[0], w = call.getInputs()[1];
    auto in = cast<MemRefType>(x.getType());
    auto wType = cast<MemRefType>(w.getType());
    auto out = cast<MemRefType>(call.getOutputs()[0].getType());
    Type inElement = in.getElementType();
    if (!(inElement.isF32() || inElement.isBF16()) ||
        !wType.getElementType().isBF16() || wType.getRank() != 4 ||
        !wType.hasStaticShape() || in.getRank() != 4 ||
        llvm::any_of(in.getShape().drop_front(), ShapedType::isDynamic) ||
        llvm::any_of(out.getShape().drop_front(), ShapedType::isDynamic) ||
        call.getIntParam("groups", 1) != 1)
      return call.emitOpError("convolves a float32 or bfloat16 NCHW input of "
                              "static image size by static bfloat16 OIHW "
                              "weights, ungrouped, on the CPU targets");
    int64_t oc = wType.getDimSize(0), c = wType.getDimSize(1),
            kh = wType.getDimSize(2), kw = wType.getDimSize(3);
    FailureOr<std::pair<memref::GlobalOp, std::string>> weights =
        readHalfWeights(call, w, symbols, oc * c * kh * kw, "bfloat16");
    if (failed(weights))
      return failure();
    int64_t inBlock = channelBlock(x),
            outBlock = channelBlock(call.getOutputs()[0]);
    int64_t block = outBlock > 1 ? outBlock : computeBlock(call, oc);
    std::vector<uint16_t> oihw(oc * c * kh * kw),
        packed(cuvil_bconvb_packed_elements(oc, c, kh, kw, inBlock, block));
    std::memcpy(oihw.data(), weights->second.data(), weights->second.size());
    cuvil_bconvb_pack(oc, c, kh, kw, oihw.data(), inBlock, block,
                      packed.data());
    Value packedW = addGlobal(
        call, symbols, weights->first.getSymName() + "_bpacked",
        MemRefType::get({static_cast<int64_t>(packed.size())},
                        IntegerType::get(call.getContext(), 16)),
        ArrayRef<char>(reinterpret_cast<const char *>(packed.data()),
                       2 * packed.size()));
    SmallVector<int64_t> st = call.getIntsParam("strides", {1, 1});
    SmallVector<int64_t> dl = call.getIntsParam("dilations", {1, 1});
    Value scratch = allocScratch(
        call, cuvil_bconvb_scratch_bytes(c, inBlock, kh, kw, st[0], st[1],
                                         dl[0], dl[1], oc, out.getDimSize(2),
                                         out.getDimSize(3), block, outBlock));
    SmallVector<Value> inputs = {x, packedW};
    llvm::append_range(inputs, call.getInputs().drop_front(2));
    OpBuilder builder(call);
    auto packedCall = call.cloneWith(builder, inputs,
                                     ValueRange{call.getOutputs()[0], scratch});
    packedCall.setPackedB(true);
    packedCall.setAlgorithm(cuvil::l2::Algorithm::direct_blocked);
    packedCall->setAttr("cuvil.kernel_size",
                        builder.getDenseI64ArrayAttr({kh, kw}));
    packedCall->setAttr("cuvil.channel_block",
                        builder.getI64IntegerAttr(block));
    eraseReplaced(call);
    eraseIfUnused(w, weights->first, symbols);
    cuvil::addStatistic(getOperation(), *this, numPacked, "packed");
    return success();
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

  /// Erases `call`, replaced by its packed clone, and the scratch buffers
  /// it had that nothing reads any more.
  static void eraseReplaced(cuvil::l2::UKernelCallOp call) {
    SmallVector<Value> scratch(call.getOutputs().drop_front());
    call.erase();
    for (Value v : scratch)
      if (Operation *alloc = v.getDefiningOp(); alloc && alloc->use_empty())
        alloc->erase();
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
                              "by static bfloat16 [K, N] weights on the CPU "
                              "target");
    int64_t k = wType.getDimSize(0), n = wType.getDimSize(1);
    FailureOr<std::pair<memref::GlobalOp, std::string>> weights =
        readHalfWeights(call, w, symbols, k * n, "bfloat16");
    if (failed(weights))
      return failure();
    memref::GlobalOp global = weights->first;
    std::vector<uint16_t> b(k * n), packed(cuvil_bgemm_packed_bytes(k, n) / 2);
    std::memcpy(b.data(), weights->second.data(), weights->second.size());
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

  /// A float16 "matmul" (cuvil-convert-products-to-f16): its constant
  /// [K, N] weights packed in strips by cuvil_hgemm_pack_b; no scratch.
  LogicalResult packF16(cuvil::l2::UKernelCallOp call, SymbolTable &symbols) {
    Value a = call.getInputs()[0], w = call.getInputs()[1];
    auto aType = cast<MemRefType>(a.getType());
    auto wType = cast<MemRefType>(w.getType());
    if (!wType.getElementType().isF16() || wType.getRank() != 2 ||
        !wType.hasStaticShape() || aType.getRank() < 2 ||
        call.getInputs().size() != 2)
      return call.emitOpError("multiplies float16 [..., M, K] activations by "
                              "static float16 [K, N] weights on the CPU "
                              "targets");
    int64_t k = wType.getDimSize(0), n = wType.getDimSize(1);
    FailureOr<std::pair<memref::GlobalOp, std::string>> weights =
        readHalfWeights(call, w, symbols, k * n, "float16");
    if (failed(weights))
      return failure();
    memref::GlobalOp global = weights->first;
    std::vector<uint16_t> b(k * n), packed(cuvil_hgemm_packed_halves(k, n));
    std::memcpy(b.data(), weights->second.data(), weights->second.size());
    cuvil_hgemm_pack_b(k, n, b.data(), n, packed.data());
    Value packedB = addGlobal(
        call, symbols, global.getSymName() + "_hpacked",
        MemRefType::get({static_cast<int64_t>(packed.size())},
                        IntegerType::get(call.getContext(), 16)),
        ArrayRef<char>(reinterpret_cast<const char *>(packed.data()),
                       2 * packed.size()));
    OpBuilder builder(call);
    auto packedCall =
        call.cloneWith(builder, ValueRange{a, packedB}, call.getOutputs());
    packedCall.setPackedB(true);
    call.erase();
    eraseIfUnused(w, global, symbols);
    cuvil::addStatistic(getOperation(), *this, numPacked, "packed");
    return success();
  }

  /// A new private constant global of `type` holding `bytes`, read before
  /// `call`.
  static Value addGlobal(Operation *call, SymbolTable &symbols,
                         const Twine &name, MemRefType type,
                         ArrayRef<char> bytes) {
    return cuvil::createConstantGlobalRead(symbols, call, name.str(), type,
                                           bytes);
  }

  /// The weights a quantized call reads, as stored: a product's [K, N], a
  /// convolution's OIHW.
  struct Weights {
    memref::GlobalOp global;
    cuvil::l2::UKernelCallOp storageCast;
    std::string bytes;
  };

  FailureOr<Weights> readWeights(cuvil::l2::UKernelCallOp call,
                                 SymbolTable &symbols) {
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
    Weights weights;
    weights.global = constantSource(w, symbols, weights.storageCast);
    if (!weights.global)
      return call.emitOpError("multiplies int8 only against constant "
                              "weights on the CPU targets");
    absl::StatusOr<std::string> bytes =
        cuvil::getElementsBytes(*weights.global.getInitialValue());
    if (!bytes.ok() ||
        bytes->size() != static_cast<size_t>(wType.getNumElements()))
      return call.emitOpError("has int8 weights the CPU targets cannot read");
    weights.bytes = std::move(*bytes);
    return weights;
  }

  /// The packed form of a call's weights for its kernel, and its scratch.
  struct Packed {
    std::vector<char> weights;
    std::vector<int32_t> sums;
    Type element; // of the packed weights
    size_t scratchBytes = 0;
    bool narrow = false;
  };

  /// A product's [K, N] (or an im2col convolution's OIHW, each group's as
  /// [C/G * KH * KW][O/G], one after another) for the qgemm tiles, with
  /// one A panel per chunk of rows: as many as the rows need when they are
  /// static, the most a call uses otherwise; a convolution's image (one
  /// group's channels) unfolded before them.
  FailureOr<Packed> packForGemm(cuvil::l2::UKernelCallOp call,
                                const std::string &bytes) {
    bool conv = call.getKernel() == "quantized_conv2d";
    auto aType = cast<MemRefType>(call.getInputs()[0].getType());
    auto wType = cast<MemRefType>(call.getInputs()[1].getType());
    int64_t groups = conv ? call.getIntParam("groups", 1) : 1;
    // Per group: K rows, N columns.
    int64_t k = wType.getDimSize(0), n = wType.getDimSize(1);
    if (conv) {
      n = wType.getDimSize(0) / groups;
      k = wType.getNumElements() / wType.getDimSize(0);
    }
    size_t groupBytes = cuvil_qgemm_packed_bytes(k, n);
    Packed packed;
    packed.weights.resize(groups * groupBytes);
    packed.sums.resize(groups * n);
    packed.element = IntegerType::get(call.getContext(), 8);
    std::string columns = conv ? std::string(k * n, '\0') : bytes;
    for (int64_t g = 0; g < groups; ++g) {
      // A convolution's group: output channel o's OIHW row is column o.
      if (conv)
        for (int64_t o = 0; o < n; ++o)
          for (int64_t r = 0; r < k; ++r)
            columns[r * n + o] = bytes[(g * n + o) * k + r];
      cuvil_qgemm_pack_b(
          k, n, reinterpret_cast<const int8_t *>(columns.data()), n,
          reinterpret_cast<int8_t *>(packed.weights.data() + g * groupBytes),
          packed.sums.data() + g * n);
    }
    packed.narrow = cuvil_int8_pairs_are_narrow(
        reinterpret_cast<const int8_t *>(packed.weights.data()),
        packed.weights.size());
    int64_t rows = aType.hasStaticShape() ? aType.getNumElements() / k : -1;
    packed.scratchBytes = cuvil_qgemm_scratch_bytes(rows, k);
    if (conv) {
      auto outType = cast<MemRefType>(call.getOutputs()[0].getType());
      packed.scratchBytes = cuvil_qconv2d_scratch_bytes(
          aType.getDimSize(1), wType.getDimSize(2), wType.getDimSize(3),
          outType.getDimSize(2), outType.getDimSize(3), groups);
    }
    return packed;
  }

  /// A blocked direct convolution's OIHW for the qconvb tiles
  /// ([OC/B][C/ib][KH][KW][ib/4][B][4]), whether they are narrow (the
  /// vpmaddubsw tiles take them), and the converted image as scratch when
  /// the tiles cannot read the input in place.
  FailureOr<Packed> packForTiles(cuvil::l2::UKernelCallOp call,
                                 const std::string &bytes) {
    Value x = call.getInputs()[0];
    auto in = cast<MemRefType>(x.getType());
    auto wType = cast<MemRefType>(call.getInputs()[1].getType());
    auto out = cast<MemRefType>(call.getOutputs()[0].getType());
    int64_t oc = wType.getDimSize(0), c = wType.getDimSize(1),
            kh = wType.getDimSize(2), kw = wType.getDimSize(3);
    int64_t inBlock = channelBlock(x),
            block = channelBlock(call.getOutputs()[0]);
    if (block != 8 && block != 16)
      return call.emitOpError("a blocked int8 convolution writes NCHW8c or "
                              "NCHW16c on the CPU targets");
    Packed packed;
    packed.weights.resize(
        cuvil_qconvb_packed_bytes(oc, c, kh, kw, inBlock, block));
    packed.sums.resize(oc);
    packed.element = IntegerType::get(call.getContext(), 8);
    auto *weights = reinterpret_cast<int8_t *>(packed.weights.data());
    cuvil_qconvb_pack(oc, c, kh, kw,
                      reinterpret_cast<const int8_t *>(bytes.data()), inBlock,
                      block, weights, packed.sums.data());
    packed.narrow = cuvil_int8_pairs_are_narrow(weights, packed.weights.size());
    SmallVector<int64_t> st = call.getIntsParam("strides", {1, 1});
    SmallVector<int64_t> pd = call.getIntsParam("padding", {0, 0, 0, 0});
    SmallVector<int64_t> dl = call.getIntsParam("dilations", {1, 1});
    auto q = cast<quant::UniformQuantizedType>(in.getElementType());
    packed.scratchBytes = cuvil_qconvb_scratch_bytes(
        c, inBlock, q.isSigned(), in.getDimSize(2), in.getDimSize(3), kh, kw,
        st[0], st[1], pd[0], pd[1], dl[0], dl[1], out.getDimSize(2),
        out.getDimSize(3));
    return packed;
  }

  /// A depthwise convolution's [C, 1, KH, KW] as floats in its output's
  /// blocks ([C/B][KH][KW][B]) for cuvil_qdwconv; it needs no scratch.
  FailureOr<Packed> packForDepthwise(cuvil::l2::UKernelCallOp call,
                                     const std::string &bytes) {
    auto wType = cast<MemRefType>(call.getInputs()[1].getType());
    int64_t c = wType.getDimSize(0), kh = wType.getDimSize(2),
            kw = wType.getDimSize(3),
            block = channelBlock(call.getOutputs()[0]);
    if (channelBlock(call.getInputs()[0]) != block)
      return call.emitOpError("a depthwise int8 convolution reads and writes "
                              "one layout on the CPU targets");
    std::vector<float> floats(c * kh * kw);
    cuvil_qdwconv_pack(c, kh, kw, reinterpret_cast<const int8_t *>(bytes.data()),
                       block, floats.data());
    Packed packed;
    packed.weights.resize(4 * floats.size());
    std::memcpy(packed.weights.data(), floats.data(), packed.weights.size());
    packed.sums.assign(c, 0);
    for (int64_t i = 0; i < c * kh * kw; ++i)
      packed.sums[i / (kh * kw)] += static_cast<int8_t>(bytes[i]);
    packed.element = Float32Type::get(call.getContext());
    return packed;
  }

  LogicalResult pack(cuvil::l2::UKernelCallOp call, SymbolTable &symbols) {
    Value a = call.getInputs()[0], w = call.getInputs()[1];
    auto aType = cast<MemRefType>(a.getType());
    auto wType = cast<MemRefType>(w.getType());
    bool conv = call.getKernel() == "quantized_conv2d";
    FailureOr<Weights> weights = readWeights(call, symbols);
    if (failed(weights))
      return failure();
    auto outType = cast<MemRefType>(call.getOutputs()[0].getType());
    if (conv && (outType.isDynamicDim(2) || outType.isDynamicDim(3) ||
                 aType.isDynamicDim(2) || aType.isDynamicDim(3)))
      return call.emitOpError("needs static spatial sizes on the CPU targets");
    // Depthwise: one filter per channel; other grouped ones are unfolded.
    int64_t groups = call.getIntParam("groups", 1);
    bool depthwise = conv && cuvil::cpu::isDepthwiseConv(
                                 groups, aType.getDimSize(1),
                                 outType.getDimSize(1));
    bool tiles = conv && !depthwise &&
                 call.getAlgorithm() == cuvil::l2::Algorithm::direct_blocked;
    FailureOr<Packed> packed =
        depthwise ? packForDepthwise(call, weights->bytes)
        : tiles   ? packForTiles(call, weights->bytes)
                  : packForGemm(call, weights->bytes);
    if (failed(packed))
      return failure();
    int64_t n = static_cast<int64_t>(packed->sums.size());
    std::vector<float> scales =
        columnScales(aType.getElementType(), wType.getElementType(), n);
    MLIRContext *context = call.getContext();
    StringRef base = weights->global.getSymName();
    int64_t elementBytes = packed->element.getIntOrFloatBitWidth() / 8;
    Value packedB = addGlobal(
        call, symbols, base + "_qpacked",
        MemRefType::get({static_cast<int64_t>(packed->weights.size()) /
                         elementBytes},
                        packed->element),
        packed->weights);
    Value colSums = addGlobal(
        call, symbols, base + "_qsums",
        MemRefType::get({n}, IntegerType::get(context, 32)),
        ArrayRef<char>(reinterpret_cast<const char *>(packed->sums.data()),
                       4 * n));
    Value colScales = addGlobal(
        call, symbols, base + "_qscales",
        MemRefType::get({n}, Float32Type::get(context)),
        ArrayRef<char>(reinterpret_cast<const char *>(scales.data()), 4 * n));
    SmallVector<Value> outputs = {call.getOutputs()[0]};
    // The GEMM always packs A panels; the tiles may read the image in place.
    if (!(tiles || depthwise) || packed->scratchBytes > 0)
      outputs.push_back(allocScratch(call, packed->scratchBytes));
    OpBuilder builder(call);
    // A fused epilogue's inputs (bias, residual) stay last.
    SmallVector<Value> inputs = {a, packedB, colSums, colScales};
    llvm::append_range(inputs, call.getInputs().drop_front(2));
    auto packedCall = call.cloneWith(builder, inputs, outputs);
    packedCall.setPackedB(true);
    if (conv)
      packedCall->setAttr("cuvil.kernel_size",
                          builder.getDenseI64ArrayAttr(
                              {wType.getDimSize(2), wType.getDimSize(3)}));
    if (packed->narrow)
      packedCall->setAttr("cuvil.narrow_weights", builder.getUnitAttr());
    eraseReplaced(call);
    // The unpacked weights, if nothing else reads them.
    cuvil::l2::UKernelCallOp storageCast = weights->storageCast;
    if (storageCast && llvm::all_of(w.getUsers(), [&](Operation *user) {
          return user == storageCast.getOperation();
        })) {
      Value source = storageCast.getInputs()[0];
      storageCast.erase();
      if (Operation *alloc = w.getDefiningOp(); alloc && alloc->use_empty())
        alloc->erase();
      eraseIfUnused(source, weights->global, symbols);
    }
    cuvil::addStatistic(getOperation(), *this, numPacked, "packed");
    return success();
  }
};

} // namespace
