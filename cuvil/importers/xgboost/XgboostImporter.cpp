//===- XgboostImporter.cpp - XGBoost JSON models to level1 ----------------===//
//
// The JSON schema is XGBoost's doc/model.schema (1.x): learner ->
// learner_model_param (strings), objective, gradient_booster (gbtree) ->
// model -> trees (arrays per node) and tree_info (each tree's class). A
// leaf is a node whose left child is -1; its value is its split_condition.
// Trees are renumbered breadth first into the op's table, so children are
// adjacent and come after their parent.
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/xgboost/XgboostImporter.h"

#include "cuvil/ir/CuvilOps.h"
#include "cuvil/passes/ConstantUtil.h"
#include "cuvil/support/SourceEscape.h"

#include "absl/strings/str_cat.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <vector>

namespace cuvil {

using namespace mlir;

namespace {

// cuvil.tree_ensemble's node flags (CuvilOps.td).
constexpr int32_t kLessThan = 1;
constexpr int32_t kMissingGoesLeft = 8;

/// How an objective maps base_score to a margin and margins to predictions
/// (XGBoost's ProbToMargin and PredTransform, in float32; binary:logitraw
/// keeps base_score as its margin, as XGBoost 1.7 predicts).
struct Objective {
  enum Margin { Identity, Logit, Log } margin = Identity;
  std::string transform = "none";
};

absl::StatusOr<Objective> lookupObjective(const std::string &name) {
  Objective o;
  if (name == "binary:logistic" || name == "reg:logistic") {
    o.margin = Objective::Logit;
    o.transform = "logistic";
  } else if (name == "multi:softprob") {
    o.transform = "softmax";
  } else if (name == "count:poisson" || name == "reg:gamma" ||
             name == "reg:tweedie") {
    o.margin = Objective::Log;
    o.transform = "exp";
  } else if (name == "multi:softmax") {
    return absl::InvalidArgumentError(
        "objective 'multi:softmax' predicts a class index, which Cuvil does "
        "not compile; set the objective to 'multi:softprob' (the same "
        "trees) and take the arg max of the probabilities");
  } else if (name != "binary:logitraw" && name != "reg:squarederror" &&
             name != "reg:linear" &&
             name != "reg:squaredlogerror" && name != "reg:pseudohubererror" &&
             name != "reg:absoluteerror" && name != "rank:pairwise" &&
             name != "rank:ndcg" && name != "rank:map") {
    return absl::InvalidArgumentError(absl::StrCat(
        "objective '", printableText(name),
        "' is not supported (Cuvil compiles reg:squarederror, reg:linear, "
        "reg:squaredlogerror, reg:pseudohubererror, reg:absoluteerror, "
        "reg:logistic, binary:logistic, binary:logitraw, multi:softprob, "
        "count:poisson, reg:gamma, reg:tweedie and rank:*)"));
  }
  return o;
}

/// The tables of cuvil.tree_ensemble, built tree by tree.
struct Forest {
  std::vector<int32_t> nodes, trees;
  std::vector<float> thresholds, leaves;
};

class Importer {
public:
  Importer(const XgboostImportOptions &options) : options(options) {}

  absl::StatusOr<OwningOpRef<ModuleOp>> run(MLIRContext &context,
                                            absl::string_view text);

private:
  absl::Status error(const std::string &message) const {
    return absl::InvalidArgumentError(
        absl::StrCat(printableText(options.modelPath), ": ", message));
  }
  /// learner_model_param's values are decimal strings.
  absl::StatusOr<std::string> param(const llvm::json::Object &params,
                                    llvm::StringRef key, bool required) const;
  absl::StatusOr<int64_t> intParam(const llvm::json::Object &params,
                                   llvm::StringRef key) const;
  absl::Status addTree(const llvm::json::Object &tree, size_t index,
                       int32_t target);

