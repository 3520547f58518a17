//===- LightgbmImporter.cpp - LightGBM text models to level1 --------------===//
//
// The text format is GBDT::SaveModelToString's: a header of `key=value`
// lines (version, num_class, num_tree_per_iteration, max_feature_idx,
// objective, average_output), then one `Tree=i` block per tree (num_leaves,
// split_feature, threshold, decision_type, left_child, right_child,
// leaf_value, ...; a child < 0 is leaf ~child), up to `end of trees`.
//
// A node's decision_type holds LightGBM's Tree::NumericalDecision in three
// fields: bit 0 categorical, bit 1 default left, bits 2-3 the missing
// type. Missing type None turns NaN into 0.0 before `fval <= threshold`,
// so NaN goes where 0.0 would, fixed per node; Zero sends NaN and values
// within 1e-35f of zero to the default child (the op's zero flag); NaN
// sends NaN there. A categorical split (bit 0) sends a category in its
// bitset (cat_threshold[cat_boundaries[threshold] ...]) left, NaN and
// negative values right.
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/lightgbm/LightgbmImporter.h"

#include "cuvil/importers/trees/Forest.h"
#include "cuvil/ir/CuvilOps.h"
#include "cuvil/support/SourceEscape.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <vector>

namespace cuvil {

using namespace mlir;

namespace {

constexpr int kCategorical = 1, kDefaultLeft = 2;
enum MissingType { kNone = 0, kZero = 1, kNaN = 2 };

using Fields = std::map<std::string, std::string, std::less<>>;

/// How an objective turns sums into predictions.
struct Objective {
  std::string transform = "none";
};

class Importer {
public:
  explicit Importer(const LightgbmImportOptions &options) : options(options) {}

  absl::StatusOr<OwningOpRef<ModuleOp>> run(MLIRContext &context,
                                            absl::string_view text);

private:
  absl::Status error(const std::string &message) const {
    return absl::InvalidArgumentError(
        absl::StrCat(printableText(options.modelPath), ": ", message));
  }
  absl::StatusOr<Objective> objective(const std::string &text) const;
  absl::Status addTree(const Fields &tree, int64_t index);

