//===- Map.cpp - a fused elementwise map as one loop nest -----------------===//
//
// A `cuvil_l2.kernel "map"` holds one linalg.generic with parallel loops:
// its body becomes one C local per scalar op, so the C compiler sees the
// region's dataflow and vectorizes the loop.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/cpu/emitter/Emitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

namespace cuvil::cpu::emitter {

using namespace mlir;

namespace {

/// The C comparison of an ordered predicate (false on NaN), or != for UNE.
FailureOr<std::string> comparison(arith::CmpFOp cmp) {
  switch (cmp.getPredicate()) {
  case arith::CmpFPredicate::OEQ:
    return std::string("==");
  case arith::CmpFPredicate::OGT:
    return std::string(">");
  case arith::CmpFPredicate::OGE:
    return std::string(">=");
  case arith::CmpFPredicate::OLT:
    return std::string("<");
  case arith::CmpFPredicate::OLE:
    return std::string("<=");
  case arith::CmpFPredicate::UNE:
    return std::string("!=");
  default:
    return cmp.emitOpError("predicate ")
           << arith::stringifyCmpFPredicate(cmp.getPredicate())
           << " is not supported by the CPU targets";
  }
}

/// The <math.h> function (without its float suffix) computing a math
/// dialect op of one operand, or "" if there is none.
llvm::StringRef mathLibraryName(Operation &op) {
  if (isa<math::RoundEvenOp>(op))
    return "rint"; // halves to even in the default rounding mode
  if (!isa<math::SinOp, math::CosOp, math::TanOp, math::AsinOp, math::AcosOp,
           math::AtanOp, math::SinhOp, math::CoshOp, math::AsinhOp,
           math::AcoshOp, math::AtanhOp, math::CeilOp, math::FloorOp,
           math::ExpM1Op, math::Log1pOp>(op))
    return "";
  return op.getName().stripDialect();
}

/// The C expression of one scalar op of a map's region.
FailureOr<std::string>
scalarExpr(Operation &op, const llvm::DenseMap<Value, std::string> &values) {
  auto x = [&](unsigned i) { return values.lookup(op.getOperand(i)); };
  Type t = op.getResult(0).getType();
  std::string f = mathSuffix(t);
  auto binary = [&](const std::string &c) {
    return "(" + x(0) + " " + c + " " + x(1) + ")";
  };
  auto call = [&](const std::string &name) { return name + "(" + x(0) + ")"; };
  using Result = FailureOr<std::string>;
  if (!isa<FloatType>(t) && !isa<arith::CmpFOp>(op))
    return op.emitOpError("on ")
           << t << " in a map is not supported by the CPU targets";
  if (llvm::StringRef name = mathLibraryName(op); !name.empty())
    return call(name.str() + f);
  return llvm::TypeSwitch<Operation *, Result>(&op)
      .Case([&](arith::ConstantOp c) -> Result {
        auto value = dyn_cast<FloatAttr>(c.getValue());
        if (!value)
          return c.emitOpError("in a map must be a float scalar");
        return literal(value.getValueAsDouble(), t);
      })
      .Case([&](arith::AddFOp) { return binary("+"); })
      .Case([&](arith::SubFOp) { return binary("-"); })
      .Case([&](arith::MulFOp) { return binary("*"); })
      .Case([&](arith::DivFOp) { return binary("/"); })
      .Case([&](arith::NegFOp) { return "(-" + x(0) + ")"; })
      .Case([&](arith::MaximumFOp) { return extremumExpr(">", x(0), x(1)); })
      .Case([&](arith::MinimumFOp) { return extremumExpr("<", x(0), x(1)); })
      .Case([&](arith::CmpFOp cmp) -> Result {
        FailureOr<std::string> c = comparison(cmp);
        if (failed(c))
          return failure();
        return binary(*c);
      })
      .Case([&](arith::SelectOp) {
        return "(" + x(0) + " ? " + x(1) + " : " + x(2) + ")";
      })
      .Case([&](math::ExpOp) { return call(t.isF32() ? "cuvil_expf" : "exp"); })
      .Case([&](math::ErfOp) { return call(t.isF32() ? "cuvil_erff" : "erf"); })
      .Case([&](math::TanhOp) { return tanhExpr(x(0), t); })
      .Case([&](math::LogOp) { return call("log" + f); })
      .Case([&](math::SqrtOp) { return call("sqrt" + f); })
      .Case([&](math::AbsFOp) { return call("fabs" + f); })
      .Case([&](math::PowFOp) {
        return "pow" + f + "(" + x(0) + ", " + x(1) + ")";
      })
      .Default([&](Operation *other) -> Result {
        return other->emitOpError(
            "in a map is not supported by the CPU targets (a map's region "
            "may hold float constants, add/sub/mul/div/neg, maximum/minimum, "
            "cmpf, select, and math exp/log/sqrt/tanh/erf/absf/powf and "
            "the functions of <math.h>)");
      });
}

/// How a map input is indexed: each result of its indexing map is a loop
/// or the constant 0 (a broadcast).
FailureOr<DimSources> inputSources(cuvil::l2::KernelOp kernel,
                                   linalg::GenericOp generic,
                                   OpOperand *operand) {
  DimSources s;
  for (AffineExpr e : generic.getMatchingIndexingMap(operand).getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(e))
      s.push_back(dim.getPosition());
    else if (auto c = dyn_cast<AffineConstantExpr>(e); c && c.getValue() == 0)
      s.push_back(-1);
    else
      return kernel.emitOpError("map input ")
             << operand->getOperandNumber()
             << " has an index that is neither a loop nor a broadcast";
  }
  return s;
}

} // namespace

