//===- ConvertControlFlow.cpp - ONNX If, Loop and Scan --------------------===//
//
// If becomes cuvil.if and Loop cuvil.loop, their subgraphs imported as the
// regions (they read the values of the graphs around them, as ONNX's
// scoping says). Scan is a Loop over its scan axis: each iteration gathers
// its slice of every scan input, and the stacked scan outputs are
// transposed and reversed as its attributes say; before opset 9, a Scan
// per element of its batch dimension. Shapes are fixed: a
// branch or a carried value whose shape would depend on the data is an
// error naming the value.
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/ScopeExit.h"

namespace cuvil::onnx_import {

namespace {

/// Whether `value` is a constant true or `passThrough` (a loop body's own
/// condition: then the condition never changes).
bool staysTrue(Value value, Value passThrough) {
  if (value == passThrough)
    return true;
  DenseElementsAttr attr;
  return matchPattern(value, m_Constant(&attr)) && attr.getNumElements() == 1 &&
         *attr.getValues<bool>().begin();
}

/// A region of one empty block whose arguments are `types`.
std::unique_ptr<Region> newRegion(TypeRange types, Location loc) {
  auto region = std::make_unique<Region>();
  Block *block = new Block();
  region->push_back(block);
  for (Type type : types)
    block->addArgument(type, loc);
  return region;
}

} // namespace

void forEachGraph(const onnx::GraphProto &graph,
                  llvm::function_ref<void(const onnx::GraphProto &)> fn) {
  fn(graph);
  for (const onnx::NodeProto &node : graph.node())
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.has_g())
        forEachGraph(attr.g(), fn);
      for (const onnx::GraphProto &g : attr.graphs())
        forEachGraph(g, fn);
    }
}

const onnx::GraphProto *Importer::graphAttr(const onnx::NodeProto &node,
                                            StringRef name, Location loc) {
  const onnx::AttributeProto *a =
      typedAttr(node, name, onnx::AttributeProto::GRAPH);
  if (!a && !badAttribute)
    emitError(loc) << node.op_type() << " has no '" << name
                   << "' graph attribute";
  return a ? &a->g() : nullptr;
}

FailureOr<Value> Importer::oneElementInput(const onnx::NodeProto &node,
                                           int input, Type element,
                                           StringRef what, Location loc) {
  if (!hasInput(node, input))
    return Value();
  FailureOr<Value> value = getValue(node, input);
  if (failed(value))
    return failure();
  if (!l1::isOneElementTensor(value->getType(), element))
    return emitError(loc) << node.op_type() << " expects " << what
                          << " as input " << input << ", got "
                          << value->getType();
  return value;
}

FailureOr<Value> Importer::asScalar(Location loc, Value value) {
  if (cast<RankedTensorType>(value.getType()).getRank() == 0)
    return value;
  return create<l1::ReshapeOp>(loc, value, builder.getDenseI64ArrayAttr({}));
}

LogicalResult Importer::importSubgraph(const onnx::GraphProto &graph,
                                       Block &block, ValueRange inputs,
                                       Location loc,
                                       SmallVectorImpl<Value> &outputs) {
  if (graph.input_size() != static_cast<int>(inputs.size()))
    return emitError(loc) << "subgraph '" << graph.name() << "' takes "
                          << graph.input_size() << " inputs, expected "
                          << inputs.size();
  // The names the subgraph defines hide the outer ones until it ends.
  struct Saved {
    std::optional<ValueEntry> entry;
    std::optional<std::string> definer;
  };
  std::map<std::string, Saved> saved;
  auto hide = [&](const std::string &name) {
    if (name.empty() || saved.count(name))
      return;
    Saved &s = saved[name];
    if (auto it = values.find(name); it != values.end()) {
      s.entry = it->second;
      values.erase(it);
    }
    if (auto it = definers.find(name); it != definers.end()) {
      s.definer = it->second;
      definers.erase(it);
    }
  };
  for (const onnx::ValueInfoProto &input : graph.input())
    hide(input.name());
  for (const onnx::TensorProto &tensor : graph.initializer())
    hide(tensor.name());
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &output : node.output())
      hide(output);
  std::optional<Location> outerLoc = currentLoc;
  bool outerBadAttribute = badAttribute;
  auto restore = llvm::make_scope_exit([&] {
    for (auto &[name, s] : saved) {
      values.erase(name);
      definers.erase(name);
      if (s.entry)
        values[name] = *s.entry;
      if (s.definer)
        definers[name] = *s.definer;
    }
    currentLoc = outerLoc;
    badAttribute = outerBadAttribute;
  });

  for (auto [i, input] : llvm::enumerate(graph.input())) {
    if (definers.count(input.name()))
      return emitError(loc) << "subgraph '" << graph.name()
                            << "' has two inputs named '" << input.name()
                            << "'";
    values[input.name()] =
        ValueEntry{inputs[i], std::nullopt, nullptr,
                   cast<RankedTensorType>(inputs[i].getType()), std::nullopt};
    definers[input.name()] = "a subgraph input";
  }
  if (failed(importInitializers(graph)))
    return failure();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&block);
  for (auto [i, node] : llvm::enumerate(graph.node()))
    if (failed(importNode(node, static_cast<int>(i))))
      return failure();
  for (const onnx::ValueInfoProto &output : graph.output()) {
    ValueEntry *entry = lookup(output.name());
    if (!entry)
      return emitError(loc) << "subgraph '" << graph.name() << "' output '"
                            << output.name()
                            << "' is not produced by any node";
    FailureOr<Value> value = materialize(output.name(), *entry);
    if (failed(value))
      return failure();
    outputs.push_back(*value);
  }
  return success();
}

