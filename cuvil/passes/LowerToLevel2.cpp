//===- LowerToLevel2.cpp - level1 tensors to level2 buffers ---------------===//
//
// A direct bufferization: every level1 op becomes one micro-kernel call on
// buffers. Producers write into the function's output buffers when their
// value is returned, so a model's last op needs no copy. No kernel choice is
// made here: which algorithm a call runs, its scratch and its layouts are
// the target's passes (cuvil/targets/<name>/transforms).
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilL2Ops.h"
#include "cuvil/ir/CuvilOps.h"
#include "cuvil/passes/BatchMultipliers.h"
#include "cuvil/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace cuvil {
#define GEN_PASS_DEF_CUVILLOWERTOLEVEL2
#include "cuvil/passes/Passes.h.inc"
} // namespace cuvil

using namespace mlir;
namespace l1 = cuvil::l1;

namespace {

/// A pure `cuvil.map_reduce` as `cuvil_l2.kernel "map"` around a
/// `linalg.generic` over the buffers: one parallel loop per output
/// dimension, each input indexed by numpy broadcasting (a size-1 dimension
/// against a larger one reads index 0), the map's region as the body.
void lowerMap(OpBuilder &builder, l1::MapReduceOp map, ValueRange ins,
              Value out) {
  Location loc = map.getLoc();
  MLIRContext *context = builder.getContext();
  auto outType = cast<MemRefType>(out.getType());
  int64_t rank = outType.getRank();
  SmallVector<AffineMap> maps;
  for (Value in : ins) {
    auto inType = cast<MemRefType>(in.getType());
    int64_t offset = rank - inType.getRank();
    SmallVector<AffineExpr> results;
    for (int64_t d = 0; d < inType.getRank(); ++d) {
      bool stretched =
          inType.getDimSize(d) == 1 && outType.getDimSize(offset + d) != 1;
      results.push_back(stretched ? getAffineConstantExpr(0, context)
                                  : getAffineDimExpr(offset + d, context));
    }
    maps.push_back(AffineMap::get(rank, 0, results, context));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, context));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);

  auto kernel = cuvil::l2::KernelOp::create(builder, loc, "map", ins, out,
                                            nullptr, nullptr, nullptr);
  SmallVector<Type> types(ins.getTypes());
  types.push_back(out.getType());
  SmallVector<Location> locs(types.size(), loc);
  OpBuilder::InsertionGuard guard(builder);
  Block *body = builder.createBlock(&kernel.getBody(), {}, types, locs);
  Block &region = map.getMap().front();
  linalg::GenericOp::create(
      builder, loc, body->getArguments().drop_back(),
      body->getArguments().back(), maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange scalars) {
        IRMapping mapping;
        mapping.map(region.getArguments(), scalars.drop_back());
        for (Operation &scalarOp : region.without_terminator())
          nested.clone(scalarOp, mapping);
        linalg::YieldOp::create(
            nested, nestedLoc,
            mapping.lookup(region.getTerminator()->getOperand(0)));
      });
  cuvil::l2::EndOp::create(builder, loc);
}

