//===- CuvilL2.cpp - level2 dialect, attributes, types and ops ------------===//

#include "cuvil/ir/CuvilL2Ops.h"

#include "cuvil/ir/CuvilDialect.h"

#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cctype>

using namespace mlir;
using namespace cuvil::l2;

#include "cuvil/ir/CuvilL2Dialect.cpp.inc"
#include "cuvil/ir/CuvilL2Enums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "cuvil/ir/CuvilL2Attrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "cuvil/ir/CuvilL2Types.cpp.inc"

void CuvilL2Dialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "cuvil/ir/CuvilL2Attrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "cuvil/ir/CuvilL2Types.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "cuvil/ir/CuvilL2Ops.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Dialect attribute verification
//===----------------------------------------------------------------------===//

LogicalResult CuvilL2Dialect::verifyOperationAttribute(Operation *op,
                                                       NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kTileAttrName) {
    if (!isa<TileAttr>(attr.getValue()))
      return op->emitError("'") << name << "' must be a #cuvil_l2.tile";
    return success();
  }
  if (name == kHintsAttrName) {
    if (!isa<LoopHintsAttr>(attr.getValue()))
      return op->emitError("'") << name << "' must be a #cuvil_l2.loop_hints";
    if (op->getNumRegions() == 0)
      return op->emitError("'") << name << "' annotates loops, but '"
                                << op->getName() << "' has no body";
    return success();
  }
  if (name == kArenaAttrName)
    return op->emitError("'")
           << name << "' marks a function argument, not an op";
  return op->emitError("unknown cuvil_l2 attribute '") << name << "'";
}

LogicalResult CuvilL2Dialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                       unsigned argIndex,
                                                       NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name != kArenaAttrName)
    return op->emitError("unknown cuvil_l2 argument attribute '")
           << name << "'";
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitError("'") << name << "' is a unit attribute";
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return op->emitError("'") << name << "' marks an argument of a function";
  auto type = dyn_cast<MemRefType>(func.getArgumentTypes()[argIndex]);
  if (!type || type.getRank() != 1 || !type.hasStaticShape() ||
      !type.getElementType().isInteger(8))
    return op->emitError("the arena (argument ")
           << argIndex << ") must be a static 1-D i8 memref, got "
           << func.getArgumentTypes()[argIndex];
  return success();
}

//===----------------------------------------------------------------------===//
// LayoutAttr
//===----------------------------------------------------------------------===//

namespace {

/// Parses "NCHW16c" into its tokens; fails with a message on bad syntax.
LogicalResult parsePhysical(StringRef logical, StringRef physical,
                            SmallVectorImpl<LayoutAttr::PhysicalDim> &dims,
                            std::string &error) {
  size_t pos = 0;
  while (pos < physical.size()) {
    int64_t block = 0;
    size_t start = pos;
    while (pos < physical.size() && std::isdigit(physical[pos]))
      ++pos;
    if (pos > start &&
        physical.substr(start, pos - start).getAsInteger(10, block)) {
      error = "block size too large";
      return failure();
    }
    if (pos == physical.size()) {
      error = "ends with a number";
      return failure();
    }
    char letter = physical[pos++];
    bool isBlock = std::islower(letter);
    if (!std::isalpha(letter)) {
      error = std::string("unexpected '") + letter + "'";
      return failure();
    }
    if (isBlock != (pos - 1 > start)) {
      error = isBlock ? std::string("inner block '") + letter +
                            "' needs a size, e.g. 16" + letter
                      : std::string("'") + letter +
                            "' is an outer dimension and takes no size";
      return failure();
    }
    if (isBlock && block < 2) {
      error = "block sizes must be at least 2";
      return failure();
    }
    size_t dim = logical.find(std::toupper(letter));
    if (dim == StringRef::npos) {
      error = std::string("'") + letter + "' is not a logical dimension";
      return failure();
    }
    dims.push_back({static_cast<unsigned>(dim), isBlock ? block : 0});
  }
  return success();
}

} // namespace

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef logical, StringRef physical) {
  if (logical.empty())
    return emitError() << "layout needs at least one logical dimension";
  for (auto [i, c] : llvm::enumerate(logical)) {
    if (!std::isupper(c))
      return emitError() << "logical dimensions are capital letters, got '"
                         << logical << "'";
    if (logical.find(c, i + 1) != StringRef::npos)
      return emitError() << "logical dimension '" << c << "' is repeated";
  }
  SmallVector<PhysicalDim> dims;
  std::string error;
  if (failed(parsePhysical(logical, physical, dims, error)))
    return emitError() << "bad physical layout '" << physical << "': " << error;
  SmallVector<int> outer(logical.size(), 0), blocks(logical.size(), 0);
  for (const PhysicalDim &d : dims)
    ++(d.block ? blocks : outer)[d.dim];
  for (auto [i, c] : llvm::enumerate(logical)) {
    if (outer[i] != 1)
      return emitError() << "physical layout '" << physical << "' must name '"
                         << c << "' exactly once in capitals";
    if (blocks[i] > 1)
      return emitError() << "physical layout '" << physical << "' blocks '" << c
                         << "' more than once";
  }
  return success();
}