LogicalResult Importer::convertIf(const onnx::NodeProto &node, Location loc) {
  FailureOr<Value> condition = oneElementInput(
      node, 0, builder.getI1Type(), "a condition of one bool", loc);
  const onnx::GraphProto *thenGraph = graphAttr(node, "then_branch", loc);
  const onnx::GraphProto *elseGraph = graphAttr(node, "else_branch", loc);
  if (failed(condition) || !thenGraph || !elseGraph)
    return failure();
  if (!*condition)
    return emitError(loc) << "If needs its condition (input 0)";
  auto defineAll = [&](ArrayRef<Value> results) -> LogicalResult {
    if (static_cast<int>(results.size()) != node.output_size())
      return emitError(loc) << "If has " << node.output_size()
                            << " outputs but its branch yields "
                            << results.size();
    for (auto [i, value] : llvm::enumerate(results))
      define(node, static_cast<int>(i), value);
    return success();
  };
  // A condition known now takes its branch alone (shape tests in a
  // scripted model); the other may hold what Cuvil cannot compile.
  if (const HostTensor *host = getHost(node, 0);
      host && !host->hasUnknown() && host->numElements() == 1) {
    SmallVector<Value> results;
    if (failed(importSubgraph(host->at(0) != 0 ? *thenGraph : *elseGraph,
                              *builder.getInsertionBlock(), {}, loc,
                              results)))
      return failure();
    return defineAll(results);
  }

  std::unique_ptr<Region> thenRegion = newRegion({}, loc),
                          elseRegion = newRegion({}, loc);
  SmallVector<Value> thenValues, elseValues;
  if (failed(importSubgraph(*thenGraph, thenRegion->front(), {}, loc,
                            thenValues)) ||
      failed(importSubgraph(*elseGraph, elseRegion->front(), {}, loc,
                            elseValues)))
    return failure();
  if (thenValues.size() != elseValues.size())
    return emitError(loc) << "If's then branch yields " << thenValues.size()
                          << " values and its else branch "
                          << elseValues.size();
  for (auto [i, pair] : llvm::enumerate(llvm::zip(thenValues, elseValues))) {
    Type thenType = std::get<0>(pair).getType(),
         elseType = std::get<1>(pair).getType();
    if (thenType != elseType)
      return emitError(loc)
             << "If output #" << i << " ('"
             << (static_cast<int>(i) < node.output_size() ? node.output(i)
                                                          : "")
             << "') is " << thenType << " in the then branch and " << elseType
             << " in the else branch; Cuvil compiles fixed shapes, so both "
                "branches must yield the same shape and element type (pad or "
                "slice one of them)";
  }
  for (auto [region, results] :
       {std::pair{thenRegion.get(), &thenValues},
        std::pair{elseRegion.get(), &elseValues}}) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(&region->front());
    l1::YieldOp::create(builder, loc, *results);
  }
  auto op = l1::IfOp::create(builder, loc, ValueRange(thenValues).getTypes(),
                             *condition);
  op.getThenRegion().takeBody(*thenRegion);
  op.getElseRegion().takeBody(*elseRegion);
  return defineAll(SmallVector<Value>(op.getResults()));
}

