//===- PackProductWeights.cpp - constant B of matrix products, in strips --===//
//
// A matrix product that cuvil-cpu-select-kernels gave packing scratch packs B
// into strips of CUVIL_STRIP (32) columns ([ceil(N / 32), K, 32], zero past
// column N; runtime/contract/contract.h) on every call before its blocked
// loops read it. When B is a constant weight (a linear layer's [K, N], after
// cuvil-prepack-weights), this pass does that once, at compile time: B
// becomes a new global in the packed layout, the call is marked
// `packed_b` and loses its scratch. The original global stays only if
// something else reads it.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilL2Ops.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/targets/cpu/RuntimeContract.h"
#include "cuvil/targets/cpu/transforms/Passes.h"
#include "cuvil/support/ElementsBytes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"

#include <cstring>

namespace cuvil::cpu {
#define GEN_PASS_DEF_CUVILCPUPACKPRODUCTWEIGHTS
#include "cuvil/targets/cpu/transforms/Passes.h.inc"
} // namespace cuvil::cpu

using namespace mlir;

namespace {

constexpr int64_t kStrip = CUVIL_STRIP;

/// [K, N] f32 bytes as strips of kStrip columns, zero-padded: the layout
/// cuvil_matmul_packed_f32 reads.
std::string packStrips(const std::string &bytes, int64_t k, int64_t n) {
  int64_t strips = cuvil_strip_columns(n) / kStrip;
  std::string packed(cuvil_matmul_scratch_floats(n, k) * sizeof(float), '\0');
  for (int64_t s = 0; s < strips; ++s)
    for (int64_t l = 0; l < k; ++l) {
      int64_t j0 = s * kStrip, width = std::min(kStrip, n - j0);
      std::memcpy(&packed[((s * k + l) * kStrip) * sizeof(float)],
                  &bytes[(l * n + j0) * sizeof(float)], width * sizeof(float));
    }
  return packed;
}

struct PackProductWeights
    : cuvil::cpu::impl::CuvilCpuPackProductWeightsBase<PackProductWeights> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    packedGlobals.clear();
    SmallVector<cuvil::l2::UKernelCallOp> calls;
    module.walk([&](cuvil::l2::UKernelCallOp call) {
      StringRef kernel = call.getKernel();
      // Packing scratch is the second output; a transposed B ([N, K]) is not
      // a linear layer's prepacked weight.
      if ((kernel == "matmul" || kernel == "gemm") &&
          call.getOutputs().size() == 2 && !call->hasAttr("trans_b"))
        calls.push_back(call);
    });
    for (cuvil::l2::UKernelCallOp call : calls)
      pack(call, symbols);
  }

  /// The packed global of each original one (a weight shared by several
  /// products is packed once).
  llvm::DenseMap<Operation *, memref::GlobalOp> packedGlobals;

  void pack(cuvil::l2::UKernelCallOp call, SymbolTable &symbols) {
    Value b = call.getInputs()[1];
    auto getGlobal = b.getDefiningOp<memref::GetGlobalOp>();
    if (!getGlobal)
      return;
    auto global = symbols.lookup<memref::GlobalOp>(getGlobal.getName());
    MemRefType type = getGlobal.getType();
    if (!global || !global.getConstant() || !global.getInitialValue() ||
        type.getRank() != 2 || !type.hasStaticShape() ||
        !type.getElementType().isF32())
      return;
    int64_t k = type.getDimSize(0), n = type.getDimSize(1);
    auto packedType = MemRefType::get({cuvil_strip_columns(n) / kStrip, k, kStrip},
                                      type.getElementType());
    memref::GlobalOp &packedGlobal = packedGlobals[global];
    if (!packedGlobal) {
      absl::StatusOr<std::string> bytes =
          cuvil::getElementsBytes(*global.getInitialValue());
      if (!bytes.ok() ||
          bytes->size() != static_cast<size_t>(k * n) * sizeof(float))
        return;
      std::string packed = packStrips(*bytes, k, n);
      AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
          ArrayRef<char>(packed.data(), packed.size()), 64);
      std::string name = (global.getSymName() + "_strips").str();
      auto value = DenseResourceElementsAttr::get(
          RankedTensorType::get(packedType.getShape(), type.getElementType()),
          name, std::move(blob));
      OpBuilder builder(global);
      packedGlobal = memref::GlobalOp::create(
          builder, global.getLoc(), name, builder.getStringAttr("private"),
          packedType, value, /*constant=*/true, builder.getI64IntegerAttr(64));
      symbols.insert(packedGlobal); // Renames on a clash.
    }

    OpBuilder builder(call);
    Value packedB = memref::GetGlobalOp::create(
        builder, getGlobal.getLoc(), packedType, packedGlobal.getSymName());
    SmallVector<Value> inputs(call.getInputs());
    inputs[1] = packedB;
    Value scratch = call.getOutputs()[1];
    call.cloneWith(builder, inputs, ValueRange{call.getOutputs()[0]})
        .setPackedB(true);
    call.erase();
    if (Operation *alloc = scratch.getDefiningOp(); alloc && alloc->use_empty())
      alloc->erase();
    if (getGlobal->use_empty())
      getGlobal.erase();
    if (SymbolTable::symbolKnownUseEmpty(global, symbols.getOp())) {
      packedGlobals.erase(global);
      symbols.erase(global);
    }
    cuvil::addStatistic(getOperation(), *this, numPacked, "packed");
  }
};

} // namespace
