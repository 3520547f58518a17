//===- ReadModel.cpp - the planned module as layers on GDRAM buffers ------===//
//
// Buffers become pointer expressions of the generated host code: function
// arguments its input and output buffers (m->io[i]), views of the arena
// offsets into the workspace, constants offsets into weights.bin (which
// the host copies to GDRAM once, at create).
//
//===----------------------------------------------------------------------===//

#include "cuvil/support/Diagnostics.h"
#include "cuvil/support/ElementsBytes.h"
#include "llvm/ADT/APFloat.h"
#include "cuvil/support/StatusMacros.h"
#include "cuvil/targets/mlu/emit/Project.h"

#include "cuvil/ir/CuvilL2Ops.h"

#include "absl/strings/str_cat.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/DenseMap.h"

#include <cstring>

namespace cuvil::mlu {
namespace {

int64_t bytesOf(mlir::MemRefType type) {
  return type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
}

std::string pointer(bool half, llvm::StringRef base, int64_t offset) {
  return absl::StrCat("(", elementCType(half), " *)(m->", base.str(), " + ",
                      offset, ")");
}

/// float32 bytes as float16 bytes (round to nearest even), for fp16.
std::string toHalf(llvm::StringRef bytes) {
  std::string out;
  for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
    float value;
    std::memcpy(&value, bytes.data() + i, 4);
    llvm::APFloat half(value);
    bool lost;
    half.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven,
                 &lost);
    uint16_t bits =
        static_cast<uint16_t>(half.bitcastToAPInt().getZExtValue());
    out.append(reinterpret_cast<const char *>(&bits), 2);
  }
  return out;
}

class ModelReader {
public:
  ModelReader(mlir::ModuleOp module, MluModel &model)
      : module(module), model(model) {}

  absl::Status read();

private:
  absl::Status readArguments(mlir::func::FuncOp func);
  absl::StatusOr<std::string> addConstant(llvm::StringRef bytes,
                                          bool int8 = false);
  absl::Status readCall(l2::UKernelCallOp call);

  mlir::ModuleOp module;
  MluModel &model;
  llvm::DenseMap<mlir::Value, std::string> pointers;
  llvm::StringMap<std::string> globals;
};

absl::StatusOr<std::string> ModelReader::addConstant(llvm::StringRef bytes,
                                                     bool int8) {
  model.weights.resize((model.weights.size() + kAlignBytes - 1) / kAlignBytes *
                       kAlignBytes);
  int64_t offset = static_cast<int64_t>(model.weights.size());
  if (int8) // the fixed-point products' packed weights, as they are
    model.weights.append(bytes.data(), bytes.size());
  else if (model.half)
    model.weights += toHalf(bytes);
  else
    model.weights.append(bytes.data(), bytes.size());
  if (int8)
    return absl::StrCat("(int8_t *)(m->weights + ", offset, ")");
  return pointer(model.half, "weights", offset);
}

absl::Status ModelReader::readArguments(mlir::func::FuncOp func) {
  auto numInputs = func->getAttrOfType<mlir::IntegerAttr>("cuvil.num_inputs");
  int64_t tensor = 0;
  for (mlir::BlockArgument arg : func.getArguments()) {
    unsigned index = arg.getArgNumber();
    if (func.getArgAttr(index, "cuvil_l2.arena")) {
      pointers[arg] = "m->workspace";
      continue;
    }
    auto type = llvm::dyn_cast<mlir::MemRefType>(arg.getType());
    if (!type)
      continue; // the batch size: shapes are static here
    if (!type.hasStaticShape())
      return absl::InvalidArgumentError(
          "the MLU target compiles fixed shapes: give the model a fixed "
          "batch (a static input_signature, or an ONNX model without "
          "symbolic dimensions)");
    auto name = func.getArgAttrOfType<mlir::StringAttr>(index, "cuvil.name");
    TensorInfo info{name ? name.str() : absl::StrCat("tensor", tensor),
                    std::vector<int64_t>(type.getShape().begin(),
                                         type.getShape().end()),
                    bytesOf(type)};
    bool input = numInputs ? tensor < numInputs.getInt() : true;
    pointers[arg] =
        absl::StrCat("(", elementCType(model.half), " *)m->io[", tensor, "]");
    (input ? model.inputs : model.outputs).push_back(std::move(info));
    ++tensor;
  }
  return absl::OkStatus();
}

