//===- Products.cpp - matmul and gemm on the packed-strip GEMM ------------===//
//
// Matrix products call the runtime's cuvil_matmul_f32 (B read through
// strides, packed per call into the scratch when it has one) or, for B
// packed at compile time (cuvil-cpu-pack-product-weights),
// cuvil_matmul_packed_f32; a fused epilogue rides along. bfloat16 ones call
// cuvil_bgemm_f32, float16 ones cuvil_hgemm_f16.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/cpu/emitter/Emitter.h"

#include "cuvil/targets/cpu/RuntimeContract.h"

#include <algorithm>

namespace cuvil::cpu::emitter {

using namespace mlir;

namespace {

/// A matmul's operands with numpy's matmul broadcasting: vectors promoted
/// to matrices, the batch dimensions of the output and each operand's
/// batch strides ("0" where it broadcasts).
struct MatmulShape {
  std::string m, k, n;
  std::vector<std::string> outBatch, aStride, bStride;

  MatmulShape(const Buffer &a, const Buffer &b) {
    std::vector<std::string> aDims = a.dims, bDims = b.dims;
    if (aDims.size() == 1)
      aDims.insert(aDims.begin(), "1");
    if (bDims.size() == 1)
      bDims.push_back("1");
    m = aDims[aDims.size() - 2];
    k = aDims.back();
    n = bDims.back();
    size_t rank = std::max(aDims.size(), bDims.size()) - 2;
    outBatch.assign(rank, "");
    aStride.assign(rank, "0");
    bStride.assign(rank, "0");
    addBatch(aDims, joinProduct({m, k}), aStride);
    addBatch(bDims, joinProduct({k, n}), bStride);
    for (std::string &d : outBatch)
      if (d.empty())
        d = "1";
  }

  size_t batchRank() const { return outBatch.size(); }

private:
  /// Broadcasts one operand's batch dimensions into outBatch, aligned at
  /// the end, and records its strides (`matrix` elements per matrix).
  void addBatch(const std::vector<std::string> &dims, std::string suffix,
                std::vector<std::string> &stride) {
    size_t rank = dims.size() - 2, offset = batchRank() - rank;
    for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
      std::string &o = outBatch[offset + d];
      if (dims[d] != "1" || o.empty())
        o = dims[d] == "1" && !o.empty() ? o : dims[d];
      if (dims[d] != "1")
        stride[offset + d] = suffix;
      suffix = joinProduct({suffix, dims[d]});
    }
  }
};

/// Products of more than one batch dimension: a loop nest over the batch
/// with one product per matrix (no epilogue).
void emitBatchedMatmul(Emitter &e, const KernelCall &call,
                       const MatmulShape &s) {
  const Buffer &a = *call.ins[0], &b = *call.ins[1], &out = *call.out;
  e.emitLoopNest(s.outBatch, [&](ArrayRef<std::string> vars) {
    std::vector<std::string> ao, bo, oo;
    std::vector<std::string> outStrides(s.batchRank());
    std::string suffix = joinProduct({s.m, s.n});
    for (int d = static_cast<int>(s.batchRank()) - 1; d >= 0; --d) {
      outStrides[d] = suffix;
      suffix = joinProduct({suffix, s.outBatch[d]});
    }
    for (size_t d = 0; d < s.batchRank(); ++d) {
      if (s.aStride[d] != "0")
        ao.push_back(vars[d] + "*" + s.aStride[d]);
      if (s.bStride[d] != "0")
        bo.push_back(vars[d] + "*" + s.bStride[d]);
      oo.push_back(vars[d] + "*" + outStrides[d]);
    }
    e.c.line("cuvil_matmul_f32(pool, " + call.scratch + ", 1, " + s.m + ", " +
             s.n + ", " + s.k + ", " + a.name + " + " + joinSum(ao) + ", 0, " +
             s.k + ", 1, " + b.name + " + " + joinSum(bo) + ", 0, " + s.n +
             ", 1, " + out.name + " + " + joinSum(oo) + ", NULL);");
  });
}

/// A float64 or integer product (ONNX MatMul on those types, an Einsum of
/// them): a loop nest summing in the element type, as numpy's matmul does.
LogicalResult emitPlainMatmul(Emitter &e, const KernelCall &call) {
  const Buffer &a = *call.ins[0], &b = *call.ins[1], &out = *call.out;
  for (const Buffer *x : {&a, &b, &out})
    if (x->type.getElementType() != call.element)
      return call.error() << "on " << x->type.getElementType() << " and "
                          << call.element << " together is not supported";
  if (getEpilogue(call).present)
    return call.error() << "on " << call.element
                        << " cannot take a fused epilogue";
  MatmulShape s(a, b);
  std::vector<std::string> dims = s.outBatch;
  dims.push_back(s.m);
  dims.push_back(s.n);
  size_t rank = s.batchRank();
  e.emitLoopNest(dims, [&](ArrayRef<std::string> vars) {
    std::vector<std::string> ao, bo, oo;
    std::string suffix = joinProduct({s.m, s.n});
    for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
      if (s.aStride[d] != "0")
        ao.push_back(vars[d] + "*" + s.aStride[d]);
      if (s.bStride[d] != "0")
        bo.push_back(vars[d] + "*" + s.bStride[d]);
      oo.push_back(vars[d] + "*" + suffix);
      suffix = joinProduct({suffix, s.outBatch[d]});
    }
    std::string i = vars[rank], j = vars[rank + 1], p = e.tmp(), acc = e.tmp();
    ao.push_back(i + "*" + s.k);
    bo.push_back(j);
    oo.push_back(i + "*" + s.n + " + " + j);
    e.c.line(call.T + " " + acc + " = 0;");
    e.c.open("for (int64_t " + p + " = 0; " + p + " < " + s.k + "; ++" + p +
             ")");
    e.c.line(acc + " += " + a.name + "[" + joinSum(ao) + " + " + p + "] * " +
             b.name + "[" + joinSum(bo) + " + " + p + "*" + s.n + "];");
    e.c.close();
    e.c.line(out.name + "[" + joinSum(oo) + "] = " + acc + ";");
  });
  return success();
}