LogicalResult Importer::convertLoop(const onnx::NodeProto &node, Location loc) {
  const onnx::GraphProto *body = graphAttr(node, "body", loc);
  if (!body)
    return failure();
  Type i1 = builder.getI1Type(), i64 = builder.getI64Type();
  FailureOr<Value> maxTrips =
      oneElementInput(node, 0, i64, "a trip count of one int64", loc);
  FailureOr<Value> condition =
      oneElementInput(node, 1, i1, "a condition of one bool", loc);
  if (failed(maxTrips) || failed(condition))
    return failure();
  if (!*condition)
    condition = scalarConstant(loc, i1, 1);
  else if (failed(condition = asScalar(loc, *condition)))
    return failure();
  SmallVector<Value> inits;
  for (int i = 2; i < node.input_size(); ++i) {
    FailureOr<Value> v = getValue(node, i);
    if (failed(v))
      return failure();
    inits.push_back(*v);
  }
  int carried = static_cast<int>(inits.size());
  int scans = body->output_size() - 1 - carried;
  if (scans < 0 || body->input_size() != 2 + carried)
    return emitError(loc) << "Loop carries " << carried
                          << " values, so its body takes " << 2 + carried
                          << " inputs and yields at least " << 1 + carried
                          << " outputs, not " << body->input_size() << " and "
                          << body->output_size();

  SmallVector<Type> argTypes = {RankedTensorType::get({}, i64),
                                RankedTensorType::get({}, i1)};
  llvm::append_range(argTypes, ValueRange(inits).getTypes());
  std::unique_ptr<Region> region = newRegion(argTypes, loc);
  Block &block = region->front();
  SmallVector<Value> yields;
  if (failed(importSubgraph(*body, block, block.getArguments(), loc, yields)))
    return failure();
  if (!l1::isOneElementTensor(yields[0].getType(), i1))
    return emitError(loc) << "Loop body output '" << body->output(0).name()
                          << "' (the condition) must be one bool, got "
                          << yields[0].getType();
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(&block);
    FailureOr<Value> scalar = asScalar(loc, yields[0]);
    if (failed(scalar))
      return failure();
    yields[0] = *scalar;
  }
  for (int i = 0; i < carried; ++i)
    if (yields[1 + i].getType() != inits[i].getType())
      return emitError(loc)
             << "Loop carried value #" << i << " starts as '"
             << node.input(2 + i) << "' of " << inits[i].getType()
             << " but the body yields '" << body->output(1 + i).name()
             << "' of " << yields[1 + i].getType()
             << "; Cuvil compiles fixed shapes, so a carried value must keep "
                "its shape and element type (preallocate it at its largest "
                "size)";

  IntegerAttr scanRows;
  SmallVector<Type> resultTypes(ValueRange(inits).getTypes());
  if (scans) {
    // The rows are the iterations: fixed only for a constant trip count
    // and a condition that stays true.
    const HostTensor *m = hasInput(node, 0) ? getHost(node, 0) : nullptr;
    const HostTensor *c = hasInput(node, 1) ? getHost(node, 1) : nullptr;
    bool fixed = m && !m->hasUnknown() && (!hasInput(node, 1) || c) &&
                 (!c || c->at(0) != 0) &&
                 staysTrue(yields[0], block.getArgument(1));
    if (!fixed)
      return emitError(loc)
             << "Loop has scan outputs ('" << body->output(1 + carried).name()
             << "', ...) but its number of iterations is known only at run "
                "time (a trip count computed by the model, or a condition "
                "the body computes), so their length would depend on the "
                "data; Cuvil compiles fixed shapes (carry a preallocated "
                "tensor instead)";
    int64_t rows = std::max<int64_t>(0, static_cast<int64_t>(m->at(0)));
    scanRows = builder.getI64IntegerAttr(rows);
    for (Value row : ArrayRef<Value>(yields).drop_front(1 + carried)) {
      auto type = cast<RankedTensorType>(row.getType());
      SmallVector<int64_t> shape = {rows};
      llvm::append_range(shape, type.getShape());
      resultTypes.push_back(
          RankedTensorType::get(shape, type.getElementType()));
      if (failed(checkTensorSize(loc, resultTypes.back(),
                                 "a Loop scan output")))
        return failure();
    }
  }
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(&block);
    l1::YieldOp::create(builder, loc, yields);
  }
  auto op = l1::LoopOp::create(builder, loc, resultTypes, *maxTrips,
                               *condition, inits, scanRows);
  op.getBody().takeBody(*region);
  for (auto [i, result] : llvm::enumerate(op.getResults()))
    define(node, static_cast<int>(i), result);
  return success();
}