/// The epilogue of a fused group's ops after its producer: a same-shape
/// add is the residual (`add`), an add of one value per column a linear
/// layer's bias (`col_bias`); the values they add become inputs. A
/// residual dequantized in the group (an int8 convolution's 8-bit
/// shortcut) is its quantized buffer: the kernel reads it dequantized. A
/// final quantize (an int8 convolution's requantization) writes the
/// output's quantized type.
FailureOr<cuvil::l2::EpilogueAttr>
lowerEpilogue(Block &body, llvm::function_ref<Value(Value)> outer,
              SmallVectorImpl<Value> &ins) {
  namespace l2 = cuvil::l2;
  SmallVector<l2::EpilogueStep> steps;
  FloatAttr clipMin, clipMax, alpha, beta;
  // The group's input an add reads: a block argument, or the one a
  // dequantize in the group reads.
  auto addend = [](Value operand) -> Value {
    if (auto dequantize = operand.getDefiningOp<l1::DequantizeOp>())
      operand = dequantize.getInput();
    return isa<BlockArgument>(operand) ? operand : Value();
  };
  for (Operation &step : llvm::drop_begin(body.without_terminator())) {
    if (auto add = dyn_cast<l1::AddOp>(step)) {
      steps.push_back(add.getLhs().getType() != add.getRhs().getType()
                          ? l2::EpilogueStep::col_bias
                          : l2::EpilogueStep::add);
      Value input = addend(add.getRhs());
      if (!input)
        input = addend(add.getLhs());
      if (!input)
        return add.emitOpError("adds no input of its fused group");
      ins.push_back(outer(input));
    } else if (isa<l1::DequantizeOp>(step)) {
      continue; // the add's residual, read by the kernel
    } else if (isa<l1::ReluOp>(step)) {
      steps.push_back(l2::EpilogueStep::relu);
    } else if (auto clip = dyn_cast<l1::ClipOp>(step)) {
      steps.push_back(l2::EpilogueStep::clip);
      clipMin = clip.getMinAttr();
      clipMax = clip.getMaxAttr();
    } else if (isa<l1::HardSwishOp>(step)) {
      steps.push_back(l2::EpilogueStep::hardswish);
    } else if (auto hardSigmoid = dyn_cast<l1::HardSigmoidOp>(step)) {
      steps.push_back(l2::EpilogueStep::hardsigmoid);
      alpha = hardSigmoid.getAlphaAttr();
      beta = hardSigmoid.getBetaAttr();
    } else if (isa<l1::SigmoidOp>(step)) {
      steps.push_back(l2::EpilogueStep::sigmoid);
    } else if (isa<l1::SiluOp>(step)) {
      steps.push_back(l2::EpilogueStep::silu);
    } else if (isa<l1::QuantizeOp>(step)) {
      // Into the output buffer's quantized type (the group's result).
      steps.push_back(l2::EpilogueStep::quantize);
    } else {
      return step.emitOpError("cannot be a micro-kernel's epilogue step");
    }
  }
  auto epilogue = l2::EpilogueAttr::getChecked(
      [&] { return body.getParentOp()->emitOpError(); },
      body.getParentOp()->getContext(), ArrayRef<l2::EpilogueStep>(steps),
      clipMin, clipMax, alpha, beta);
  if (!epilogue)
    return failure();
  return epilogue;
}

MemRefType toMemRef(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
}

/// The lowering of one function: its buffers and where its ops go.
struct FunctionLowering {
  FunctionLowering(ModuleOp module, func::FuncOp func, func::FuncOp newFunc,
                   const cuvil::BatchMultipliers &multipliers,
                   SymbolTable &symbols)
      : module(module), func(func), newFunc(newFunc), multipliers(multipliers),
        symbols(symbols),
        builder(OpBuilder::atBlockBegin(&newFunc.getBody().front())),
        batch(newFunc.getArgument(0)) {}

  /// Lowers the ops of `block` (the function's, or a region's: only the
  /// function's own ops may write its output buffers in place).
  LogicalResult lowerBlock(Block &block, bool topLevel);

  ModuleOp module;
  func::FuncOp func, newFunc;
  const cuvil::BatchMultipliers &multipliers;
  SymbolTable &symbols;
  OpBuilder builder;
  Value batch;
  IRMapping buffers;
  /// Values returned (once) are written straight into their output buffer.
  llvm::DenseMap<Value, Value> outputBuffer;
  int constantIndex = 0;

private:
  Value allocate(Value result, Location loc, bool topLevel);
  LogicalResult lowerOp(Operation &op, bool topLevel);
  void lowerConstant(l1::ConstantOp constant);
  LogicalResult lowerIf(l1::IfOp op, bool topLevel);
  LogicalResult lowerLoop(l1::LoopOp op, bool topLevel);
  /// Copies each of `values` into `targets` (skipping a value already
  /// there); a value living in another of `targets` (a loop's carried
  /// values swapping places) goes through a fresh buffer first, so that no
  /// copy reads what an earlier one wrote.
  void copyInto(ValueRange values, ArrayRef<Value> targets, Location loc);
};

Value FunctionLowering::allocate(Value result, Location loc, bool topLevel) {
  if (Value out = topLevel ? outputBuffer.lookup(result) : Value()) {
    outputBuffer.erase(result); // A value returned twice is copied once.
    return out;
  }
  auto type = toMemRef(result.getType());
  SmallVector<Value> sizes;
  if (type.getNumDynamicDims()) {
    int64_t k = multipliers.get(result);
    Value size = batch;
    if (k != 1)
      size = arith::MulIOp::create(
          builder, loc, batch, arith::ConstantIndexOp::create(builder, loc, k));
    sizes.push_back(size);
  }
  return memref::AllocOp::create(builder, loc, type, sizes,
                                 builder.getI64IntegerAttr(64));
}

