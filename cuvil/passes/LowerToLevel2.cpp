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
/// layer's bias (`col_bias`); the values they add become inputs. A final
/// quantize (an int8 convolution's requantization) writes the output's
/// quantized type.
FailureOr<cuvil::l2::EpilogueAttr>
lowerEpilogue(Block &body, llvm::function_ref<Value(Value)> outer,
              SmallVectorImpl<Value> &ins) {
  namespace l2 = cuvil::l2;
  SmallVector<l2::EpilogueStep> steps;
  FloatAttr clipMin, clipMax;
  for (Operation &step : llvm::drop_begin(body.without_terminator())) {
    if (auto add = dyn_cast<l1::AddOp>(step)) {
      steps.push_back(add.getLhs().getType() != add.getRhs().getType()
                          ? l2::EpilogueStep::col_bias
                          : l2::EpilogueStep::add);
      ins.push_back(outer(isa<BlockArgument>(add.getRhs()) ? add.getRhs()
                                                           : add.getLhs()));
    } else if (isa<l1::ReluOp>(step)) {
      steps.push_back(l2::EpilogueStep::relu);
    } else if (auto clip = dyn_cast<l1::ClipOp>(step)) {
      steps.push_back(l2::EpilogueStep::clip);
      clipMin = clip.getMinAttr();
      clipMax = clip.getMaxAttr();
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
      clipMin, clipMax);
  if (!epilogue)
    return failure();
  return epilogue;
}

MemRefType toMemRef(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
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

  MLIRContext *context = module.getContext();
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
  for (unsigned i = 0; i < numInputs; ++i)
    if (auto name = func.getArgAttr(i, "cuvil.name"))
      newFunc.setArgAttr(1 + i, "cuvil.name", name);
  for (unsigned i = 0; i < oldType.getNumResults(); ++i)
    if (auto name = func.getResultAttr(i, "cuvil.name"))
      newFunc.setArgAttr(1 + numInputs + i, "cuvil.name", name);
  newFunc->setAttr("cuvil.num_inputs", builder.getI64IntegerAttr(numInputs));
  newFunc->setAttr("cuvil.num_outputs",
                   builder.getI64IntegerAttr(oldType.getNumResults()));
  Block *entry = newFunc.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  Value batch = entry->getArgument(0);

  IRMapping buffers;
  for (unsigned i = 0; i < numInputs; ++i)
    buffers.map(func.getArgument(i), entry->getArgument(1 + i));

  // Values returned (once) are written straight into their output buffer.
  auto returnOp = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  llvm::DenseMap<Value, Value> outputBuffer;
  for (auto [i, value] : llvm::enumerate(returnOp.getOperands()))
    if (!outputBuffer.count(value))
      outputBuffer[value] = entry->getArgument(1 + numInputs + i);

  int constantIndex = 0;
  auto allocate = [&](Value result, Location opLoc) -> Value {
    if (Value out = outputBuffer.lookup(result)) {
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
            builder, opLoc, batch,
            arith::ConstantIndexOp::create(builder, opLoc, k));
      sizes.push_back(size);
    }
    return memref::AllocOp::create(builder, opLoc, type, sizes,
                                   builder.getI64IntegerAttr(64));
  };

  for (Operation &op : func.getBody().front().without_terminator()) {
    Location opLoc = op.getLoc();
    if (auto constant = dyn_cast<l1::ConstantOp>(op)) {
      // Weights become private constant globals (64-byte aligned .rodata).
      auto type = toMemRef(constant.getType());
      std::string name;
      do {
        name = (func.getName() + "_constant_" + Twine(constantIndex++)).str();
      } while (symbols.lookup(name));
      {
        OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPoint(newFunc);
        auto global = memref::GlobalOp::create(
            builder, opLoc, name, builder.getStringAttr("private"), type,
            constant.getValue(), /*constant=*/true,
            builder.getI64IntegerAttr(64));
        symbols.insert(global);
      }
      buffers.map(constant.getResult(),
                  memref::GetGlobalOp::create(builder, opLoc, type, name));
      continue;
    }
    if (auto map = dyn_cast<l1::MapReduceOp>(op)) {
      if (!map.getReductionDims().empty())
        return op.emitOpError("with reduction_dims is not supported by the "
                              "x86 target yet");
      SmallVector<Value> ins;
      for (Value input : map.getInputs())
        ins.push_back(buffers.lookup(input));
      Value out = allocate(map.getResult(), opLoc);
      buffers.map(map.getResult(), out);
      lowerMap(builder, map, ins, out);
      continue;
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
      FailureOr<cuvil::l2::EpilogueAttr> steps =
          lowerEpilogue(body, outer, ins);
      if (failed(steps))
        return failure();
      epilogue = *steps;
    } else {
      for (Value operand : op.getOperands())
        ins.push_back(buffers.lookup(operand));
    }
    SmallVector<Value> outs;
    for (Value result : op.getResults()) {
      outs.push_back(allocate(result, opLoc));
      buffers.map(result, outs.back());
    }
    // The level1 op's attributes are the kernel's params (optional
    // operands: its operandSegmentSizes); UKernelCallOp verifies them
    // against the op's definition.
    StringRef mnemonic = kernelOp->getName().stripDialect();
    DictionaryAttr params = kernelOp->getAttrDictionary();
    cuvil::l2::UKernelCallOp::create(
        builder, opLoc, builder.getStringAttr(mnemonic), ins, outs,
        params.empty() ? DictionaryAttr() : params, nullptr, epilogue,
        nullptr);
  }

  // Returned values not already written in place (inputs, constants, a
  // value returned twice) are copied into their output buffer.
  for (auto [i, value] : llvm::enumerate(returnOp.getOperands())) {
    Value out = entry->getArgument(1 + numInputs + i);
    Value buffer = buffers.lookup(value);
    if (buffer != out)
      cuvil::l2::CopyOp::create(builder, returnOp.getLoc(), buffer, out);
  }
  func::ReturnOp::create(builder, returnOp.getLoc());
  for (NamedAttribute attr : func->getDiscardableAttrs())
    newFunc->setAttr(attr.getName(), attr.getValue());
  func.erase();
  return success();
}

} // namespace
