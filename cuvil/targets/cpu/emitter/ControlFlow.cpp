//===- ControlFlow.cpp - cuvil_l2.if, loop and insert_row as C ------------===//
//
// Structured control flow becomes C's own: an `if` on the condition's byte,
// a `for` over the iteration number, with the ops of the regions emitted
// inside (their buffers are views of the arena like every other, placed by
// cuvil-plan-memory so that what a loop reads again stays intact).
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/cpu/emitter/Emitter.h"
#include "cuvil/support/Diagnostics.h"
#include "cuvil/support/SourceEscape.h"

namespace cuvil::cpu::emitter {

using namespace mlir;

LogicalResult Emitter::emitRegion(Region &region) {
  for (Operation &op : region.front().without_terminator())
    if (failed(emitOp(&op)))
      return failure();
  return success();
}

LogicalResult Emitter::emitIf(cuvil::l2::IfOp op) {
  c.line("/* if at " + cCommentText(formatLocation(op.getLoc())) + " */");
  c.open("if (*" + buffer(op.getCondition()).name + ")");
  if (failed(emitRegion(op.getThenRegion())))
    return failure();
  c.close();
  c.open("else");
  if (failed(emitRegion(op.getElseRegion())))
    return failure();
  c.close();
  return success();
}

LogicalResult Emitter::emitLoop(cuvil::l2::LoopOp op) {
  c.line("/* loop at " + cCommentText(formatLocation(op.getLoc())) + " */");
  std::string i = tmp();
  std::string test = "*" + buffer(op.getCondition()).name;
  if (Value max = op.getMaxTripCount())
    test = i + " < *" + buffer(max).name + " && " + test;
  c.open("for (int64_t " + i + " = 0; " + test + "; ++" + i + ")");
  if (Value iteration = op.getIteration())
    c.line("*" + buffer(iteration).name + " = " + i + ";");
  if (failed(emitRegion(op.getBody())))
    return failure();
  c.close();
  return success();
}

LogicalResult Emitter::emitInsertRow(cuvil::l2::InsertRowOp op) {
  const Buffer &source = buffer(op.getSource()),
               &target = buffer(op.getTarget());
  std::string row = "*" + buffer(op.getIndex()).name;
  // A row outside the target writes nothing (verified: row-major buffers).
  c.open("if (" + row + " >= 0 && " + row + " < (int64_t)(" + target.dims[0] +
         "))");
  c.line("memcpy((unsigned char *)" + target.name + " + (size_t)" + row +
         " * (size_t)(" + bytes(source) + "), " + source.name + ", (size_t)(" +
         bytes(source) + "));");
  c.close();
  return success();
}

} // namespace cuvil::cpu::emitter
