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

#include "cuvil/importers/onnx/ImporterImpl.h"

#include "llvm/Support/Path.h"

namespace cuvil::onnx_import {

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

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
  if (failed(checkSupported()) || failed(importInitializers(model.graph())))
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
  functionBlock = entry;
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

LogicalResult Importer::importInitializers(const onnx::GraphProto &graph) {
  for (const onnx::TensorProto &tensor : graph.initializer()) {
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
      // A batch the model already names (dim_param) is that symbol, not a
      // second one: Reshape resolves [N, -1] only with one symbol.
      if (!ShapedType::isDynamic(shape[0]))
        dynamicSymbols.insert("batch (--max-batch)");
      shape[0] = ShapedType::kDynamic;
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
  Converter converter = lookupConverter(node);
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

FailureOr<Value> Importer::materialize(const std::string &name,
                                       ValueEntry &entry) {
  if (entry.value)
    return entry.value;
  if (entry.batchZeros)
    return emitError(entry.batchZeros->first) << entry.batchZeros->second;
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
    builder.setInsertionPointToStart(constantsBlock());
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
      attr = floatElements(type, host.floats);
    } else {
      unsigned width = host.elementType.getIntOrFloatBitWidth();
      SmallVector<APInt> elems;
      for (int64_t v : host.ints)
        elems.push_back(
            APInt(width, v, /*isSigned=*/true, /*implicitTrunc=*/true));
      attr = DenseElementsAttr::get(type, elems);
    }
    // In the function's block: a subgraph may use what its graph defined.
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(constantsBlock());
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
        value, std::nullopt, nullptr, cast<RankedTensorType>(value.getType()),
        std::nullopt};
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
static onnx::AttributeProto::AttributeType
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
static bool holdsValue(const onnx::AttributeProto &a,
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

static std::string attributeTypeName(onnx::AttributeProto::AttributeType type) {
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

} // namespace cuvil::onnx_import

namespace cuvil {

using namespace mlir;
using onnx_import::Importer;

/// True for a Python file the user did not write: inside the torch
/// package, or one of Cuvil's own modules (cuvil/_*.py, cuvil/nn.py, which
/// export and wrap the model). torchvision's model files are kept: they are
/// the model's source.
static bool isLibraryFrame(StringRef file) {
  if (file.contains("/torch/") || file.starts_with("torch/"))
    return true;
  StringRef name = llvm::sys::path::filename(file);
  StringRef dir = llvm::sys::path::filename(llvm::sys::path::parent_path(file));
  return dir == "cuvil" && name.ends_with(".py") &&
         (name.starts_with("_") || name == "nn.py");
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
    if (!isLibraryFrame(frame.file)) {
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
  for (const auto &entry : Importer::getMlConverters())
    ops.push_back(("ai.onnx.ml." + entry.getKey()).str());
  std::sort(ops.begin(), ops.end());
  return ops;
}

} // namespace cuvil