  const LightgbmImportOptions &options;
  int64_t features = 0, targets = 1;
  std::optional<trees::Forest> forest;
};

/// Splits `key=value` lines into `fields` until a line for which `stop`
/// holds (left in `rest`).
void readFields(std::vector<absl::string_view> &lines, size_t &line,
                Fields &fields,
                const std::function<bool(absl::string_view)> &stop) {
  for (; line < lines.size(); ++line) {
    absl::string_view l = lines[line];
    if (stop(l))
      return;
    size_t eq = l.find('=');
    if (eq == absl::string_view::npos)
      fields.emplace(std::string(l), "");
    else
      fields.emplace(std::string(l.substr(0, eq)), std::string(l.substr(eq + 1)));
  }
}

template <typename T>
bool parseList(const Fields &fields, absl::string_view key,
               std::vector<T> &out) {
  auto it = fields.find(key);
  if (it == fields.end())
    return false;
  for (absl::string_view item :
       absl::StrSplit(it->second, ' ', absl::SkipEmpty())) {
    T value;
    bool ok;
    if constexpr (std::is_same_v<T, double>)
      ok = absl::SimpleAtod(item, &value);
    else
      ok = absl::SimpleAtoi(item, &value);
    if (!ok)
      return false;
    out.push_back(value);
  }
  return true;
}

absl::StatusOr<Objective> Importer::objective(const std::string &text) const {
  std::vector<std::string> words = absl::StrSplit(text, ' ', absl::SkipEmpty());
  std::string name = words.empty() ? "" : words[0];
  std::map<std::string, std::string> params;
  for (size_t i = 1; i < words.size(); ++i) {
    size_t colon = words[i].find(':');
    params[words[i].substr(0, colon)] =
        colon == std::string::npos ? "" : words[i].substr(colon + 1);
  }
  Objective o;
  if (options.output != trees::ForestOutput::kPrediction)
    return o;
  auto sigmoid = [&]() -> absl::Status {
    auto it = params.find("sigmoid");
    double value = 1.0;
    if (it != params.end() && (!absl::SimpleAtod(it->second, &value) ||
                               value != 1.0))
      return error(absl::StrCat(
          "objective '", printableText(text),
          "' scales its sigmoid; Cuvil compiles sigmoid:1 (or compile the "
          "raw scores: --tree-output=margin)"));
    o.transform = "logistic";
    return absl::OkStatus();
  };
  if (name == "binary" || name == "multiclassova") {
    if (absl::Status s = sigmoid(); !s.ok())
      return s;
  } else if (name == "cross_entropy" || name == "xentropy") {
    o.transform = "logistic";
  } else if (name == "multiclass" || name == "softmax") {
    o.transform = "softmax";
  } else if (name == "poisson" || name == "gamma" || name == "tweedie") {
    o.transform = "exp";
  } else if (params.count("sqrt")) {
    return error(absl::StrCat("objective '", printableText(text),
                              "' (sqrt) is not supported"));
  } else if (name != "regression" && name != "regression_l2" &&
             name != "regression_l1" && name != "huber" && name != "fair" &&
             name != "quantile" && name != "mape" && name != "lambdarank" &&
             name != "rank_xendcg" && name != "custom") {
    return error(absl::StrCat(
        "objective '", printableText(text),
        "' is not supported (Cuvil compiles regression, regression_l1, "
        "huber, fair, quantile, mape, binary, cross_entropy, multiclass, "
        "multiclassova, poisson, gamma, tweedie, lambdarank and "
        "rank_xendcg)"));
  }
  return o;
}

absl::Status Importer::addTree(const Fields &fields, int64_t index) {
  auto where = [&](int64_t node) {
    return absl::StrCat("tree ", index,
                        node >= 0 ? absl::StrCat(" node ", node) : "");
  };
  int64_t leaves = 0;
  auto count = fields.find("num_leaves");
  if (count == fields.end() || !absl::SimpleAtoi(count->second, &leaves) ||
      leaves < 1 || leaves > (1 << 24))
    return error(where(-1) + ": num_leaves is missing or not a count");
  if (auto linear = fields.find("is_linear");
      linear != fields.end() && linear->second != "0")
    return error(where(-1) + ": linear trees (linear_tree=true) are not "
                             "supported");
  std::vector<double> threshold, leafValue;
  std::vector<int64_t> feature, decision, left, right;
  if (!parseList(fields, "leaf_value", leafValue) ||
      int64_t(leafValue.size()) != leaves)
    return error(where(-1) + ": leaf_value does not hold num_leaves numbers");
  int64_t inner = leaves - 1;
  if (inner > 0 &&
      (!parseList(fields, "split_feature", feature) ||
       !parseList(fields, "threshold", threshold) ||
       !parseList(fields, "decision_type", decision) ||
       !parseList(fields, "left_child", left) ||
       !parseList(fields, "right_child", right) ||
       int64_t(feature.size()) != inner || int64_t(threshold.size()) != inner ||
       int64_t(decision.size()) != inner || int64_t(left.size()) != inner ||
       int64_t(right.size()) != inner))
    return error(where(-1) + ": split_feature, threshold, decision_type, "
                             "left_child and right_child must hold "
                             "num_leaves - 1 numbers");
  std::vector<int64_t> catBoundaries, catThreshold;
  if (fields.count("cat_boundaries") &&
      (!parseList(fields, "cat_boundaries", catBoundaries) ||
       !parseList(fields, "cat_threshold", catThreshold)))
    return error(where(-1) + ": cat_boundaries or cat_threshold is not "
                             "numbers");
  // Internal nodes first, then the leaves.
  std::vector<trees::TreeNode> nodes(inner + leaves);
  for (int64_t j = 0; j < leaves; ++j)
    nodes[inner + j].leaf = j;
  auto child = [&](int64_t c) { return c >= 0 ? c : inner + ~c; };
  for (int64_t i = 0; i < inner; ++i) {
    int64_t type = decision[i];
    int64_t missing = (type >> 2) & 3;
    if (type < 0 || type > 15 || missing > kNaN)
      return error(absl::StrCat(where(i), ": decision_type ", type,
                                " is not one LightGBM writes"));
    bool defaultLeft = type & kDefaultLeft;
    trees::TreeNode &node = nodes[i];
    if (type & kCategorical) {
      // CategoricalDecision: NaN (and any value below 0) goes right.
      node.flags = trees::kMember;
      int64_t set = static_cast<int64_t>(threshold[i]);
      if (threshold[i] != double(set) || set < 0 ||
          set + 1 >= int64_t(catBoundaries.size()) ||
          catBoundaries[set] < 0 || catBoundaries[set] > catBoundaries[set + 1] ||
          catBoundaries[set + 1] > int64_t(catThreshold.size()))
        return error(absl::StrCat(where(i), ": category set ", threshold[i],
                                  " is not one of cat_boundaries'"));
      for (int64_t w = catBoundaries[set]; w < catBoundaries[set + 1]; ++w)
        node.categories.push_back(static_cast<uint32_t>(catThreshold[w]));
    } else {
      node.flags = trees::kLessEqual;
      if (missing == kNone ? 0.0 <= threshold[i] : defaultLeft)
        node.flags |= trees::kMissingGoesLeft;
      if (missing == kZero)
        node.flags |= trees::kZeroIsMissing;
    }
    node.feature = feature[i];
    node.threshold = threshold[i];
    node.left = child(left[i]);
    node.right = child(right[i]);
    for (int64_t c : {left[i], right[i]}) {
      if (c < 0 && ~c >= leaves)
        return error(absl::StrCat(where(i), ": leaf ", ~c, " of ", leaves));
      if (c >= inner)
        return error(absl::StrCat(where(i), ": child ", c, " of ", inner,
                                  " internal nodes"));
    }
  }
  int32_t target = static_cast<int32_t>(index % targets);
  if (options.output == trees::ForestOutput::kLeaf) {
    // pred_leaf: the tree's own column, its leaves' numbers.
    target = static_cast<int32_t>(index);
    for (int64_t k = 0; k < leaves; ++k)
      leafValue[k] = static_cast<double>(k);
  }
  absl::Status added = forest->addTree(nodes, 0, target, leafValue, where);
  return added.ok() ? added : error(std::string(added.message()));
}

absl::StatusOr<OwningOpRef<ModuleOp>> Importer::run(MLIRContext &context,
                                                    absl::string_view text) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  for (absl::string_view &l : lines)
    if (!l.empty() && l.back() == '\r')
      l.remove_suffix(1);
  size_t line = 0;
  Fields header;
  auto isTree = [](absl::string_view l) {
    return absl::StartsWith(l, "Tree=") || l == "end of trees";
  };
  readFields(lines, line, header, isTree);
  auto version = header.find("version");
  if (lines.empty() || lines[0] != "tree" || version == header.end())
    return error("not a LightGBM text model (it starts with 'tree' and a "
                 "'version=' line)");
  if (version->second != "v2" && version->second != "v3" &&
      version->second != "v4")
    return error("LightGBM model format '" + printableText(version->second) +
                 "' is not supported (Cuvil reads v2 to v4)");
  auto integer = [&](const char *key, int64_t &out) {
    auto it = header.find(key);
    return it != header.end() && absl::SimpleAtoi(it->second, &out) &&
           out >= 0 && out < (1 << 24);
  };
  int64_t maxFeature = 0, perIteration = 1;
  if (!integer("max_feature_idx", maxFeature) ||
      !integer("num_tree_per_iteration", perIteration) || perIteration == 0)
    return error("the header needs max_feature_idx and "
                 "num_tree_per_iteration");
  features = maxFeature + 1;
  targets = perIteration;
  auto objectiveText = header.find("objective");
  absl::StatusOr<Objective> objectiveInfo = objective(
      objectiveText == header.end() ? "regression" : objectiveText->second);
  if (!objectiveInfo.ok())
    return objectiveInfo.status();
  bool average = header.count("average_output");
  if (average && targets > 1)
    return error("average_output (boosting=rf) with several trees per "
                 "iteration is not supported");