/// A bfloat16 product summed in float32 (bgemm.h), on weights packed at
/// compile time (cuvil-cpu-pack-quantized-weights): ins (a, packed, then a
/// fused epilogue's), outs (y, A-panel scratch).
LogicalResult emitBf16Matmul(Emitter &e, const KernelCall &call) {
  Epilogue epilogue = getEpilogue(call);
  const Buffer &a = *call.ins[0], &out = *call.out;
  if (!call.op.getPackedB() || call.ins.size() != 2 + epilogue.inputs ||
      call.op.getOutputs().size() != 2)
    return call.error() << "needs its bfloat16 weights packed at compile "
                           "time (cuvil-cpu-pack-quantized-weights)";
  if (!a.type.getElementType().isBF16() ||
      !out.type.getElementType().isF32())
    return call.error() << "on the CPU targets multiply bfloat16 into float32, not "
                        << a.type.getElementType() << " into "
                        << out.type.getElementType();
  std::vector<std::string> rows(a.dims.begin(), a.dims.end() - 1);
  const std::string &k = a.dims.back(), &n = out.dims.back();
  e.callWithEpilogue("cuvil_bgemm_f32(pool, CUVIL_BGEMM8, " +
                         joinProduct(rows) + ", " + n + ", " + k + ", " +
                         a.name + ", " + k + ", (const uint16_t *)" +
                         call.ins[1]->name + ", " +
                         out.name + ", " + n + ", (uint8_t *)" + call.scratch +
                         ", ",
                     epilogue.initializerOrNone());
  return success();
}

/// A float16 product summed in float16 (hgemm.h) on weights packed at
/// compile time (cuvil-cpu-pack-quantized-weights): ins (a, packed), outs
/// (y); no epilogue (its bias and activation follow in float32).
LogicalResult emitF16Matmul(Emitter &e, const KernelCall &call) {
  const Buffer &a = *call.ins[0], &out = *call.out;
  if (!call.op.getPackedB() || call.ins.size() != 2 || call.op.getEpilogueAttr())
    return call.error() << "needs its float16 weights packed at compile time "
                           "(cuvil-cpu-pack-quantized-weights), and no epilogue";
  if (!out.type.getElementType().isF16())
    return call.error() << "on the CPU targets multiplies float16 into float16, "
                           "not into "
                        << out.type.getElementType();
  std::vector<std::string> rows(a.dims.begin(), a.dims.end() - 1);
  const std::string &k = a.dims.back(), &n = out.dims.back();
  e.c.line("cuvil_hgemm_f16(pool, CUVIL_HGEMM4, " + joinProduct(rows) + ", " +
           n + ", " + k + ", (const uint16_t *)" + a.name + ", " + k +
           ", (const uint16_t *)" + call.ins[1]->name + ", (uint16_t *)" +
           out.name + ", " + n + ");");
  return success();
}