void FunctionLowering::lowerConstant(l1::ConstantOp constant) {
  // Weights become private constant globals (64-byte aligned .rodata).
  Location loc = constant.getLoc();
  auto type = toMemRef(constant.getType());
  std::string name;
  do {
    name = (func.getName() + "_constant_" + Twine(constantIndex++)).str();
  } while (symbols.lookup(name));
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(newFunc);
    auto global = memref::GlobalOp::create(
        builder, loc, name, builder.getStringAttr("private"), type,
        constant.getValue(), /*constant=*/true, builder.getI64IntegerAttr(64));
    symbols.insert(global);
  }
  buffers.map(constant.getResult(),
              memref::GetGlobalOp::create(builder, loc, type, name));
}

void FunctionLowering::copyInto(ValueRange values, ArrayRef<Value> targets,
                                Location loc) {
  SmallVector<Value> sources;
  for (Value value : values) {
    Value source = buffers.lookup(value);
    if (llvm::is_contained(targets, source)) {
      // Sized as the source: an alloc's sizes, or a function argument's
      // batch.
      auto type = cast<MemRefType>(source.getType());
      SmallVector<Value> sizes;
      if (auto alloc = source.getDefiningOp<memref::AllocOp>())
        sizes.assign(alloc.getDynamicSizes().begin(),
                     alloc.getDynamicSizes().end());
      else
        sizes.assign(type.getNumDynamicDims(), batch);
      Value fresh = memref::AllocOp::create(builder, loc, type, sizes,
                                            builder.getI64IntegerAttr(64));
      cuvil::l2::CopyOp::create(builder, loc, source, fresh);
      source = fresh;
    }
    sources.push_back(source);
  }
  for (auto [source, target, value] : llvm::zip(sources, targets, values))
    if (buffers.lookup(value) != target)
      cuvil::l2::CopyOp::create(builder, loc, source, target);
}

LogicalResult FunctionLowering::lowerIf(l1::IfOp op, bool topLevel) {
  Location loc = op.getLoc();
  SmallVector<Value> results;
  for (Value result : op.getResults()) {
    results.push_back(allocate(result, loc, topLevel));
    buffers.map(result, results.back());
  }
  auto lowered = cuvil::l2::IfOp::create(builder, loc,
                                         buffers.lookup(op.getCondition()));
  for (auto [from, to] : {std::pair{&op.getThenRegion(), &lowered.getThenRegion()},
                          std::pair{&op.getElseRegion(), &lowered.getElseRegion()}}) {
    OpBuilder::InsertionGuard guard(builder);
    builder.createBlock(to);
    Block &block = from->front();
    if (failed(lowerBlock(block, /*topLevel=*/false)))
      return failure();
    copyInto(block.getTerminator()->getOperands(), results, loc);
    cuvil::l2::EndOp::create(builder, loc);
  }
  return success();
}