  forest.emplace(features, /*values=*/1);
  int64_t index = 0;
  while (line < lines.size() && lines[line] != "end of trees") {
    absl::string_view title = lines[line++];
    if (title != absl::StrCat("Tree=", index))
      return error(absl::StrCat("expected 'Tree=", index, "', found '",
                                printableText(std::string(title)), "'"));
    Fields tree;
    readFields(lines, line, tree, isTree);
    tree.erase("");
    if (absl::Status s = addTree(tree, index); !s.ok())
      return s;
    ++index;
  }
  if (line == lines.size())
    return error("the model ends before 'end of trees' (is it truncated?)");

  trees::ForestSemantics semantics;
  semantics.thresholdType = semantics.leafType = Float64Type::get(&context);
  semantics.baseValues.assign(targets, 0.0);
  semantics.postTransform = objectiveInfo->transform;
  semantics.aggregate = average ? "average" : "sum";
  if (options.output == trees::ForestOutput::kLeaf) {
    if (index == 0)
      return error("pred_leaf: the model has no trees");
    semantics.baseValues.assign(index, 0.0);
    semantics.aggregate = "sum";
  }
  Type features = options.float32Features ? Type(Float32Type::get(&context))
                                           : semantics.leafType;
  OwningOpRef<ModuleOp> module = forest->buildModule(
      context, FileLineColLoc::get(&context, options.modelPath, 0, 0),
      features, semantics, "lightgbm", options.output);
  if (!module)
    return error("the imported forest does not verify");
  return module;
}

} // namespace

absl::StatusOr<OwningOpRef<ModuleOp>>
importLightgbmModel(MLIRContext &context, absl::string_view text,
                    const LightgbmImportOptions &options) {
  context.loadDialect<l1::CuvilDialect, func::FuncDialect>();
  return Importer(options).run(context, text);
}

} // namespace cuvil
