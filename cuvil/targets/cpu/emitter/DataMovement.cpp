//===- DataMovement.cpp - reshapes, transposes, concat / split, slice, pad, gathers
//
// Loop nests of index arithmetic on row-major buffers; a reshape is a
// memcpy, gather the runtime's bounds-checked cuvil_gather, the element
// gathers and scatters loops that check each index, and the N-D ones a
// memcpy (gather) or loop (scatter) per checked index tuple.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/cpu/emitter/Emitter.h"

#include "cuvil/support/ElementsBytes.h"

#include "absl/strings/str_join.h"

#include <algorithm>

namespace cuvil::cpu::emitter {

using namespace mlir;

namespace {

using Vars = ArrayRef<std::string>;

LogicalResult emitReshape(Emitter &e, const KernelCall &call) {
  e.c.line("memcpy(" + call.out->name + ", " + call.ins[0]->name +
           ", (size_t)" + bytes(*call.out) + ");");
  return success();
}

LogicalResult emitTranspose(Emitter &e, const KernelCall &call) {
  const Buffer &out = *call.out, &in = *call.ins[0];
  SmallVector<int64_t> perm = call.op.getIntsParam("perm", {});
  std::vector<std::string> inStrides = strides(in), outStrides = strides(out);
  e.emitLoopNest(out.dims, [&](Vars vars) {
    std::vector<std::string> src, dst;
    for (size_t d = 0; d < vars.size(); ++d) {
      src.push_back(vars[d] + "*" + inStrides[perm[d]]);
      dst.push_back(vars[d] + "*" + outStrides[d]);
    }
    e.c.line(out.name + "[" + joinSum(dst) + "] = " + in.name + "[" +
             joinSum(src) + "];");
  });
  return success();
}

/// concat (pieces are the inputs) and split (the outputs): each piece is
/// one contiguous run per index of the dims before `axis`, in the whole at
/// (index * whole's extent + offset) * inner, so each is a memcpy per run.
/// In NCHW<B>c along C (pieces of whole blocks) the runs are the same.
LogicalResult emitConcatOrSplit(Emitter &e, const KernelCall &call) {
  bool isConcat = call.name == "concat";
  size_t rank = call.out->dims.size();
  int64_t axis = normalizeAxis(call.op.getIntParam("axis", 0), rank);
  const Buffer &whole = isConcat ? *call.out : *call.ins[0];
  size_t pieces = isConcat ? call.ins.size() : call.op.getOutputs().size();
  auto piece = [&](size_t p) -> const Buffer & {
    return isConcat ? *call.ins[p] : e.buffer(call.op.getOutputs()[p]);
  };
  bool sameLayout = true;
  for (size_t p = 0; p < pieces; ++p)
    sameLayout &= piece(p).block == whole.block;
  if (!sameLayout || (whole.block > 1 && (axis != 1 || rank != 4)))
    return call.error() << "on blocked layouts must join or split whole "
                           "blocks along C, every piece in one layout";
  std::string outer = dimsRange(whole, 0, axis),
              inner = dimsRange(whole, axis + 1, whole.dims.size()),
              bytes = std::to_string(elementBytes(whole.type.getElementType()));
  std::string o = e.tmp(), offset = "0";
  e.c.open("for (int64_t " + o + " = 0; " + o + " < " + outer + "; ++" + o +
           ")");
  for (size_t p = 0; p < pieces; ++p) {
    const Buffer &q = piece(p);
    std::string run = "(" + q.dims[axis] + ") * " + inner;
    std::string w = whole.name + " + (" + o + " * " + whole.dims[axis] +
                    " + " + offset + ") * " + inner;
    std::string r = q.name + " + " + o + " * " + run;
    e.c.line("memcpy(" + (isConcat ? w + ", " + r : r + ", " + w) +
             ", (size_t)(" + run + ") * " + bytes + ");");
    offset = offset == "0" ? q.dims[axis] : offset + " + " + q.dims[axis];
  }
  e.c.close();
  return success();
}

LogicalResult emitSlice(Emitter &e, const KernelCall &call) {
  const Buffer &out = *call.out, &in = *call.ins[0];
  size_t rank = out.dims.size();
  std::vector<std::string> inStrides = strides(in), outStrides = strides(out);
  SmallVector<int64_t> starts = call.op.getIntsParam("starts", {}),
                       axes = call.op.getIntsParam("axes", {}),
                       steps = call.op.getIntsParam("steps", {});
  std::vector<int64_t> start(rank, 0), step(rank, 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = normalizeAxis(axes[i], rank);
    int64_t dim = in.type.getDimSize(a);
    if (ShapedType::isDynamic(dim))
      return call.op.emitOpError("slicing the dynamic batch is not supported");
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    start[a] = steps[i] > 0 ? std::clamp<int64_t>(s, 0, dim)
                            : std::clamp<int64_t>(s, 0, dim - 1);
    step[a] = steps[i];
  }
  e.emitLoopNest(out.dims, [&](Vars vars) {
    std::vector<std::string> src, dst;
    for (size_t d = 0; d < rank; ++d) {
      src.push_back("(" + std::to_string(start[d]) + " + " + vars[d] + "*" +
                    std::to_string(step[d]) + ")*" + inStrides[d]);
      dst.push_back(vars[d] + "*" + outStrides[d]);
    }
    e.c.line(out.name + "[" + joinSum(dst) + "] = " + in.name + "[" +
             joinSum(src) + "];");
  });
  return success();
}

/// The constant a pad writes, in the output's storage (half types as bits).
std::string padValue(const KernelCall &call) {
  double value = call.op.getFloatParam("value", 0.0);
  if (!call.storage.isF16() && !call.storage.isBF16())
    return call.lit(value);
  return "(uint16_t)" +
         std::to_string(cuvil::toHalfBits(value, cast<FloatType>(call.storage)));
}

LogicalResult emitPad(Emitter &e, const KernelCall &call) {
  const Buffer &out = *call.out, &in = *call.ins[0];
  size_t rank = out.dims.size();
  std::vector<std::string> inStrides = strides(in), outStrides = strides(out);
  SmallVector<int64_t> pads = call.op.getIntsParam("pads", {});
  std::string mode = "constant";
  if (auto m = dyn_cast_or_null<StringAttr>(call.op.getParam("mode")))
    mode = m.str();
  std::string value = padValue(call);
  e.emitLoopNest(out.dims, [&](Vars vars) {
    std::vector<std::string> src, dst, inside;
    for (size_t d = 0; d < rank; ++d) {
      // The source coordinate: reflected, clamped, or tested.
      std::string c = e.tmp();
      const std::string &dim = in.dims[d];
      e.c.line("int64_t " + c + " = " + vars[d] + " - " +
               std::to_string(pads[d]) + ";");
      if (mode == "reflect")
        e.c.line(c + " = " + c + " < 0 ? -" + c + " : " + c + " >= " + dim +
                 " ? 2*(" + dim + ") - 2 - " + c + " : " + c + ";");
      else if (mode == "edge")
        e.c.line(c + " = " + c + " < 0 ? 0 : " + c + " >= " + dim + " ? " +
                 dim + " - 1 : " + c + ";");
      else
        inside.push_back("(" + c + " >= 0 && " + c + " < " + dim + ")");
      src.push_back(c + "*" + inStrides[d]);
      dst.push_back(vars[d] + "*" + outStrides[d]);
    }
    std::string read = in.name + "[" + joinSum(src) + "]";
    if (!inside.empty())
      read = "(" + absl::StrJoin(inside, " && ") + " ? " + read + " : " +
             value + ")";
    e.c.line(out.name + "[" + joinSum(dst) + "] = " + read + ";");
  });
  return success();
}

LogicalResult emitGather(Emitter &e, const KernelCall &call) {
  const Buffer &data = *call.ins[0], &indices = *call.ins[1];
  int64_t axis = normalizeAxis(call.op.getIntParam("axis", 0), data.dims.size());
  std::string status = e.tmp();
  e.c.open();
  e.c.line("int " + status + " = cuvil_gather(" +
           std::to_string(elementBytes(data.type.getElementType())) + ", " +
           dimsRange(data, 0, axis) + ", " + data.dims[axis] + ", " +
           dimsRange(data, axis + 1, data.dims.size()) + ", " + data.name +
           ", " + indices.name + ", " +
           (indices.type.getElementType().isInteger(64) ? "1" : "0") + ", " +
           numel(indices) + ", " + call.out->name + ");");
  // An index out of range is the caller's bad data, not a crash.
  e.c.line("if (" + status + ") return CUVIL_ERROR_INVALID_ARGUMENT;");
  e.c.close();
  return success();
}

/// The checked index along `axis` for the element of `indices` at `vars`
/// (negative from the end; out of range returns the caller's error), as a
/// C local.
std::string elementIndex(Emitter &e, const Buffer &indices, Vars vars,
                         const std::string &axisDim) {
  std::vector<std::string> at, indexStrides = strides(indices);
  for (size_t d = 0; d < vars.size(); ++d)
    at.push_back(vars[d] + "*" + indexStrides[d]);
  std::string k = e.tmp();
  e.c.line("int64_t " + k + " = (int64_t)" + indices.name + "[" +
           joinSum(at) + "];");
  e.c.line("if (" + k + " < 0) " + k + " += " + axisDim + ";");
  e.c.line("if (" + k + " < 0 || " + k + " >= " + axisDim +
           ") return CUVIL_ERROR_INVALID_ARGUMENT;");
  return k;
}

/// Outside `axis`, `indices` must fit in `data` (a dynamic batch can make it
/// larger at run time).
void checkIndicesFit(Emitter &e, const Buffer &data, const Buffer &indices,
                     size_t axis) {
  for (size_t d = 0; d < data.dims.size(); ++d)
    if (d != axis && indices.dims[d] != data.dims[d])
      e.c.line("if ((" + indices.dims[d] + ") > (" + data.dims[d] +
               ")) return CUVIL_ERROR_INVALID_ARGUMENT;");
}

/// `data`'s element at `vars` with coordinate `axis` replaced by `k`.
std::string elementAt(const Buffer &data, Vars vars, size_t axis,
                      const std::string &k) {
  std::vector<std::string> at, dataStrides = strides(data);
  for (size_t d = 0; d < vars.size(); ++d)
    at.push_back((d == axis ? k : vars[d]) + "*" + dataStrides[d]);
  return data.name + "[" + joinSum(at) + "]";
}

LogicalResult emitGatherElements(Emitter &e, const KernelCall &call) {
  const Buffer &data = *call.ins[0], &indices = *call.ins[1];
  size_t axis = normalizeAxis(call.op.getIntParam("axis", 0), data.dims.size());
  checkIndicesFit(e, data, indices, axis);
  std::vector<std::string> outStrides = strides(*call.out);
  e.emitLoopNest(call.out->dims, [&](Vars vars) {
    std::string k = elementIndex(e, indices, vars, data.dims[axis]);
    std::vector<std::string> dst;
    for (size_t d = 0; d < vars.size(); ++d)
      dst.push_back(vars[d] + "*" + outStrides[d]);
    e.c.line(call.out->name + "[" + joinSum(dst) + "] = " +
             elementAt(data, vars, axis, k) + ";");
  });
  return success();
}

/// A scatter's reduction ("none" when the op has none).
std::string reductionOf(const KernelCall &call) {
  if (auto r = dyn_cast_or_null<StringAttr>(call.op.getParam("reduction")))
    return r.str();
  return "none";
}

/// The scatter's combination of the old element `x` and the update `u`
/// (computed values, half types as float).
std::string scatterCombine(llvm::StringRef reduction, const std::string &x,
                           const std::string &u) {
  if (reduction == "add")
    return "(" + x + " + " + u + ")";
  if (reduction == "mul")
    return "(" + x + " * " + u + ")";
  if (reduction == "max" || reduction == "min")
    // ONNX's reference is numpy's maximum / minimum: NaN wins.
    return "(" + u + " != " + u + " || " + u +
           (reduction == "max" ? " > " : " < ") + x + " ? " + u + " : " + x +
           ")";
  return u;
}

LogicalResult emitScatterElements(Emitter &e, const KernelCall &call) {
  const Buffer &data = *call.ins[0], &indices = *call.ins[1],
               &updates = *call.ins[2], &out = *call.out;
  size_t axis = normalizeAxis(call.op.getIntParam("axis", 0), data.dims.size());
  std::string reduction = reductionOf(call);
  checkIndicesFit(e, data, indices, axis);
  // Updates run in order after the copy, so duplicates combine (or the
  // last one wins) deterministically.
  e.c.line("memcpy(" + out.name + ", " + data.name + ", (size_t)" +
           bytes(out) + ");");
  std::vector<std::string> updateStrides = strides(updates);
  e.emitLoopNest(indices.dims, [&](Vars vars) {
    std::string k = elementIndex(e, indices, vars, data.dims[axis]);
    std::vector<std::string> at;
    for (size_t d = 0; d < vars.size(); ++d)
      at.push_back(vars[d] + "*" + updateStrides[d]);
    std::string dst = elementAt(out, vars, axis, k);
    std::string u = updates.name + "[" + joinSum(at) + "]";
    if (reduction == "none") {
      e.c.line(dst + " = " + u + ";");
      return;
    }
    e.c.line(dst + " = " +
             store(out, scatterCombine(reduction, load(out, dst),
                                       load(updates, u))) +
             ";");
  });
  return success();
}

/// The offset (in slices) of the tuple at row `row` of `indices` ([rows,
/// m]) into `data`'s dimensions [first, first + m), each coordinate
/// checked (negative from the end, out of range the caller's error); a C
/// local.
std::string tupleOffset(Emitter &e, const Buffer &data, const Buffer &indices,
                        size_t first, int64_t m, const std::string &row) {
  std::string offset = e.tmp();
  e.c.line("int64_t " + offset + " = 0;");
  for (int64_t j = 0; j < m; ++j) {
    std::string k = e.tmp(), dim = data.dims[first + j];
    e.c.line("int64_t " + k + " = (int64_t)" + indices.name + "[(" + row +
             ")*" + std::to_string(m) + " + " + std::to_string(j) + "];");
    e.c.line("if (" + k + " < 0) " + k + " += " + dim + ";");
    e.c.line("if (" + k + " < 0 || " + k + " >= " + dim +
             ") return CUVIL_ERROR_INVALID_ARGUMENT;");
    e.c.line(offset + " = " + offset + "*(" + dim + ") + " + k + ";");
  }
  return offset;
}

/// gather_nd: per batch index and tuple, one memcpy of the slice it picks.
LogicalResult emitGatherND(Emitter &e, const KernelCall &call) {
  const Buffer &data = *call.ins[0], &indices = *call.ins[1];
  size_t b = call.op.getIntParam("batch_dims", 0),
         q = indices.dims.size();
  int64_t m = cast<ShapedType>(indices.type).getDimSize(q - 1);
  for (size_t d = 0; d < b; ++d)
    if (indices.dims[d] != data.dims[d])
      e.c.line("if ((" + indices.dims[d] + ") != (" + data.dims[d] +
               ")) return CUVIL_ERROR_INVALID_ARGUMENT;");
  std::string batches = dimsRange(indices, 0, b),
              tuples = dimsRange(indices, b, q - 1),
              picked = dimsRange(data, b, b + m),
              slice = dimsRange(data, b + m, data.dims.size());
  std::string n = e.tmp(), t = e.tmp();
  e.c.open("for (int64_t " + n + " = 0; " + n + " < " + batches + "; ++" + n +
           ")");
  e.c.open("for (int64_t " + t + " = 0; " + t + " < " + tuples + "; ++" + t +
           ")");
  std::string row = n + "*(" + tuples + ") + " + t;
  std::string offset = tupleOffset(e, data, indices, b, m, row);
  std::string size = std::to_string(elementBytes(data.type.getElementType()));
  e.c.line("memcpy(" + call.out->name + " + (" + row + ")*(" + slice + "), " +
           data.name + " + (" + n + "*(" + picked + ") + " + offset + ")*(" +
           slice + "), (size_t)(" + slice + ")*" + size + ");");
  e.c.close();
  e.c.close();
  return success();
}

/// scatter_nd: data copied, then each tuple's slice of updates written (or
/// combined) in order.
LogicalResult emitScatterND(Emitter &e, const KernelCall &call) {
  const Buffer &data = *call.ins[0], &indices = *call.ins[1],
               &updates = *call.ins[2], &out = *call.out;
  size_t q = indices.dims.size();
  int64_t m = cast<ShapedType>(indices.type).getDimSize(q - 1);
  std::string reduction = reductionOf(call);
  std::string tuples = dimsRange(indices, 0, q - 1),
              slice = dimsRange(data, m, data.dims.size());
  e.c.line("memcpy(" + out.name + ", " + data.name + ", (size_t)" +
           bytes(out) + ");");
  std::string t = e.tmp(), i = e.tmp();
  e.c.open("for (int64_t " + t + " = 0; " + t + " < " + tuples + "; ++" + t +
           ")");
  std::string offset = tupleOffset(e, data, indices, 0, m, t);
  e.c.open("for (int64_t " + i + " = 0; " + i + " < " + slice + "; ++" + i +
           ")");
  std::string dst = out.name + "[" + offset + "*(" + slice + ") + " + i + "]";
  std::string u = updates.name + "[" + t + "*(" + slice + ") + " + i + "]";
  if (reduction == "none")
    e.c.line(dst + " = " + u + ";");
  else
    e.c.line(dst + " = " +
             store(out, scatterCombine(reduction, load(out, dst),
                                       load(updates, u))) +
             ";");
  e.c.close();
  e.c.close();
  return success();
}

} // namespace

void addDataMovementKernels(KernelTable &table) {
  // A storage cast keeps the bits (a quantized value and its integers).
  for (const char *name :
       {"reshape", "flatten", "squeeze", "unsqueeze", "storage_cast"})
    table[name] = {emitReshape};
  table["transpose"] = {emitTranspose};
  table["concat"] = {emitConcatOrSplit};
  table["split"] = {emitConcatOrSplit};
  table["slice"] = {emitSlice};
  table["pad"] = {emitPad};
  table["gather"] = {emitGather};
  table["gather_elements"] = {emitGatherElements};
  table["scatter_elements"] = {emitScatterElements};
  table["gather_nd"] = {emitGatherND};
  table["scatter_nd"] = {emitScatterND};
}

} // namespace cuvil::cpu::emitter