  const XgboostImportOptions &options;
  int64_t features = 0, targets = 1;
  Forest forest;
};

absl::StatusOr<std::string> Importer::param(const llvm::json::Object &params,
                                            llvm::StringRef key,
                                            bool required) const {
  std::optional<llvm::StringRef> value = params.getString(key);
  if (!value) {
    if (!required && !params.get(key))
      return std::string();
    return error(absl::StrCat("learner_model_param.", key.str(),
                              " must be a string"));
  }
  return value->str();
}

absl::StatusOr<int64_t> Importer::intParam(const llvm::json::Object &params,
                                           llvm::StringRef key) const {
  absl::StatusOr<std::string> text = param(params, key, false);
  if (!text.ok())
    return text.status();
  if (text->empty())
    return 0;
  char *end = nullptr;
  long long value = std::strtoll(text->c_str(), &end, 10);
  if (*end || value < 0 || value > (1 << 30))
    return error(absl::StrCat("learner_model_param.", key.str(), " is '",
                              printableText(*text),
                              "', not a count Cuvil compiles"));
  return value;
}

/// Reads a JSON array of numbers; false if it is missing (and required) or
/// holds anything else.
bool readNumbers(const llvm::json::Object &tree, llvm::StringRef key,
                 std::vector<double> &out, bool required = true) {
  const llvm::json::Array *array = tree.getArray(key);
  if (!array)
    return !required;
  out.reserve(array->size());
  for (const llvm::json::Value &v : *array) {
    std::optional<double> number = v.getAsNumber();
    if (!number)
      return false;
    out.push_back(*number);
  }
  return true;
}

absl::Status Importer::addTree(const llvm::json::Object &tree, size_t index,
                               int32_t target) {
  std::vector<double> left, right, feature, condition, defaultLeft, splitType;
  auto where = [&](int64_t node) {
    return absl::StrCat("tree ", index, node >= 0 ? absl::StrCat(" node ", node)
                                                  : std::string());
  };
  if (!readNumbers(tree, "left_children", left) ||
      !readNumbers(tree, "right_children", right) ||
      !readNumbers(tree, "split_indices", feature) ||
      !readNumbers(tree, "split_conditions", condition) ||
      !readNumbers(tree, "default_left", defaultLeft) ||
      !readNumbers(tree, "split_type", splitType, /*required=*/false))
    return error(where(-1) + ": a node array is missing or not numbers");
  size_t n = left.size();
  if (n == 0 || right.size() != n || feature.size() != n ||
      condition.size() != n || defaultLeft.size() != n ||
      (!splitType.empty() && splitType.size() != n))
    return error(where(-1) + ": node arrays of different lengths");
  if (const llvm::json::Object *param = tree.getObject("tree_param"))
    if (std::optional<llvm::StringRef> size = param->getString("size_leaf_vector"))
      if (*size != "0")
        return error(where(-1) + ": vector leaves (multi-target trees) are "
                                 "not supported");
  // Breadth first from node 0; each node must be reached exactly once.
  std::vector<bool> seen(n, false);
  std::deque<int64_t> queue{0};
  seen[0] = true;
  int32_t root = static_cast<int32_t>(forest.thresholds.size());
  int32_t next = root + 1;
  forest.trees.insert(forest.trees.end(), {root, target});
  while (!queue.empty()) {
    int64_t i = queue.front();
    queue.pop_front();
    if (left[i] == -1) {
      if (right[i] != -1)
        return error(where(i) + ": a leaf with a right child");
      forest.nodes.insert(forest.nodes.end(),
                          {static_cast<int32_t>(forest.leaves.size()), 0, 0});
      forest.leaves.push_back(static_cast<float>(condition[i]));
      forest.thresholds.push_back(0.0f);
      continue;
    }
    if (!splitType.empty() && splitType[i] != 0)
      return error(where(i) + ": categorical splits are not supported yet "
                              "(train with numerical features)");
    for (double child : {left[i], right[i]}) {
      if (child < 1 || child >= double(n) || child != std::floor(child) ||
          seen[static_cast<size_t>(child)])
        return error(absl::StrCat(where(i), ": child ", child,
                                  " is not a new node of the tree's ", n));
      seen[static_cast<size_t>(child)] = true;
      queue.push_back(static_cast<int64_t>(child));
    }
    if (feature[i] < 0 || feature[i] >= double(features))
      return error(absl::StrCat(where(i), ": splits on feature ", feature[i],
                                " of ", features));
    forest.nodes.insert(forest.nodes.end(),
                        {static_cast<int32_t>(feature[i]), next,
                         kLessThan | (defaultLeft[i] != 0 ? kMissingGoesLeft : 0)});
    next += 2;
    forest.thresholds.push_back(static_cast<float>(condition[i]));
  }
  if (forest.thresholds.size() > size_t(1) << 30)
    return error("the model has more than 2^30 nodes");
  return absl::OkStatus();
}

absl::StatusOr<OwningOpRef<ModuleOp>> Importer::run(MLIRContext &context,
                                                    absl::string_view text) {
  llvm::Expected<llvm::json::Value> parsed =
      llvm::json::parse(llvm::StringRef(text.data(), text.size()));
  if (!parsed)
    return error("not JSON: " + llvm::toString(parsed.takeError()));
  const llvm::json::Object *root = parsed->getAsObject();
  const llvm::json::Object *learner = root ? root->getObject("learner") : nullptr;
  const llvm::json::Array *version = root ? root->getArray("version") : nullptr;
  if (!learner || !version || version->empty())
    return error("not an XGBoost model (no 'learner' and 'version')");
  std::optional<int64_t> major = (*version)[0].getAsInteger();
  if (major != 1)
    return error(absl::StrCat(
        "XGBoost model format version ", major.value_or(-1),
        " is not supported (Cuvil reads models saved by XGBoost 1.x)"));
  const llvm::json::Object *params = learner->getObject("learner_model_param");
  const llvm::json::Object *objective = learner->getObject("objective");
  const llvm::json::Object *booster = learner->getObject("gradient_booster");
  if (!params || !objective || !booster)
    return error("the learner lacks learner_model_param, objective or "
                 "gradient_booster");
  std::optional<llvm::StringRef> boosterName = booster->getString("name");
  if (boosterName != "gbtree")
    return error(absl::StrCat(
        "booster '", printableText(boosterName.value_or("?")),
        "' is not supported (Cuvil compiles gbtree boosters)"));
  std::optional<llvm::StringRef> objectiveName = objective->getString("name");
  absl::StatusOr<Objective> objectiveInfo =
      lookupObjective(objectiveName.value_or("?").str());
  if (!objectiveInfo.ok())
    return error(std::string(objectiveInfo.status().message()));

  absl::StatusOr<int64_t> numFeature = intParam(*params, "num_feature");
  absl::StatusOr<int64_t> numClass = intParam(*params, "num_class");
  absl::StatusOr<int64_t> numTarget = intParam(*params, "num_target");
  absl::StatusOr<std::string> baseScoreText = param(*params, "base_score", true);
  for (const absl::Status &s : {numFeature.status(), numClass.status(),
                                numTarget.status(), baseScoreText.status()})
    if (!s.ok())
      return s;
  features = *numFeature;
  if (features == 0)
    return error("learner_model_param.num_feature is 0");
  targets = std::max<int64_t>({*numClass, *numTarget, 1});
  if (*numTarget > 1)
    return error("multi-target models are not supported yet");
  char *end = nullptr;
  float baseScore = std::strtof(baseScoreText->c_str(), &end);
  if (*end || !std::isfinite(baseScore))
    return error("base_score '" + printableText(*baseScoreText) +
                 "' is not a number");
  float margin = baseScore;
  if (objectiveInfo->margin == Objective::Logit) {
    if (!(baseScore > 0.0f && baseScore < 1.0f))
      return error("base_score must be in (0, 1) for a logistic objective");
    margin = -std::log(1.0f / baseScore - 1.0f);
  } else if (objectiveInfo->margin == Objective::Log) {
    if (!(baseScore > 0.0f))
      return error("base_score must be positive for a log-link objective");
    margin = std::log(baseScore);
  }

  const llvm::json::Object *model = booster->getObject("model");
  const llvm::json::Array *trees = model ? model->getArray("trees") : nullptr;
  const llvm::json::Array *treeInfo = model ? model->getArray("tree_info") : nullptr;
  if (!trees || !treeInfo || trees->size() != treeInfo->size())
    return error("gradient_booster.model needs 'trees' and one 'tree_info' "
                 "entry per tree");
  for (size_t t = 0; t < trees->size(); ++t) {
    const llvm::json::Object *tree = (*trees)[t].getAsObject();
    std::optional<int64_t> target = (*treeInfo)[t].getAsInteger();
    if (!tree || !target || *target < 0 || *target >= targets)
      return error(absl::StrCat("tree ", t, ": not a tree of a class in [0, ",
                                targets, ")"));
    if (absl::Status s = addTree(*tree, t, static_cast<int32_t>(*target));
        !s.ok())
      return s;
  }
  if (forest.nodes.empty()) {
    // No trees: every row predicts the base margin; one leaf says so.
    forest.nodes = {0, 0, 0};
    forest.thresholds = {0.0f};
    forest.leaves = {0.0f};
    forest.trees = {0, 0};
  }

  Location loc = FileLineColLoc::get(&context, options.modelPath, 0, 0);
  OpBuilder builder(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  Type f32 = builder.getF32Type(), i32 = builder.getI32Type();
  auto inputType = RankedTensorType::get({ShapedType::kDynamic, features}, f32);
  auto func = func::FuncOp::create(builder, loc, "main",
                                   builder.getFunctionType({inputType}, {}));
  func.setArgAttr(0, "cuvil.name", builder.getStringAttr("features"));
  builder.setInsertionPointToStart(func.addEntryBlock());
  auto bytesOf = [](const auto &values) {
    return std::string(reinterpret_cast<const char *>(values.data()),
                       values.size() * sizeof(values[0]));
  };
  int64_t n = forest.thresholds.size();
  Value nodes = createResourceConstant(
      builder, loc, RankedTensorType::get({n, 3}, i32), "xgboost_nodes",
      bytesOf(forest.nodes));
  Value thresholds = createResourceConstant(
      builder, loc, RankedTensorType::get({n}, f32), "xgboost_thresholds",
      bytesOf(forest.thresholds));
  Value treeTable = createResourceConstant(
      builder, loc,
      RankedTensorType::get({int64_t(forest.trees.size() / 2), 2}, i32),
      "xgboost_trees", bytesOf(forest.trees));
  Value leaves = createResourceConstant(
      builder, loc, RankedTensorType::get({int64_t(forest.leaves.size()), 1}, f32),
      "xgboost_leaves", bytesOf(forest.leaves));
  std::vector<double> base(targets, static_cast<double>(margin));
  auto ensemble = l1::TreeEnsembleOp::create(
      builder, NameLoc::get(builder.getStringAttr("xgboost"), loc),
      func.getArgument(0), nodes, thresholds, treeTable, leaves,
      builder.getDenseF64ArrayAttr(base),
      builder.getStringAttr(options.outputMargin ? "none"
                                                 : objectiveInfo->transform),
      options.missingValue && !std::isnan(*options.missingValue)
          ? builder.getF64FloatAttr(*options.missingValue)
          : FloatAttr());
  func::ReturnOp::create(builder, loc, ensemble.getResult());
  func.setType(builder.getFunctionType({inputType}, {ensemble.getType()}));
  func.setResultAttr(0, "cuvil.name",
                     builder.getStringAttr(options.outputMargin ? "margin"
                                                                : "prediction"));
  if (failed(verify(*module)))
    return error("the imported forest does not verify");
  return module;
}

} // namespace

absl::StatusOr<OwningOpRef<ModuleOp>>
importXgboostModel(MLIRContext &context, absl::string_view json,
                   const XgboostImportOptions &options) {
  context.loadDialect<l1::CuvilDialect, func::FuncDialect>();
  return Importer(options).run(context, json);
}

} // namespace cuvil