LogicalResult Importer::convertScan(const onnx::NodeProto &node, Location loc) {
  const onnx::GraphProto *body = graphAttr(node, "body", loc);
  if (!body)
    return failure();
  if (opset < 9)
    return convertScan8(node, *body, loc);
  int64_t numScanInputs = attrInt(node, "num_scan_inputs", -1);
  int numStates = node.input_size() - static_cast<int>(numScanInputs);
  if (numScanInputs < 1 || numStates < 0)
    return emitError(loc) << "Scan needs num_scan_inputs between 1 and its "
                          << node.input_size() << " inputs, got "
                          << numScanInputs;
  int numScanOutputs = body->output_size() - numStates;
  auto readAxes = [&](StringRef name, int count) -> SmallVector<int64_t> {
    std::optional<SmallVector<int64_t>> axes = attrInts(node, name);
    return axes ? *axes : SmallVector<int64_t>(count, 0);
  };
  ScanAxes axes;
  axes.inAxes = readAxes("scan_input_axes", numScanInputs);
  axes.inDirs = readAxes("scan_input_directions", numScanInputs);
  axes.outAxes = readAxes("scan_output_axes", std::max(numScanOutputs, 0));
  axes.outDirs =
      readAxes("scan_output_directions", std::max(numScanOutputs, 0));
  SmallVector<Value> states, scanned;
  for (int i = 0; i < node.input_size(); ++i) {
    FailureOr<Value> v = getValue(node, i);
    if (failed(v))
      return failure();
    (i < numStates ? states : scanned).push_back(*v);
  }
  FailureOr<SmallVector<Value>> results =
      buildScan(*body, states, scanned, axes, loc);
  if (failed(results))
    return failure();
  for (auto [i, result] : llvm::enumerate(*results))
    define(node, i, result);
  return success();
}

