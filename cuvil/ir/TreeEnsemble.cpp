//===- TreeEnsemble.cpp - cuvil.tree_ensemble inference and verifier ------===//
//
// Inference checks the tables' shapes and types; the verifier, when the
// tables are constants (as importers build them), checks what makes every
// walk safe and finite: features within the input's width, children after
// their parent and inside the table, leaf rows inside `leaves`, and each
// tree's targets inside the result.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/ir/Inference.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <cstring>

namespace cuvil::l1 {

using namespace mlir;
using namespace inference;

namespace {

constexpr int32_t kComparisonMask = 7;
constexpr int32_t kMissingGoesLeft = 8;
constexpr int32_t kZeroIsMissing = 16;
constexpr int32_t kWholeCategories = 32;
constexpr int32_t kMember = 7, kLastComparison = 7;

bool isF32OrF64(Type type) { return type.isF32() || type.isF64(); }

/// The bytes of `attr`, if it is a dense_resource constant whose
/// blob holds `elementBytes` per element.
std::optional<ArrayRef<char>> resourceBytes(Attribute attr,
                                            size_t elementBytes) {
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  AsmResourceBlob *blob =
      resource ? resource.getRawHandle().getBlob() : nullptr;
  if (!blob || blob->getData().size() !=
                   size_t(resource.getType().getNumElements()) * elementBytes)
    return std::nullopt;
  return blob->getData();
}

/// The i32 contents of a constant tensor (dense or dense_resource), if
/// `value` is one whose bytes are at hand.
std::optional<std::vector<int32_t>> readI32Constant(Value value) {
  Attribute attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  if (auto dense = dyn_cast<DenseIntElementsAttr>(attr)) {
    std::vector<int32_t> values;
    values.reserve(dense.getNumElements());
    for (const APInt &v : dense.getValues<APInt>())
      values.push_back(static_cast<int32_t>(v.getSExtValue()));
    return values;
  }
  std::optional<ArrayRef<char>> bytes = resourceBytes(attr, sizeof(int32_t));
  if (!bytes)
    return std::nullopt;
  std::vector<int32_t> values(bytes->size() / sizeof(int32_t));
  std::memcpy(values.data(), bytes->data(), bytes->size());
  return values;
}

/// The thresholds as doubles, if `value` is a constant whose bytes are at
/// hand.
std::optional<std::vector<double>> readFloatConstant(Value value) {
  Attribute attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  if (auto dense = dyn_cast<DenseFPElementsAttr>(attr)) {
    std::vector<double> values;
    for (const APFloat &v : dense.getValues<APFloat>())
      values.push_back(v.convertToDouble());
    return values;
  }
  bool f64 = cast<ShapedType>(value.getType()).getElementType().isF64();
  size_t size = f64 ? 8 : 4;
  std::optional<ArrayRef<char>> bytes = resourceBytes(attr, size);
  if (!bytes)
    return std::nullopt;
  std::vector<double> values(bytes->size() / size);
  for (size_t i = 0; i < values.size(); ++i) {
    if (f64) {
      std::memcpy(&values[i], bytes->data() + i * 8, 8);
    } else {
      float v;
      std::memcpy(&v, bytes->data() + i * 4, 4);
      values[i] = v;
    }
  }
  return values;
}

} // namespace

LogicalResult TreeEnsembleOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  auto input = getTensorType(adaptor.getInput(), loc, name, "input");
  auto nodes = getTensorType(adaptor.getNodes(), loc, name, "nodes");
  auto thresholds =
      getTensorType(adaptor.getThresholds(), loc, name, "thresholds");
  auto trees = getTensorType(adaptor.getTrees(), loc, name, "trees");
  auto leaves = getTensorType(adaptor.getLeaves(), loc, name, "leaves");
  if (failed(input) || failed(nodes) || failed(thresholds) || failed(trees) ||
      failed(leaves))
    return failure();
  if (input->getRank() != 2 || !isF32OrF64(input->getElementType()))
    return inferError(loc, name,
                      "expects input [batch, features] of f32 or f64, got ",
                      formatType(*input));
  if (nodes->getRank() != 2 || nodes->getDimSize(1) != 3 ||
      !nodes->getElementType().isSignlessInteger(32))
    return inferError(loc, name, "expects nodes of type tensor<Nx3xi32>, got ",
                      formatType(*nodes));
  if (thresholds->getRank() != 1 ||
      !isF32OrF64(thresholds->getElementType()) ||
      thresholds->getDimSize(0) != nodes->getDimSize(0))
    return inferError(loc, name,
                      "expects one f32 or f64 threshold per node, got ",
                      formatType(*thresholds), " for ", formatType(*nodes));
  if (thresholds->getElementType().isF32() && input->getElementType().isF64())
    return inferError(loc, name,
                      "compares f64 features with f32 thresholds; cast the "
                      "features to f32 or widen the thresholds to f64");
  if (trees->getRank() != 2 || trees->getDimSize(1) != 2 ||
      !trees->getElementType().isSignlessInteger(32))
    return inferError(loc, name, "expects trees of type tensor<Tx2xi32>, got ",
                      formatType(*trees));
  if (leaves->getRank() != 2 || !isF32OrF64(leaves->getElementType()))
    return inferError(loc, name,
                      "expects leaves [rows, values] of f32 or f64, got ",
                      formatType(*leaves));
  int64_t targets = adaptor.getBaseValues().size();
  if (targets == 0)
    return inferError(loc, name, "expects one base value per target, got none");
  if (!llvm::all_of(adaptor.getBaseValues(),
                    [](double v) { return std::isfinite(v); }))
    return inferError(loc, name, "expects finite base values");
  if (adaptor.getMissingValue() &&
      !std::isfinite(adaptor.getMissingValue()->convertToDouble()))
    return inferError(loc, name,
                      "expects a finite missing_value (NaN is always missing)");
  StringRef transform = adaptor.getPostTransform();
  if (!llvm::is_contained({"none", "logistic", "softmax", "exp"}, transform))
    return inferError(loc, name, "post_transform \"", transform,
                      "\" is not one of none, logistic, softmax, exp");
  StringRef aggregate = adaptor.getAggregate();
  if (aggregate != "sum" && aggregate != "average")
    return inferError(loc, name, "aggregate \"", aggregate,
                      "\" is not one of sum, average");
  types.push_back(RankedTensorType::get({input->getDimSize(0), targets},
                                        leaves->getElementType()));
  return success();
}

