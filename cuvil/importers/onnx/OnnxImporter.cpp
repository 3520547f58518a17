//===- OnnxImporter.cpp - ONNX models to level1 ---------------------------===//
//
// One pass over the (topologically sorted) ONNX graph. Each value name maps
// to an entry holding its level1 value and, when small and known at import
// time, its contents (a HostTensor): that is how shape subgraphs
// (Shape -> Gather -> Concat -> Reshape) and constant operands (Reshape's
// shape, Clip's bounds, Slice's starts) are resolved statically. Dimensions
// unknown until run time (a dynamic batch) travel through shape arithmetic
// as kUnknown.
//
// Ops are created with placeholder result types and then typed by level1
// inference, so a node that does not type-check is reported (at its NameLoc)
// instead of aborting in a builder.
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/OnnxImporter.h"

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/support/Diagnostics.h"
#include "cuvil/support/FileUtil.h"
#include "cuvil/support/TensorBytes.h"
#include "cuvil_onnx/onnx.pb.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Endian.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include <climits>
#include <cstdlib>
#include <sys/stat.h>

namespace cuvil {
namespace {

using namespace mlir;

/// A dimension or shape entry whose value is only known at run time.
constexpr int64_t kUnknown = std::numeric_limits<int64_t>::min();
/// Tensors up to this many elements are decoded for import-time evaluation.
constexpr int64_t kMaxHostElements = 1 << 16;

/// A small tensor whose contents are known while importing.
struct HostTensor {
  Type elementType;
  SmallVector<int64_t> shape;
  /// Integer and bool elements (kUnknown allowed for shape values).
  SmallVector<int64_t> ints;
  /// Float elements.
  SmallVector<double> floats;

  bool isFloat() const { return isa<FloatType>(elementType); }
  int64_t numElements() const {
    return isFloat() ? floats.size() : ints.size();
  }
  double at(int64_t i) const { return isFloat() ? floats[i] : ints[i]; }
  bool hasUnknown() const { return llvm::is_contained(ints, kUnknown); }
};

struct ValueEntry {
  /// The level1 value, created on first use for initializers and host
  /// tensors.
  Value value;
  std::optional<HostTensor> host;
  /// An initializer not yet materialized as a cuvil.constant.
  const onnx::TensorProto *initializer = nullptr;
  /// Known type, even before `value` exists.
  RankedTensorType type;
};

/// Reads a little-endian T from unaligned bytes.
template <typename T> T readAs(const char *bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof(T));
  return value;
}

/// Byte size of one element of an ONNX data type (0 if unsupported).
int64_t onnxElementBytes(int32_t dtype) {
  switch (dtype) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
    return 4;
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::INT64:
    return 8;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::INT16:
    return 2;
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL:
    return 1;
  default:
    return 0;
  }
}

std::string onnxTypeName(int32_t dtype) {
  if (onnx::TensorProto::DataType_IsValid(dtype))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(dtype));
  return absl::StrCat("data type ", dtype);
}

Type toMlirType(MLIRContext *context, int32_t dtype) {
  Builder b(context);
  switch (dtype) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::INT16:
    return b.getI16Type();
  case onnx::TensorProto::INT8:
    return b.getI8Type();
  case onnx::TensorProto::UINT8:
    return IntegerType::get(context, 8, IntegerType::Unsigned);
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  default:
    return {};
  }
}

std::string shapeString(ArrayRef<int64_t> shape) {
  std::vector<std::string> dims;
  for (int64_t d : shape)
    dims.push_back(
        d == kUnknown || ShapedType::isDynamic(d) ? "?" : std::to_string(d));
  return "[" + absl::StrJoin(dims, ", ") + "]";
}

class Importer {
public:
  Importer(MLIRContext &context, const onnx::ModelProto &model,
           const OnnxImportOptions &options)
      : context(context), model(model), options(options), builder(&context) {}

  /// Builds the module; diagnostics explain any failure.
  OwningOpRef<ModuleOp> run();

  using Converter = LogicalResult (Importer::*)(const onnx::NodeProto &,
                                                Location);
  /// ONNX op type -> converter, for the default domain.
  static const llvm::StringMap<Converter> &getConverters();

private:
  LogicalResult checkSupported();
  LogicalResult importInitializers();
  LogicalResult importInputs(SmallVectorImpl<Type> &types,
                             SmallVectorImpl<std::string> &names);
  LogicalResult importNode(const onnx::NodeProto &node, int index);
  /// A node's outputs must be new names, each written once.
  LogicalResult checkOutputsAreNew(const onnx::NodeProto &node, int index,
                                   Location loc);
  /// Fails (naming `what`) if a tensor of `type` would not fit in 2^63
  /// bytes.
  LogicalResult checkTensorSize(Location loc, Type type, const Twine &what);
  /// Reads `location` of external data, a regular file inside the model's
  /// folder once symbolic links are resolved.
  FailureOr<std::string> readExternalFile(const onnx::TensorProto &tensor,
                                          const std::string &location,
                                          Location loc);

  // Values.
  Location nodeLoc(const onnx::NodeProto &node, int index);
  ValueEntry *lookup(const std::string &name);
  FailureOr<Value> getValue(const onnx::NodeProto &node, int input);
  FailureOr<RankedTensorType> getType(const onnx::NodeProto &node, int input);
  const HostTensor *getHost(const onnx::NodeProto &node, int input);
  FailureOr<HostTensor> requireHost(const onnx::NodeProto &node, int input,
                                    StringRef what);
  FailureOr<SmallVector<int64_t>> requireInts(const onnx::NodeProto &node,
                                              int input, StringRef what);
  bool hasInput(const onnx::NodeProto &node, int input) const {
    return input < node.input_size() && !node.input(input).empty();
  }
  void define(const onnx::NodeProto &node, int output, Value value);
  /// Defines output 0 as `result`, or propagates its failure.
  LogicalResult defineResult(const onnx::NodeProto &node,
                             FailureOr<Value> result) {
    if (failed(result))
      return failure();
    define(node, 0, *result);
    return success();
  }
  void defineHost(const onnx::NodeProto &node, int output, HostTensor host);
  FailureOr<Value> materialize(const std::string &name, ValueEntry &entry);
  FailureOr<HostTensor> decodeTensor(const onnx::TensorProto &tensor, bool full,
                                     std::string &bytes);
  LogicalResult readTensorBytes(const onnx::TensorProto &tensor,
                                std::string &bytes);

  // Attributes.
  const onnx::AttributeProto *attr(const onnx::NodeProto &node, StringRef name);
  /// `name` of `node` if it is there and of `type`. Another type is an
  /// error (reported once per node, failing it) and reads as absent.
  const onnx::AttributeProto *
  typedAttr(const onnx::NodeProto &node, StringRef name,
            onnx::AttributeProto::AttributeType type);
  int64_t attrInt(const onnx::NodeProto &node, StringRef name, int64_t def);
  double attrFloat(const onnx::NodeProto &node, StringRef name, double def);
  std::string attrString(const onnx::NodeProto &node, StringRef name,
                         StringRef def);
  std::optional<SmallVector<int64_t>> attrInts(const onnx::NodeProto &node,
                                               StringRef name);

  /// Creates a level1 op with `numResults` results typed by inference;
  /// fails (with the inference diagnostic at `loc`) instead of aborting.
  template <typename OpTy, typename... Args>
  FailureOr<Operation *> createTyped(Location loc, unsigned numResults,
                                     Args &&...args);
  /// createTyped for single-result ops.
  template <typename OpTy, typename... Args>
  FailureOr<Value> create(Location loc, Args &&...args);

  // Converters (one per ONNX op family).
  LogicalResult convertIdentity(const onnx::NodeProto &, Location);
  LogicalResult convertUnary(const onnx::NodeProto &, Location);
  LogicalResult convertBinary(const onnx::NodeProto &, Location);
  LogicalResult convertVariadic(const onnx::NodeProto &, Location);
  LogicalResult convertWhere(const onnx::NodeProto &, Location);
  LogicalResult convertClip(const onnx::NodeProto &, Location);
  LogicalResult convertHardSigmoid(const onnx::NodeProto &, Location);
  LogicalResult convertGelu(const onnx::NodeProto &, Location);
  LogicalResult convertCast(const onnx::NodeProto &, Location);
  LogicalResult convertMatMul(const onnx::NodeProto &, Location);
  LogicalResult convertGemm(const onnx::NodeProto &, Location);
  LogicalResult convertConv(const onnx::NodeProto &, Location);
  LogicalResult convertBatchNorm(const onnx::NodeProto &, Location);
  LogicalResult convertPool(const onnx::NodeProto &, Location);
  LogicalResult convertGlobalPool(const onnx::NodeProto &, Location);
  LogicalResult convertSoftmax(const onnx::NodeProto &, Location);
  LogicalResult convertReduce(const onnx::NodeProto &, Location);
  LogicalResult convertLayerNorm(const onnx::NodeProto &, Location);
  LogicalResult convertFlatten(const onnx::NodeProto &, Location);
  LogicalResult convertReshape(const onnx::NodeProto &, Location);
  LogicalResult convertTranspose(const onnx::NodeProto &, Location);
  LogicalResult convertConcat(const onnx::NodeProto &, Location);
  LogicalResult convertSplit(const onnx::NodeProto &, Location);
  LogicalResult convertSlice(const onnx::NodeProto &, Location);
  LogicalResult convertSqueeze(const onnx::NodeProto &, Location);
  LogicalResult convertUnsqueeze(const onnx::NodeProto &, Location);
  LogicalResult convertGather(const onnx::NodeProto &, Location);
  LogicalResult convertExpand(const onnx::NodeProto &, Location);
  LogicalResult convertPad(const onnx::NodeProto &, Location);
  LogicalResult convertShape(const onnx::NodeProto &, Location);
  LogicalResult convertConstant(const onnx::NodeProto &, Location);
  LogicalResult convertConstantOfShape(const onnx::NodeProto &, Location);
  LogicalResult convertQuantizeLinear(const onnx::NodeProto &, Location);
  LogicalResult convertDequantizeLinear(const onnx::NodeProto &, Location);
  /// The `!quant.uniform` type of a QuantizeLinear / DequantizeLinear:
  /// scale (input 1), zero point (input 2, or 0 of `storage`), axis.
  FailureOr<quant::QuantizedType> quantizedType(const onnx::NodeProto &node,
                                                Location loc,
                                                RankedTensorType tensor,
                                                Type storage, Type expressed);

  /// Computes elementwise integer arithmetic on host tensors (shape math).
  std::optional<HostTensor> foldBinary(StringRef op, const HostTensor &lhs,
                                       const HostTensor &rhs);

  MLIRContext &context;
  const onnx::ModelProto &model;
  const OnnxImportOptions &options;
  OpBuilder builder;
  int64_t opset = 0;
  llvm::StringMap<ValueEntry> values;
  /// Names of the symbolic input dimensions ("batch"); a dynamic batch made
  /// by --max-batch counts as one. With at most one, every unknown
  /// dimension is the same run-time value, which Reshape relies on.
  std::set<std::string> dynamicSymbols;
  /// Location of the node being converted (the model file before any).
  std::optional<Location> currentLoc;
  /// The node being converted has an attribute of the wrong type.
  bool badAttribute = false;
  /// What defines each value ("graph input", "node 'Relu_3'"), so that a
  /// second definition names the first.
  llvm::StringMap<std::string> definers;
};

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