/// Scan before opset 9: states [B, ...] and scan inputs [B, S, ...], the
/// body run on each batch element's slices (the scan axis is 1), an
/// optional sequence_lens first. Each batch element is a Scan of its own
/// (B is static), stacked back along dimension 0.
LogicalResult Importer::convertScan8(const onnx::NodeProto &node,
                                     const onnx::GraphProto &body,
                                     Location loc) {
  int64_t numScanInputs = attrInt(node, "num_scan_inputs", -1);
  int numStates = node.input_size() - 1 - static_cast<int>(numScanInputs);
  if (numScanInputs < 1 || numStates < 0)
    return emitError(loc) << "Scan (opset " << opset
                          << ") needs num_scan_inputs between 1 and its "
                          << node.input_size() - 1
                          << " inputs after sequence_lens, got "
                          << numScanInputs;
  int numScanOutputs = std::max(body.output_size() - numStates, 0);
  std::optional<SmallVector<int64_t>> directions = attrInts(node, "directions");
  ScanAxes axes;
  axes.inAxes.assign(numScanInputs, 0);
  axes.inDirs =
      directions ? *directions : SmallVector<int64_t>(numScanInputs, 0);
  axes.outAxes.assign(numScanOutputs, 0);
  axes.outDirs.assign(numScanOutputs, 0);
  SmallVector<Value> inputs;
  int64_t batch = ShapedType::kDynamic, length = ShapedType::kDynamic;
  for (int i = 1; i < node.input_size(); ++i) {
    FailureOr<Value> v = getValue(node, i);
    if (failed(v))
      return failure();
    auto type = cast<RankedTensorType>(v->getType());
    bool scan = i > numStates;
    if (type.getRank() < (scan ? 2 : 1) || type.isDynamicDim(0) ||
        (batch != ShapedType::kDynamic && type.getDimSize(0) != batch))
      return emitError(loc) << "Scan (opset " << opset << ") input '"
                            << node.input(i) << "' is " << type
                            << "; every state and scan input needs the same "
                               "static batch dimension first";
    batch = type.getDimSize(0);
    if (scan)
      length = type.getDimSize(1);
    inputs.push_back(*v);
  }
  if (hasInput(node, 0)) {
    FailureOr<SmallVector<int64_t>> lens =
        requireInts(node, 0, "Scan's sequence_lens");
    if (failed(lens))
      return failure();
    if (llvm::any_of(*lens, [&](int64_t n) { return n != length; }))
      return emitError(loc)
             << "Scan (opset " << opset << ") with sequence_lens shorter than "
             << "the scan inputs' " << length << " steps is not supported; "
             << "export with opset 9 or later, where every sequence has the "
                "full length";
  }
  // Each batch element's Scan (its body imported again), its results
  // stacked again: a bounded number of them.
  constexpr int64_t kMaxBatch = 256;
  if (batch > kMaxBatch)
    return emitError(loc) << "Scan (opset " << opset << ") over a batch of "
                          << batch << ": Cuvil builds one loop per batch "
                          << "element, at most " << kMaxBatch
                          << "; export with opset 9 or later";
  SmallVector<SmallVector<Value>> rows(numStates + numScanOutputs);
  Type i64 = builder.getI64Type();
  for (int64_t b = 0; b < batch; ++b) {
    SmallVector<Value> states, scanned;
    for (auto [i, x] : llvm::enumerate(inputs)) {
      FailureOr<Value> slice = create<l1::GatherOp>(
          loc, x, scalarConstant(loc, i64, b), builder.getI64IntegerAttr(0));
      if (failed(slice))
        return failure();
      (static_cast<int>(i) < numStates ? states : scanned).push_back(*slice);
    }
    FailureOr<SmallVector<Value>> results =
        buildScan(body, states, scanned, axes, loc);
    if (failed(results))
      return failure();
    for (auto [k, result] : llvm::enumerate(*results)) {
      FailureOr<Value> row = create<l1::UnsqueezeOp>(
          loc, result, builder.getDenseI64ArrayAttr({0}));
      if (failed(row))
        return failure();
      rows[k].push_back(*row);
    }
  }
  for (auto [k, parts] : llvm::enumerate(rows)) {
    Value stacked = parts.front();
    if (parts.size() > 1) {
      FailureOr<Value> joined =
          create<l1::ConcatOp>(loc, parts, builder.getI64IntegerAttr(0));
      if (failed(joined))
        return failure();
      stacked = *joined;
    }
    define(node, k, stacked);
  }
  return success();
}

