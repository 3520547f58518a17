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

#include "cuvil/importers/trees/Forest.h"
#include "cuvil/ir/CuvilOps.h"
#include "cuvil/support/SourceEscape.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <map>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace cuvil {

using namespace mlir;

namespace {

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
  /// Adds tree `t`, checking its class in `treeInfo`.
  absl::Status addTreeOfClass(const llvm::json::Value &tree, size_t t,
                              const llvm::json::Array &treeInfo);
  /// Adds the trees of the JSON array `trees`, one document each.
  absl::Status addTrees(absl::string_view trees,
                        const llvm::json::Array &treeInfo);
  /// Parses JSON, with XGBoost's bare NaN and Infinity.
  absl::StatusOr<llvm::json::Value> parseJson(absl::string_view text) const;

  const XgboostImportOptions &options;
  int64_t features = 0, targets = 1;
  std::optional<trees::Forest> forest;
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

/// XGBoost writes NaN and infinities as the bare words NaN, Infinity and
/// -Infinity (a categorical split's split_condition is NaN), which JSON
/// lacks: the text with them as null, 1e999 and -1e999, or "" when it has
/// none.
std::string strictJson(absl::string_view text) {
  if (text.find("NaN") == absl::string_view::npos &&
      text.find("Infinity") == absl::string_view::npos)
    return std::string();
  std::string out;
  bool inString = false, changed = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        out.push_back(text[i++]);
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (absl::StartsWith(text.substr(i), "NaN")) {
      out += "null";
      i += 2;
      changed = true;
      continue;
    } else if (absl::StartsWith(text.substr(i), "Infinity")) {
      out += "1e999";
      i += 7;
      changed = true;
      continue;
    }
    if (i < text.size())
      out.push_back(text[i]);
  }
  return changed ? out : std::string();
}

/// Where the JSON value at `pos` (after blanks) ends, or npos. Checks
/// only nesting and strings: the value is parsed properly later.
size_t skipValue(absl::string_view text, size_t pos) {
  int depth = 0;
  bool inString = false;
  for (; pos < text.size(); ++pos) {
    char c = text[pos];
    if (inString) {
      if (c == '\\')
        ++pos;
      else if (c == '"')
        inString = false;
      if (!inString && depth == 0)
        return pos + 1;
      continue;
    }
    if (depth == 0 && (c == ',' || c == '}' || c == ']'))
      return pos; // the end of a number or literal
    if (c == '"') {
      inString = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return pos + 1;
    }
  }
  return depth == 0 && !inString ? pos : absl::string_view::npos;
}

size_t skipBlanks(absl::string_view text, size_t pos) {
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n' ||
                               text[pos] == '\r' || text[pos] == '\t'))
    ++pos;
  return pos;
}

/// The span [begin, end) of member `key` of the object at `pos`, if the
/// object is well nested and has it.
std::optional<std::pair<size_t, size_t>> findMember(absl::string_view text,
                                                    size_t pos,
                                                    absl::string_view key) {
  pos = skipBlanks(text, pos);
  if (pos >= text.size() || text[pos] != '{')
    return std::nullopt;
  pos = skipBlanks(text, pos + 1);
  while (pos < text.size() && text[pos] == '"') {
    size_t keyEnd = skipValue(text, pos);
    if (keyEnd == absl::string_view::npos)
      return std::nullopt;
    absl::string_view name = text.substr(pos + 1, keyEnd - pos - 2);
    pos = skipBlanks(text, keyEnd);
    if (pos >= text.size() || text[pos] != ':')
      return std::nullopt;
    size_t begin = skipBlanks(text, pos + 1);
    size_t end = skipValue(text, begin);
    if (end == absl::string_view::npos)
      return std::nullopt;
    if (name == key)
      return std::make_pair(begin, end);
    pos = skipBlanks(text, end);
    if (pos < text.size() && text[pos] == ',')
      pos = skipBlanks(text, pos + 1);
  }
  return std::nullopt;
}

/// The span of learner.gradient_booster.model.trees, the bulk of a model:
/// it is read one tree at a time, never as one document.
std::optional<std::pair<size_t, size_t>> findTrees(absl::string_view text) {
  std::optional<std::pair<size_t, size_t>> span{{0, text.size()}};
  for (absl::string_view key : {"learner", "gradient_booster", "model", "trees"})
    if (!(span = findMember(text.substr(0, span->second), span->first, key)))
      return std::nullopt;
  if (span->second - span->first < 2 || text[span->first] != '[')
    return std::nullopt;
  return span;
}