LogicalResult TreeEnsembleOp::verify() {
  std::optional<std::vector<int32_t>> nodes = readI32Constant(getNodes());
  std::optional<std::vector<int32_t>> trees = readI32Constant(getTrees());
  if (!nodes || !trees)
    return success();
  std::optional<std::vector<int32_t>> categories;
  std::optional<std::vector<double>> thresholds;
  if (getCategories())
    categories = readI32Constant(getCategories());
  auto leavesType = cast<RankedTensorType>(getLeaves().getType());
  int64_t features = getInput().getType().getDimSize(1);
  int64_t nodeCount = nodes->size() / 3;
  int64_t leafRows = leavesType.getDimSize(0);
  for (int64_t i = 0; i < nodeCount; ++i) {
    int32_t feature = (*nodes)[3 * i], left = (*nodes)[3 * i + 1],
            flags = (*nodes)[3 * i + 2];
    if (flags & ~(kComparisonMask | kMissingGoesLeft | kZeroIsMissing |
                  kWholeCategories) ||
        (flags & kComparisonMask) > kLastComparison)
      return emitOpError("node ") << i << " has unknown flags " << flags;
    if ((flags & kComparisonMask) == 0) {
      if (flags != 0)
        return emitOpError("leaf node ") << i << " has flags " << flags;
      if (feature < 0 || (!ShapedType::isDynamic(leafRows) &&
                          feature >= leafRows))
        return emitOpError("leaf node ")
               << i << " refers to leaf row " << feature << " of "
               << leafRows;
      continue;
    }
    if ((flags & kComparisonMask) == kMember) {
      if (!getCategories())
        return emitOpError("node ")
               << i << " is a categorical split, but the op has no categories";
      if (!thresholds)
        thresholds = readFloatConstant(getThresholds());
      if (categories && thresholds) {
        double offset = (*thresholds)[i];
        int64_t words = categories->size();
        if (!(offset >= 0 && offset < double(words) &&
              offset == std::floor(offset)) ||
            (*categories)[int64_t(offset)] < 0 ||
            int64_t(offset) + 1 + (*categories)[int64_t(offset)] > words)
          return emitOpError("node ")
                 << i << "'s category set at "
                 << (offset == std::floor(offset) && std::abs(offset) < 1e15
                         ? std::to_string(int64_t(offset))
                         : std::to_string(offset))
                 << " does not fit in the " << words << " category words";
      }
    }
    if (feature < 0 || (!ShapedType::isDynamic(features) &&
                        feature >= features))
      return emitOpError("node ") << i << " tests feature " << feature
                                  << ", outside the input's " << features
                                  << " features";
    if (left <= i || int64_t(left) + 1 >= nodeCount)
      return emitOpError("node ")
             << i << " has children " << left << " and " << int64_t(left) + 1
             << "; children must follow their parent inside the "
             << nodeCount << " nodes";
  }
  int64_t targets = getBaseValues().size();
  int64_t values = leavesType.getDimSize(1);
  for (size_t t = 0; t < trees->size() / 2; ++t) {
    int32_t root = (*trees)[2 * t], target = (*trees)[2 * t + 1];
    if (root < 0 || root >= nodeCount)
      return emitOpError("tree ") << t << " has root " << root << " outside "
                                  << nodeCount << " nodes";
    if (target < 0 || target + values > targets)
      return emitOpError("tree ")
             << t << " adds " << values << " values from target " << target
             << ", beyond the " << targets << " targets";
  }
  return success();
}

} // namespace cuvil::l1