SmallVector<LayoutAttr::PhysicalDim> LayoutAttr::getPhysicalDims() const {
  SmallVector<PhysicalDim> dims;
  std::string error;
  (void)parsePhysical(getLogical(), getPhysical(), dims, error);
  return dims;
}

int64_t LayoutAttr::getBlockSize(unsigned dim) const {
  for (const PhysicalDim &d : getPhysicalDims())
    if (d.dim == dim && d.block)
      return d.block;
  return 1;
}

bool LayoutAttr::isPlain() const { return getLogical() == getPhysical(); }

SmallVector<int64_t>
LayoutAttr::getPhysicalShape(ArrayRef<int64_t> logicalShape) const {
  SmallVector<int64_t> shape;
  for (const PhysicalDim &d : getPhysicalDims()) {
    int64_t size = logicalShape[d.dim];
    if (d.block) {
      shape.push_back(d.block);
    } else if (ShapedType::isDynamic(size)) {
      shape.push_back(ShapedType::kDynamic);
    } else {
      int64_t block = getBlockSize(d.dim);
      shape.push_back((size + block - 1) / block);
    }
  }
  return shape;
}

AffineMap LayoutAttr::getAffineMap() const {
  MLIRContext *context = getContext();
  unsigned rank = getLogical().size();
  SmallVector<AffineExpr> results;
  for (const PhysicalDim &d : getPhysicalDims()) {
    AffineExpr index = getAffineDimExpr(d.dim, context);
    int64_t block = getBlockSize(d.dim);
    if (d.block)
      results.push_back(index % block);
    else if (block > 1)
      results.push_back(index.floorDiv(block));
    else
      results.push_back(index);
  }
  return AffineMap::get(rank, 0, results, context);
}

LogicalResult
LayoutAttr::verifyLayout(ArrayRef<int64_t> shape,
                         function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != getLogical().size())
    return emitError() << "layout " << getLogical() << " -> " << getPhysical()
                       << " expects rank " << getLogical().size()
                       << ", got rank " << shape.size();
  return success();
}

//===----------------------------------------------------------------------===//
// Scheduling attributes
//===----------------------------------------------------------------------===//

LogicalResult TileAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> sizes, int64_t vectorWidth) {
  if (sizes.empty())
    return emitError() << "tile needs one size per loop";
  for (int64_t size : sizes)
    if (size < 0)
      return emitError() << "tile sizes must be >= 0 (0: not tiled), got "
                         << size;
  if (vectorWidth < 0 || (vectorWidth & (vectorWidth - 1)) != 0)
    return emitError() << "vector_width must be 0 or a power of two, got "
                       << vectorWidth;
  if (vectorWidth && sizes.back() && sizes.back() % vectorWidth != 0)
    return emitError() << "the innermost tile (" << sizes.back()
                       << ") must be a multiple of vector_width ("
                       << vectorWidth << ")";
  return success();
}

LogicalResult
LoopHintsAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      int64_t pipelineII, int64_t unroll, bool) {
  if (pipelineII < 0)
    return emitError() << "pipeline_ii must be >= 0 (0: not pipelined), got "
                       << pipelineII;
  if (unroll < 0)
    return emitError() << "unroll must be >= 0 (0: target decides), got "
                       << unroll;
  return success();
}

LogicalResult
TaskSplitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      int64_t axis, int64_t parts) {
  if (axis < 0)
    return emitError() << "task_split axis must be >= 0, got " << axis;
  if (parts < 1)
    return emitError() << "task_split parts must be >= 1, got " << parts;
  return success();
}