LogicalResult FunctionLowering::lowerLoop(l1::LoopOp op, bool topLevel) {
  Location loc = op.getLoc();
  // The carried values live in the loop's result buffers; the condition
  // and the iteration number in buffers of their own.
  SmallVector<Value> states, scans;
  unsigned carried = op.getInits().size();
  for (auto [i, result] : llvm::enumerate(op.getResults())) {
    Value buffer = allocate(result, loc, topLevel);
    buffers.map(result, buffer);
    (i < carried ? states : scans).push_back(buffer);
  }
  auto allocScalar = [&](Type element) {
    return memref::AllocOp::create(builder, loc, MemRefType::get({}, element),
                                   ValueRange(), builder.getI64IntegerAttr(64));
  };
  // Rank 0 (the importer reshapes a [1] condition).
  Value condition = allocScalar(builder.getI1Type());
  cuvil::l2::CopyOp::create(builder, loc, buffers.lookup(op.getCondition()),
                            condition);
  copyInto(op.getInits(), states, loc);
  Value iteration;
  if (!op.getIteration().use_empty() || !scans.empty())
    iteration = allocScalar(builder.getI64Type());
  Value max = op.getMaxTripCount() ? buffers.lookup(op.getMaxTripCount())
                                   : Value();
  auto lowered =
      cuvil::l2::LoopOp::create(builder, loc, max, condition, iteration);
  OpBuilder::InsertionGuard guard(builder);
  builder.createBlock(&lowered.getBody());
  Block &body = op.getBodyBlock();
  if (iteration)
    buffers.map(op.getIteration(), iteration);
  buffers.map(op.getBodyCondition(), condition);
  for (auto [arg, state] : llvm::zip(op.getCarried(), states))
    buffers.map(arg, state);
  if (failed(lowerBlock(body, /*topLevel=*/false)))
    return failure();
  ValueRange yields = body.getTerminator()->getOperands();
  // The rows first: a row may be a carried value as the iteration found it
  // (its buffer is the state's), which the copies below overwrite.
  for (auto [row, scan] : llvm::zip(yields.drop_front(1 + carried), scans))
    cuvil::l2::InsertRowOp::create(builder, loc, buffers.lookup(row), scan,
                                   iteration);
  SmallVector<Value> targets = {condition};
  llvm::append_range(targets, states);
  copyInto(yields.take_front(1 + carried), targets, loc);
  cuvil::l2::EndOp::create(builder, loc);
  return success();
}

LogicalResult FunctionLowering::lowerBlock(Block &block, bool topLevel) {
  for (Operation &op : block.without_terminator())
    if (failed(lowerOp(op, topLevel)))
      return failure();
  return success();
}

LogicalResult FunctionLowering::lowerOp(Operation &op, bool topLevel) {
  MLIRContext *context = module.getContext();
  Location opLoc = op.getLoc();
  if (auto constant = dyn_cast<l1::ConstantOp>(op)) {
    lowerConstant(constant);
    return success();
  }
  if (auto ifOp = dyn_cast<l1::IfOp>(op))
    return lowerIf(ifOp, topLevel);
  if (auto loop = dyn_cast<l1::LoopOp>(op))
    return lowerLoop(loop, topLevel);
  if (auto map = dyn_cast<l1::MapReduceOp>(op)) {
    if (!map.getReductionDims().empty())
      return op.emitOpError("with reduction_dims is not supported by the "
                            "x86 target yet");
    SmallVector<Value> ins;
    for (Value input : map.getInputs())
      ins.push_back(buffers.lookup(input));
    Value out = allocate(map.getResult(), opLoc, topLevel);
    buffers.map(map.getResult(), out);
    lowerMap(builder, map, ins, out);
    return success();
  }
  auto group = dyn_cast<l1::FusedGroupOp>(op);
  if (group && group.getKind() != std::optional<StringRef>("epilogue"))
    return op.emitOpError("is not supported by the x86 target yet");
  if (op.getDialect() != context->getLoadedDialect<l1::CuvilDialect>())
    return op.emitOpError("is not a level1 op; cannot lower it to level2");

  // An epilogue group is one call of its producer (the first op of the
  // body); the ops after it become the call's `cuvil.epilogue`, and a
  // residual add's other operand its last input.
  Operation *kernelOp = &op;
  SmallVector<Value> ins;
  cuvil::l2::EpilogueAttr epilogue;
  if (group) {
    Block &body = group.getBody().front();
    kernelOp = &body.front();
    auto outer = [&](Value inner) {
      return buffers.lookup(
          group.getOperand(cast<BlockArgument>(inner).getArgNumber()));
    };
    for (Value operand : kernelOp->getOperands())
      ins.push_back(outer(operand));
    FailureOr<cuvil::l2::EpilogueAttr> steps = lowerEpilogue(body, outer, ins);
    if (failed(steps))
      return failure();
    epilogue = *steps;
  } else {
    for (Value operand : op.getOperands())
      ins.push_back(buffers.lookup(operand));
  }
  SmallVector<Value> outs;
  for (Value result : op.getResults()) {
    outs.push_back(allocate(result, opLoc, topLevel));
    buffers.map(result, outs.back());
  }
  // The level1 op's attributes are the kernel's params (optional
  // operands: its operandSegmentSizes); UKernelCallOp verifies them
  // against the op's definition. What a pass attached beside them (a
  // target's choices, as an FPGA layer's fixed-point types) stays on the
  // call for the target to read.
  StringRef mnemonic = kernelOp->getName().stripDialect();
  DictionaryAttr discardable = kernelOp->getDiscardableAttrDictionary();
  NamedAttrList params;
  for (NamedAttribute attr : kernelOp->getAttrDictionary())
    if (!discardable.contains(attr.getName()))
      params.push_back(attr);
  auto call = cuvil::l2::UKernelCallOp::create(
      builder, opLoc, builder.getStringAttr(mnemonic), ins, outs,
      params.empty() ? DictionaryAttr() : params.getDictionary(context),
      nullptr, epilogue, nullptr);
  call->setDiscardableAttrs(discardable);
  return success();
}