const llvm::StringMap<Importer::Converter> &Importer::getConverters() {
  static const llvm::StringMap<Converter> converters = [] {
    llvm::StringMap<Converter> map;
    for (const char *op : {"Identity", "Dropout"})
      map[op] = &Importer::convertIdentity;
    for (const char *op : {"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt",
                           "Reciprocal", "Neg", "Abs", "Erf", "HardSwish"})
      map[op] = &Importer::convertUnary;
    for (const char *op : {"Add", "Sub", "Mul", "Div", "Pow", "Equal", "Less",
                           "LessOrEqual", "Greater", "GreaterOrEqual"})
      map[op] = &Importer::convertBinary;
    for (const char *op : {"Max", "Min", "Sum"})
      map[op] = &Importer::convertVariadic;
    map["Where"] = &Importer::convertWhere;
    map["Clip"] = &Importer::convertClip;
    map["HardSigmoid"] = &Importer::convertHardSigmoid;
    map["Gelu"] = &Importer::convertGelu;
    map["Cast"] = &Importer::convertCast;
    map["MatMul"] = &Importer::convertMatMul;
    map["Gemm"] = &Importer::convertGemm;
    map["Conv"] = &Importer::convertConv;
    map["BatchNormalization"] = &Importer::convertBatchNorm;
    map["MaxPool"] = &Importer::convertPool;
    map["AveragePool"] = &Importer::convertPool;
    map["GlobalAveragePool"] = &Importer::convertGlobalPool;
    map["GlobalMaxPool"] = &Importer::convertGlobalPool;
    map["Softmax"] = &Importer::convertSoftmax;
    map["LogSoftmax"] = &Importer::convertSoftmax;
    for (const char *op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"})
      map[op] = &Importer::convertReduce;
    map["LayerNormalization"] = &Importer::convertLayerNorm;
    map["Flatten"] = &Importer::convertFlatten;
    map["Reshape"] = &Importer::convertReshape;
    map["Transpose"] = &Importer::convertTranspose;
    map["Concat"] = &Importer::convertConcat;
    map["Split"] = &Importer::convertSplit;
    map["Slice"] = &Importer::convertSlice;
    map["Squeeze"] = &Importer::convertSqueeze;
    map["Unsqueeze"] = &Importer::convertUnsqueeze;
    map["Gather"] = &Importer::convertGather;
    map["Expand"] = &Importer::convertExpand;
    map["Pad"] = &Importer::convertPad;
    map["Shape"] = &Importer::convertShape;
    map["Constant"] = &Importer::convertConstant;
    map["ConstantOfShape"] = &Importer::convertConstantOfShape;
    map["QuantizeLinear"] = &Importer::convertQuantizeLinear;
    map["DequantizeLinear"] = &Importer::convertDequantizeLinear;
    return map;
  }();
  return converters;
}

OwningOpRef<ModuleOp> Importer::run() {
  Location fileLoc = FileLineColLoc::get(&context, options.modelPath, 0, 0);
  for (const onnx::OperatorSetIdProto &set : model.opset_import())
    if (set.domain().empty() || set.domain() == "ai.onnx")
      opset = set.version();
  if (opset == 0) {
    emitError(fileLoc) << "the model imports no default-domain opset "
                          "(opset_import is empty); is this an ONNX model?";
    return nullptr;
  }
  if (opset > 18) {
    emitError(fileLoc) << "opset " << opset
                       << " is not supported (Cuvil reads opsets up to 18)";
    return nullptr;
  }
  if (failed(checkSupported()) || failed(importInitializers()))
    return nullptr;

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  builder.setInsertionPointToEnd(module->getBody());
  SmallVector<Type> inputTypes;
  SmallVector<std::string> inputNames;
  if (failed(importInputs(inputTypes, inputNames)))
    return nullptr;
  std::string funcName = model.graph().name();
  bool validName = !funcName.empty() && llvm::all_of(funcName, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
  auto func = func::FuncOp::create(builder, fileLoc,
                                   validName ? funcName : std::string("main"),
                                   builder.getFunctionType(inputTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(inputNames)) {
    func.setArgAttr(i, "cuvil.name", builder.getStringAttr(name));
    values[name].value = entry->getArgument(i);
  }
  builder.setInsertionPointToStart(entry);

  for (auto [i, node] : llvm::enumerate(model.graph().node()))
    if (failed(importNode(node, i)))
      return nullptr;

  SmallVector<Value> results;
  for (const onnx::ValueInfoProto &output : model.graph().output()) {
    ValueEntry *entry = lookup(output.name());
    if (!entry) {
      emitError(fileLoc) << "graph output '" << output.name()
                         << "' is not produced by any node";
      return nullptr;
    }
    FailureOr<Value> value = materialize(output.name(), *entry);
    if (failed(value))
      return nullptr;
    results.push_back(*value);
  }
  if (results.empty()) {
    emitError(fileLoc) << "the graph has no outputs";
    return nullptr;
  }
  func::ReturnOp::create(builder, fileLoc, results);
  func.setType(
      builder.getFunctionType(inputTypes, ValueRange(results).getTypes()));
  for (auto [i, output] : llvm::enumerate(model.graph().output()))
    func.setResultAttr(i, "cuvil.name", builder.getStringAttr(output.name()));
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

LogicalResult Importer::checkSupported() {
  // Collect every unsupported (op, domain) with all its nodes, so that one
  // error tells the user everything that is missing.
  std::map<std::string, std::vector<std::string>> unsupported;
  std::map<std::string, Location> firstNode;
  const auto &converters = getConverters();
  for (auto [i, node] : llvm::enumerate(model.graph().node())) {
    bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
    if (defaultDomain && converters.count(node.op_type()))
      continue;
    std::string key = absl::StrCat("'", node.op_type(), "' (domain ",
                                   defaultDomain ? "ai.onnx" : node.domain(),
                                   ", opset ", opset, ")");
    std::string where =
        node.name().empty() ? absl::StrCat("#", i) : node.name();
    if (std::optional<SourceFrame> frame =
            parseTorchDocString(node.doc_string()))
      absl::StrAppend(&where, " (", frame->file, ":", frame->line, ")");
    unsupported[key].push_back(std::move(where));
    firstNode.try_emplace(key, nodeLoc(node, static_cast<int>(i)));
  }
  if (unsupported.empty())
    return success();
  std::vector<std::string> parts;
  for (auto &[op, nodes] : unsupported)
    parts.push_back(absl::StrCat(op, " at node", nodes.size() > 1 ? "s " : " ",
                                 absl::StrJoin(nodes, ", ")));
  // Reported at the model file; the first listed node's location rides
  // along as the fused location's metadata, for APIs that want the user's
  // line as a field (cuvil.CompileError.location).
  Location fileLoc = FileLineColLoc::get(&context, options.modelPath, 0, 0);
  Location loc = FusedLoc::get(&context, {fileLoc},
                               LocationAttr(firstNode.begin()->second));
  return emitError(loc)
         << "unsupported ONNX operators: " << absl::StrJoin(parts, "; ")
         << ". Nothing was compiled; see docs/ARCHITECTURE.md for the "
            "supported set.";
}

LogicalResult Importer::importInitializers() {
  for (const onnx::TensorProto &tensor : model.graph().initializer()) {
    ValueEntry &entry = values[tensor.name()];
    Location loc = FileLineColLoc::get(&context, options.modelPath, 0, 0);
    if (entry.initializer)
      return emitError(loc) << "two initializers are named '" << tensor.name()
                            << "'; ONNX names every value once, so the model "
                               "is ambiguous (fix the exporter)";
    entry.initializer = &tensor;
    definers[tensor.name()] = "an initializer";
    Type element = toMlirType(&context, tensor.data_type());
    if (!element)
      return emitError(loc) << "initializer '" << tensor.name() << "' has "
                            << onnxTypeName(tensor.data_type())
                            << ", which Cuvil does not support";
    SmallVector<int64_t> shape;
    for (int64_t d : tensor.dims()) {
      if (d < 0)
        return emitError(loc) << "initializer '" << tensor.name()
                              << "' has a negative dimension " << d;
      shape.push_back(d);
    }
    entry.type = RankedTensorType::get(shape, element);
    if (failed(checkTensorSize(
            loc, entry.type, "initializer '" + tensor.name() + "'")))
      return failure();
  }
  return success();
}

LogicalResult Importer::importInputs(SmallVectorImpl<Type> &types,
                                     SmallVectorImpl<std::string> &names) {
  Location loc = FileLineColLoc::get(&context, options.modelPath, 0, 0);
  std::set<std::string> seen, inputNames;
  for (const onnx::ValueInfoProto &input : model.graph().input()) {
    if (values.count(input.name()) && values[input.name()].initializer)
      continue; // An initializer listed as input (old exporters).
    if (!inputNames.insert(input.name()).second)
      return emitError(loc) << "two graph inputs are named '" << input.name()
                            << "'; every input needs its own name";
    if (!input.type().has_tensor_type())
      return emitError(loc)
             << "graph input '" << input.name() << "' is not a tensor";
    const onnx::TypeProto::Tensor &tensorType = input.type().tensor_type();
    Type element = toMlirType(&context, tensorType.elem_type());
    if (!element)
      return emitError(loc) << "graph input '" << input.name() << "' has "
                            << onnxTypeName(tensorType.elem_type())
                            << ", which Cuvil does not support";
    SmallVector<int64_t> shape;
    auto override = options.inputShapes.find(input.name());
    if (override != options.inputShapes.end()) {
      for (int64_t d : override->second)
        shape.push_back(d < 0 ? ShapedType::kDynamic : d);
      seen.insert(input.name());
    } else if (!tensorType.has_shape()) {
      return emitError(loc) << "graph input '" << input.name()
                            << "' has no shape; give one with --input-shape "
                            << input.name() << "=1x3x224x224";
    } else {
      for (const onnx::TensorShapeProto::Dimension &dim :
           tensorType.shape().dim()) {
        if (dim.has_dim_value()) {
          if (dim.dim_value() < 0)
            return emitError(loc)
                   << "graph input '" << input.name()
                   << "' has a negative dimension " << dim.dim_value();
          shape.push_back(dim.dim_value());
        } else {
          shape.push_back(ShapedType::kDynamic); // symbolic (dim_param)
          dynamicSymbols.insert(dim.has_dim_param() ? dim.dim_param()
                                                    : "?" + input.name());
        }
      }
    }
    if (options.dynamicBatch && !shape.empty()) {
      shape[0] = ShapedType::kDynamic;
      dynamicSymbols.insert("batch (--max-batch)");
    }
    for (int64_t d : shape)
      if (ShapedType::isDynamic(d) && override != options.inputShapes.end())
        dynamicSymbols.insert("?" + input.name());
    names.push_back(input.name());
    types.push_back(RankedTensorType::get(shape, element));
    definers[input.name()] = "a graph input";
    if (failed(checkTensorSize(loc, types.back(),
                               "graph input '" + input.name() + "'")))
      return failure();
  }
  for (auto &[name, shape] : options.inputShapes)
    if (!seen.count(name))
      return emitError(loc) << "--input-shape names '" << name
                            << "', which is not an input of the model (inputs: "
                            << absl::StrJoin(names, ", ") << ")";
  return success();
}

Location Importer::nodeLoc(const onnx::NodeProto &node, int index) {
  std::string name = node.name().empty()
                         ? absl::StrCat(node.op_type(), "_", index)
                         : node.name();
  // Exporters such as torch.onnx (verbose) record the Python source of each
  // node; errors then point at the user's line instead of the model file.
  Location child = FileLineColLoc::get(&context, options.modelPath, 0, 0);
  if (std::optional<SourceFrame> frame = parseTorchDocString(node.doc_string()))
    child =
        FileLineColLoc::get(&context, frame->file, frame->line, frame->column);
  return NameLoc::get(StringAttr::get(&context, name), child);
}

LogicalResult Importer::importNode(const onnx::NodeProto &node, int index) {
  Location loc = nodeLoc(node, index);
  currentLoc = loc;
  badAttribute = false;
  for (const std::string &input : node.input()) {
    if (!input.empty() && !lookup(input))
      return emitError(loc) << node.op_type() << " uses '" << input
                            << "', which no earlier node, graph input or "
                               "initializer defines";
  }
  if (failed(checkOutputsAreNew(node, index, loc)))
    return failure();
  Converter converter = getConverters().lookup(node.op_type());
  if (failed((this->*converter)(node, loc)) || badAttribute)
    return failure();
  for (const std::string &output : node.output())
    if (!output.empty() && !lookup(output))
      return emitError(loc) << node.op_type() << " output '" << output
                            << "' is not supported by Cuvil (only the "
                               "inference outputs are)";
  return success();
}

LogicalResult Importer::checkOutputsAreNew(const onnx::NodeProto &node,
                                           int index, Location loc) {
  std::string self = node.name().empty()
                         ? absl::StrCat("node #", index, " (", node.op_type(),
                                        ")")
                         : absl::StrCat("node '", node.name(), "'");
  for (const std::string &output : node.output()) {
    if (output.empty())
      continue;
    auto [it, inserted] = definers.try_emplace(output, self);
    if (!inserted)
      return emitError(loc)
             << node.op_type() << " writes '" << output << "'"
             << (it->second == self ? std::string(" twice")
                                    : ", which " + it->second +
                                          " already defines")
             << "; every ONNX value has exactly one producer";
  }
  return success();
}

LogicalResult Importer::checkTensorSize(Location loc, Type type,
                                        const Twine &what) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || getStaticTensorBytes(shaped))
    return success();
  return emitError(loc) << what << " has shape "
                        << shapeString(shaped.getShape()) << " of "
                        << shaped.getElementType()
                        << " elements, which needs more than 2^63 bytes; "
                           "check the model's dimensions (or --input-shape)";
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

ValueEntry *Importer::lookup(const std::string &name) {
  auto it = values.find(name);
  if (it == values.end())
    return nullptr;
  ValueEntry &entry = it->second;
  if (!entry.value && !entry.host && !entry.initializer)
    return nullptr;
  return &entry;
}

LogicalResult Importer::readTensorBytes(const onnx::TensorProto &tensor,
                                        std::string &bytes) {
  Location loc = currentLoc.value_or(
      FileLineColLoc::get(&context, options.modelPath, 0, 0));
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const onnx::StringStringEntryProto &kv : tensor.external_data()) {
      if (kv.key() == "location")
        location = kv.value();
      else if (kv.key() == "offset" || kv.key() == "length") {
        int64_t v = 0;
        if (StringRef(kv.value()).getAsInteger(10, v) || v < 0)
          return emitError(loc) << "tensor '" << tensor.name() << "' has a bad "
                                << kv.key() << " '" << kv.value() << "'";
        (kv.key() == "offset" ? offset : length) = v;
      }
    }
    FailureOr<std::string> file = readExternalFile(tensor, location, loc);
    if (failed(file))
      return failure();
    if (offset > static_cast<int64_t>(file->size()) ||
        (length >= 0 && length > static_cast<int64_t>(file->size()) - offset))
      return emitError(loc) << "tensor '" << tensor.name() << "' reads bytes ["
                            << offset << ", " << offset + length << ") of '"
                            << location << "', which has " << file->size();
    bytes = file->substr(offset, length < 0 ? std::string::npos : length);
    return success();
  }
  if (tensor.has_raw_data()) {
    bytes = tensor.raw_data();
    return success();
  }
  // Typed fields: re-encode as little-endian bytes of the element type.
  bytes.clear();
  auto append = [&](auto value) {
    char buffer[sizeof(value)];
    std::memcpy(buffer, &value, sizeof(value));
    bytes.append(buffer, sizeof(value));
  };
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    for (float v : tensor.float_data())
      append(v);
    break;
  case onnx::TensorProto::DOUBLE:
    for (double v : tensor.double_data())
      append(v);
    break;
  case onnx::TensorProto::INT64:
    for (int64_t v : tensor.int64_data())
      append(v);
    break;
  case onnx::TensorProto::INT32:
    for (int32_t v : tensor.int32_data())
      append(v);
    break;
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    for (int32_t v : tensor.int32_data())
      append(static_cast<uint16_t>(v));
    break;
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL:
    for (int32_t v : tensor.int32_data())
      append(static_cast<uint8_t>(v));
    break;
  default:
    return emitError(loc) << "tensor '" << tensor.name() << "' has "
                          << onnxTypeName(tensor.data_type())
                          << ", which Cuvil does not support";
  }
  return success();
}