/// Elements of `type` counting a dynamic dimension (the batch) as 1.
static int64_t staticElements(MemRefType type) {
  int64_t count = 1;
  for (int64_t d : type.getShape())
    count *= ShapedType::isDynamic(d) ? 1 : d;
  return count;
}

/// Maps smaller than this run on the calling thread: waking the context's
/// workers costs about as much as a pass over 32K floats.
static constexpr int64_t kParallelElements = 32768;

LogicalResult Emitter::emitMap(cuvil::l2::KernelOp kernel) {
  Block &body = kernel.getBody().front();
  // The body: scalar constants (hoisted out of the generic by
  // canonicalization) and one linalg.generic.
  linalg::GenericOp generic;
  llvm::DenseMap<Value, std::string> constants;
  for (Operation &op : body.without_terminator()) {
    if (auto constant = dyn_cast<arith::ConstantOp>(op);
        constant && isa<FloatAttr>(constant.getValue())) {
      FailureOr<std::string> value = scalarExpr(op, constants);
      if (failed(value))
        return failure();
      constants[constant.getResult()] = *value;
    } else if (isa<linalg::GenericOp>(op) && !generic) {
      generic = cast<linalg::GenericOp>(op);
    } else {
      return op.emitOpError("in a kernel body is not supported by the CPU "
                            "targets");
    }
  }
  if (kernel.getName() != "map" || !generic || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() != 0)
    return kernel.emitOpError("is not an elementwise map (a linalg.generic "
                              "with parallel loops and one output), the only "
                              "kernel body the CPU targets generate");
  // The generic's operands are the kernel's block arguments, which stand for
  // the kernel's operands (ins, then outs).
  auto outer = [&](Value value) -> const Buffer * {
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner() != &body)
      return nullptr;
    return &buffers[kernel->getOperand(arg.getArgNumber())];
  };
  SmallVector<const Buffer *> ins;
  SmallVector<DimSources> sources;
  for (OpOperand *operand : generic.getDpsInputOperands()) {
    const Buffer *b = outer(operand->get());
    if (!b)
      return kernel.emitOpError("map input is not a kernel argument");
    FailureOr<DimSources> s = inputSources(kernel, generic, operand);
    if (failed(s))
      return failure();
    ins.push_back(b);
    sources.push_back(*s);
  }
  OpOperand *init = generic.getDpsInitOperand(0);
  const Buffer *out = outer(init->get());
  if (!out || !generic.getMatchingIndexingMap(init).isIdentity())
    return kernel.emitOpError("map output must be a kernel argument indexed "
                              "by the loops in order");
  // On blocked buffers a map reads every operand in the output's layout
  // and shape, per channel, or as one element (a plain map reads a
  // per-channel operand's bytes as they are in any layout).
  if (out->block <= 1)
    for (const Buffer *&b : ins)
      b = plainView(*b);
  bool anyBlocked = out->block > 1 || llvm::any_of(ins, [](const Buffer *b) {
                      return b->block > 1;
                    });
  for (auto [b, s] : llvm::zip(ins, sources))
    if (anyBlocked && blockedRead(*b, s, *out) == BlockedRead::None)
      return kernel.emitOpError("a map on blocked layouts must read every "
                                "operand in the output's layout and shape, "
                                "per channel, or as one element");
  Block &region = generic.getRegion().front();
  LogicalResult status = success();
  // A large map at the function's top level (not inside a loop or branch,
  // whose C locals it would need) is written as a function of a range of
  // its outer iterations, run over the context's threads.
  std::string unitCount;
  bool parallel = kernel->getParentOp() == func.getOperation() &&
                  staticElements(out->type) >= kParallelElements;
  CWriter runPart;
  if (parallel) {
    runPart = std::move(c);
    c = CWriter();
    units = &unitCount;
  }
  emitParallelLoop(
      *out, ins, sources,
      [&](ArrayRef<std::string> index, const std::string &o) {
        // One const local per scalar value.
        llvm::DenseMap<Value, std::string> values = constants;
        for (auto [i, b] : llvm::enumerate(ins)) {
          std::string t = tmp();
          c.line("const " + cType(region.getArgument(i).getType()) + " " + t +
                 " = " + load(*b, b->name + "[" + index[i] + "]") + ";");
          values[region.getArgument(i)] = t;
        }
        for (Operation &op : region.without_terminator()) {
          FailureOr<std::string> expr = scalarExpr(op, values);
          if (failed(expr)) {
            status = failure();
            return;
          }
          std::string t = tmp();
          c.line("const " + cType(op.getResult(0).getType()) + " " + t +
                 " = " + *expr + ";");
          values[op.getResult(0)] = t;
        }
        c.line(out->name + "[" + o + "] = " +
               store(*out,
                     values.lookup(region.getTerminator()->getOperand(0))) +
               ";");
      });
  if (!parallel)
    return status;
  units = nullptr;
  std::string loop = c.take();
  c = std::move(runPart);
  if (unitCount.empty()) {
    // No loop to split (a map of one dimension that broadcasts): inline.
    c.append(loop);
    return status;
  }
  std::string name = "cuvil_map" + std::to_string(parallelMaps.size());
  parallelMaps.emplace_back(name, std::move(loop));
  c.open();
  c.line("const cuvil_map_args args = {batch, inputs, outputs, arena};");
  c.line("cuvil_parallel_for(pool, " + unitCount + ", " + name +
         ", (void *)&args);");
  c.close();
  return status;
}

} // namespace cuvil::cpu::emitter
