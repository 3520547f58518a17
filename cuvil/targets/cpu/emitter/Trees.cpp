//===- Trees.cpp - cuvil.tree_ensemble as a call of the forest runtime ----===//
//
// The op's tables are weights already (the neutral lowering made them
// globals; cuvil-cpu-layout-forests may have laid them out as perfect
// trees); the call describes them in a cuvil_forest (or
// cuvil_perfect_forest) on the stack. Whether every branch makes the one
// comparison the vector walks take was decided by that pass
// (`cuvil.forest_comparison`), not per call.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/cpu/emitter/Emitter.h"

#include "absl/strings/str_join.h"

#include <cstdio>

namespace cuvil::cpu::emitter {

using namespace mlir;

namespace {

/// An exact C literal of `value` in `type` (hexadecimal floating point).
std::string exactLiteral(double value, Type type) {
  char text[64];
  if (type.isF32())
    std::snprintf(text, sizeof text, "%af", static_cast<float>(value));
  else
    std::snprintf(text, sizeof text, "%a", value);
  return text;
}

std::string transformOf(const KernelCall &call) {
  auto post = dyn_cast_or_null<StringAttr>(call.op.getParam("post_transform"));
  StringRef name = post ? post.getValue() : "none";
  return name == "logistic"  ? "CUVIL_FOREST_LOGISTIC"
         : name == "softmax" ? "CUVIL_FOREST_SOFTMAX"
         : name == "exp"     ? "CUVIL_FOREST_EXP"
                             : "CUVIL_FOREST_NONE";
}

/// `static const T name[] = {...};` of the base values, exactly (zeros
/// with `zeros`).
FailureOr<std::string> emitBase(Emitter &e, const KernelCall &call, Type acc,
                                bool zeros = false) {
  auto baseValues =
      dyn_cast_or_null<DenseF64ArrayAttr>(call.op.getParam("base_values"));
  if (!baseValues)
    return failure();
  std::vector<std::string> literals;
  for (double v : baseValues.asArrayRef())
    literals.push_back(exactLiteral(zeros ? 0.0 : v, acc));
  std::string base = e.tmp();
  e.c.line("static const " + cType(acc) + " " + base + "[] = {" +
           absl::StrJoin(literals, ", ") + "};");
  return base;
}

/// `forest.has_missing_value` and `.missing_value` (XGBoost's `missing`),
/// if the op has one.
void setMissingValue(Emitter &e, const KernelCall &call,
                     const std::string &forest) {
  auto missing = dyn_cast_or_null<FloatAttr>(call.op.getParam("missing_value"));
  if (!missing)
    return;
  e.c.line(forest + ".has_missing_value = 1;");
  e.c.line(forest + ".missing_value = " +
           exactLiteral(missing.getValueAsDouble(),
                        Float64Type::get(call.op.getContext())) +
           ";");
}

/// Whether the forest averages its trees (random forests).
bool isAverage(const KernelCall &call) {
  auto aggregate = dyn_cast_or_null<StringAttr>(call.op.getParam("aggregate"));
  return aggregate && aggregate.getValue() == "average";
}

/// A forest cuvil-cpu-layout-forests laid out as perfect trees.
LogicalResult emitPerfectForest(Emitter &e, const KernelCall &call,
                                int64_t depth) {
  const Buffer &input = *call.ins[0], &words = *call.ins[1],
               &thresholds = *call.ins[2], &targets = *call.ins[3],
               &leaves = *call.ins[4];
  Type acc = leaves.type.getElementType();
  bool average = isAverage(call);
  e.c.open();
  FailureOr<std::string> base = emitBase(e, call, acc);
  FailureOr<std::string> zeros =
      average ? emitBase(e, call, acc, /*zeros=*/true) : base;
  if (failed(base) || failed(zeros))
    return call.error() << "has no base_values";
  std::string forest = e.tmp();
  int64_t comparison = call.op->getAttrOfType<IntegerAttr>(
                                  "cuvil.forest_comparison")
                           .getInt();
  e.c.line("cuvil_perfect_forest " + forest + ";");
  e.c.line("memset(&" + forest + ", 0, sizeof " + forest + ");");
  auto set = [&](const std::string &field, const std::string &value) {
    e.c.line(forest + "." + field + " = " + value + ";");
  };
  set("features", input.dims[1]);
  set("trees", words.dims[0]);
  set("targets", call.out->dims[1]);
  set("depth", std::to_string(depth));
  set("nodes", "(const int32_t *)" + words.name);
  set("thresholds", thresholds.name);
  set("leaves", leaves.name);
  if (call.ins.size() > 5) // cuvil-cpu-layout-forests' forest_pairs
    set("pairs", "(const int64_t *)" + call.ins[5]->name);
  set("targets_of", "(const int32_t *)" + targets.name);
  set("base", *zeros);
  if (average) {
    set("average", "1");
    set("offset", *base);
  }
  set("acc_f64", acc.isF64() ? "1" : "0");
  set("values", leaves.dims.size() == 3 ? leaves.dims[2] : "1");
  setMissingValue(e, call, forest);
  set("comparison", std::to_string(comparison));
  set("post_transform", transformOf(call));
  e.c.line("cuvil_perfect_forest_predict(pool, CUVIL_PERFECT_WALK, &" +
           forest + ", " + input.dims[0] + ", " + input.name + ", " +
           call.out->name + ");");
  e.c.close();
  return success();
}

LogicalResult emitTreeEnsemble(Emitter &e, const KernelCall &call) {
  // The level1 verifier vouches for constant tables only: a walk over
  // tables that arrive at run time could leave them.
  for (Value table : call.op.getInputs().drop_front())
    if (!table.getDefiningOp<memref::GetGlobalOp>())
      return call.error() << "needs constant tables on the CPU targets (they "
                             "are checked when the model is compiled)";
  if (auto depth = call.op->getAttrOfType<IntegerAttr>("cuvil.forest_depth"))
    return emitPerfectForest(e, call, depth.getInt());
  const Buffer &input = *call.ins[0], &nodes = *call.ins[1],
               &thresholds = *call.ins[2], &trees = *call.ins[3],
               &leaves = *call.ins[4];
  Type acc = leaves.type.getElementType();
  bool average = isAverage(call);
  e.c.open();
  FailureOr<std::string> base = emitBase(e, call, acc);
  FailureOr<std::string> zeros =
      average ? emitBase(e, call, acc, /*zeros=*/true) : base;
  if (failed(base) || failed(zeros))
    return call.error() << "has no base_values";
  std::string forest = e.tmp();
  e.c.line("cuvil_forest " + forest + ";");
  e.c.line("memset(&" + forest + ", 0, sizeof " + forest + ");");
  auto set = [&](const std::string &field, const std::string &value) {
    e.c.line(forest + "." + field + " = " + value + ";");
  };
  set("features", input.dims[1]);
  set("trees", trees.dims[0]);
  set("values", leaves.dims[1]);
  set("targets", call.out->dims[1]);
  set("nodes", "(const int32_t *)" + nodes.name);
  set("thresholds", thresholds.name);
  set("roots", "(const int32_t *)" + trees.name);
  set("leaves", leaves.name);
  set("base", *zeros);
  if (average) {
    set("average", "1");
    set("offset", *base);
  }
  set("input_f64", input.type.getElementType().isF64() ? "1" : "0");
  set("thresholds_f64", thresholds.type.getElementType().isF64() ? "1" : "0");
  set("acc_f64", acc.isF64() ? "1" : "0");
  auto comparison =
      call.op->getAttrOfType<IntegerAttr>("cuvil.forest_comparison");
  set("uniform_comparison",
      std::to_string(comparison ? comparison.getInt() : 0));
  set("post_transform", transformOf(call));
  if (call.ins.size() > 5)
    set("categories", "(const int32_t *)" + call.ins[5]->name);
  setMissingValue(e, call, forest);
  e.c.line("cuvil_forest_predict(pool, CUVIL_FOREST_WALK, &" + forest + ", " +
           input.dims[0] + ", " + input.name + ", " + call.out->name + ");");
  e.c.close();
  return success();
}

} // namespace

void addTreeKernels(KernelTable &table) {
  table["tree_ensemble"] = {emitTreeEnsemble};
}

} // namespace cuvil::cpu::emitter