struct LowerToLevel2 : cuvil::impl::CuvilLowerToLevel2Base<LowerToLevel2> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs)
      if (failed(lowerFunction(module, func)))
        return signalPassFailure();
  }

  LogicalResult lowerFunction(ModuleOp module, func::FuncOp func);
};

LogicalResult LowerToLevel2::lowerFunction(ModuleOp module, func::FuncOp func) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return func.emitOpError("expects a level1 function with one block");
  cuvil::BatchMultipliers multipliers;
  if (failed(multipliers.compute(func)))
    return failure();

  // Built before the new function (same name) exists.
  SymbolTable symbols(module);
  OpBuilder builder(func);
  Location loc = func.getLoc();
  FunctionType oldType = func.getFunctionType();

  // (batch, inputs..., outputs...) -> ()
  SmallVector<Type> argTypes = {builder.getIndexType()};
  for (Type t : oldType.getInputs())
    argTypes.push_back(toMemRef(t));
  for (Type t : oldType.getResults()) {
    if (!isa<RankedTensorType>(t))
      return func.emitOpError("result ") << t << " is not a ranked tensor";
    argTypes.push_back(toMemRef(t));
  }
  auto newFunc = func::FuncOp::create(builder, loc, func.getName(),
                                      builder.getFunctionType(argTypes, {}));
  newFunc.setArgAttr(0, "cuvil.name", builder.getStringAttr("batch"));
  unsigned numInputs = oldType.getNumInputs();
  // An input's attributes (its name; a target's, as an FPGA design's
  // input type) carry over.
  for (unsigned i = 0; i < numInputs; ++i)
    if (DictionaryAttr attrs = func.getArgAttrDict(i))
      newFunc.setArgAttrs(1 + i, attrs);
  for (unsigned i = 0; i < oldType.getNumResults(); ++i)
    if (auto name = func.getResultAttr(i, "cuvil.name"))
      newFunc.setArgAttr(1 + numInputs + i, "cuvil.name", name);
  newFunc->setAttr("cuvil.num_inputs", builder.getI64IntegerAttr(numInputs));
  newFunc->setAttr("cuvil.num_outputs",
                   builder.getI64IntegerAttr(oldType.getNumResults()));
  Block *entry = newFunc.addEntryBlock();

  FunctionLowering lowering(module, func, newFunc, multipliers, symbols);
  for (unsigned i = 0; i < numInputs; ++i)
    lowering.buffers.map(func.getArgument(i), entry->getArgument(1 + i));
  auto returnOp = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (auto [i, value] : llvm::enumerate(returnOp.getOperands()))
    if (!lowering.outputBuffer.count(value))
      lowering.outputBuffer[value] = entry->getArgument(1 + numInputs + i);
  if (failed(lowering.lowerBlock(func.getBody().front(), /*topLevel=*/true)))
    return failure();

  // Returned values not already written in place (inputs, constants, a
  // value returned twice) are copied into their output buffer.
  OpBuilder &b = lowering.builder;
  for (auto [i, value] : llvm::enumerate(returnOp.getOperands())) {
    Value out = entry->getArgument(1 + numInputs + i);
    Value buffer = lowering.buffers.lookup(value);
    if (buffer != out)
      cuvil::l2::CopyOp::create(b, returnOp.getLoc(), buffer, out);
  }
  func::ReturnOp::create(b, returnOp.getLoc());
  for (NamedAttribute attr : func->getDiscardableAttrs())
    newFunc->setAttr(attr.getName(), attr.getValue());
  func.erase();
  return success();
}

} // namespace