FailureOr<std::string>
Importer::readExternalFile(const onnx::TensorProto &tensor,
                           const std::string &location, Location loc) {
  auto refuse = [&](StringRef why) {
    return emitError(loc) << "tensor '" << tensor.name()
                          << "' has external data at '" << location
                          << "', which " << why
                          << "; external data must be a file in the model's "
                             "folder";
  };
  if (location.empty() || location.front() == '/' ||
      llvm::any_of(location, [](char c) {
        return static_cast<unsigned char>(c) < 0x20;
      }))
    return refuse("is empty, absolute or holds control characters");
  // Symbolic links are followed to where they lead: that must still be
  // inside the model's folder, and a regular file (not a FIFO or a device,
  // which would hang or never end).
  char dirReal[PATH_MAX], fileReal[PATH_MAX];
  std::string path = options.externalDataDir + "/" + location;
  if (!::realpath(options.externalDataDir.c_str(), dirReal))
    return refuse(absl::StrCat("cannot be resolved (", std::strerror(errno),
                               ")"));
  if (!::realpath(path.c_str(), fileReal))
    return refuse(absl::StrCat("cannot be opened (", std::strerror(errno),
                               ")"));
  std::string dir = dirReal, real = fileReal;
  std::string prefix = dir == "/" ? dir : dir + "/";
  if (real.size() <= prefix.size() || real.compare(0, prefix.size(), prefix))
    return refuse(absl::StrCat("resolves to ", real,
                               ", outside the model's folder ", dir));
  struct stat st;
  if (::stat(fileReal, &st) != 0 || !S_ISREG(st.st_mode))
    return refuse("is not a regular file");
  absl::StatusOr<std::string> contents = readFile(real);
  if (!contents.ok())
    return emitError(loc) << "tensor '" << tensor.name()
                          << "': " << std::string(contents.status().message());
  return *std::move(contents);
}

FailureOr<HostTensor> Importer::decodeTensor(const onnx::TensorProto &tensor,
                                             bool full, std::string &bytes) {
  Location loc = currentLoc.value_or(
      FileLineColLoc::get(&context, options.modelPath, 0, 0));
  HostTensor host;
  host.elementType = toMlirType(&context, tensor.data_type());
  int64_t elementBytes = onnxElementBytes(tensor.data_type());
  if (!host.elementType || !elementBytes)
    return emitError(loc) << "tensor '" << tensor.name() << "' has "
                          << onnxTypeName(tensor.data_type())
                          << ", which Cuvil does not support";
  int64_t count = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0 || (d > 0 && count > std::numeric_limits<int64_t>::max() / d /
                                       elementBytes))
      return emitError(loc)
             << "tensor '" << tensor.name() << "' has a bad shape "
             << shapeString(SmallVector<int64_t>(tensor.dims().begin(),
                                                 tensor.dims().end()));
    host.shape.push_back(d);
    count *= d;
  }
  if (failed(readTensorBytes(tensor, bytes)))
    return failure();
  if (static_cast<int64_t>(bytes.size()) != count * elementBytes)
    return emitError(loc) << "tensor '" << tensor.name() << "' holds "
                          << bytes.size() << " bytes but its shape "
                          << shapeString(host.shape) << " of "
                          << onnxTypeName(tensor.data_type()) << " needs "
                          << count * elementBytes;
  if (!full || count > kMaxHostElements)
    return host;
  const char *data = bytes.data();
  for (int64_t i = 0; i < count; ++i, data += elementBytes) {
    switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT:
      host.floats.push_back(readAs<float>(data));
      break;
    case onnx::TensorProto::DOUBLE:
      host.floats.push_back(readAs<double>(data));
      break;
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      host.floats.push_back(
          APFloat(tensor.data_type() == onnx::TensorProto::FLOAT16
                      ? APFloat::IEEEhalf()
                      : APFloat::BFloat(),
                  APInt(16, readAs<uint16_t>(data)))
              .convertToDouble());
      break;
    case onnx::TensorProto::INT64:
      host.ints.push_back(readAs<int64_t>(data));
      break;
    case onnx::TensorProto::INT32:
      host.ints.push_back(readAs<int32_t>(data));
      break;
    case onnx::TensorProto::INT16:
      host.ints.push_back(readAs<int16_t>(data));
      break;
    case onnx::TensorProto::INT8:
      host.ints.push_back(readAs<int8_t>(data));
      break;
    default: // UINT8, BOOL
      host.ints.push_back(readAs<uint8_t>(data));
      break;
    }
  }
  return host;
}

FailureOr<Value> Importer::materialize(const std::string &name,
                                       ValueEntry &entry) {
  if (entry.value)
    return entry.value;
  Location loc =
      NameLoc::get(StringAttr::get(&context, name),
                   FileLineColLoc::get(&context, options.modelPath, 0, 0));
  if (entry.initializer) {
    std::string bytes;
    if (failed(decodeTensor(*entry.initializer, /*full=*/false, bytes)))
      return failure();
    // Weights become resources (never printed inline), 64-byte aligned.
    AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
        ArrayRef<char>(bytes.data(), bytes.size()), 64);
    std::string blobName;
    for (char c : name)
      blobName += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    auto attr =
        DenseResourceElementsAttr::get(entry.type, blobName, std::move(blob));
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(builder.getInsertionBlock());
    entry.value = cuvil::l1::ConstantOp::create(builder, loc, attr);
    return entry.value;
  }
  if (entry.host) {
    const HostTensor &host = *entry.host;
    if (host.hasUnknown())
      return emitError(loc) << "'" << name
                            << "' is computed from a dimension known only at "
                               "run time, and is used as data; Cuvil needs it "
                               "at compile time (fix the input shapes with "
                               "--input-shape)";
    auto type = RankedTensorType::get(host.shape, host.elementType);
    DenseElementsAttr attr;
    if (host.isFloat()) {
      SmallVector<APFloat> elems;
      for (double v : host.floats) {
        APFloat f(v);
        bool lost;
        f.convert(cast<FloatType>(host.elementType).getFloatSemantics(),
                  APFloat::rmNearestTiesToEven, &lost);
        elems.push_back(f);
      }
      attr = DenseElementsAttr::get(type, elems);
    } else {
      unsigned width = host.elementType.getIntOrFloatBitWidth();
      SmallVector<APInt> elems;
      for (int64_t v : host.ints)
        elems.push_back(
            APInt(width, v, /*isSigned=*/true, /*implicitTrunc=*/true));
      attr = DenseElementsAttr::get(type, elems);
    }
    entry.value = cuvil::l1::ConstantOp::create(builder, loc, attr);
    return entry.value;
  }
  return emitError(loc) << "value '" << name << "' is not defined";
}

FailureOr<Value> Importer::getValue(const onnx::NodeProto &node, int input) {
  if (!hasInput(node, input))
    return emitError(*currentLoc)
           << node.op_type() << " is missing input #" << input;
  return materialize(node.input(input), *lookup(node.input(input)));
}

FailureOr<RankedTensorType> Importer::getType(const onnx::NodeProto &node,
                                              int input) {
  // Known without materializing (shape vectors stay on the host).
  if (hasInput(node, input))
    if (ValueEntry *entry = lookup(node.input(input)); entry && entry->type)
      return entry->type;
  FailureOr<Value> value = getValue(node, input);
  if (failed(value))
    return failure();
  return cast<RankedTensorType>(value->getType());
}

