//===- AssignFixedPoint.cpp - cuvil-fpga-assign-fixed-point ---------------===//
//
// The FPGA target's fixed-point types as level1 IR: each layer's op gets
// `cuvil.fixed` (its result's, weights' and bias's #cuvil.fixed), the
// model's inputs theirs. The planner reads them off the calls the neutral
// lowering makes of these ops (model/Network.h).
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/passes/ConstantUtil.h"
#include "cuvil/support/Diagnostics.h"
#include "cuvil/support/SourceEscape.h"
#include "cuvil/targets/fpga/model/FixedType.h"
#include "cuvil/targets/fpga/model/Network.h"
#include "cuvil/targets/fpga/transforms/Passes.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <cmath>
#include <map>
#include <set>

namespace cuvil::fpga {
#define GEN_PASS_DEF_CUVILFPGAASSIGNFIXEDPOINT
#include "cuvil/targets/fpga/transforms/Passes.h.inc"
} // namespace cuvil::fpga

namespace cuvil::fpga {
namespace {

using mlir::failure;
using mlir::FailureOr;
using mlir::LogicalResult;
using mlir::Operation;
using mlir::success;
using mlir::Value;

bool isLayerOp(Operation *op) {
  return llvm::isa<l1::GemmOp, l1::MatmulOp, l1::Conv2dOp, l1::MaxPool2dOp,
                   l1::ReluOp, l1::SoftmaxOp>(op);
}

bool hasWeights(Operation *op) {
  return llvm::isa<l1::GemmOp, l1::MatmulOp, l1::Conv2dOp>(op);
}

/// The epilogue group `op` is the kernel of, or null; an epilogue step
/// (not the group's first op) is no layer of its own (`skip`).
l1::FusedGroupOp epilogueGroup(Operation *op, bool &skip) {
  auto group = llvm::dyn_cast_or_null<l1::FusedGroupOp>(op->getParentOp());
  skip = group && &group.getBody().front().front() != op;
  return group;
}

/// What `value` is outside its epilogue group (the group's operand for a
/// block argument), through views, down to a float32 constant: its largest
/// magnitude.
FailureOr<double> constantMaxAbs(Value value) {
  while (true) {
    if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(value)) {
      auto group =
          llvm::dyn_cast<l1::FusedGroupOp>(arg.getOwner()->getParentOp());
      if (!group)
        return failure();
      value = group.getOperand(arg.getArgNumber());
      continue;
    }
    Operation *def = value.getDefiningOp();
    if (llvm::isa<l1::ReshapeOp, l1::FlattenOp, l1::SqueezeOp, l1::UnsqueezeOp>(
            def)) {
      value = def->getOperand(0);
      continue;
    }
    FailureOr<std::vector<float>> values = getF32Constant(value);
    if (failed(values))
      return failure();
    double max = 0;
    for (float v : *values)
      max = std::max(max, static_cast<double>(std::fabs(v)));
    return max;
  }
}

struct AssignFixedPointPass
    : impl::CuvilFpgaAssignFixedPointBase<AssignFixedPointPass> {
  using Base::Base;

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    if (failed(parseOptions(module)))
      return signalPassFailure();
    std::set<std::string> nodes;
    for (auto func : module.getOps<mlir::func::FuncOp>())
      if (failed(assignInputs(func)) || failed(assignLayers(func, nodes)))
        return signalPassFailure();
    for (const auto &[node, type] : layerTypes)
      if (!nodes.count(node)) {
        module.emitError(printableText(
            absl::StrCat("a precision is given for '", node,
                         "', which is no layer of the model; its layers are: ",
                         absl::StrJoin(nodes, ", "))));
        return signalPassFailure();
      }
  }

private:
  LogicalResult parseOptions(mlir::ModuleOp module) {
    absl::StatusOr<Precision> parsed = parsePrecision(precision);
    if (!parsed.ok())
      return module.emitError("cuvil-fpga-assign-fixed-point precision: ")
             << std::string(parsed.status().message());
    model = *parsed;
    for (const std::string &entry : layerPrecision) {
      size_t equals = entry.rfind('=');
      absl::StatusOr<FixedType> type =
          equals == std::string::npos
              ? absl::InvalidArgumentError("write NODE=TYPE")
              : parseFixedType(llvm::StringRef(entry).substr(equals + 1));
      if (!type.ok())
        return module.emitError("cuvil-fpga-assign-fixed-point layer-"
                                "precision '")
               << printableText(entry)
               << "': " << std::string(type.status().message());
      layerTypes[entry.substr(0, equals)] = *type;
    }
    return success();
  }

