//===- Selection.cpp - top_k as a heap per slice ---------------------------===//
//
// cuvil.top_k: each slice along the axis keeps its k best positions in a
// binary heap whose root is the worst kept (n log k compares), written
// straight into the indices output; the heap is then sorted best first and
// the values gathered. "Better" is a strict total order (equal values by
// position), so the result does not depend on the heap's shape.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/cpu/emitter/Emitter.h"

namespace cuvil::cpu::emitter {

using namespace mlir;

namespace {

/// C for "the element at position `a` of the slice ranks above the one at
/// `b`": by value (NaN above every number for floats), then by position.
std::string betterExpr(const KernelCall &call, const Buffer &in,
                       const std::string &slice, const std::string &stride,
                       bool largest, const std::string &a,
                       const std::string &b) {
  std::string va = load(in, in.name + "[" + slice + " + (" + a + ")*" +
                                stride + "]");
  std::string vb = load(in, in.name + "[" + slice + " + (" + b + ")*" +
                                stride + "]");
  // above(x, y): x ranks above y by value alone.
  auto above = [&](const std::string &x, const std::string &y) {
    if (!call.isFloat)
      return "(" + x + " > " + y + ")";
    return "(" + y + " == " + y + " && (" + x + " != " + x + " || " + x +
           " > " + y + "))";
  };
  std::string first = largest ? above(va, vb) : above(vb, va);
  std::string second = largest ? above(vb, va) : above(va, vb);
  return "(" + first + " || (!" + second + " && (" + a + ") < (" + b + ")))";
}

LogicalResult emitTopK(Emitter &e, const KernelCall &call) {
  const Buffer &in = *call.ins[0];
  ValueRange outs = call.op.getOutputs();
  if (outs.size() != 2)
    return call.error() << "expects values and indices outputs, got "
                        << outs.size();
  const Buffer &values = e.buffer(outs[0]), &indices = e.buffer(outs[1]);
  size_t rank = in.dims.size();
  int64_t axis = normalizeAxis(call.op.getIntParam("axis", -1), rank);
  int64_t k = call.op.getIntParam("k", 1);
  bool largest = true;
  if (auto attr = dyn_cast_or_null<BoolAttr>(call.op.getParam("largest")))
    largest = attr.getValue();
  std::string n = in.dims[axis], inner = dimsRange(in, axis + 1, rank),
              outer = dimsRange(in, 0, axis), K = std::to_string(k);
  std::string o = e.tmp(), q = e.tmp(), i = e.tmp(), size = e.tmp(),
              pos = e.tmp(), child = e.tmp(), item = e.tmp(), end = e.tmp(),
              x = e.tmp(), h = e.tmp(), worst = e.tmp();
  // A dynamic axis shorter than k is the caller's bad input.
  e.c.line("if ((" + n + ") < " + K + ") return CUVIL_ERROR_INVALID_ARGUMENT;");
  e.c.open("for (int64_t " + o + " = 0; " + o + " < " + outer + "; ++" + o +
           ")");
  e.c.open("for (int64_t " + q + " = 0; " + q + " < " + inner + "; ++" + q +
           ")");
  e.c.line("const int64_t " + x + " = " + o + "*(" + n + ")*(" + inner +
           ") + " + q + ";");
  e.c.line("int64_t *" + h + " = " + indices.name + " + " + o + "*" + K +
           "*(" + inner + ") + " + q + ";");
  e.c.line("int64_t " + size + " = 0, " + pos + ", " + child + ", " + item +
           ", " + end + ";");
  auto better = [&](const std::string &a, const std::string &b) {
    return betterExpr(call, in, x, inner, largest, a, b);
  };
  auto at = [&](const std::string &slot) {
    return h + "[(" + slot + ")*(" + inner + ")]";
  };
  // Moves `item` down from `pos` in a heap of `limit` slots, each parent
  // worse than its children.
  auto siftDown = [&](const std::string &limit) {
    e.c.open("for (;;)");
    e.c.line(child + " = 2*" + pos + " + 1;");
    e.c.line("if (" + child + " >= " + limit + ") break;");
    e.c.line("if (" + child + " + 1 < " + limit + " && " +
             better(at(child), at(child + " + 1")) + ") ++" + child + ";");
    e.c.line("if (!" + better(item, at(child)) + ") break;");
    e.c.line(at(pos) + " = " + at(child) + ";");
    e.c.line(pos + " = " + child + ";");
    e.c.close();
    e.c.line(at(pos) + " = " + item + ";");
  };
  e.c.open("for (int64_t " + i + " = 0; " + i + " < " + n + "; ++" + i + ")");
  e.c.line(item + " = " + i + ";");
  e.c.open("if (" + size + " < " + K + ")");
  e.c.line(pos + " = " + size + "++;");
  // Up while its parent ranks above it (parents are the worse).
  e.c.open("while (" + pos + " > 0 && " +
           better(at("(" + pos + " - 1)/2"), item) + ")");
  e.c.line(at(pos) + " = " + at("(" + pos + " - 1)/2") + ";");
  e.c.line(pos + " = (" + pos + " - 1)/2;");
  e.c.close();
  e.c.line(at(pos) + " = " + item + ";");
  e.c.close();
  e.c.open("else if (" + better(item, at("0")) + ")");
  e.c.line(pos + " = 0;");
  siftDown(K);
  e.c.close();
  e.c.close();
  // Heap sort: the worst goes last, best first remains.
  e.c.open("for (" + end + " = " + K + " - 1; " + end + " > 0; --" + end +
           ")");
  e.c.line("int64_t " + worst + " = " + at("0") + ";");
  e.c.line(item + " = " + at(end) + ";");
  e.c.line(pos + " = 0;");
  siftDown(end);
  e.c.line(at(end) + " = " + worst + ";");
  e.c.close();
  e.c.open("for (" + end + " = 0; " + end + " < " + K + "; ++" + end + ")");
  e.c.line(values.name + "[" + o + "*" + K + "*(" + inner + ") + " + q +
           " + " + end + "*(" + inner + ")] = " + in.name + "[" + x + " + " +
           at(end) + "*(" + inner + ")];");
  e.c.close();
  e.c.close();
  e.c.close();
  return success();
}

} // namespace

void addSelectionKernels(KernelTable &table) {
  table["top_k"] = {emitTopK};
}

} // namespace cuvil::cpu::emitter