const HostTensor *Importer::getHost(const onnx::NodeProto &node, int input) {
  if (!hasInput(node, input))
    return nullptr;
  ValueEntry *entry = lookup(node.input(input));
  if (!entry)
    return nullptr;
  if (!entry->host && entry->initializer) {
    std::string bytes;
    int64_t count = 1;
    for (int64_t d : entry->initializer->dims())
      count *= std::max<int64_t>(d, 0);
    if (count <= kMaxHostElements) {
      FailureOr<HostTensor> host =
          decodeTensor(*entry->initializer, /*full=*/true, bytes);
      if (succeeded(host))
        entry->host = std::move(*host);
    }
  }
  return entry->host ? &*entry->host : nullptr;
}

FailureOr<HostTensor> Importer::requireHost(const onnx::NodeProto &node,
                                            int input, StringRef what) {
  if (const HostTensor *host = getHost(node, input))
    return *host;
  return emitError(*currentLoc)
         << node.op_type() << " needs its " << what << " (input '"
         << (hasInput(node, input) ? node.input(input) : std::string("?"))
         << "') at compile time, but it is computed at run time";
}

FailureOr<SmallVector<int64_t>>
Importer::requireInts(const onnx::NodeProto &node, int input, StringRef what) {
  FailureOr<HostTensor> host = requireHost(node, input, what);
  if (failed(host))
    return failure();
  if (host->isFloat())
    return emitError(*currentLoc)
           << node.op_type() << " expects integer " << what;
  return host->ints;
}

void Importer::define(const onnx::NodeProto &node, int output, Value value) {
  if (output < node.output_size() && !node.output(output).empty())
    values[node.output(output)] = ValueEntry{
        value, std::nullopt, nullptr, cast<RankedTensorType>(value.getType())};
}

void Importer::defineHost(const onnx::NodeProto &node, int output,
                          HostTensor host) {
  if (output < node.output_size() && !node.output(output).empty()) {
    ValueEntry entry;
    entry.type = RankedTensorType::get(host.shape, host.elementType);
    entry.host = std::move(host);
    values[node.output(output)] = std::move(entry);
  }
}

template <typename OpTy, typename... Args>
FailureOr<Operation *> Importer::createTyped(Location loc, unsigned numResults,
                                             Args &&...args) {
  SmallVector<Type> placeholders(numResults, NoneType::get(&context));
  auto op = OpTy::create(builder, loc, TypeRange(placeholders),
                         std::forward<Args>(args)...);
  SmallVector<Type> types;
  auto inference = cast<InferTypeOpInterface>(op.getOperation());
  if (failed(inference.inferReturnTypes(
          &context, loc, op->getOperands(), op->getRawDictionaryAttrs(),
          op->getPropertiesStorage(), op->getRegions(), types)) ||
      types.size() != numResults) {
    op->erase();
    return failure();
  }
  for (Type type : types)
    if (failed(checkTensorSize(loc, type,
                               Twine("the result of ") +
                                   op->getName().getStringRef()))) {
      op->erase();
      return failure();
    }
  for (auto [result, type] : llvm::zip(op->getResults(), types))
    result.setType(type);
  return op.getOperation();
}