//===----------------------------------------------------------------------===//
// FixedPointType
//===----------------------------------------------------------------------===//

LogicalResult
FixedPointType::verify(function_ref<InFlightDiagnostic()> emitError,
                       unsigned width, unsigned fractionBits, bool) {
  if (width < 2 || width > 64)
    return emitError() << "fixed-point width must be in [2, 64], got " << width;
  if (fractionBits > width)
    return emitError() << "fixed-point fraction bits (" << fractionBits
                       << ") exceed the width (" << width << ")";
  return success();
}

Type FixedPointType::parse(AsmParser &parser) {
  unsigned width = 0, fractionBits = 0;
  bool isSigned = true;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseInteger(width) || parser.parseComma() ||
      parser.parseInteger(fractionBits))
    return {};
  if (succeeded(parser.parseOptionalComma())) {
    if (parser.parseKeyword("unsigned"))
      return {};
    isSigned = false;
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); }, parser.getContext(),
                    width, fractionBits, isSigned);
}

void FixedPointType::print(AsmPrinter &printer) const {
  printer << '<' << getWidth() << ", " << getFractionBits();
  if (!getIsSigned())
    printer << ", unsigned";
  printer << '>';
}

unsigned FixedPointType::getStorageBits() const {
  return std::max<unsigned>(8, llvm::PowerOf2Ceil(getWidth()));
}

//===----------------------------------------------------------------------===//
// Buffer sizes
//===----------------------------------------------------------------------===//

FailureOr<int64_t>
cuvil::l2::getBufferBytes(MemRefType type, ArrayRef<int64_t> bounds,
                          function_ref<InFlightDiagnostic()> emitError) {
  Type element = type.getElementType();
  int64_t bits = 0;
  if (auto fixed = dyn_cast<FixedPointType>(element))
    bits = fixed.getStorageBits();
  else if (auto quantized = dyn_cast<quant::QuantizedType>(element))
    bits = llvm::PowerOf2Ceil(
        std::max<unsigned>(8, quantized.getStorageTypeIntegralWidth()));
  else if (element.isIntOrFloat())
    bits = llvm::PowerOf2Ceil(
        std::max<unsigned>(8, element.getIntOrFloatBitWidth()));
  if (bits == 0) {
    emitError() << "element type " << element << " has no storage size";
    return failure();
  }
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t &dim : shape) {
    if (!ShapedType::isDynamic(dim))
      continue;
    if (bounds.empty()) {
      emitError() << "dynamic dimension of " << type << " has no bound";
      return failure();
    }
    dim = bounds.front();
    bounds = bounds.drop_front();
  }
  if (auto layout = dyn_cast<LayoutAttr>(type.getLayout()))
    shape = layout.getPhysicalShape(shape);
  else if (!type.getLayout().isIdentity()) {
    emitError() << "cannot size " << type
                << ": only identity and #cuvil_l2.layout layouts are planned";
    return failure();
  }
  int64_t bytes = bits / 8;
  for (int64_t dim : shape) {
    if (dim != 0 && bytes > std::numeric_limits<int64_t>::max() / dim) {
      emitError() << "size of " << type << " overflows 64 bits";
      return failure();
    }
    bytes *= dim;
  }
  return bytes;
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

LogicalResult ViewOp::verify() {
  auto arenaType = cast<MemRefType>(getArena().getType());
  auto resultType = cast<MemRefType>(getResult().getType());
  if (!arenaType.hasStaticShape())
    return emitOpError("expects a statically sized arena, got ") << arenaType;
  if (!arenaType.getLayout().isIdentity())
    return emitOpError("expects an arena with the identity layout");
  if (arenaType.getMemorySpace() != resultType.getMemorySpace())
    return emitOpError("cannot change the memory space (arena in ")
           << arenaType.getMemorySpace() << ", view in "
           << resultType.getMemorySpace() << "); use cuvil_l2.copy";
  int64_t offset = getOffset();
  if (offset < 0 || offset % kAlignment != 0)
    return emitOpError("offset ")
           << offset << " must be a non-negative multiple of " << kAlignment;
  size_t numDynamic = resultType.getNumDynamicDims();
  ArrayRef<int64_t> bounds;
  if (auto boundsAttr = getBoundsAttr())
    bounds = boundsAttr.asArrayRef();
  if (getSizes().size() != numDynamic || bounds.size() != numDynamic)
    return emitOpError("expects one size and one bound per dynamic dimension (")
           << numDynamic << "), got " << getSizes().size() << " sizes and "
           << bounds.size() << " bounds";
  for (int64_t bound : bounds)
    if (bound < 1)
      return emitOpError("bounds must be >= 1, got ") << bound;
  FailureOr<int64_t> bytes =
      getBufferBytes(resultType, bounds, [&] { return emitOpError(); });
  if (failed(bytes))
    return failure();
  int64_t arenaBytes = arenaType.getNumElements();
  if (*bytes > arenaBytes - offset)
    return emitOpError("needs bytes [") << offset << ", " << offset + *bytes
                                        << ") but the arena has " << arenaBytes;
  return success();
}