FailureOr<SmallVector<Value>> Importer::buildScan(const onnx::GraphProto &body,
                                                  ArrayRef<Value> states,
                                                  ArrayRef<Value> scanned,
                                                  ScanAxes axes, Location loc) {
  int numStates = states.size(), numScanInputs = scanned.size();
  int numScanOutputs = body.output_size() - numStates;
  if (numScanOutputs < 0 || body.input_size() != numStates + numScanInputs)
    return emitError(loc) << "Scan's body must take its " << numStates
                          << " states and " << numScanInputs
                          << " scan slices, and yield the states first";
  SmallVector<int64_t> &inAxes = axes.inAxes, &inDirs = axes.inDirs,
                       &outAxes = axes.outAxes, &outDirs = axes.outDirs;
  if (static_cast<int>(inAxes.size()) != numScanInputs ||
      static_cast<int>(inDirs.size()) != numScanInputs ||
      static_cast<int>(outAxes.size()) != numScanOutputs ||
      static_cast<int>(outDirs.size()) != numScanOutputs)
    return emitError(loc) << "Scan's axes and directions need one entry per "
                             "scan input and output";
  // Every scan input has the same static length along its axis.
  int64_t length = -1;
  for (auto [j, x] : llvm::enumerate(scanned)) {
    auto type = cast<RankedTensorType>(x.getType());
    int64_t axis = inAxes[j] < 0 ? inAxes[j] + type.getRank() : inAxes[j];
    if (axis < 0 || axis >= type.getRank())
      return emitError(loc) << "Scan input axis " << inAxes[j]
                            << " is out of range for " << type;
    inAxes[j] = axis;
    int64_t n = type.getDimSize(axis);
    if (ShapedType::isDynamic(n))
      return emitError(loc) << "Scan iterates over dimension " << axis
                            << " of " << type
                            << ", which is known only at run time; Cuvil "
                               "needs the scan length at compile time";
    if (length >= 0 && n != length)
      return emitError(loc) << "Scan inputs have different lengths, " << length
                            << " and " << n;
    length = n;
  }

  Type i1 = builder.getI1Type(), i64 = builder.getI64Type();
  SmallVector<Type> argTypes = {RankedTensorType::get({}, i64),
                                RankedTensorType::get({}, i1)};
  llvm::append_range(argTypes, ValueRange(states).getTypes());
  std::unique_ptr<Region> region = newRegion(argTypes, loc);
  Block &block = region->front();
  SmallVector<Value> inputs(block.getArguments().drop_front(2)), yields;
  {
    // Each iteration's slice of every scan input (the last first for a
    // reverse direction).
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(&block);
    Value iteration = block.getArgument(0), reversed;
    for (auto [j, x] : llvm::enumerate(scanned)) {
      Value index = iteration;
      if (inDirs[j]) {
        if (!reversed) {
          FailureOr<Value> r = create<l1::SubOp>(
              loc, scalarConstant(loc, i64, length - 1), iteration);
          if (failed(r))
            return failure();
          reversed = *r;
        }
        index = reversed;
      }
      FailureOr<Value> slice = create<l1::GatherOp>(
          loc, x, index, builder.getI64IntegerAttr(inAxes[j]));
      if (failed(slice))
        return failure();
      inputs.push_back(*slice);
    }
  }
  if (failed(importSubgraph(body, block, inputs, loc, yields)))
    return failure();
  for (int i = 0; i < numStates; ++i)
    if (yields[i].getType() != states[i].getType())
      return emitError(loc)
             << "Scan state #" << i << " starts as " << states[i].getType()
             << " but the body yields " << yields[i].getType()
             << "; a state must keep its shape and element type";
  SmallVector<Type> resultTypes(ValueRange(states).getTypes());
  for (Value row : ArrayRef<Value>(yields).drop_front(numStates)) {
    auto type = cast<RankedTensorType>(row.getType());
    SmallVector<int64_t> shape = {length};
    llvm::append_range(shape, type.getShape());
    resultTypes.push_back(RankedTensorType::get(shape, type.getElementType()));
    if (failed(checkTensorSize(loc, resultTypes.back(), "a Scan output")))
      return failure();
  }
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(&block);
    SmallVector<Value> all = {block.getArgument(1)};
    llvm::append_range(all, yields);
    l1::YieldOp::create(builder, loc, all);
  }
  auto op = l1::LoopOp::create(builder, loc, resultTypes,
                               scalarConstant(loc, i64, length),
                               scalarConstant(loc, i1, 1), states,
                               builder.getI64IntegerAttr(length));
  op.getBody().takeBody(*region);
  SmallVector<Value> results(op.getResults().take_front(numStates));
  // Scan outputs: stacked along dimension 0, reversed and moved as asked.
  for (int k = 0; k < numScanOutputs; ++k) {
    Value out = op.getResult(numStates + k);
    auto type = cast<RankedTensorType>(out.getType());
    if (outDirs[k]) {
      SmallVector<int64_t> order;
      for (int64_t r = length - 1; r >= 0; --r)
        order.push_back(r);
      auto indexType = RankedTensorType::get({length}, i64);
      Value indices = l1::ConstantOp::create(
          builder, loc, DenseElementsAttr::get(indexType, ArrayRef(order)));
      FailureOr<Value> r = create<l1::GatherOp>(loc, out, indices,
                                                builder.getI64IntegerAttr(0));
      if (failed(r))
        return failure();
      out = *r;
    }
    int64_t axis = outAxes[k] < 0 ? outAxes[k] + type.getRank() : outAxes[k];
    if (axis < 0 || axis >= type.getRank())
      return emitError(loc) << "Scan output axis " << outAxes[k]
                            << " is out of range for " << type;
    if (axis != 0) {
      SmallVector<int64_t> perm;
      for (int64_t d = 1; d <= axis; ++d)
        perm.push_back(d);
      perm.push_back(0);
      for (int64_t d = axis + 1; d < type.getRank(); ++d)
        perm.push_back(d);
      FailureOr<Value> t = create<l1::TransposeOp>(
          loc, out, builder.getDenseI64ArrayAttr(perm));
      if (failed(t))
        return failure();
      out = *t;
    }
    results.push_back(out);
  }
  return results;
}

} // namespace cuvil::onnx_import