template <typename OpTy, typename... Args>
FailureOr<Value> Importer::create(Location loc, Args &&...args) {
  FailureOr<Operation *> op =
      createTyped<OpTy>(loc, 1, std::forward<Args>(args)...);
  if (failed(op))
    return failure();
  return (*op)->getResult(0);
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

const onnx::AttributeProto *Importer::attr(const onnx::NodeProto &node,
                                           StringRef name) {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

/// The type an attribute holds: its `type` field, or for old exporters that
/// leave it UNDEFINED, the field that is set.
onnx::AttributeProto::AttributeType
attributeType(const onnx::AttributeProto &a) {
  using A = onnx::AttributeProto;
  if (a.type() != A::UNDEFINED)
    return a.type();
  if (a.has_f())
    return A::FLOAT;
  if (a.has_i())
    return A::INT;
  if (a.has_s())
    return A::STRING;
  if (a.has_t())
    return A::TENSOR;
  if (a.has_g())
    return A::GRAPH;
  if (a.floats_size())
    return A::FLOATS;
  if (a.ints_size())
    return A::INTS;
  if (a.strings_size())
    return A::STRINGS;
  return A::UNDEFINED;
}

/// Whether `a`, which declares `type`, also holds a value of it.
bool holdsValue(const onnx::AttributeProto &a,
                onnx::AttributeProto::AttributeType type) {
  using A = onnx::AttributeProto;
  switch (type) {
  case A::FLOAT:
    return a.has_f();
  case A::INT:
    return a.has_i();
  case A::STRING:
    return a.has_s();
  default:
    return true; // Lists may be empty.
  }
}

std::string attributeTypeName(onnx::AttributeProto::AttributeType type) {
  if (type == onnx::AttributeProto::UNDEFINED)
    return "no value";
  return onnx::AttributeProto::AttributeType_Name(type);
}

const onnx::AttributeProto *
Importer::typedAttr(const onnx::NodeProto &node, StringRef name,
                    onnx::AttributeProto::AttributeType type) {
  const onnx::AttributeProto *a = attr(node, name);
  if (!a)
    return nullptr;
  onnx::AttributeProto::AttributeType actual = attributeType(*a);
  // An empty list declares no type and sets no field: any list type fits.
  bool emptyList = actual == onnx::AttributeProto::UNDEFINED &&
                   (type == onnx::AttributeProto::INTS ||
                    type == onnx::AttributeProto::FLOATS);
  if ((actual == type && holdsValue(*a, type)) || emptyList)
    return a;
  if (!badAttribute) {
    InFlightDiagnostic diag = emitError(*currentLoc)
                              << node.op_type() << " attribute '" << name
                              << "' must be " << attributeTypeName(type)
                              << ", but the model gives "
                              << attributeTypeName(actual);
    if (actual == onnx::AttributeProto::STRING)
      diag << " '" << a->s() << "'";
    else if (actual == type)
      diag << " without a value";
  }
  badAttribute = true;
  return nullptr;
}

int64_t Importer::attrInt(const onnx::NodeProto &node, StringRef name,
                          int64_t def) {
  const onnx::AttributeProto *a =
      typedAttr(node, name, onnx::AttributeProto::INT);
  return a ? a->i() : def;
}

double Importer::attrFloat(const onnx::NodeProto &node, StringRef name,
                           double def) {
  const onnx::AttributeProto *a =
      typedAttr(node, name, onnx::AttributeProto::FLOAT);
  return a ? a->f() : def;
}

std::string Importer::attrString(const onnx::NodeProto &node, StringRef name,
                                 StringRef def) {
  const onnx::AttributeProto *a =
      typedAttr(node, name, onnx::AttributeProto::STRING);
  return a ? a->s() : def.str();
}

std::optional<SmallVector<int64_t>>
Importer::attrInts(const onnx::NodeProto &node, StringRef name) {
  const onnx::AttributeProto *a =
      typedAttr(node, name, onnx::AttributeProto::INTS);
  if (!a)
    return std::nullopt;
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

//===----------------------------------------------------------------------===//
// Converters
//===----------------------------------------------------------------------===//

namespace l1 = cuvil::l1;

LogicalResult Importer::convertIdentity(const onnx::NodeProto &node,
                                        Location loc) {
  if (node.op_type() == "Dropout") {
    // Inference: Dropout is the identity, and its mask is all true. A
    // training_mode input known to be true asks for training semantics.
    if (const HostTensor *training = getHost(node, 2);
        training && training->numElements() == 1 && training->at(0) != 0)
      return emitError(loc) << "Dropout in training mode is not supported; "
                               "Cuvil compiles models for inference";
    if (node.output_size() > 1 && !node.output(1).empty()) {
      FailureOr<RankedTensorType> type = getType(node, 0);
      if (failed(type))
        return failure();
      if (!type->hasStaticShape())
        return emitError(loc) << "Dropout's mask output needs a static shape";
      auto maskType =
          RankedTensorType::get(type->getShape(), builder.getI1Type());
      Value mask = l1::ConstantOp::create(
          builder, loc, DenseElementsAttr::get(maskType, true));
      define(node, 1, mask);
    }
  }
  ValueEntry copy = *lookup(node.input(0));
  if (node.output_size() > 0)
    values[node.output(0)] = copy;
  return success();
}

LogicalResult Importer::convertUnary(const onnx::NodeProto &node,
                                     Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  const std::string &op = node.op_type();
  FailureOr<Value> r = failure();
  if (op == "Relu")
    r = create<l1::ReluOp>(loc, *x);
  else if (op == "Sigmoid")
    r = create<l1::SigmoidOp>(loc, *x);
  else if (op == "Tanh")
    r = create<l1::TanhOp>(loc, *x);
  else if (op == "Exp")
    r = create<l1::ExpOp>(loc, *x);
  else if (op == "Log")
    r = create<l1::LogOp>(loc, *x);
  else if (op == "Sqrt")
    r = create<l1::SqrtOp>(loc, *x);
  else if (op == "Reciprocal")
    r = create<l1::ReciprocalOp>(loc, *x);
  else if (op == "Neg")
    r = create<l1::NegOp>(loc, *x);
  else if (op == "Abs")
    r = create<l1::AbsOp>(loc, *x);
  else if (op == "Erf")
    r = create<l1::ErfOp>(loc, *x);
  else if (op == "HardSwish")
    r = create<l1::HardSwishOp>(loc, *x);
  return defineResult(node, r);
}

std::optional<HostTensor> Importer::foldBinary(StringRef op,
                                               const HostTensor &lhs,
                                               const HostTensor &rhs) {
  // Shape arithmetic only: integer tensors with equal shapes or a scalar.
  if (lhs.isFloat() || rhs.isFloat() || lhs.elementType != rhs.elementType)
    return std::nullopt;
  bool lhsScalar = lhs.numElements() == 1, rhsScalar = rhs.numElements() == 1;
  if (lhs.shape != rhs.shape && !lhsScalar && !rhsScalar)
    return std::nullopt;
  HostTensor result;
  result.elementType =
      op == "Equal" ? Builder(&context).getI1Type() : lhs.elementType;
  result.shape = lhsScalar && !rhsScalar ? rhs.shape : lhs.shape;
  int64_t n = std::max(lhs.numElements(), rhs.numElements());
  for (int64_t i = 0; i < n; ++i) {
    int64_t a = lhs.ints[lhsScalar ? 0 : i], b = rhs.ints[rhsScalar ? 0 : i];
    if (a == kUnknown || b == kUnknown) {
      // An unknown dimension is positive: it never equals -1 or 0, which
      // is what exported shape code compares against.
      int64_t known = a == kUnknown ? b : a;
      if (op == "Equal" && known != kUnknown && known < 1) {
        result.ints.push_back(0);
        continue;
      }
      result.ints.push_back(kUnknown);
      continue;
    }
    if (op == "Add")
      result.ints.push_back(a + b);
    else if (op == "Equal")
      result.ints.push_back(a == b);
    else if (op == "Sub")
      result.ints.push_back(a - b);
    else if (op == "Mul")
      result.ints.push_back(a * b);
    else if (op == "Div" && b != 0)
      result.ints.push_back(a / b);
    else
      return std::nullopt;
  }
  return result;
}

LogicalResult Importer::convertBinary(const onnx::NodeProto &node,
                                      Location loc) {
  const std::string &op = node.op_type();
  const HostTensor *lhsHost = getHost(node, 0), *rhsHost = getHost(node, 1);
  if (lhsHost && rhsHost &&
      (lhsHost->hasUnknown() || rhsHost->hasUnknown() ||
       lhsHost->numElements() <= 64)) {
    if (std::optional<HostTensor> folded = foldBinary(op, *lhsHost, *rhsHost)) {
      defineHost(node, 0, std::move(*folded));
      return success();
    }
  }
  FailureOr<Value> lhs = getValue(node, 0), rhs = getValue(node, 1);
  if (failed(lhs) || failed(rhs))
    return failure();
  FailureOr<Value> r = failure();
  if (op == "Add")
    r = create<l1::AddOp>(loc, *lhs, *rhs);
  else if (op == "Sub")
    r = create<l1::SubOp>(loc, *lhs, *rhs);
  else if (op == "Mul")
    r = create<l1::MulOp>(loc, *lhs, *rhs);
  else if (op == "Div")
    r = create<l1::DivOp>(loc, *lhs, *rhs);
  else if (op == "Pow") {
    // ONNX allows a different exponent type; level1 does not promote.
    Value exponent = *rhs;
    auto lhsType = cast<RankedTensorType>(lhs->getType());
    auto rhsType = cast<RankedTensorType>(rhs->getType());
    if (lhsType.getElementType() != rhsType.getElementType())
      exponent = l1::CastOp::create(
          builder, loc, rhsType.clone(lhsType.getElementType()), *rhs);
    r = create<l1::PowOp>(loc, *lhs, exponent);
  } else if (op == "Equal")
    r = create<l1::EqualOp>(loc, *lhs, *rhs);
  else if (op == "Less")
    r = create<l1::LessOp>(loc, *lhs, *rhs);
  else if (op == "LessOrEqual")
    r = create<l1::LessEqualOp>(loc, *lhs, *rhs);
  else if (op == "Greater")
    r = create<l1::GreaterOp>(loc, *lhs, *rhs);
  else if (op == "GreaterOrEqual")
    r = create<l1::GreaterEqualOp>(loc, *lhs, *rhs);
  return defineResult(node, r);
}

LogicalResult Importer::convertVariadic(const onnx::NodeProto &node,
                                        Location loc) {
  if (node.input_size() == 0)
    return emitError(loc) << node.op_type() << " needs at least one input";
  FailureOr<Value> acc = getValue(node, 0);
  if (failed(acc))
    return failure();
  for (int i = 1; i < node.input_size(); ++i) {
    FailureOr<Value> next = getValue(node, i);
    if (failed(next))
      return failure();
    if (node.op_type() == "Max")
      acc = create<l1::MaxOp>(loc, *acc, *next);
    else if (node.op_type() == "Min")
      acc = create<l1::MinOp>(loc, *acc, *next);
    else
      acc = create<l1::AddOp>(loc, *acc, *next);
    if (failed(acc))
      return failure();
  }
  define(node, 0, *acc);
  return success();
}

LogicalResult Importer::convertWhere(const onnx::NodeProto &node,
                                     Location loc) {
  // Selecting between shape vectors (x.expand(n, -1, -1) exports this way).
  const HostTensor *condHost = getHost(node, 0), *xHost = getHost(node, 1),
                   *yHost = getHost(node, 2);
  if (condHost && xHost && yHost && !condHost->isFloat() && !xHost->isFloat() &&
      !yHost->isFloat() && !llvm::is_contained(condHost->ints, kUnknown)) {
    std::initializer_list<const HostTensor *> all = {condHost, xHost, yHost};
    int64_t n = 1;
    for (const HostTensor *t : all)
      n = std::max(n, t->numElements());
    auto at = [&](const HostTensor *t, int64_t i) {
      return t->ints[t->numElements() == 1 ? 0 : i];
    };
    bool shapesOk = llvm::all_of(all, [&](const HostTensor *t) {
      return t->numElements() == 1 || t->numElements() == n;
    });
    if (shapesOk) {
      HostTensor result;
      result.elementType = xHost->elementType;
      result.shape = {n};
      for (const HostTensor *t : all)
        if (t->numElements() == n)
          result.shape = t->shape;
      for (int64_t i = 0; i < n; ++i)
        result.ints.push_back(at(condHost, i) ? at(xHost, i) : at(yHost, i));
      defineHost(node, 0, std::move(result));
      return success();
    }
  }
  FailureOr<Value> c = getValue(node, 0), x = getValue(node, 1),
                   y = getValue(node, 2);
  if (failed(c) || failed(x) || failed(y))
    return failure();
  FailureOr<Value> r = create<l1::WhereOp>(loc, *c, *x, *y);
  return defineResult(node, r);
}

LogicalResult Importer::convertClip(const onnx::NodeProto &node, Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  FloatAttr minAttr, maxAttr;
  if (opset < 11) {
    if (attr(node, "min"))
      minAttr = builder.getF64FloatAttr(attrFloat(node, "min", 0));
    if (attr(node, "max"))
      maxAttr = builder.getF64FloatAttr(attrFloat(node, "max", 0));
  } else {
    for (int i : {1, 2}) {
      if (!hasInput(node, i))
        continue;
      FailureOr<HostTensor> bound =
          requireHost(node, i, i == 1 ? "minimum" : "maximum");
      if (failed(bound))
        return failure();
      if (bound->numElements() != 1)
        return emitError(loc) << "Clip expects scalar bounds";
      (i == 1 ? minAttr : maxAttr) = builder.getF64FloatAttr(bound->at(0));
    }
  }
  FailureOr<Value> r = create<l1::ClipOp>(loc, *x, minAttr, maxAttr);
  return defineResult(node, r);
}

LogicalResult Importer::convertHardSigmoid(const onnx::NodeProto &node,
                                           Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  FailureOr<Value> r = create<l1::HardSigmoidOp>(
      loc, *x, builder.getF64FloatAttr(attrFloat(node, "alpha", 0.2)),
      builder.getF64FloatAttr(attrFloat(node, "beta", 0.5)));
  return defineResult(node, r);
}

LogicalResult Importer::convertGelu(const onnx::NodeProto &node, Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  FailureOr<Value> r = create<l1::GeluOp>(
      loc, *x, builder.getStringAttr(attrString(node, "approximate", "none")));
  return defineResult(node, r);
}

LogicalResult Importer::convertCast(const onnx::NodeProto &node, Location loc) {
  int64_t to = attrInt(node, "to", 0);
  Type element = toMlirType(&context, to);
  if (!element)
    return emitError(loc) << "Cast to " << onnxTypeName(to)
                          << " is not supported";
  if (const HostTensor *host = getHost(node, 0)) {
    // Shape values cast between integer types stay known.
    if (!host->isFloat() && isa<IntegerType>(element)) {
      HostTensor result = *host;
      result.elementType = element;
      defineHost(node, 0, std::move(result));
      return success();
    }
  }
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  define(node, 0,
         type.getElementType() == element
             ? *x
             : l1::CastOp::create(builder, loc, type.clone(element), *x)
                   .getResult());
  return success();
}

//===----------------------------------------------------------------------===//
// Quantization (QDQ): the ONNX tensors stay integers; the quantized types
// live between a storage cast and the level1 op that uses them.
//===----------------------------------------------------------------------===//

FailureOr<quant::QuantizedType>
Importer::quantizedType(const onnx::NodeProto &node, Location loc,
                        RankedTensorType tensor, Type storage, Type expressed) {
  if (attrInt(node, "block_size", 0) != 0)
    return emitError(loc) << node.op_type()
                          << " with block_size (blocked quantization) is not "
                             "supported";
  FailureOr<HostTensor> scale = requireHost(node, 1, "scale");
  if (failed(scale))
    return failure();
  if (!scale->isFloat() || scale->shape.size() > 1)
    return emitError(loc) << node.op_type()
                          << " expects a float scalar or 1-D scale";
  SmallVector<int64_t> zeros(scale->numElements(), 0);
  if (hasInput(node, 2)) {
    FailureOr<HostTensor> zero = requireHost(node, 2, "zero point");
    if (failed(zero))
      return failure();
    if (zero->elementType != storage || zero->shape != scale->shape)
      return emitError(loc)
             << node.op_type() << " has a zero point of type "
             << RankedTensorType::get(zero->shape, zero->elementType)
             << " for a scale of shape " << shapeString(scale->shape)
             << " and " << storage << " values";
    zeros = zero->ints;
  }
  auto integer = dyn_cast<IntegerType>(storage);
  if (!integer || !llvm::is_contained({8u, 16u, 32u}, integer.getWidth()) ||
      (integer.isUnsigned() && integer.getWidth() != 8))
    return emitError(loc) << node.op_type() << " to or from " << storage
                          << " is not supported (int8, uint8, int16, int32)";
  unsigned width = integer.getWidth();
  bool isSigned = !integer.isUnsigned();
  int64_t lo = isSigned ? -(int64_t{1} << (width - 1)) : 0;
  int64_t hi = isSigned ? (int64_t{1} << (width - 1)) - 1
                        : (int64_t{1} << width) - 1;
  unsigned flags = isSigned ? quant::QuantizationFlags::Signed : 0;
  Type signless = IntegerType::get(&context, width);
  auto emit = [&] { return emitError(loc) << node.op_type() << ": "; };
  if (scale->shape.empty()) {
    auto type = quant::UniformQuantizedType::getChecked(
        emit, flags, signless, expressed, scale->floats[0], zeros[0], lo, hi);
    if (!type)
      return failure();
    return cast<quant::QuantizedType>(type);
  }
  int64_t axis = attrInt(node, "axis", 1);
  int64_t rank = tensor.getRank();
  if (axis < -rank || axis >= rank)
    return emitError(loc) << node.op_type() << " axis " << axis
                          << " is out of range for a rank-" << rank
                          << " tensor";
  axis = axis < 0 ? axis + rank : axis;
  auto type = quant::UniformQuantizedPerAxisType::getChecked(
      emit, flags, signless, expressed, scale->floats, zeros,
      static_cast<int32_t>(axis), lo, hi);
  if (!type)
    return failure();
  return cast<quant::QuantizedType>(type);
}

LogicalResult Importer::convertQuantizeLinear(const onnx::NodeProto &node,
                                              Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  // Without a zero point the result is uint8.
  Type storage = IntegerType::get(&context, 8, IntegerType::Unsigned);
  if (hasInput(node, 2)) {
    FailureOr<RankedTensorType> zero = getType(node, 2);
    if (failed(zero))
      return failure();
    storage = zero->getElementType();
  }
  if (!isa<FloatType>(type.getElementType()))
    return emitError(loc) << "QuantizeLinear of " << type.getElementType()
                          << " values: it quantizes floats";
  FailureOr<quant::QuantizedType> q =
      quantizedType(node, loc, type, storage, type.getElementType());
  if (failed(q))
    return failure();
  auto quantized = l1::QuantizeOp::create(builder, loc, type.clone(*q), *x);
  define(node, 0,
         l1::StorageCastOp::create(builder, loc, type.clone(storage),
                                   quantized)
             .getResult());
  return success();
}

LogicalResult Importer::convertDequantizeLinear(const onnx::NodeProto &node,
                                                Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  FailureOr<RankedTensorType> scale = getType(node, 1);
  if (failed(x) || failed(scale))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  FailureOr<quant::QuantizedType> q = quantizedType(
      node, loc, type, type.getElementType(), scale->getElementType());
  if (failed(q))
    return failure();
  auto quantized =
      l1::StorageCastOp::create(builder, loc, type.clone(*q), *x);
  return defineResult(node, create<l1::DequantizeOp>(loc, quantized));
}

LogicalResult Importer::convertMatMul(const onnx::NodeProto &node,
                                      Location loc) {
  FailureOr<Value> a = getValue(node, 0), b = getValue(node, 1);
  if (failed(a) || failed(b))
    return failure();
  FailureOr<Value> r = create<l1::MatmulOp>(loc, *a, *b);
  return defineResult(node, r);
}

LogicalResult Importer::convertGemm(const onnx::NodeProto &node, Location loc) {
  FailureOr<Value> a = getValue(node, 0), b = getValue(node, 1);
  if (failed(a) || failed(b))
    return failure();
  Value c;
  if (hasInput(node, 2)) {
    FailureOr<Value> cv = getValue(node, 2);
    if (failed(cv))
      return failure();
    c = *cv;
  }
  FailureOr<Value> r = create<l1::GemmOp>(
      loc, *a, *b, c,
      attrInt(node, "transA", 0) ? builder.getUnitAttr() : UnitAttr(),
      attrInt(node, "transB", 0) ? builder.getUnitAttr() : UnitAttr(),
      builder.getF64FloatAttr(attrFloat(node, "alpha", 1.0)),
      builder.getF64FloatAttr(attrFloat(node, "beta", 1.0)));
  return defineResult(node, r);
}

/// ONNX auto_pad for one spatial dim: returns (begin, end) padding.
static std::pair<int64_t, int64_t> autoPad(StringRef mode, int64_t in,
                                           int64_t kernel, int64_t stride,
                                           int64_t dilation) {
  if (mode != "SAME_UPPER" && mode != "SAME_LOWER")
    return {0, 0};
  int64_t out = (in + stride - 1) / stride;
  int64_t total = std::max<int64_t>(0, (out - 1) * stride +
                                           (kernel - 1) * dilation + 1 - in);
  int64_t small = total / 2, large = total - small;
  return mode == "SAME_UPPER" ? std::make_pair(small, large)
                              : std::make_pair(large, small);
}

/// Spatial attributes shared by Conv and pooling, in level1's order.
struct WindowAttrs {
  SmallVector<int64_t> kernel, strides, padding, dilations;
};

static FailureOr<WindowAttrs> windowAttrs(
    const onnx::NodeProto &node, Location loc, RankedTensorType input,
    ArrayRef<int64_t> kernel, std::optional<SmallVector<int64_t>> strides,
    std::optional<SmallVector<int64_t>> pads,
    std::optional<SmallVector<int64_t>> dilations, StringRef autoPadMode) {
  WindowAttrs w;
  if (input.getRank() != 4)
    return emitError(loc) << node.op_type()
                          << " is supported in 2-D only (NCHW input), got "
                          << input;
  if (kernel.size() != 2)
    return emitError(loc) << node.op_type() << " expects a 2-D kernel, got "
                          << kernel.size() << " dims";
  w.kernel.assign(kernel.begin(), kernel.end());
  w.strides = strides.value_or(SmallVector<int64_t>{1, 1});
  w.dilations = dilations.value_or(SmallVector<int64_t>{1, 1});
  if (w.strides.size() != 2 || w.dilations.size() != 2)
    return emitError(loc) << node.op_type()
                          << " expects 2 strides and 2 dilations";
  if (autoPadMode == "NOTSET" || autoPadMode.empty()) {
    w.padding = pads.value_or(SmallVector<int64_t>{0, 0, 0, 0});
    if (w.padding.size() != 4)
      return emitError(loc)
             << node.op_type() << " expects 4 pads, got " << w.padding.size();
    return w;
  }
  if (autoPadMode != "VALID" && autoPadMode != "SAME_UPPER" &&
      autoPadMode != "SAME_LOWER")
    return emitError(loc) << node.op_type() << " has unknown auto_pad '"
                          << autoPadMode << "'";
  w.padding.assign(4, 0);
  for (int i = 0; i < 2; ++i) {
    int64_t in = input.getDimSize(2 + i);
    if (ShapedType::isDynamic(in) && autoPadMode != "VALID")
      return emitError(loc) << node.op_type()
                            << " with auto_pad SAME needs static spatial dims";
    auto [begin, end] =
        autoPad(autoPadMode, in, w.kernel[i], w.strides[i], w.dilations[i]);
    w.padding[i] = begin;
    w.padding[2 + i] = end;
  }
  return w;
}

LogicalResult Importer::convertConv(const onnx::NodeProto &node, Location loc) {
  FailureOr<Value> x = getValue(node, 0), w = getValue(node, 1);
  if (failed(x) || failed(w))
    return failure();
  Value bias;
  if (hasInput(node, 2)) {
    FailureOr<Value> b = getValue(node, 2);
    if (failed(b))
      return failure();
    bias = *b;
  }
  auto wType = cast<RankedTensorType>(w->getType());
  if (wType.getRank() < 3)
    return emitError(loc) << "Conv expects a weight of rank >= 3, got "
                          << wType;
  SmallVector<int64_t> kernel =
      attrInts(node, "kernel_shape")
          .value_or(SmallVector<int64_t>(wType.getShape().drop_front(2)));
  FailureOr<WindowAttrs> win = windowAttrs(
      node, loc, cast<RankedTensorType>(x->getType()), kernel,
      attrInts(node, "strides"), attrInts(node, "pads"),
      attrInts(node, "dilations"), attrString(node, "auto_pad", "NOTSET"));
  if (failed(win))
    return failure();
  FailureOr<Value> r = create<l1::Conv2dOp>(
      loc, *x, *w, bias, builder.getDenseI64ArrayAttr(win->strides),
      builder.getDenseI64ArrayAttr(win->padding),
      builder.getDenseI64ArrayAttr(win->dilations),
      builder.getI64IntegerAttr(attrInt(node, "group", 1)));
  return defineResult(node, r);
}

LogicalResult Importer::convertBatchNorm(const onnx::NodeProto &node,
                                         Location loc) {
  if (attrInt(node, "training_mode", 0))
    return emitError(loc) << "BatchNormalization in training mode is not "
                             "supported; export the model in eval mode";
  SmallVector<Value> operands;
  for (int i = 0; i < 5; ++i) {
    FailureOr<Value> v = getValue(node, i);
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  FailureOr<Value> r = create<l1::BatchNormOp>(
      loc, operands[0], operands[1], operands[2], operands[3], operands[4],
      builder.getF64FloatAttr(attrFloat(node, "epsilon", 1e-5)));
  return defineResult(node, r);
}

LogicalResult Importer::convertPool(const onnx::NodeProto &node, Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  if (attrInt(node, "storage_order", 0))
    return emitError(loc) << "MaxPool with storage_order = 1 is not supported";
  std::optional<SmallVector<int64_t>> kernel = attrInts(node, "kernel_shape");
  if (!kernel)
    return emitError(loc) << node.op_type() << " needs kernel_shape";
  FailureOr<WindowAttrs> win = windowAttrs(
      node, loc, cast<RankedTensorType>(x->getType()), *kernel,
      attrInts(node, "strides"), attrInts(node, "pads"),
      attrInts(node, "dilations"), attrString(node, "auto_pad", "NOTSET"));
  if (failed(win))
    return failure();
  UnitAttr ceil =
      attrInt(node, "ceil_mode", 0) ? builder.getUnitAttr() : UnitAttr();
  FailureOr<Value> r = failure();
  if (node.op_type() == "MaxPool") {
    r = create<l1::MaxPool2dOp>(
        loc, *x, builder.getDenseI64ArrayAttr(win->kernel),
        builder.getDenseI64ArrayAttr(win->strides),
        builder.getDenseI64ArrayAttr(win->padding),
        builder.getDenseI64ArrayAttr(win->dilations), ceil);
  } else {
    r = create<l1::AvgPool2dOp>(
        loc, *x, builder.getDenseI64ArrayAttr(win->kernel),
        builder.getDenseI64ArrayAttr(win->strides),
        builder.getDenseI64ArrayAttr(win->padding),
        builder.getDenseI64ArrayAttr(win->dilations), ceil,
        attrInt(node, "count_include_pad", 0) ? builder.getUnitAttr()
                                              : UnitAttr());
  }
  return defineResult(node, r);
}

LogicalResult Importer::convertGlobalPool(const onnx::NodeProto &node,
                                          Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  FailureOr<Value> r = node.op_type() == "GlobalAveragePool"
                           ? create<l1::GlobalAvgPoolOp>(loc, *x)
                           : create<l1::GlobalMaxPoolOp>(loc, *x);
  return defineResult(node, r);
}

LogicalResult Importer::convertSoftmax(const onnx::NodeProto &node,
                                       Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  int64_t axis = attrInt(node, "axis", opset < 13 ? 1 : -1);
  bool isLog = node.op_type() == "LogSoftmax";
  auto softmax = [&](Value v, int64_t a) {
    return isLog
               ? create<l1::LogSoftmaxOp>(loc, v, builder.getI64IntegerAttr(a))
               : create<l1::SoftmaxOp>(loc, v, builder.getI64IntegerAttr(a));
  };
  if (axis < -rank || axis >= rank)
    return emitError(loc) << node.op_type() << " axis " << axis
                          << " is out of range for rank " << rank;
  int64_t normalized = axis < 0 ? axis + rank : axis;
  // Before opset 13 the input is coerced to 2-D at `axis` and normalized
  // over the flattened trailing dims; equivalent when axis is the last.
  if (opset >= 13 || normalized == rank - 1) {
    FailureOr<Value> r = softmax(*x, normalized);
    if (failed(r))
      return failure();
    define(node, 0, *r);
    return success();
  }
  FailureOr<Value> flat =
      create<l1::FlattenOp>(loc, *x, builder.getI64IntegerAttr(normalized));
  if (failed(flat))
    return failure();
  FailureOr<Value> r = softmax(*flat, 1);
  if (failed(r))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d : type.getShape())
    shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  if (llvm::count(shape, -1) > 1)
    return emitError(loc) << node.op_type() << " (opset " << opset
                          << ") on more than one dynamic dim is not supported";
  FailureOr<Value> back =
      create<l1::ReshapeOp>(loc, *r, builder.getDenseI64ArrayAttr(shape));
  return defineResult(node, back);
}

LogicalResult Importer::convertReduce(const onnx::NodeProto &node,
                                      Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  // Axes moved from an attribute to an input: ReduceSum at 13, others at 18.
  bool axesAsInput = node.op_type() == "ReduceSum" ? opset >= 13 : opset >= 18;
  SmallVector<int64_t> axes;
  if (axesAsInput) {
    if (hasInput(node, 1)) {
      FailureOr<SmallVector<int64_t>> v = requireInts(node, 1, "axes");
      if (failed(v))
        return failure();
      axes = *v;
    }
  } else if (auto a = attrInts(node, "axes")) {
    axes = *a;
  }
  if (axes.empty()) {
    if (attrInt(node, "noop_with_empty_axes", 0)) {
      define(node, 0, *x);
      return success();
    }
    for (int64_t i = 0; i < type.getRank(); ++i)
      axes.push_back(i);
  }
  auto axesAttr = builder.getDenseI64ArrayAttr(axes);
  UnitAttr keep =
      attrInt(node, "keepdims", 1) ? builder.getUnitAttr() : UnitAttr();
  FailureOr<Value> r = failure();
  if (node.op_type() == "ReduceSum")
    r = create<l1::ReduceSumOp>(loc, *x, axesAttr, keep);
  else if (node.op_type() == "ReduceMean")
    r = create<l1::ReduceMeanOp>(loc, *x, axesAttr, keep);
  else if (node.op_type() == "ReduceMax")
    r = create<l1::ReduceMaxOp>(loc, *x, axesAttr, keep);
  else
    r = create<l1::ReduceMinOp>(loc, *x, axesAttr, keep);
  return defineResult(node, r);
}

LogicalResult Importer::convertLayerNorm(const onnx::NodeProto &node,
                                         Location loc) {
  FailureOr<Value> x = getValue(node, 0), scale = getValue(node, 1);
  if (failed(x) || failed(scale))
    return failure();
  Value bias;
  if (hasInput(node, 2)) {
    FailureOr<Value> b = getValue(node, 2);
    if (failed(b))
      return failure();
    bias = *b;
  }
  int64_t axis = attrInt(node, "axis", -1);
  double epsilon = attrFloat(node, "epsilon", 1e-5);
  FailureOr<Value> r = create<l1::LayerNormOp>(
      loc, *x, *scale, bias, builder.getI64IntegerAttr(axis),
      builder.getF64FloatAttr(epsilon));
  if (failed(r))
    return failure();
  define(node, 0, *r);
  // The optional Mean and InvStdDev outputs (kept dims), when used.
  bool wantsStats = (node.output_size() > 1 && !node.output(1).empty()) ||
                    (node.output_size() > 2 && !node.output(2).empty());
  if (!wantsStats)
    return success();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  int64_t first = axis < 0 ? axis + rank : axis;
  SmallVector<int64_t> axes;
  for (int64_t d = first; d < rank; ++d)
    axes.push_back(d);
  auto axesAttr = builder.getDenseI64ArrayAttr(axes);
  FailureOr<Value> mean =
      create<l1::ReduceMeanOp>(loc, *x, axesAttr, builder.getUnitAttr());
  if (failed(mean))
    return failure();
  define(node, 1, *mean);
  FailureOr<Value> centered = create<l1::SubOp>(loc, *x, *mean);
  FailureOr<Value> squared = failed(centered)
                                 ? centered
                                 : create<l1::MulOp>(loc, *centered, *centered);
  FailureOr<Value> variance =
      failed(squared) ? squared
                      : create<l1::ReduceMeanOp>(loc, *squared, axesAttr,
                                                 builder.getUnitAttr());
  if (failed(variance))
    return failure();
  Value eps = l1::ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(
          RankedTensorType::get({}, type.getElementType()),
          builder.getFloatAttr(type.getElementType(), epsilon)));
  FailureOr<Value> shifted = create<l1::AddOp>(loc, *variance, eps);
  FailureOr<Value> invStd =
      failed(shifted) ? shifted : create<l1::RsqrtOp>(loc, *shifted);
  if (failed(invStd))
    return failure();
  define(node, 2, *invStd);
  return success();
}

LogicalResult Importer::convertFlatten(const onnx::NodeProto &node,
                                       Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  FailureOr<Value> r = create<l1::FlattenOp>(
      loc, *x, builder.getI64IntegerAttr(attrInt(node, "axis", 1)));
  return defineResult(node, r);
}

LogicalResult Importer::convertReshape(const onnx::NodeProto &node,
                                       Location loc) {
  SmallVector<int64_t> shape;
  if (opset < 5) {
    shape = attrInts(node, "shape").value_or(SmallVector<int64_t>{});
  } else {
    FailureOr<SmallVector<int64_t>> s = requireInts(node, 1, "target shape");
    if (failed(s))
      return failure();
    shape = *s;
  }
  // Input dims: of the host tensor if known (shape vectors are reshaped
  // too), else of the level1 value.
  const HostTensor *host = getHost(node, 0);
  SmallVector<int64_t> inputShape;
  if (host) {
    inputShape = host->shape;
  } else {
    FailureOr<RankedTensorType> type = getType(node, 0);
    if (failed(type))
      return failure();
    inputShape.assign(type->getShape().begin(), type->getShape().end());
  }
  bool allowZero = attrInt(node, "allowzero", 0);
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (d == 0 && !allowZero) {
      // 0 copies the input dimension.
      if (i >= inputShape.size())
        return emitError(loc)
               << "Reshape shape " << shapeString(shape) << " copies dim " << i
               << " of a rank-" << inputShape.size() << " input";
      d = ShapedType::isDynamic(inputShape[i]) ? kUnknown : inputShape[i];
    }
  }
  // With one run-time symbol N (the dynamic batch), a target like [N, -1]
  // is resolved: the input has c * N elements, so -1 is c / (product of the
  // static entries), and N's entry becomes level1's inferred -1.
  int64_t numUnknown = llvm::count(shape, kUnknown);
  int64_t numInferred = llvm::count(shape, int64_t{-1});
  int64_t inputDynamic = 0, inputStatic = 1;
  for (int64_t d : inputShape) {
    if (ShapedType::isDynamic(d) || d == kUnknown)
      ++inputDynamic;
    else
      inputStatic *= d;
  }
  if (numUnknown == 1 && numInferred == 1 && inputDynamic == 1 &&
      dynamicSymbols.size() <= 1) {
    int64_t targetStatic = 1;
    for (int64_t d : shape)
      if (d != kUnknown && d != -1)
        targetStatic *= d;
    if (targetStatic == 0 || inputStatic % targetStatic != 0)
      return emitError(loc)
             << "Reshape cannot reshape " << shapeString(inputShape) << " to "
             << shapeString(shape);
    for (int64_t &d : shape)
      if (d == -1)
        d = inputStatic / targetStatic;
    numInferred = 0;
  }
  if (numUnknown + numInferred > 1)
    return emitError(loc) << "Reshape target shape " << shapeString(shape)
                          << " has more than one dimension unknown at compile "
                             "time; fix the input shapes with --input-shape";
  for (int64_t &d : shape)
    if (d == kUnknown)
      d = -1;
  if (host) {
    HostTensor result = *host;
    int64_t known = 1;
    for (int64_t d : shape)
      if (d != -1)
        known *= d;
    for (int64_t &d : shape)
      if (d == -1 && known)
        d = result.numElements() / known;
    if (std::accumulate(shape.begin(), shape.end(), int64_t{1},
                        std::multiplies<int64_t>()) != result.numElements())
      return emitError(loc) << "Reshape of " << result.numElements()
                            << " elements to " << shapeString(shape);
    result.shape = shape;
    defineHost(node, 0, std::move(result));
    return success();
  }
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  FailureOr<Value> r =
      create<l1::ReshapeOp>(loc, *x, builder.getDenseI64ArrayAttr(shape));
  return defineResult(node, r);
}

LogicalResult Importer::convertTranspose(const onnx::NodeProto &node,
                                         Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
  SmallVector<int64_t> perm;
  if (auto p = attrInts(node, "perm"))
    perm = *p;
  else
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  FailureOr<Value> r =
      create<l1::TransposeOp>(loc, *x, builder.getDenseI64ArrayAttr(perm));
  return defineResult(node, r);
}

LogicalResult Importer::convertConcat(const onnx::NodeProto &node,
                                      Location loc) {
  int64_t axis = attrInt(node, "axis", 0);
  // Shape vectors concatenate at import time.
  SmallVector<const HostTensor *> hosts;
  for (int i = 0; i < node.input_size(); ++i)
    hosts.push_back(getHost(node, i));
  if (!hosts.empty() && llvm::all_of(hosts, [](const HostTensor *h) {
        return h && !h->isFloat() && h->shape.size() == 1;
      })) {
    HostTensor result;
    result.elementType = hosts.front()->elementType;
    for (const HostTensor *h : hosts)
      llvm::append_range(result.ints, h->ints);
    result.shape = {static_cast<int64_t>(result.ints.size())};
    defineHost(node, 0, std::move(result));
    return success();
  }
  SmallVector<Value> inputs;
  for (int i = 0; i < node.input_size(); ++i) {
    FailureOr<Value> v = getValue(node, i);
    if (failed(v))
      return failure();
    inputs.push_back(*v);
  }
  FailureOr<Value> r = create<l1::ConcatOp>(loc, ValueRange(inputs),
                                            builder.getI64IntegerAttr(axis));
  return defineResult(node, r);
}

LogicalResult Importer::convertSplit(const onnx::NodeProto &node,
                                     Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t axis = attrInt(node, "axis", 0);
  int64_t rank = type.getRank();
  if (axis < -rank || axis >= rank)
    return emitError(loc) << "Split axis " << axis
                          << " is out of range for rank " << rank;
  int64_t dim = type.getDimSize(axis < 0 ? axis + rank : axis);
  SmallVector<int64_t> sizes;
  if (opset >= 13 && hasInput(node, 1)) {
    FailureOr<SmallVector<int64_t>> s = requireInts(node, 1, "split sizes");
    if (failed(s))
      return failure();
    sizes = *s;
  } else if (auto s = attrInts(node, "split")) {
    sizes = *s;
  } else {
    int64_t parts = attr(node, "num_outputs") ? attrInt(node, "num_outputs", 1)
                                              : node.output_size();
    if (ShapedType::isDynamic(dim) || parts < 1)
      return emitError(loc)
             << "Split into equal parts needs a static dimension";
    int64_t chunk = (dim + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i)
      sizes.push_back(std::min(chunk, dim - i * chunk));
  }
  if (static_cast<int>(sizes.size()) != node.output_size())
    return emitError(loc) << "Split makes " << sizes.size()
                          << " pieces but has " << node.output_size()
                          << " outputs";
  FailureOr<Operation *> op = createTyped<l1::SplitOp>(
      loc, sizes.size(), *x, builder.getI64IntegerAttr(axis),
      builder.getDenseI64ArrayAttr(sizes));
  if (failed(op))
    return failure();
  for (auto [i, result] : llvm::enumerate((*op)->getResults()))
    define(node, i, result);
  return success();
}

LogicalResult Importer::convertSlice(const onnx::NodeProto &node,
                                     Location loc) {
  SmallVector<int64_t> starts, ends, axes, steps;
  if (opset < 10) {
    starts = attrInts(node, "starts").value_or(SmallVector<int64_t>{});
    ends = attrInts(node, "ends").value_or(SmallVector<int64_t>{});
    axes = attrInts(node, "axes").value_or(SmallVector<int64_t>{});
  } else {
    FailureOr<SmallVector<int64_t>> s = requireInts(node, 1, "starts");
    if (failed(s))
      return failure();
    FailureOr<SmallVector<int64_t>> e = requireInts(node, 2, "ends");
    if (failed(e))
      return failure();
    starts = *s;
    ends = *e;
    for (auto [i, out] :
         {std::pair<int, SmallVector<int64_t> *>{3, &axes}, {4, &steps}}) {
      if (!hasInput(node, i))
        continue;
      FailureOr<SmallVector<int64_t>> v =
          requireInts(node, i, i == 3 ? "axes" : "steps");
      if (failed(v))
        return failure();
      *out = *v;
    }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (llvm::is_contained(starts, kUnknown) ||
      llvm::is_contained(ends, kUnknown))
    return emitError(loc) << "Slice bounds depend on a dimension known only at "
                             "run time";
  // Slicing a known shape vector (e.g. shape[2:]) stays known.
  const HostTensor *host = getHost(node, 0);
  if (host && !host->isFloat() && host->shape.size() == 1 && axes.size() == 1 &&
      (axes[0] == 0 || axes[0] == -1) && steps[0] == 1) {
    int64_t n = host->numElements();
    int64_t s = starts[0] < 0 ? starts[0] + n : starts[0];
    int64_t e = ends[0] < 0 ? ends[0] + n : ends[0];
    s = std::clamp<int64_t>(s, 0, n);
    e = std::clamp<int64_t>(e, 0, n);
    HostTensor result;
    result.elementType = host->elementType;
    for (int64_t i = s; i < e; ++i)
      result.ints.push_back(host->ints[i]);
    result.shape = {static_cast<int64_t>(result.ints.size())};
    defineHost(node, 0, std::move(result));
    return success();
  }
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  FailureOr<Value> r = create<l1::SliceOp>(
      loc, *x, builder.getDenseI64ArrayAttr(starts),
      builder.getDenseI64ArrayAttr(ends), builder.getDenseI64ArrayAttr(axes),
      builder.getDenseI64ArrayAttr(steps));
  return defineResult(node, r);
}

LogicalResult Importer::convertSqueeze(const onnx::NodeProto &node,
                                       Location loc) {
  FailureOr<RankedTensorType> type = getType(node, 0);
  if (failed(type))
    return failure();
  SmallVector<int64_t> axes;
  if (opset >= 13 && hasInput(node, 1)) {
    FailureOr<SmallVector<int64_t>> a = requireInts(node, 1, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  } else if (auto a = attrInts(node, "axes")) {
    axes = *a;
  } else {
    for (int64_t i = 0; i < type->getRank(); ++i)
      if (type->getDimSize(i) == 1)
        axes.push_back(i);
  }
  if (const HostTensor *host = getHost(node, 0)) {
    HostTensor result = *host;
    result.shape.clear();
    for (int64_t i = 0; i < static_cast<int64_t>(host->shape.size()); ++i)
      if (!llvm::is_contained(axes, i) &&
          !llvm::is_contained(axes,
                              i - static_cast<int64_t>(host->shape.size())))
        result.shape.push_back(host->shape[i]);
    defineHost(node, 0, std::move(result));
    return success();
  }
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  FailureOr<Value> r =
      create<l1::SqueezeOp>(loc, *x, builder.getDenseI64ArrayAttr(axes));
  return defineResult(node, r);
}

LogicalResult Importer::convertUnsqueeze(const onnx::NodeProto &node,
                                         Location loc) {
  SmallVector<int64_t> axes;
  if (opset >= 13) {
    FailureOr<SmallVector<int64_t>> a = requireInts(node, 1, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  } else {
    axes = attrInts(node, "axes").value_or(SmallVector<int64_t>{});
  }
  if (const HostTensor *host = getHost(node, 0)) {
    int64_t rank = host->shape.size() + axes.size();
    HostTensor result = *host;
    result.shape.clear();
    size_t next = 0;
    for (int64_t i = 0; i < rank; ++i) {
      if (llvm::is_contained(axes, i) || llvm::is_contained(axes, i - rank))
        result.shape.push_back(1);
      else if (next < host->shape.size())
        result.shape.push_back(host->shape[next++]);
    }
    defineHost(node, 0, std::move(result));
    return success();
  }
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  FailureOr<Value> r =
      create<l1::UnsqueezeOp>(loc, *x, builder.getDenseI64ArrayAttr(axes));
  return defineResult(node, r);
}

LogicalResult Importer::convertGather(const onnx::NodeProto &node,
                                      Location loc) {
  int64_t axis = attrInt(node, "axis", 0);
  const HostTensor *data = getHost(node, 0);
  const HostTensor *indices = getHost(node, 1);
  // Gathering from a known shape vector (shape[0]) stays known.
  if (data && indices && !data->isFloat() && data->shape.size() == 1 &&
      axis == 0 && !indices->isFloat() && indices->shape.size() <= 1) {
    HostTensor result;
    result.elementType = data->elementType;
    result.shape = indices->shape;
    int64_t n = data->numElements();
    for (int64_t i : indices->ints) {
      if (i < -n || i >= n)
        return emitError(loc) << "Gather index " << i << " is out of range for "
                              << n << " elements";
      result.ints.push_back(data->ints[i < 0 ? i + n : i]);
    }
    defineHost(node, 0, std::move(result));
    return success();
  }
  FailureOr<Value> x = getValue(node, 0), idx = getValue(node, 1);
  if (failed(x) || failed(idx))
    return failure();
  FailureOr<Value> r =
      create<l1::GatherOp>(loc, *x, *idx, builder.getI64IntegerAttr(axis));
  return defineResult(node, r);
}

LogicalResult Importer::convertExpand(const onnx::NodeProto &node,
                                      Location loc) {
  FailureOr<SmallVector<int64_t>> shape = requireInts(node, 1, "target shape");
  if (failed(shape))
    return failure();
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  if (llvm::is_contained(*shape, kUnknown))
    return emitError(loc)
           << "Expand to a shape that depends on the dynamic batch is not "
              "supported yet; compile with a static batch (--input-shape)";
  FailureOr<Value> r =
      create<l1::ExpandOp>(loc, *x, builder.getDenseI64ArrayAttr(*shape));
  return defineResult(node, r);
}

LogicalResult Importer::convertPad(const onnx::NodeProto &node, Location loc) {
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  SmallVector<int64_t> pads;
  double value = 0;
  if (opset < 11) {
    pads = attrInts(node, "pads").value_or(SmallVector<int64_t>{});
    value = attrFloat(node, "value", 0);
  } else {
    FailureOr<SmallVector<int64_t>> p = requireInts(node, 1, "pads");
    if (failed(p))
      return failure();
    pads = *p;
    if (hasInput(node, 2)) {
      FailureOr<HostTensor> v = requireHost(node, 2, "constant value");
      if (failed(v))
        return failure();
      if (v->numElements() != 1)
        return emitError(loc) << "Pad expects a scalar constant value";
      value = v->at(0);
    }
    if (hasInput(node, 3))
      return emitError(loc) << "Pad with an 'axes' input is not supported";
  }
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return emitError(loc)
           << "Pad with negative pads (cropping) is not supported";
  FailureOr<Value> r = create<l1::PadOp>(
      loc, *x, builder.getDenseI64ArrayAttr(pads),
      builder.getStringAttr(attrString(node, "mode", "constant")),
      builder.getF64FloatAttr(value));
  return defineResult(node, r);
}

LogicalResult Importer::convertShape(const onnx::NodeProto &node,
                                     Location loc) {
  FailureOr<RankedTensorType> type = getType(node, 0);
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  int64_t start = attrInt(node, "start", 0), end = attrInt(node, "end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  HostTensor host;
  host.elementType = builder.getI64Type();
  for (int64_t i = start; i < end; ++i)
    host.ints.push_back(ShapedType::isDynamic(type->getDimSize(i))
                            ? kUnknown
                            : type->getDimSize(i));
  host.shape = {static_cast<int64_t>(host.ints.size())};
  defineHost(node, 0, std::move(host));
  return success();
}

LogicalResult Importer::convertConstant(const onnx::NodeProto &node,
                                        Location loc) {
  if (node.attribute_size() != 1)
    return emitError(loc) << "Constant needs exactly one value attribute";
  const onnx::AttributeProto &a = node.attribute(0);
  HostTensor host;
  if (a.name() == "value") {
    std::string bytes;
    FailureOr<HostTensor> decoded = decodeTensor(a.t(), /*full=*/true, bytes);
    if (failed(decoded))
      return failure();
    if (decoded->numElements() == 0 && !decoded->shape.empty() &&
        llvm::all_of(decoded->shape, [](int64_t d) { return d != 0; })) {
      // Too large to keep on the host: treat as an initializer.
      ValueEntry entry;
      entry.initializer = &a.t();
      entry.type = RankedTensorType::get(decoded->shape, decoded->elementType);
      values[node.output(0)] = entry;
      return success();
    }
    host = std::move(*decoded);
  } else if (a.name() == "value_float") {
    host = {builder.getF32Type(), {}, {}, {a.f()}};
  } else if (a.name() == "value_floats") {
    host = {builder.getF32Type(),
            {a.floats_size()},
            {},
            SmallVector<double>(a.floats().begin(), a.floats().end())};
  } else if (a.name() == "value_int") {
    host = {builder.getI64Type(), {}, {a.i()}, {}};
  } else if (a.name() == "value_ints") {
    host = {builder.getI64Type(),
            {a.ints_size()},
            SmallVector<int64_t>(a.ints().begin(), a.ints().end()),
            {}};
  } else {
    return emitError(loc) << "Constant with '" << a.name()
                          << "' is not supported";
  }
  defineHost(node, 0, std::move(host));
  return success();
}

LogicalResult Importer::convertConstantOfShape(const onnx::NodeProto &node,
                                               Location loc) {
  FailureOr<SmallVector<int64_t>> shape = requireInts(node, 0, "shape");
  if (failed(shape))
    return failure();
  if (llvm::is_contained(*shape, kUnknown))
    return emitError(loc)
           << "ConstantOfShape needs a shape known at compile time";
  HostTensor fill{builder.getF32Type(), {1}, {}, {0.0}};
  if (const onnx::AttributeProto *a = attr(node, "value")) {
    std::string bytes;
    FailureOr<HostTensor> v = decodeTensor(a->t(), /*full=*/true, bytes);
    if (failed(v))
      return failure();
    if (v->numElements() != 1)
      return emitError(loc) << "ConstantOfShape value must have one element";
    fill = std::move(*v);
  }
  int64_t count = 1;
  for (int64_t d : *shape) {
    if (d < 0 || (d && count > kMaxHostElements / d))
      return emitError(loc) << "ConstantOfShape shape " << shapeString(*shape)
                            << " is negative or too large";
    count *= d;
  }
  HostTensor host;
  host.elementType = fill.elementType;
  host.shape = *shape;
  if (fill.isFloat())
    host.floats.assign(count, fill.floats[0]);
  else
    host.ints.assign(count, fill.ints[0]);
  defineHost(node, 0, std::move(host));
  return success();
}

} // namespace

/// True for a Python file inside the torch package, which the user did not
/// write. (torchvision's model files are kept: they are the model's source.)
static bool isTorchInternal(StringRef file) {
  return file.contains("/torch/") || file.starts_with("torch/");
}

std::optional<SourceFrame> parseTorchDocString(StringRef docString) {
  // TorchScript (scripted code): `  File "PATH", line N[, in FN]`, the source
  // lines, then a caret line `    ~~~~~ <--- HERE` under the node's code.
  // Traced code: a Python stack, innermost first, one `PATH(N): FN` per line.
  std::optional<SourceFrame> first, user;
  SmallVector<StringRef> lines;
  docString.split(lines, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    StringRef line = lines[i].trim();
    SourceFrame frame;
    if (line.consume_front("File \"")) {
      size_t quote = line.find('"');
      if (quote == StringRef::npos)
        continue;
      frame.file = line.take_front(quote).str();
      StringRef rest = line.drop_front(quote + 1);
      if (!rest.consume_front(", line ") ||
          rest.take_while([](char c) { return llvm::isDigit(c); })
              .getAsInteger(10, frame.line))
        continue;
      for (size_t j = i + 1; j < lines.size(); ++j) {
        if (!lines[j].contains("<--- HERE"))
          continue;
        size_t caret = lines[j].find_first_of("~^");
        if (caret != StringRef::npos)
          frame.column = caret + 1;
        break;
      }
    } else {
      size_t open = line.rfind("): ");
      size_t paren = line.take_front(open).rfind('(');
      if (open == StringRef::npos || paren == StringRef::npos || paren == 0 ||
          line.slice(paren + 1, open).getAsInteger(10, frame.line))
        continue;
      frame.file = line.take_front(paren).str();
    }
    if (frame.line == 0)
      continue;
    if (!first)
      first = frame;
    if (!isTorchInternal(frame.file)) {
      user = frame;
      break;
    }
  }
  return user ? user : first;
}

absl::StatusOr<OwningOpRef<ModuleOp>>
importOnnxModel(MLIRContext &context, absl::string_view bytes,
                const OnnxImportOptions &options) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return absl::InvalidArgumentError(absl::StrCat(
        options.modelPath,
        ": not a valid ONNX model (the file does not parse as an ONNX "
        "ModelProto; is it truncated or another format?)"));
  if (!model.has_graph())
    return absl::InvalidArgumentError(
        absl::StrCat(options.modelPath, ": the ONNX model has no graph"));
  context.loadDialect<cuvil::l1::CuvilDialect, func::FuncDialect>();
  StatusDiagnosticHandler diagnostics(&context);
  Importer importer(context, model, options);
  OwningOpRef<ModuleOp> module = importer.run();
  absl::Status status = diagnostics.consumeStatus();
  if (!module || !status.ok())
    return status.ok() ? absl::InternalError("ONNX import failed") : status;
  return module;
}

std::vector<std::string> getSupportedOnnxOps() {
  std::vector<std::string> ops;
  for (const auto &entry : Importer::getConverters())
    ops.push_back(entry.getKey().str());
  std::sort(ops.begin(), ops.end());
  return ops;
}

} // namespace cuvil
