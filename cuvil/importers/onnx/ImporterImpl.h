//===- ImporterImpl.h - the ONNX importer's shared state -------*- C++ -*-===//
//
// Private to cuvil/importers/onnx: the Importer class and its value and
// host-tensor model, shared by the driver (OnnxImporter.cpp: graph walk,
// values, attributes) and the converters, one file per family
// (ConvertElementwise, ConvertQuantization, ConvertLinalg, ConvertShapes).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_IMPORTERS_ONNX_IMPORTERIMPL_H
#define CUVIL_IMPORTERS_ONNX_IMPORTERIMPL_H

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

namespace cuvil::onnx_import {

using namespace mlir;

struct WindowInputs; // ConvertLinalg.cpp

/// A dimension or shape entry whose value is only known at run time.
constexpr int64_t kUnknown = std::numeric_limits<int64_t>::min();
/// Tensors up to this many elements are decoded for import-time evaluation.
constexpr int64_t kMaxHostElements = 1 << 16;
/// Constants the importer computes itself (transform matrices, index
/// tables) have at most this many elements: a hostile model's sizes must
/// not make the compiler allocate without bound.
constexpr int64_t kMaxBuiltElements = int64_t(1) << 22;

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
  /// A tensor of `element` holding `values` (truncated for integers).
  static HostTensor of(Type element, SmallVector<int64_t> shape,
                       ArrayRef<double> values) {
    HostTensor host;
    host.elementType = element;
    host.shape = std::move(shape);
    for (double v : values) {
      if (host.isFloat())
        host.floats.push_back(v);
      else
        host.ints.push_back(static_cast<int64_t>(v));
    }
    return host;
  }
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
  /// Zeros whose shape depends on the dynamic batch (a ConstantOfShape, or
  /// a slice of one: PyTorch's default recurrent states): no value exists.
  /// A recurrent layer reads them as its absent (zero) initial state;
  /// anything else reports this error, at the node that made them.
  std::optional<std::pair<Location, std::string>> batchZeros;
};

/// Reads a little-endian T from unaligned bytes.
template <typename T> T readAs(const char *bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof(T));
  return value;
}

/// Byte size of one element of an ONNX data type (0 if unsupported).
inline int64_t onnxElementBytes(int32_t dtype) {
  switch (dtype) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32:
    return 4;
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64:
    return 8;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
    return 2;
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL:
    return 1;
  default:
    return 0;
  }
}

inline std::string onnxTypeName(int32_t dtype) {
  if (onnx::TensorProto::DataType_IsValid(dtype))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(dtype));
  return absl::StrCat("data type ", dtype);
}

inline Type toMlirType(MLIRContext *context, int32_t dtype) {
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
  case onnx::TensorProto::UINT16:
    return IntegerType::get(context, 16, IntegerType::Unsigned);
  case onnx::TensorProto::UINT32:
    return IntegerType::get(context, 32, IntegerType::Unsigned);
  case onnx::TensorProto::UINT64:
    return IntegerType::get(context, 64, IntegerType::Unsigned);
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  default:
    return {};
  }
}

/// `value` as an element of the float type `type`, rounded to nearest, ties
/// to even.
inline APFloat toFloatElement(Type type, double value) {
  APFloat f(value);
  bool lost;
  f.convert(cast<FloatType>(type).getFloatSemantics(),
            APFloat::rmNearestTiesToEven, &lost);
  return f;
}

/// `values` as the elements of the float tensor type `type`.
inline DenseElementsAttr floatElements(RankedTensorType type,
                                       ArrayRef<double> values) {
  SmallVector<APFloat> elems;
  for (double v : values)
    elems.push_back(toFloatElement(type.getElementType(), v));
  return DenseElementsAttr::get(type, elems);
}