  /// auto<W>'s type for the range `op` (or argument) carries.
  FailureOr<FixedType> autoType(mlir::FloatAttr range, Operation *op,
                                llvm::StringRef what) {
    if (!range)
      return op->emitError("--precision=auto needs the range of ")
             << what << " (" << kAbsMaxAttr.str()
             << ", from calibration data); give representative inputs with "
                "--calibration=FILE.npz";
    return autoFixedType(model.autoWidth, range.getValueAsDouble());
  }

  LogicalResult assignInputs(mlir::func::FuncOp func) {
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      FixedType type = model.type;
      if (model.autoWidth) {
        FailureOr<FixedType> sized =
            autoType(func.getArgAttrOfType<mlir::FloatAttr>(i, kAbsMaxAttr),
                     func, absl::StrCat("input ", i));
        if (failed(sized))
          return failure();
        type = *sized;
      }
      func.removeArgAttr(i, kAbsMaxAttr);
      func.setArgAttr(i, kFixedAttr, type.toAttr(func.getContext()));
    }
    return success();
  }

  LogicalResult assignLayers(mlir::func::FuncOp func,
                             std::set<std::string> &nodes) {
    mlir::WalkResult walk = func.walk([&](Operation *op) {
      if (!isLayerOp(op))
        return mlir::WalkResult::advance();
      bool step = false;
      l1::FusedGroupOp group = epilogueGroup(op, step);
      if (step)
        return mlir::WalkResult::advance();
      // The call takes the group's location, and so its node name.
      Operation *layer = group ? group.getOperation() : op;
      std::string node = describeLocation(layer->getLoc()).node;
      nodes.insert(node);
      if (failed(assignLayer(op, node)))
        return mlir::WalkResult::interrupt();
      ++numLayers;
      return mlir::WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }

  LogicalResult assignLayer(Operation *op, const std::string &node) {
    mlir::MLIRContext *context = op->getContext();
    auto given = layerTypes.find(node);
    bool automatic = model.autoWidth && given == layerTypes.end();
    FixedType result = given != layerTypes.end() ? given->second : model.type;
    if (automatic) {
      FailureOr<FixedType> sized = autoType(
          op->getAttrOfType<mlir::FloatAttr>(kAbsMaxAttr), op, "its result");
      if (failed(sized))
        return failure();
      result = *sized;
    }
    op->removeAttr(kAbsMaxAttr);
    mlir::NamedAttrList types;
    types.append("result", result.toAttr(context));
    if (hasWeights(op)) {
      FixedType weight = result, bias = result;
      if (automatic) {
        auto gemm = llvm::dyn_cast<l1::GemmOp>(op);
        FailureOr<double> weights = constantMaxAbs(op->getOperand(1));
        if (failed(weights))
          return op->emitError("--precision=auto sizes a layer's weights "
                               "from its float32 constants; this layer's "
                               "are not constants of the model");
        double alpha = gemm ? std::fabs(gemm.getAlpha().convertToDouble()) : 1;
        weight = autoFixedType(model.autoWidth, alpha * *weights);
        double biasMax = 0;
        if (op->getNumOperands() > 2) {
          FailureOr<double> c = constantMaxAbs(op->getOperand(2));
          if (failed(c))
            return op->emitError("--precision=auto sizes a layer's bias "
                                 "from its float32 constant; this layer's "
                                 "is not a constant of the model");
          double beta = gemm ? std::fabs(gemm.getBeta().convertToDouble()) : 1;
          biasMax = beta * *c;
        }
        bias = autoFixedType(model.autoWidth, biasMax);
      }
      types.append("weight", weight.toAttr(context));
      types.append("bias", bias.toAttr(context));
    }
    op->setAttr(kFixedAttr, types.getDictionary(context));
    return success();
  }

  Precision model;
  std::map<std::string, FixedType> layerTypes;
};

} // namespace
} // namespace cuvil::fpga