/// Logical shapes and element types must agree for a copy.
LogicalResult CopyOp::verify() {
  auto source = cast<MemRefType>(getSource().getType());
  auto target = cast<MemRefType>(getTarget().getType());
  if (source.getElementType() != target.getElementType())
    return emitOpError("copies between element types ")
           << source.getElementType() << " and " << target.getElementType()
           << "; convert elements in a kernel";
  if (source.getRank() != target.getRank() ||
      failed(verifyCompatibleShape(source.getShape(), target.getShape())))
    return emitOpError("expects the same logical shape, got ")
           << source << " and " << target;
  return success();
}

bool CopyOp::isReorder() {
  return cast<MemRefType>(getSource().getType()).getLayout() !=
         cast<MemRefType>(getTarget().getType()).getLayout();
}

bool CopyOp::isTransfer() {
  return cast<MemRefType>(getSource().getType()).getMemorySpace() !=
         cast<MemRefType>(getTarget().getType()).getMemorySpace();
}

void CopyOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &getSourceMutable());
  effects.emplace_back(MemoryEffects::Write::get(), &getTargetMutable());
}

/// Whether `value` is a buffer of one element (rank 0 or [1]).
static bool isOneElementBuffer(Value value) {
  auto type = cast<MemRefType>(value.getType());
  return type.hasStaticShape() && type.getNumElements() == 1 &&
         type.getRank() <= 1 && type.getLayout().isIdentity();
}

LogicalResult IfOp::verify() {
  if (!isOneElementBuffer(getCondition()))
    return emitOpError("expects a condition buffer of one i1, got ")
           << getCondition().getType();
  return success();
}

LogicalResult LoopOp::verify() {
  for (Value v : {getMaxTripCount(), getCondition(), getIteration()})
    if (v && !isOneElementBuffer(v))
      return emitOpError("expects one-element buffers for its trip count, "
                         "condition and iteration, got ")
             << v.getType();
  return success();
}

LogicalResult InsertRowOp::verify() {
  auto source = cast<MemRefType>(getSource().getType());
  auto target = cast<MemRefType>(getTarget().getType());
  if (!isOneElementBuffer(getIndex()))
    return emitOpError("expects an index buffer of one i64, got ")
           << getIndex().getType();
  if (source.getElementType() != target.getElementType() ||
      target.getRank() != source.getRank() + 1 ||
      failed(verifyCompatibleShape(source.getShape(),
                                   target.getShape().drop_front())) ||
      !source.getLayout().isIdentity() || !target.getLayout().isIdentity())
    return emitOpError("expects a row-major target of one more (leading) "
                       "dimension than its source, got ")
           << source << " and " << target;
  return success();
}

void InsertRowOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &getSourceMutable());
  effects.emplace_back(MemoryEffects::Read::get(), &getIndexMutable());
  effects.emplace_back(MemoryEffects::Write::get(), &getTargetMutable());
}

/// Micro-kernel names are C identifiers: they become symbols in the artifact.
static bool isKernelName(StringRef name) {
  return !name.empty() && !std::isdigit(name.front()) &&
         llvm::all_of(name, [](char c) { return std::isalnum(c) || c == '_'; });
}