inline std::string shapeString(ArrayRef<int64_t> shape) {
  std::vector<std::string> dims;
  for (int64_t d : shape)
    dims.push_back(
        d == kUnknown || ShapedType::isDynamic(d) ? "?" : std::to_string(d));
  return "[" + absl::StrJoin(dims, ", ") + "]";
}

/// Where a node keeps one operand's quantization: its scale's and zero
/// point's inputs, and the axis of a per-axis scale (nullopt: the node's
/// `axis` attribute, default 1).
struct QuantInputs {
  /// The integer ops (ConvInteger, MatMulInteger) have no scale: 1.0, one
  /// per zero point.
  static constexpr int kUnitScale = -1;
  int scale = 1, zero = 2;
  std::optional<int64_t> axis;
};

/// Calls `fn` on `graph` and on every subgraph its nodes hold (If's
/// branches, Loop's and Scan's bodies), outer graphs first
/// (ConvertControlFlow.cpp).
void forEachGraph(const onnx::GraphProto &graph,
                  llvm::function_ref<void(const onnx::GraphProto &)> fn);

class EinsumLowering;     // ConvertEinsum.cpp
class GridSampleLowering; // ConvertGridSample.cpp
class DetLowering;        // ConvertDet.cpp

/// 0, 1, ..., n - 1 as i64 along `axis` of a rank-`rank` shape of ones
/// (ConvertRearrange.cpp).
DenseElementsAttr iotaAlong(Builder &b, int64_t rank, int64_t axis, int64_t n);

/// ONNX auto_pad for one spatial dim: (begin, end) padding (ConvertLinalg.cpp).
std::pair<int64_t, int64_t> autoPad(StringRef mode, int64_t in, int64_t kernel,
                                    int64_t stride, int64_t dilation);

/// A 3-D window op's attributes (ConvertVolumetric.cpp).
struct Window3d {
  SmallVector<int64_t> kernel, strides, pads, dilations;
};

class Importer {
  friend class EinsumLowering;
  friend class GridSampleLowering;
  friend class DetLowering;

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
  /// The same for the ai.onnx.ml domain.
  static const llvm::StringMap<Converter> &getMlConverters();
  /// The same for Cuvil's own ai.cuvil domain.
  static const llvm::StringMap<Converter> &getCuvilConverters();
  /// The converter of `node` by its domain and type, or null.
  static Converter lookupConverter(const onnx::NodeProto &node);

private:
  LogicalResult checkSupported();
  LogicalResult importInitializers(const onnx::GraphProto &graph);
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

  /// Where materialized constants go: the function's block, which every
  /// subgraph's region sees (the current block before the function exists).
  Block *constantsBlock() {
    return functionBlock ? functionBlock : builder.getInsertionBlock();
  }
  /// Imports `graph` (a subgraph of If, Loop or Scan) into `block`, at its
  /// end, with `inputs` as the values of its graph inputs; it reads the
  /// values of the graphs around it. Gives its outputs in `outputs`; the
  /// names it defines are its own (restored afterwards).
  LogicalResult importSubgraph(const onnx::GraphProto &graph, Block &block,
                               ValueRange inputs, Location loc,
                               SmallVectorImpl<Value> &outputs);
  /// Input `input` of `node`, a tensor of one `element` (null if absent;
  /// an error saying it expects `what` otherwise).
  FailureOr<Value> oneElementInput(const onnx::NodeProto &node, int input,
                                   Type element, StringRef what, Location loc);
  /// A one-element `value` as rank 0 (a loop's condition).
  FailureOr<Value> asScalar(Location loc, Value value);
  /// A GRAPH attribute `name` of `node` (an error naming it if absent).
  const onnx::GraphProto *graphAttr(const onnx::NodeProto &node,
                                    StringRef name, Location loc);

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
  std::optional<std::vector<std::string>>
  attrStrings(const onnx::NodeProto &node, StringRef name);
  /// A FLOATS attribute or its `<name>_as_tensor` twin (ONNX-ML).
  struct Numbers {
    std::vector<double> values;
    bool present = false, isDouble = false;
  };
  FailureOr<Numbers> attrNumbers(const onnx::NodeProto &node, StringRef name,
                                 Location loc);
  /// Whether a node or the graph's outputs read the value `name`.
  bool isRead(const std::string &name) const;