LogicalResult emitMatmul(Emitter &e, const KernelCall &call) {
  if (call.op.getParam("acc_type"))
    return emitBf16Matmul(e, call);
  if (isF16Product(call.op))
    return emitF16Matmul(e, call);
  Type element = call.out->type.getElementType();
  if (element.isF64() || (element.isInteger() && !element.isInteger(1)))
    return emitPlainMatmul(e, call);
  for (const Buffer *x : {call.ins[0], call.ins[1], call.out})
    if (!x->type.getElementType().isF32())
      return call.error() << "on " << x->type.getElementType()
                          << " is not supported by the CPU targets yet";
  const Buffer &a = *call.ins[0], &b = *call.ins[1], &out = *call.out;
  MatmulShape s(a, b);
  Epilogue epilogue = getEpilogue(call);
  if (call.op.getPackedB()) {
    // B is [K, N] packed in strips at compile time (it broadcasts over A's
    // batches, which are back to back: one product of all A's rows).
    std::vector<std::string> rows(out.dims.begin(), out.dims.end() - 1);
    e.callWithEpilogue("cuvil_matmul_packed_f32(pool, " + joinProduct(rows) +
                           ", " + out.dims.back() + ", " + s.k + ", " + a.name +
                           ", " + s.k + ", 1, " + b.name + ", " + out.name +
                           ", ",
                       epilogue.initializerOrNone());
    return success();
  }
  if (s.batchRank() <= 1) {
    bool batched = s.batchRank() == 1;
    // A linear layer's bias (col_bias), residual and activation, fused by
    // cuvil-fuse-epilogues, applied to each row as it is finished.
    e.callWithEpilogue(
        "cuvil_matmul_f32(pool, " + call.scratch + ", " +
            (batched ? s.outBatch[0] : "1") + ", " + s.m + ", " + s.n + ", " +
            s.k + ", " + a.name + ", " + (batched ? s.aStride[0] : "0") +
            ", " + s.k + ", 1, " + b.name + ", " +
            (batched ? s.bStride[0] : "0") + ", " + s.n + ", 1, " + out.name +
            ", ",
        epilogue.initializerOrNone());
    return success();
  }
  if (epilogue.present)
    return call.op.emitOpError("a fused epilogue needs a matrix product with "
                               "at most one batch dimension");
  emitBatchedMatmul(e, call, s);
  return success();
}

/// ONNX Gemm's alpha and beta when no epilogue took the bias: applied to
/// the product in place.
void emitGemmScaling(Emitter &e, const KernelCall &call) {
  double alpha = call.op.getFloatParam("alpha", 1.0),
         beta = call.op.getFloatParam("beta", 1.0);
  std::string al = call.lit(alpha), be = call.lit(beta);
  const Buffer &out = *call.out;
  if (call.ins.size() > 2)
    e.emitElementwise(out, {&out, call.ins[2]}, [=](ArrayRef<std::string> x) {
      return (alpha == 1.0 ? x[0] : al + " * " + x[0]) + " + " +
             (beta == 1.0 ? x[1] : be + " * " + x[1]);
    });
  else if (alpha != 1.0)
    e.emitElementwise(out, {&out}, [=](ArrayRef<std::string> x) {
      return al + " * " + x[0];
    });
}

LogicalResult emitGemm(Emitter &e, const KernelCall &call) {
  const Buffer &a = *call.ins[0], &b = *call.ins[1], &out = *call.out;
  bool ta = static_cast<bool>(call.op.getParam("trans_a"));
  bool tb = static_cast<bool>(call.op.getParam("trans_b"));
  std::string m = out.dims[0], n = out.dims[1];
  std::string k = ta ? a.dims[0] : a.dims[1];
  std::string aStrides = ta ? "1, " + m : k + ", 1";
  std::string product =
      call.op.getPackedB()
          ? "cuvil_matmul_packed_f32(pool, " + m + ", " + n + ", " + k + ", " +
                a.name + ", " + aStrides + ", " + b.name + ", " + out.name +
                ", "
          : "cuvil_matmul_f32(pool, " + call.scratch + ", 1, " + m + ", " + n +
                ", " + k + ", " + a.name + ", 0, " + aStrides + ", " + b.name +
                ", 0, " + (tb ? "1, " + k : n + ", 1") + ", " + out.name + ", ";
  Epilogue epilogue = getEpilogue(call);
  if (epilogue.present) {
    // cuvil-fuse-epilogues fused it (alpha = beta = 1, a per-column bias):
    // the kernel adds the bias, the residual and the activation per row.
    bool hasBias = call.ins.size() - epilogue.inputs > 2;
    e.callWithEpilogue(product, epilogue.initializer(
                                    "NULL", hasBias ? call.ins[2]->name
                                                    : "NULL"));
    return success();
  }
  e.c.line(product + "NULL);");
  emitGemmScaling(e, call);
  return success();
}

} // namespace

void addProductKernels(KernelTable &table) {
  // Checks its own element types: float64 and integers run plain loops.
  table["matmul"] = {emitMatmul};
  table["gemm"] = {emitGemm, /*f32Only=*/true};
}

} // namespace cuvil::cpu::emitter