LogicalResult EpilogueAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   ArrayRef<EpilogueStep> steps,
                                   FloatAttr clipMin, FloatAttr clipMax,
                                   FloatAttr alpha, FloatAttr beta) {
  // col_bias, then add, then at most one activation, then quantize: the
  // order a kernel applies them in.
  int last = -1;
  bool activation = false;
  for (EpilogueStep step : steps) {
    int rank = step == EpilogueStep::col_bias   ? 0
               : step == EpilogueStep::add      ? 1
               : step == EpilogueStep::quantize ? 3
                                                : 2;
    if (rank < last || (rank == 2 && activation) ||
        (rank != 2 && rank == last))
      return emitError() << "epilogue steps must be an optional col_bias, an "
                            "optional add, at most one activation, then an "
                            "optional quantize";
    activation |= rank == 2;
    last = rank;
  }
  bool clip = llvm::is_contained(steps, EpilogueStep::clip);
  if (!clip && (clipMin || clipMax))
    return emitError() << "epilogue clip bounds without a clip step";
  bool simple = llvm::none_of(
      steps, [](EpilogueStep step) { return step >= EpilogueStep::hardswish; });
  if (!simple && llvm::is_contained(steps, EpilogueStep::quantize))
    return emitError() << "a quantize epilogue follows relu or clip only (the "
                          "int8 kernels apply no other activation)";
  if (!llvm::is_contained(steps, EpilogueStep::hardsigmoid) && (alpha || beta))
    return emitError() << "epilogue alpha and beta without a hardsigmoid step";
  if (clipMin && clipMax &&
      clipMin.getValueAsDouble() > clipMax.getValueAsDouble())
    return emitError() << "epilogue clips to an empty range (clip_min above "
                          "clip_max)";
  return success();
}

int64_t UKernelCallOp::getIntParam(StringRef name, int64_t fallback) {
  auto value = dyn_cast_or_null<IntegerAttr>(getParam(name));
  return value ? value.getInt() : fallback;
}

SmallVector<int64_t> UKernelCallOp::getIntsParam(StringRef name,
                                                 ArrayRef<int64_t> fallback) {
  auto value = dyn_cast_or_null<DenseI64ArrayAttr>(getParam(name));
  if (!value || value.empty())
    return SmallVector<int64_t>(fallback);
  return SmallVector<int64_t>(value.asArrayRef());
}

double UKernelCallOp::getFloatParam(StringRef name, double fallback) {
  auto value = dyn_cast_or_null<FloatAttr>(getParam(name));
  return value ? value.getValueAsDouble() : fallback;
}

UKernelCallOp UKernelCallOp::cloneWith(OpBuilder &builder, ValueRange inputs,
                                       ValueRange outputs) {
  auto copy = UKernelCallOp::create(
      builder, getLoc(), getKernelAttr(), inputs, outputs,
      getParamsAttr(), getAlgorithmAttr(), getEpilogueAttr(),
      getPackedBAttr());
  copy->setDiscardableAttrs((*this)->getDiscardableAttrDictionary());
  return copy;
}

OperandRange UKernelCallOp::getKernelInputs() {
  EpilogueAttr epilogue = getEpilogueAttr();
  unsigned extra = epilogue ? epilogue.getNumExtraInputs() : 0;
  return getInputs().drop_back(std::min<size_t>(extra, getInputs().size()));
}

/// A call the neutral lowering made carries its level1 op's attributes as
/// params: they must be what that op takes.
static LogicalResult verifyLevel1Params(UKernelCallOp call) {
  OperationName level1(("cuvil." + call.getKernel()).str(), call.getContext());
  DictionaryAttr given = call.getParamsAttr();
  if (!level1.isRegistered() || !given)
    return success();
  for (NamedAttribute param : given)
    if (param.getName() != "operandSegmentSizes" &&
        !llvm::is_contained(level1.getAttributeNames(), param.getName()))
      return call.emitOpError("param '")
             << param.getName().getValue() << "' is not an attribute of '"
             << level1 << "'";
  NamedAttrList params(given);
  return level1.verifyInherentAttrs(params, [&] {
    return call.emitOpError("params are not those of '") << level1 << "': ";
  });
}

