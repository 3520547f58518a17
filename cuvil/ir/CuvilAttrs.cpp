//===- CuvilAttrs.cpp - level1 attributes ---------------------------------===//

#include "cuvil/ir/CuvilAttrs.h"
#include "cuvil/ir/CuvilDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include <cmath>
#include <cstdlib>

using namespace mlir;
using namespace cuvil::l1;

#define GET_ATTRDEF_CLASSES
#include "cuvil/ir/CuvilAttrs.cpp.inc"

void CuvilDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "cuvil/ir/CuvilAttrs.cpp.inc"
      >();
}

LogicalResult CuvilDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  // Other `cuvil.` attributes (names, batch bounds, plan results) are
  // checked by the passes that read them.
  if (attr.getName() != TargetAttr::kAttrName)
    return success();
  if (!isa<TargetAttr>(attr.getValue()))
    return op->emitError("'") << TargetAttr::kAttrName
                              << "' must be a #cuvil.target";
  if (!isa<ModuleOp>(op))
    return op->emitError("'")
           << TargetAttr::kAttrName << "' describes a module's target";
  return success();
}

std::string cuvil::l1::formatDouble(const APFloat &value) {
  // The fewest significant digits that read back as the same double.
  double d = value.convertToDouble();
  std::string text;
  for (int digits = 1; digits <= 17; ++digits) {
    text = llvm::formatv("{0}", llvm::format("%.*g", digits, d)).str();
    if (std::strtod(text.c_str(), nullptr) == d)
      break;
  }
  // A float literal to the parser even when it is integral.
  if (text.find_first_of(".eEn") == std::string::npos)
    text += ".0";
  return text;
}

LogicalResult
TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                   StringRef backend, StringRef triple, StringRef cpu,
                   ArrayAttr features, int64_t vectorBits, int64_t l1Bytes,
                   int64_t l2Bytes, int64_t l3Bytes, int64_t cores,
                   APFloat memoryBandwidth, APFloat l2Bandwidth,
                   APFloat kernelOverhead, APFloat threshold,
                   int64_t int8WeightMax, DictionaryAttr config) {
  double memoryBytesPerSecond = memoryBandwidth.convertToDouble();
  double l2BytesPerSecond = l2Bandwidth.convertToDouble();
  double kernelOverheadSeconds = kernelOverhead.convertToDouble();
  double batchingThreshold = threshold.convertToDouble();
  if (backend.empty())
    return emitError() << "#cuvil.target needs a backend name";
  if (features && !llvm::all_of(features, llvm::IsaPred<StringAttr>))
    return emitError() << "#cuvil.target features must be strings";
  if (vectorBits < 0 || vectorBits % 8 != 0)
    return emitError() << "#cuvil.target vector_bits must be a non-negative "
                          "multiple of 8, got "
                       << vectorBits;
  if (l1Bytes < 0 || l2Bytes < 0 || l3Bytes < 0)
    return emitError() << "#cuvil.target cache sizes must not be negative";
  if (cores < 1)
    return emitError() << "#cuvil.target needs at least one core, got "
                       << cores;
  if (!(memoryBytesPerSecond > 0) || !(l2BytesPerSecond > 0))
    return emitError() << "#cuvil.target bandwidths must be positive";
  if (!(kernelOverheadSeconds >= 0))
    return emitError() << "#cuvil.target kernel_overhead_seconds must not be "
                          "negative";
  if (!(batchingThreshold >= 1))
    return emitError() << "#cuvil.target batching_threshold is a speed-up, "
                          "at least 1, got "
                       << formatDouble(threshold);
  if (int8WeightMax < 1 || int8WeightMax > 127)
    return emitError() << "#cuvil.target int8_weight_max must be in [1, 127], "
                          "got "
                       << int8WeightMax;
  return success();
}

bool TargetAttr::hasFeature(StringRef feature) const {
  return llvm::is_contained(getFeatureNames(), feature);
}

SmallVector<StringRef> TargetAttr::getFeatureNames() const {
  SmallVector<StringRef> names;
  if (ArrayAttr features = getFeatures())
    for (Attribute f : features)
      names.push_back(cast<StringAttr>(f).getValue());
  return names;
}

TargetAttr TargetAttr::lookup(Operation *module) {
  return module ? module->getAttrOfType<TargetAttr>(kAttrName) : TargetAttr();
}

TargetAttr TargetAttr::lookupOrDefault(Operation *op) {
  Operation *module =
      isa<ModuleOp>(op) ? op : op->getParentOfType<ModuleOp>();
  if (TargetAttr target = lookup(module))
    return target;
  return getDefault(op->getContext(), "generic");
}

TargetAttr TargetAttr::getDefault(MLIRContext *context, StringRef backend) {
  // Parsed, so that the defaults are the parameters' own (CuvilAttrs.td).
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "#cuvil.target<backend = \"";
  llvm::printEscapedString(backend, os);
  os << "\">";
  return cast<TargetAttr>(parseAttribute(os.str(), context));
}

int FixedAttr::getFraction() const {
  int exponent = 0;
  std::frexp(getType().getScale(), &exponent);
  return 1 - exponent; // scale = 2^(exponent - 1)
}

LogicalResult FixedAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                quant::UniformQuantizedType type,
                                StringRef rounding, StringRef overflow) {
  static constexpr StringLiteral kRoundings[] = {
      "TRN",         "TRN_ZERO", "RND",     "RND_ZERO",
      "RND_MIN_INF", "RND_INF",  "RND_CONV"};
  static constexpr StringLiteral kOverflows[] = {"WRAP", "SAT", "SAT_ZERO",
                                                 "SAT_SYM"};
  int exponent = 0;
  double mantissa = std::frexp(type.getScale(), &exponent);
  if (mantissa != 0.5 || type.getZeroPoint() != 0)
    return emitError() << "#cuvil.fixed needs a power-of-two scale and zero "
                          "point 0, got "
                       << type;
  if (!llvm::is_contained(kRoundings, rounding))
    return emitError() << "#cuvil.fixed rounding '" << rounding
                       << "' is none of TRN, TRN_ZERO, RND, RND_ZERO, "
                          "RND_MIN_INF, RND_INF, RND_CONV";
  if (!llvm::is_contained(kOverflows, overflow))
    return emitError() << "#cuvil.fixed overflow '" << overflow
                       << "' is none of WRAP, SAT, SAT_ZERO, SAT_SYM";
  return success();
}
