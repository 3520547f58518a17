//===- DataMovement.cpp - reshapes, transposes, concat / split, slice, pad, gather
//
// Loop nests of index arithmetic on row-major buffers; a reshape is a
// memcpy and gather the runtime's bounds-checked cuvil_gather.
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
}

} // namespace cuvil::cpu::emitter