/// Reads a JSON array of numbers (null for NaN); false if it is missing
/// (and required) or holds anything else.
bool readNumbers(const llvm::json::Object &tree, llvm::StringRef key,
                 std::vector<double> &out, bool required = true) {
  const llvm::json::Array *array = tree.getArray(key);
  if (!array)
    return !required;
  out.reserve(array->size());
  for (const llvm::json::Value &v : *array) {
    if (v.getAsNull()) {
      out.push_back(std::nan(""));
      continue;
    }
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
  // Categorical splits: each node's categories (those that go right).
  std::map<size_t, std::vector<double>> categories;
  std::vector<double> catValues, catNodes, catStarts, catSizes;
  if (!readNumbers(tree, "categories", catValues, false) ||
      !readNumbers(tree, "categories_nodes", catNodes, false) ||
      !readNumbers(tree, "categories_segments", catStarts, false) ||
      !readNumbers(tree, "categories_sizes", catSizes, false) ||
      catStarts.size() != catNodes.size() || catSizes.size() != catNodes.size())
    return error(where(-1) + ": malformed categories");
  for (size_t k = 0; k < catNodes.size(); ++k) {
    double start = catStarts[k], size = catSizes[k];
    if (catNodes[k] < 0 || catNodes[k] >= double(n) || start < 0 || size < 0 ||
        start + size > double(catValues.size()))
      return error(where(-1) + ": malformed categories");
    categories[static_cast<size_t>(catNodes[k])].assign(
        catValues.begin() + static_cast<size_t>(start),
        catValues.begin() + static_cast<size_t>(start + size));
  }
  std::vector<trees::TreeNode> nodes(n);
  for (size_t i = 0; i < n; ++i) {
    trees::TreeNode &node = nodes[i];
    if (left[i] == -1) {
      if (right[i] != -1)
        return error(where(i) + ": a leaf with a right child");
      node.leaf = i; // its value is its split_condition
      continue;
    }
    auto index = [&](double child) {
      return child == std::floor(child) && child >= 0 && child < double(n)
                 ? static_cast<int64_t>(child)
                 : -1;
    };
    node.flags = trees::kLessThan |
                 (defaultLeft[i] != 0 ? trees::kMissingGoesLeft : 0);
    // Forest::addTree names a feature out of range; a fraction is one.
    node.feature = feature[i] == std::floor(feature[i]) &&
                           std::abs(feature[i]) < 1e15
                       ? static_cast<int64_t>(feature[i])
                       : -1;
    node.threshold = static_cast<float>(condition[i]);
    node.left = index(left[i]);
    node.right = index(right[i]);
    if (!splitType.empty() && splitType[i] != 0) {
      // XGBoost's Decision sends the node's categories right, anything
      // else (other categories, negative values) left: the set goes to
      // the op's left, so the children and the missing direction swap.
      auto cats = categories.find(i);
      if (splitType[i] != 1 || cats == categories.end())
        return error(where(i) + ": a categorical split without categories");
      node.flags = trees::kMember | trees::kWholeCategories |
                   (defaultLeft[i] != 0 ? 0 : trees::kMissingGoesLeft);
      std::swap(node.left, node.right);
      for (double c : cats->second) {
        if (c < 0 || c >= double(1 << 24) || c != std::floor(c))
          return error(absl::StrCat(where(i), ": category ", c,
                                    " is not one XGBoost writes"));
        size_t word = static_cast<size_t>(c) / 32;
        if (node.categories.size() <= word)
          node.categories.resize(word + 1, 0);
        node.categories[word] |= uint32_t(1) << (static_cast<size_t>(c) % 32);
      }
    }
  }
  if (options.output == trees::ForestOutput::kLeaf) {
    // pred_leaf: the tree's own column, its leaves' node ids (float32, as
    // XGBoost returns them: exact below 2^24).
    if (n > (size_t(1) << 24))
      return error(where(-1) + ": pred_leaf: node ids past 2^24 are not "
                               "exact in float32");
    target = static_cast<int32_t>(index);
    for (size_t i = 0; i < n; ++i)
      condition[i] = static_cast<double>(i);
  }
  absl::Status added = forest->addTree(nodes, 0, target, condition, where);
  if (!added.ok())
    return error(std::string(added.message()));
  return absl::OkStatus();
}

absl::StatusOr<llvm::json::Value>
Importer::parseJson(absl::string_view text) const {
  std::string strict = strictJson(text);
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(
      strict.empty() ? llvm::StringRef(text.data(), text.size())
                     : llvm::StringRef(strict));
  if (!parsed)
    return error("not JSON: " + llvm::toString(parsed.takeError()));
  return std::move(*parsed);
}

absl::Status Importer::addTreeOfClass(const llvm::json::Value &tree, size_t t,
                                      const llvm::json::Array &treeInfo) {
  std::optional<int64_t> target =
      t < treeInfo.size() ? treeInfo[t].getAsInteger() : std::nullopt;
  if (!tree.getAsObject() || !target || *target < 0 || *target >= targets)
    return error(absl::StrCat("tree ", t, ": not a tree of a class in [0, ",
                              targets, ")"));
  return addTree(*tree.getAsObject(), t, static_cast<int32_t>(*target));
}

absl::Status Importer::addTrees(absl::string_view trees,
                                const llvm::json::Array &treeInfo) {
  size_t pos = skipBlanks(trees, 1), t = 0;
  for (; pos < trees.size() && trees[pos] != ']'; ++t) {
    size_t end = skipValue(trees, pos);
    if (end == absl::string_view::npos)
      return error(absl::StrCat("tree ", t, ": not JSON"));
    // One tree's document at a time.
    absl::StatusOr<llvm::json::Value> tree =
        parseJson(trees.substr(pos, end - pos));
    if (!tree.ok())
      return error(absl::StrCat("tree ", t, ": ", tree.status().message()));
    if (absl::Status s = addTreeOfClass(*tree, t, treeInfo); !s.ok())
      return s;
    pos = skipBlanks(trees, end);
    if (pos < trees.size() && trees[pos] == ',')
      pos = skipBlanks(trees, pos + 1);
  }
  if (t != treeInfo.size())
    return error("gradient_booster.model needs 'trees' and one 'tree_info' "
                 "entry per tree");
  return absl::OkStatus();
}

absl::StatusOr<OwningOpRef<ModuleOp>> Importer::run(MLIRContext &context,
                                                    absl::string_view text) {
  // The trees are read one at a time; the rest, small, as one document
  // (with an empty trees array in their place).
  std::optional<std::pair<size_t, size_t>> treeSpan = findTrees(text);
  absl::string_view trees = treeSpan ? text.substr(treeSpan->first,
                                                   treeSpan->second -
                                                       treeSpan->first)
                                     : absl::string_view();
  absl::StatusOr<llvm::json::Value> parsed =
      parseJson(treeSpan ? absl::StrCat(text.substr(0, treeSpan->first), "[]",
                                        text.substr(treeSpan->second))
                         : text);
  if (!parsed.ok())
    return parsed.status();
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

  forest.emplace(features, /*values=*/1);
  const llvm::json::Object *model = booster->getObject("model");
  const llvm::json::Array *treeArray = model ? model->getArray("trees") : nullptr;
  const llvm::json::Array *treeInfo = model ? model->getArray("tree_info") : nullptr;
  if (!treeArray || !treeInfo)
    return error("gradient_booster.model needs 'trees' and one 'tree_info' "
                 "entry per tree");
  if (treeSpan) {
    if (absl::Status s = addTrees(trees, *treeInfo); !s.ok())
      return s;
  } else {
    // A layout the scan did not follow: the trees are in the document.
    if (treeArray->size() != treeInfo->size())
      return error("gradient_booster.model needs 'trees' and one "
                   "'tree_info' entry per tree");
    for (size_t t = 0; t < treeArray->size(); ++t)
      if (absl::Status s = addTreeOfClass((*treeArray)[t], t, *treeInfo);
          !s.ok())
        return s;
  }
  trees::ForestSemantics semantics;
  semantics.thresholdType = semantics.leafType = Float32Type::get(&context);
  semantics.baseValues.assign(targets, static_cast<double>(margin));
  semantics.postTransform = options.output == trees::ForestOutput::kPrediction
                                ? objectiveInfo->transform
                                : "none";
  if (options.output == trees::ForestOutput::kLeaf) {
    if (forest->treeCount() == 0)
      return error("pred_leaf: the model has no trees");
    semantics.baseValues.assign(forest->treeCount(), 0.0);
  }
  if (options.missingValue && !std::isnan(*options.missingValue))
    semantics.missingValue = *options.missingValue;
  OwningOpRef<ModuleOp> module = forest->buildModule(
      context, FileLineColLoc::get(&context, options.modelPath, 0, 0),
      semantics.leafType, semantics, "xgboost", options.output);
  if (!module)
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