  /// Creates a level1 op with `numResults` results typed by inference;
  /// fails (with the inference diagnostic at `loc`) instead of aborting.
  template <typename OpTy, typename... Args>
  FailureOr<Operation *> createTyped(Location loc, unsigned numResults,
                                     Args &&...args);
  /// createTyped for single-result ops.
  template <typename OpTy, typename... Args>
  FailureOr<Value> create(Location loc, Args &&...args);

  /// Conv and pooling over NCW inputs run as their 2-D forms over NC1W
  /// (ConvertLinalg.cpp).
  FailureOr<WindowInputs> windowInputs(const onnx::NodeProto &node,
                                              Location loc, Value x,
                                              SmallVector<int64_t> kernel);
  FailureOr<Value> windowResult(Location loc, const WindowInputs &in,
                                FailureOr<Value> result);

  // Converters (one per ONNX op family).
  LogicalResult convertIdentity(const onnx::NodeProto &, Location);
  /// Builds the level1 op of a one-input elementwise node from its input
  /// and attributes; getUnaryMakers (ConvertElementwise.cpp) holds one per
  /// ONNX op, and convertUnary converts every op it holds.
  using UnaryMaker = FailureOr<Value> (*)(Importer &, const onnx::NodeProto &,
                                          Location, Value);
  static const llvm::StringMap<UnaryMaker> &getUnaryMakers();
  template <typename OpTy>
  static FailureOr<Value> makeUnary(Importer &importer,
                                    const onnx::NodeProto &, Location loc,
                                    Value x) {
    return importer.create<OpTy>(loc, x);
  }
  /// A rank-0 cuvil.constant `value` of `element` (an int or float type).
  Value scalarConstant(Location loc, Type element, double value) {
    auto type = RankedTensorType::get({}, element);
    Attribute v =
        isa<FloatType>(element)
            ? Attribute(FloatAttr::get(element, value))
            : Attribute(IntegerAttr::get(element, static_cast<int64_t>(value)));
    return l1::ConstantOp::create(builder, loc,
                                  DenseElementsAttr::get(type, v));
  }
  /// The float attribute `name` of `node` (or `def`) as an f64 attribute.
  FloatAttr f64Attr(const onnx::NodeProto &node, StringRef name, double def) {
    return builder.getF64FloatAttr(attrFloat(node, name, def));
  }
  LogicalResult convertUnary(const onnx::NodeProto &, Location);
  LogicalResult convertBinary(const onnx::NodeProto &, Location);
  LogicalResult convertVariadic(const onnx::NodeProto &, Location);
  LogicalResult convertWhere(const onnx::NodeProto &, Location);
  LogicalResult convertClip(const onnx::NodeProto &, Location);
  LogicalResult convertMod(const onnx::NodeProto &, Location);
  LogicalResult convertBitShift(const onnx::NodeProto &, Location);
  LogicalResult convertPRelu(const onnx::NodeProto &, Location);
  LogicalResult convertCast(const onnx::NodeProto &, Location);
  LogicalResult convertMatMul(const onnx::NodeProto &, Location);
  LogicalResult convertGemm(const onnx::NodeProto &, Location);
  LogicalResult convertConv(const onnx::NodeProto &, Location);
  LogicalResult convertConvTranspose(const onnx::NodeProto &, Location);
  /// A conv2d of `x` and `w` with `node`'s window attributes (Conv and the
  /// quantized convolutions).
  FailureOr<Value> buildConv(const onnx::NodeProto &node, Location loc, Value x,
                             Value w, Value bias);
  LogicalResult convertBatchNorm(const onnx::NodeProto &, Location);
  LogicalResult convertBatchNormTraining(const onnx::NodeProto &, Location);
  LogicalResult convertPool(const onnx::NodeProto &, Location);
  FailureOr<Value> pool2d(const onnx::NodeProto &node, Location loc, Value x,
                          ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                          ArrayRef<int64_t> padding,
                          ArrayRef<int64_t> dilations);
  FailureOr<Value> pool3d(const onnx::NodeProto &node, Location loc, Value x,
                          ArrayRef<int64_t> kernel);
  /// A 1-D or 2-D pool; with `indices`, MaxPool's Indices output too.
  FailureOr<Value> poolUpTo2d(const onnx::NodeProto &node, Location loc,
                              Value x, ArrayRef<int64_t> kernel,
                              Value *indices = nullptr);
  FailureOr<Window3d> window3d(const onnx::NodeProto &node, Location loc,
                               RankedTensorType input,
                               ArrayRef<int64_t> kernel);
  FailureOr<Window3d> convWindow3d(const onnx::NodeProto &node, Location loc,
                                   RankedTensorType input, Value w);
  FailureOr<Value> conv3d(const onnx::NodeProto &node, Location loc, Value x,
                          Value w, Value bias);
  FailureOr<Value> convTranspose3d(const onnx::NodeProto &node, Location loc,
                                   Value x, Value w, Value bias);
  LogicalResult transposedPads(const onnx::NodeProto &node, Location loc,
                               ArrayRef<int64_t> sizes, ArrayRef<int64_t> kernel,
                               ArrayRef<int64_t> strides,
                               ArrayRef<int64_t> dilations,
                               std::optional<SmallVector<int64_t>> shape,
                               SmallVectorImpl<int64_t> &outPad,
                               SmallVectorImpl<int64_t> &pads);
  LogicalResult convertGlobalPool(const onnx::NodeProto &, Location);
  LogicalResult convertSoftmax(const onnx::NodeProto &, Location);
  LogicalResult convertReduce(const onnx::NodeProto &, Location);
  LogicalResult convertArgReduce(const onnx::NodeProto &, Location);
  // ConvertRearrange.cpp.
  LogicalResult convertTile(const onnx::NodeProto &, Location);
  LogicalResult convertDepthSpace(const onnx::NodeProto &, Location);
  LogicalResult convertTrilu(const onnx::NodeProto &, Location);
  LogicalResult convertSize(const onnx::NodeProto &, Location);
  LogicalResult convertRange(const onnx::NodeProto &, Location);
  LogicalResult convertEyeLike(const onnx::NodeProto &, Location);
  LogicalResult convertHardmax(const onnx::NodeProto &, Location);
  LogicalResult convertOneHot(const onnx::NodeProto &, Location);
  LogicalResult convertCumSum(const onnx::NodeProto &, Location);
  LogicalResult convertWindow(const onnx::NodeProto &, Location);
  /// InstanceNormalization, MeanVarianceNormalization (ConvertLinalg.cpp).
  LogicalResult convertStandardize(const onnx::NodeProto &, Location);
  /// Resize and Upsample (ConvertResize.cpp).
  LogicalResult convertResize(const onnx::NodeProto &, Location);
  /// GatherElements, ScatterElements, Scatter, GatherND, ScatterND, TopK,
  /// ReverseSequence and MaxUnpool (ConvertIndexing.cpp).
  LogicalResult convertGatherElements(const onnx::NodeProto &, Location);
  LogicalResult convertGatherND(const onnx::NodeProto &, Location);
  LogicalResult convertScatterND(const onnx::NodeProto &, Location);
  LogicalResult convertTopK(const onnx::NodeProto &, Location);
  LogicalResult convertReverseSequence(const onnx::NodeProto &, Location);
  /// DFT and STFT as products with cosine and sine matrices
  /// (ConvertSpectral.cpp); dftProduct transforms the last axis of re (and
  /// im, if not null), `rows` samples, into `columns` bins of a
  /// length-`length` DFT.
  LogicalResult convertDft(const onnx::NodeProto &, Location);
  LogicalResult convertStft(const onnx::NodeProto &, Location);
  FailureOr<std::pair<Value, Value>> dftProduct(Location loc, Value re,
                                                Value im, int64_t rows,
                                                int64_t columns, int64_t length,
                                                bool inverse);
  /// Part k (0: real, 1: imaginary) of ONNX's complex layout [..., 2], and
  /// the parts joined back into it.
  FailureOr<Value> complexPart(Location loc, Value x, int64_t k);
  FailureOr<Value> joinComplex(Location loc, Value re, Value im);
  /// GridSample as gathers of channel rows (ConvertGridSample.cpp).
  LogicalResult convertGridSample(const onnx::NodeProto &, Location);
  LogicalResult convertMaxUnpool(const onnx::NodeProto &, Location);
  LogicalResult convertDet(const onnx::NodeProto &, Location);
  LogicalResult convertRoiAlign(const onnx::NodeProto &, Location);
  LogicalResult convertMelWeightMatrix(const onnx::NodeProto &, Location);
  LogicalResult convertCompress(const onnx::NodeProto &, Location);
  /// Einsum as transposes, sums and batched matmuls (ConvertEinsum.cpp).
  LogicalResult convertEinsum(const onnx::NodeProto &, Location);
  /// LRN as a sum of shifted squares (ConvertLrn.cpp).
  LogicalResult convertLrn(const onnx::NodeProto &, Location);
  /// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (ConvertLoss.cpp):
  /// the loss of `logProb` at the targets (input `targetInput`), weighted
  /// by input `weightInput` if present, reduced as `reduction` says.
  LogicalResult convertNllLoss(const onnx::NodeProto &, Location);
  LogicalResult convertSoftmaxCrossEntropy(const onnx::NodeProto &, Location);
  FailureOr<Value> negativeLogLikelihood(const onnx::NodeProto &node,
                                         Location loc, Value logProb,
                                         int targetInput, int weightInput);
  LogicalResult convertScatterElements(const onnx::NodeProto &, Location);
  /// RNN, GRU and LSTM (ConvertRecurrent.cpp).
  LogicalResult convertRecurrent(const onnx::NodeProto &, Location);
  /// If, Loop and Scan as cuvil.if and cuvil.loop (ConvertControlFlow.cpp).
  LogicalResult convertIf(const onnx::NodeProto &, Location);
  LogicalResult convertLoop(const onnx::NodeProto &, Location);
  LogicalResult convertScan(const onnx::NodeProto &, Location);
  LogicalResult convertScan8(const onnx::NodeProto &node,
                             const onnx::GraphProto &body, Location loc);
  /// A Scan's scan axes and directions (0 forward, 1 reverse), one per
  /// scan input and output.
  struct ScanAxes {
    SmallVector<int64_t> inAxes, inDirs, outAxes, outDirs;
  };
  /// The cuvil.loop of a Scan over `scanned` from `states`: its final
  /// states, then its scan outputs stacked (and reversed and moved) as
  /// `axes` say.
  FailureOr<SmallVector<Value>> buildScan(const onnx::GraphProto &body,
                                          ArrayRef<Value> states,
                                          ArrayRef<Value> scanned,
                                          ScanAxes axes, Location loc);
  LogicalResult convertLayerNorm(const onnx::NodeProto &, Location);
  LogicalResult convertFlatten(const onnx::NodeProto &, Location);
  LogicalResult convertReshape(const onnx::NodeProto &, Location);
  LogicalResult convertTranspose(const onnx::NodeProto &, Location);
  LogicalResult convertConcat(const onnx::NodeProto &, Location);
  LogicalResult convertRuntimeSlice(const onnx::NodeProto &node, Location loc);
  FailureOr<Value> checkedWindowStart(Location loc, Value starts, int64_t dim,
                                      int64_t size);
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
  LogicalResult convertQLinearMatMul(const onnx::NodeProto &, Location);
  LogicalResult convertQLinearConv(const onnx::NodeProto &, Location);
  LogicalResult convertIntegerProduct(const onnx::NodeProto &, Location);
  LogicalResult convertDynamicQuantizeLinear(const onnx::NodeProto &, Location);
  /// clip(round(x / scale) + zeroPoint) cast to the integer type `storage`,
  /// all operands at run time (broadcast as numpy does).
  FailureOr<Value> saturatingQuantize(Location loc, Value x, Value scale,
                                      Value zeroPoint, Type storage);
  /// QuantizeLinear and DequantizeLinear of a scale or zero point the
  /// model computes; runTimeScaleAndZero reads both (inputs 1 and 2) as
  /// `element` values shaped to broadcast against `type`.
  FailureOr<Value> quantizeAtRunTime(const onnx::NodeProto &node, Location loc,
                                     Value x, Type storage);
  FailureOr<Value> dequantizeAtRunTime(const onnx::NodeProto &node,
                                       Location loc, Value x);
  FailureOr<std::pair<Value, Value>>
  runTimeScaleAndZero(const onnx::NodeProto &node, Location loc,
                      RankedTensorType type, Type element);
  /// ai.onnx.ml TreeEnsembleRegressor and TreeEnsembleClassifier.
  LogicalResult convertTreeEnsemble(const onnx::NodeProto &, Location);
  /// ai.cuvil XGBoostModel / LightGBMModel: a saved model carried whole
  /// (cuvil.nn.TreeEnsemble), built by its own importer.
  LogicalResult convertEmbeddedForest(const onnx::NodeProto &, Location);
  /// dequantize(storage_cast(x)), x quantized as `at` says.
  FailureOr<Value> dequantized(const onnx::NodeProto &node, Location loc,
                               Value x, Type expressed, QuantInputs at);
  /// storage_cast(quantize(y)) to `storage`, quantized as `at` says.
  FailureOr<Value> quantized(const onnx::NodeProto &node, Location loc, Value y,
                             Type storage, QuantInputs at);
  /// ConvInteger's and MatMulInteger's int32 sums are computed in float32:
  /// fails unless every partial sum is provably an exact float32 integer.
  LogicalResult checkExactSums(const onnx::NodeProto &node, Location loc,
                               quant::QuantizedType x, quant::QuantizedType w,
                               int64_t terms, bool conv);
  /// The largest sum of |w - zero point| over one output of ConvInteger or
  /// MatMulInteger, if its weights (input 1) are an initializer.
  std::optional<int64_t> largestWeightSum(const onnx::NodeProto &node,
                                          quant::QuantizedType w, bool conv);
  /// The `!quant.uniform` type of `tensor` (QuantizeLinear, DequantizeLinear
  /// and the integer ops): its scale, zero point (or 0 of `storage`), axis.
  FailureOr<quant::QuantizedType> quantizedType(const onnx::NodeProto &node,
                                                Location loc,
                                                RankedTensorType tensor,
                                                Type storage, Type expressed,
                                                QuantInputs inputs = QuantInputs());

  /// Computes elementwise integer arithmetic on host tensors (shape math).
  std::optional<HostTensor> foldBinary(StringRef op, const HostTensor &lhs,
                                       const HostTensor &rhs);

  MLIRContext &context;
  const onnx::ModelProto &model;
  const OnnxImportOptions &options;
  OpBuilder builder;
  /// The function's entry block, once it exists.
  Block *functionBlock = nullptr;
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

namespace l1 = cuvil::l1;

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

} // namespace cuvil::onnx_import

#endif // CUVIL_IMPORTERS_ONNX_IMPORTERIMPL_H