absl::Status ModelReader::readCall(l2::UKernelCallOp call) {
  auto plan = KernelPlan::fromAttr(
      call->getAttrOfType<mlir::DictionaryAttr>("mlu.plan"));
  if (mlir::failed(plan))
    return absl::InternalError(absl::StrCat(
        "'", call.getKernel().str(),
        "' has no mlu.plan: run cuvil-mlu-plan-kernels first"));
  mlir::FailureOr<Problem> problem = describeCall(call, elementBytes(model));
  if (mlir::failed(problem))
    return absl::InternalError("a planned call no longer reads as a problem");
  Layer layer;
  layer.op = call.getKernel().str();
  layer.where = formatLocation(call.getLoc());
  layer.problem = std::move(*problem);
  layer.plan = std::move(*plan);
  llvm::SmallVector<mlir::Value> operands(call.getInputs());
  operands.append(call.getOutputs().begin(), call.getOutputs().end());
  for (int operand : layer.problem.operands) {
    if (operand < 0) {
      layer.pointers.push_back("nullptr");
      continue;
    }
    auto it = pointers.find(operands[operand]);
    if (it == pointers.end())
      return absl::InternalError("an operand's buffer is not known");
    layer.pointers.push_back(it->second);
  }
  if (!layer.problem.reciprocals.empty()) {
    llvm::StringRef bytes(
        reinterpret_cast<const char *>(layer.problem.reciprocals.data()),
        layer.problem.reciprocals.size() * sizeof(float));
    ASSIGN_OR_RETURN(std::string recip, addConstant(bytes));
    layer.pointers.push_back(recip);
  }
  model.layers.push_back(std::move(layer));
  return absl::OkStatus();
}

absl::Status ModelReader::read() {
  auto funcs = module.getOps<mlir::func::FuncOp>();
  if (std::distance(funcs.begin(), funcs.end()) != 1)
    return absl::InvalidArgumentError(
        "the MLU target compiles a module of one function");
  mlir::func::FuncOp func = *funcs.begin();
  model.name = func.getSymName().str();
  if (auto arena = func->getAttrOfType<mlir::IntegerAttr>("cuvil.arena_bytes"))
    model.workspaceBytes = arena.getInt();
  RETURN_IF_ERROR(readArguments(func));
  for (mlir::Operation &op : func.getBody().front()) {
    if (auto get = llvm::dyn_cast<mlir::memref::GetGlobalOp>(op)) {
      auto &cached = globals[get.getName()];
      if (cached.empty()) {
        auto global = mlir::SymbolTable::lookupNearestSymbolFrom<
            mlir::memref::GlobalOp>(get, get.getNameAttr());
        if (!global || !global.getInitialValue())
          return absl::InvalidArgumentError(absl::StrCat(
              "constant @", get.getName().str(), " has no value"));
        ASSIGN_OR_RETURN(std::string bytes,
                         getElementsBytes(*global.getInitialValue()));
        ASSIGN_OR_RETURN(
            cached,
            addConstant(bytes, global.getType().getElementType().isInteger(8)));
      }
      pointers[get.getResult()] = cached;
    } else if (auto view = llvm::dyn_cast<l2::ViewOp>(op)) {
      // The arena is planned in float32 bytes: float16 buffers keep their
      // offsets and use half of each one's slot.
      pointers[view.getResult()] = pointer(
          model.half, "workspace", static_cast<int64_t>(view.getOffset()));
    } else if (auto call = llvm::dyn_cast<l2::UKernelCallOp>(op)) {
      RETURN_IF_ERROR(readCall(call));
    } else if (!llvm::isa<mlir::func::ReturnOp>(op)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the MLU target cannot compile '", op.getName().getStringRef().str(),
          "' at ", formatLocation(op.getLoc()),
          ": it runs micro-kernel calls only"));
    }
  }
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<MluModel> readModel(mlir::ModuleOp module, const Chip &chip) {
  MluModel model;
  model.chip = chip;
  model.half = elementBytesOf(module) == 2;
  model.precision = precisionOf(module);
  ModelReader reader(module, model);
  RETURN_IF_ERROR(reader.read());
  return model;
}

} // namespace cuvil::mlu