LogicalResult UKernelCallOp::verify() {
  if (!isKernelName(getKernel()))
    return emitOpError("kernel name '")
           << getKernel() << "' must be a C identifier";
  if (getOutputs().empty())
    return emitOpError("expects at least one output buffer");
  if (failed(verifyLevel1Params(*this)))
    return failure();
  StringRef kernel = getKernel();
  bool product = kernel == "matmul" || kernel == "gemm" ||
                 kernel == "quantized_matmul" ||
                 kernel == "fixed_matmul"; // an MLU's (LowerFixedPoint)
  if (EpilogueAttr epilogue = getEpilogueAttr()) {
    if (epilogue.has(EpilogueStep::col_bias) && !product)
      return emitOpError("a col_bias epilogue needs a matrix product, not '")
             << kernel << "'";
    if (getInputs().size() < epilogue.getNumExtraInputs() + 1)
      return emitOpError("has ")
             << getInputs().size() << " inputs, but its epilogue reads "
             << epilogue.getNumExtraInputs() << " after the kernel's own";
    auto out = dyn_cast<MemRefType>(getOutputs()[0].getType());
    auto quantized =
        out ? dyn_cast<quant::UniformQuantizedType>(out.getElementType())
            : quant::UniformQuantizedType();
    bool requantizes = epilogue.has(EpilogueStep::quantize);
    if (requantizes && (!quantized || quantized.getStorageTypeIntegralWidth() != 8))
      return emitOpError("a quantize epilogue writes 8 bits per tensor, but "
                         "the output is ")
             << getOutputs()[0].getType();
  }
  if (std::optional<Algorithm> algorithm = getAlgorithm()) {
    if (kernel != "conv2d" && kernel != "quantized_conv2d")
      return emitOpError("algorithm '")
             << stringifyAlgorithm(*algorithm)
             << "' is for convolutions, not '" << kernel << "'";
    size_t outputs = getOutputs().size();
    if (*algorithm != Algorithm::direct_blocked && outputs != 2)
      return emitOpError("algorithm '")
             << stringifyAlgorithm(*algorithm)
             << "' needs its scratch as the second of two outputs, got "
             << outputs << " outputs";
    if (*algorithm == Algorithm::direct_blocked && outputs > 2)
      return emitOpError("algorithm 'direct_blocked' takes at most a scratch "
                         "output besides its result, got ")
             << outputs << " outputs";
  }
  if (getPackedB()) {
    // An integer or bfloat16 product or convolution keeps the scratch its
    // A panels (and unfolded image) are packed in.
    bool quantized = kernel == "quantized_matmul" ||
                     kernel == "quantized_conv2d" || getParam("acc_type");
    if (!product && !quantized)
      return emitOpError("packed_b is for matrix products, not '")
             << kernel << "'";
    // A direct or depthwise int8 convolution may need none.
    bool optionalScratch = kernel == "quantized_conv2d";
    size_t outputs = getOutputs().size();
    if (optionalScratch ? outputs > 2 : outputs != (quantized ? 2u : 1u))
      return emitOpError("with packed_b needs ")
             << (quantized ? "its A-panel scratch" : "no packing scratch")
             << ", got " << outputs << " outputs";
  }
  return success();
}

void UKernelCallOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  for (OpOperand &input : getInputsMutable())
    if (isa<MemRefType>(input.get().getType()))
      effects.emplace_back(MemoryEffects::Read::get(), &input);
  for (OpOperand &output : getOutputsMutable()) {
    // Outputs may also be read (accumulating kernels).
    effects.emplace_back(MemoryEffects::Read::get(), &output);
    effects.emplace_back(MemoryEffects::Write::get(), &output);
  }
}

LogicalResult KernelOp::verifyRegions() {
  if (!isKernelName(getName()))
    return emitOpError("kernel name '")
           << getName() << "' must be a C identifier";
  if (getOutputs().empty())
    return emitOpError("expects at least one output buffer");
  Block &body = getBody().front();
  SmallVector<Type> expected(getInputs().getTypes());
  llvm::append_range(expected, getOutputs().getTypes());
  if (body.getArgumentTypes() != TypeRange(expected)) {
    auto format = [](TypeRange types) {
      std::string text;
      llvm::raw_string_ostream os(text);
      llvm::interleaveComma(types, os, [&](Type type) { type.print(os); });
      return text;
    };
    return emitOpError("expects the body to take the ins then the outs (")
           << format(expected) << "), got (" << format(body.getArgumentTypes())
           << ")";
  }
  if (TaskSplitAttr split = getSplitAttr()) {
    if (TileAttr tile = getTileAttr())
      if (split.getAxis() >= static_cast<int64_t>(tile.getSizes().size()))
        return emitOpError("splits loop ")
               << split.getAxis() << " but the tile has only "
               << tile.getSizes().size() << " loops";
  }
  return success();
}

#define GET_OP_CLASSES
#include "cuvil/ir/CuvilL2Ops.cpp.inc"
