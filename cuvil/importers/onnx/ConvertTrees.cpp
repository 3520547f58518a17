//===- ConvertTrees.cpp - ai.onnx.ml TreeEnsemble{Regressor,Classifier} ---===//
//
// The ONNX-ML forests become one cuvil.tree_ensemble. The nodes_* tuples
// are grouped by tree (trees in order of first appearance, as onnxruntime
// sums them; a tree's root is its one node no other node points at), the
// target_* / class_* votes become leaf rows: one value per leaf when
// every tree votes for one target, else a dense row per leaf. The spec
// adds base_values to the final score, so they are added after the sum
// (by the op itself, exactly, when it averages; by a cuvil.add
// otherwise); the post transform follows.
//
// Where the spec is silent, onnxruntime's reading is taken: a NaN takes
// the true branch only with nodes_missing_value_tracks_true (and for
// BRANCH_NEQ, since NaN != t); a two-class classifier with votes for one
// class scores the positive class with them ([1 - s, s], or [-s, s] when
// some vote is negative). A leaf's votes for one target count as one vote
// of their sum (onnxruntime adds them one at a time: the last bit can
// differ when a leaf votes twice for a target, which converters do not
// write). Where onnxruntime departs from the spec (it
// skips LOGISTIC on a one-target regressor), the spec is followed.
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/ImporterImpl.h"

#include "cuvil/importers/lightgbm/LightgbmImporter.h"
#include "cuvil/importers/trees/Forest.h"
#include "cuvil/importers/xgboost/XgboostImporter.h"

#include "mlir/IR/IRMapping.h"

namespace cuvil::onnx_import {

namespace {

/// The comparison of a nodes_modes entry (kLeaf for LEAF), or -1.
int32_t comparisonOf(const std::string &mode) {
  static const std::map<std::string, int32_t> modes = {
      {"BRANCH_LEQ", trees::kLessEqual}, {"BRANCH_LT", trees::kLessThan},
      {"BRANCH_GTE", trees::kGreaterEqual}, {"BRANCH_GT", trees::kGreater},
      {"BRANCH_EQ", trees::kEqual},      {"BRANCH_NEQ", trees::kNotEqual},
      {"LEAF", trees::kLeaf}};
  auto it = modes.find(mode);
  return it == modes.end() ? -1 : it->second;
}

/// The votes of one ensemble (target_* or class_*), by tree and node.
struct Vote {
  int64_t target;
  double weight;
};
using Votes = std::map<std::pair<int64_t, int64_t>, std::vector<Vote>>;

/// The nodes_* attributes, one entry per node.
struct NodeTable {
  const SmallVector<int64_t> &nodeIds, &featureIds, &trueIds, &falseIds;
  const std::optional<SmallVector<int64_t>> &tracks;
  const std::vector<std::string> &modes;
  const std::vector<double> &values;
};

/// One tree: its nodes (`members`, indices into `table`) as TreeNodes and
/// its leaves' rows of `width` values (votes for target t in column t, or
/// in column 0 with `oneColumn`); returns its root. Counts the votes it
/// places in `placed`.
absl::StatusOr<int64_t> readTree(const NodeTable &table, int64_t id,
                                 ArrayRef<size_t> members, const Votes &votes,
                                 StringRef prefix, bool oneColumn,
                                 int64_t width,
                                 std::vector<trees::TreeNode> &tree,
                                 std::vector<double> &leafValues,
                                 size_t &placed) {
  auto where = [&](size_t i) {
    return absl::StrCat("tree ", id, " node ", table.nodeIds[i]);
  };
  std::map<int64_t, int64_t> local;
  for (auto [k, i] : llvm::enumerate(members))
    if (!local.emplace(table.nodeIds[i], k).second)
      return absl::InvalidArgumentError(absl::StrCat(
          "tree ", id, " has node id ", table.nodeIds[i], " twice"));
  tree.assign(members.size(), trees::TreeNode());
  leafValues.assign(members.size() * width, 0.0);
  std::set<int64_t> children;
  for (auto [k, i] : llvm::enumerate(members)) {
    trees::TreeNode &node = tree[k];
    int32_t comparison = comparisonOf(table.modes[i]);
    if (comparison < 0)
      return absl::InvalidArgumentError(absl::StrCat(
          where(i), " has mode '", table.modes[i],
          "' (Cuvil compiles BRANCH_LEQ, BRANCH_LT, BRANCH_GTE, BRANCH_GT, "
          "BRANCH_EQ, BRANCH_NEQ and LEAF)"));
    auto it = votes.find({id, table.nodeIds[i]});
    if (comparison == trees::kLeaf) {
      node.leaf = k;
      if (it == votes.end())
        continue;
      placed += it->second.size();
      for (const Vote &vote : it->second)
        leafValues[k * width + (oneColumn ? 0 : vote.target)] += vote.weight;
      continue;
    }
    if (it != votes.end())
      return absl::InvalidArgumentError(absl::StrCat(
          where(i), " is a branch with ", prefix.str(), "weights"));
    bool tracksTrue =
        table.tracks && !table.tracks->empty() && (*table.tracks)[i] == 1;
    node.flags = comparison | (tracksTrue || comparison == trees::kNotEqual
                                   ? trees::kMissingGoesLeft
                                   : 0);
    node.feature = table.featureIds[i];
    node.threshold = table.values.empty() ? 0.0 : table.values[i];
    for (auto [child, slot] : {std::make_pair(table.trueIds[i], &node.left),
                               std::make_pair(table.falseIds[i], &node.right)}) {
      auto c = local.find(child);
      if (c == local.end())
        return absl::InvalidArgumentError(
            absl::StrCat(where(i), " has child ", child,
                         ", which is not a node of the tree"));
      *slot = c->second;
      children.insert(c->second);
    }
  }
  // The root: the one node no other node points at.
  std::vector<int64_t> roots;
  for (int64_t k = 0; k < int64_t(members.size()); ++k)
    if (!children.count(k))
      roots.push_back(k);
  if (roots.size() != 1)
    return absl::InvalidArgumentError(
        absl::StrCat("tree ", id, " has ", roots.size(),
                     " nodes that no node points at; a tree has one root"));
  return roots[0];
}

} // namespace

FailureOr<Importer::Numbers> Importer::attrNumbers(const onnx::NodeProto &node,
                                                   StringRef name,
                                                   Location loc) {
  Numbers numbers;
  std::string tensorName = (name + "_as_tensor").str();
  if (const onnx::AttributeProto *list =
          typedAttr(node, name, onnx::AttributeProto::FLOATS)) {
    numbers.values.assign(list->floats().begin(), list->floats().end());
    numbers.present = true;
  }
  const onnx::AttributeProto *tensor =
      typedAttr(node, tensorName, onnx::AttributeProto::TENSOR);
  if (badAttribute)
    return failure();
  if (!tensor)
    return numbers;
  if (numbers.present)
    return emitError(loc) << node.op_type() << " gives both '" << name
                          << "' and '" << tensorName << "'; give one";
  int32_t type = tensor->t().data_type();
  if (type != onnx::TensorProto::DOUBLE && type != onnx::TensorProto::FLOAT)
    return emitError(loc) << node.op_type() << " attribute '" << tensorName
                          << "' holds " << onnxTypeName(type)
                          << "; it must be DOUBLE or FLOAT";
  std::string bytes;
  if (failed(readTensorBytes(tensor->t(), bytes)))
    return failure();
  size_t size = type == onnx::TensorProto::DOUBLE ? 8 : 4;
  if (bytes.size() % size)
    return emitError(loc) << node.op_type() << " attribute '" << tensorName
                          << "' has a partial element";
  for (size_t i = 0; i < bytes.size(); i += size)
    numbers.values.push_back(size == 8 ? readAs<double>(&bytes[i])
                                       : readAs<float>(&bytes[i]));
  numbers.present = true;
  numbers.isDouble = type == onnx::TensorProto::DOUBLE;
  return numbers;
}

std::optional<std::vector<std::string>>
Importer::attrStrings(const onnx::NodeProto &node, StringRef name) {
  const onnx::AttributeProto *a =
      typedAttr(node, name, onnx::AttributeProto::STRINGS);
  if (!a)
    return std::nullopt;
  return std::vector<std::string>(a->strings().begin(), a->strings().end());
}

/// Whether any node or the graph's outputs read `name`.
bool Importer::isRead(const std::string &name) const {
  if (name.empty())
    return false;
  bool read = false;
  forEachGraph(model.graph(), [&](const onnx::GraphProto &graph) {
    for (const onnx::ValueInfoProto &output : graph.output())
      read |= output.name() == name;
    for (const onnx::NodeProto &node : graph.node())
      read |= llvm::is_contained(node.input(), name);
  });
  return read;
}

LogicalResult Importer::convertTreeEnsemble(const onnx::NodeProto &node,
                                            Location loc) {
  bool classifier = node.op_type() == "TreeEnsembleClassifier";
  auto fail = [&]() { return emitError(loc) << node.op_type() << " "; };
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  auto xType = cast<RankedTensorType>(x->getType());
  Type xElement = xType.getElementType();
  if (xType.getRank() != 2 || !(xElement.isF32() || xElement.isF64()) ||
      xType.isDynamicDim(1))
    return fail() << "expects X [batch, features] of float or double with "
                     "known features, got "
                  << xType;
  int64_t features = xType.getDimSize(1);

  // The nodes.
  std::optional<SmallVector<int64_t>> treeIds = attrInts(node, "nodes_treeids"),
                                      nodeIds = attrInts(node, "nodes_nodeids"),
                                      featureIds =
                                          attrInts(node, "nodes_featureids"),
                                      trueIds =
                                          attrInts(node, "nodes_truenodeids"),
                                      falseIds =
                                          attrInts(node, "nodes_falsenodeids"),
                                      tracks = attrInts(
                                          node, "nodes_missing_value_tracks_true");
  std::optional<std::vector<std::string>> modes =
      attrStrings(node, "nodes_modes");
  FailureOr<Numbers> values = attrNumbers(node, "nodes_values", loc);
  if (failed(values) || badAttribute)
    return failure();
  if (!treeIds || !nodeIds || !featureIds || !trueIds || !falseIds || !modes)
    return fail() << "needs nodes_treeids, nodes_nodeids, nodes_featureids, "
                     "nodes_modes, nodes_truenodeids and nodes_falsenodeids";
  size_t n = treeIds->size();
  if (n == 0 || nodeIds->size() != n || featureIds->size() != n ||
      trueIds->size() != n || falseIds->size() != n || modes->size() != n ||
      (values->present && values->values.size() != n) ||
      (tracks && !tracks->empty() && tracks->size() != n))
    return fail() << "has nodes_* attributes of different lengths (or none)";

  // The votes.
  StringRef prefix = classifier ? "class_" : "target_";
  auto voteAttr = [&](StringRef field) {
    return attrInts(node, (prefix + field).str());
  };
  std::optional<SmallVector<int64_t>> voteTrees = voteAttr("treeids"),
                                      voteNodes = voteAttr("nodeids"),
                                      voteIds = voteAttr("ids");
  FailureOr<Numbers> weights =
      attrNumbers(node, (prefix + "weights").str(), loc);
  if (failed(weights) || badAttribute)
    return failure();
  size_t voteCount = weights->values.size();
  if (!voteTrees || !voteNodes || !voteIds || voteTrees->size() != voteCount ||
      voteNodes->size() != voteCount || voteIds->size() != voteCount)
    return fail() << "needs " << prefix << "treeids, " << prefix << "nodeids, "
                  << prefix << "ids and " << prefix
                  << "weights of one length";
  int64_t targets;
  if (classifier) {
    std::optional<SmallVector<int64_t>> ints =
        attrInts(node, "classlabels_int64s");
    std::optional<std::vector<std::string>> strings =
        attrStrings(node, "classlabels_strings");
    targets = ints ? ints->size() : strings ? strings->size() : 0;
    if (node.output_size() > 0 && isRead(node.output(0)))
      return fail() << "output '" << node.output(0)
                    << "' (the predicted label) is not compiled yet; drop it "
                       "from the graph's outputs and take the arg max of the "
                       "probabilities (output '"
                    << (node.output_size() > 1 ? node.output(1) : "") << "')";
  } else {
    targets = attrInt(node, "n_targets", 0);
  }
  if (targets <= 0 || targets > (1 << 16))
    return fail() << "has " << targets << (classifier ? " class labels" : " targets")
                  << "; Cuvil compiles 1 to 65536";
  FailureOr<Numbers> base = attrNumbers(node, "base_values", loc);
  if (failed(base))
    return failure();
  std::string transform = attrString(node, "post_transform", "NONE");
  std::string aggregate =
      classifier ? "SUM" : attrString(node, "aggregate_function", "SUM");
  if (badAttribute)
    return failure();
  if (transform != "NONE" && transform != "LOGISTIC" && transform != "SOFTMAX")
    return fail() << "post_transform '" << transform
                  << "' is not supported (Cuvil compiles NONE, LOGISTIC and "
                     "SOFTMAX)";
  if (aggregate != "SUM" && aggregate != "AVERAGE")
    return fail() << "aggregate_function '" << aggregate
                  << "' is not supported (Cuvil compiles SUM and AVERAGE)";

  // Trees in order of first appearance; node ids within each.
  std::vector<int64_t> order;
  std::map<int64_t, std::vector<size_t>> members;
  for (size_t i = 0; i < n; ++i) {
    std::vector<size_t> &m = members[(*treeIds)[i]];
    if (m.empty())
      order.push_back((*treeIds)[i]);
    m.push_back(i);
  }
  Votes votes;
  std::set<int64_t> voted;
  bool allPositive = true;
  for (size_t v = 0; v < voteCount; ++v) {
    int64_t id = (*voteIds)[v];
    if (id < 0 || id >= targets)
      return fail() << prefix << "ids[" << v << "] is " << id
                    << ", outside the " << targets
                    << (classifier ? " classes" : " targets");
    votes[{(*voteTrees)[v], (*voteNodes)[v]}].push_back(
        {id, weights->values[v]});
    voted.insert(id);
    allPositive &= weights->values[v] >= 0.0;
  }
  // A classifier of two labels voting for one class scores one column.
  bool binary = classifier && targets == 2 && voted.size() <= 1;
  int64_t scores = binary ? 1 : targets;

  // One value per leaf when each tree votes for one target.
  std::vector<int64_t> treeTarget;
  bool single = true;
  for (int64_t id : order) {
    std::optional<int64_t> target;
    for (size_t i : members[id]) {
      auto it = votes.find({id, (*nodeIds)[i]});
      for (const Vote &vote : it == votes.end() ? std::vector<Vote>() : it->second) {
        int64_t t = binary ? 0 : vote.target;
        single &= !target || *target == t;
        target = t;
      }
    }
    treeTarget.push_back(target.value_or(0));
  }
  int64_t width = single ? 1 : scores;

  trees::Forest forest(features, width);
  NodeTable table{*nodeIds, *featureIds, *trueIds, *falseIds, tracks, *modes,
                  values->values};
  size_t matched = 0;
  std::vector<trees::TreeNode> tree;
  std::vector<double> leafValues;
  for (auto [t, treeId] : llvm::enumerate(order)) {
    auto id = treeId; // a lambda captures it (C++17 cannot capture bindings)
    const std::vector<size_t> &m = members[id];
    absl::StatusOr<int64_t> root =
        readTree(table, id, m, votes, prefix, single || binary, width, tree,
                 leafValues, matched);
    absl::Status added =
        root.ok() ? forest.addTree(
                        tree, *root,
                        static_cast<int32_t>(single ? treeTarget[t] : 0),
                        leafValues,
                        [&](int64_t k) {
                          return k < 0 ? absl::StrCat("tree ", id)
                                       : absl::StrCat("tree ", id, " node ",
                                                      (*nodeIds)[m[k]]);
                        })
                  : root.status();
    if (!added.ok())
      return fail() << std::string(added.message());
  }
  if (matched != voteCount)
    return fail() << "has " << voteCount - matched << " of its " << voteCount
                  << " " << prefix << "weights on no leaf of its trees";

  // Base values: none, one per score, or (binary) one.
  std::vector<double> baseValues(scores, 0.0);
  if (base->present) {
    if (base->values.size() == size_t(scores))
      baseValues = base->values;
    else if (binary && base->values.size() == 1)
      baseValues[0] = base->values[0];
    else
      return fail() << "has " << base->values.size()
                    << " base_values for its " << scores << " scores";
  }
  bool addBase = llvm::any_of(baseValues, [](double v) { return v != 0.0; });
  if (binary && transform == "SOFTMAX")
    return fail() << "post_transform SOFTMAX over a binary classifier's one "
                     "score is not defined; use LOGISTIC";

  trees::ForestSemantics semantics;
  Type f64 = builder.getF64Type();
  semantics.thresholdType =
      values->isDouble || xElement.isF64() ? f64 : builder.getF32Type();
  semantics.leafType = weights->isDouble ? f64 : builder.getF32Type();
  semantics.aggregate = aggregate == "AVERAGE" ? "average" : "sum";
  semantics.baseValues.assign(scores, 0.0);
  // The op averages from zero and adds its base values after, as the spec
  // does; a sum starts from them, so they are added by a separate op.
  bool baseInOp = semantics.aggregate == "average";
  if (baseInOp)
    semantics.baseValues = baseValues;
  bool transformInOp = baseInOp || !addBase;
  if (transformInOp)
    semantics.postTransform = transform == "LOGISTIC"  ? "logistic"
                              : transform == "SOFTMAX" ? "softmax"
                                                       : "none";
  std::string name = node.name().empty() ? "onnx_trees" : node.name();
  Value s = forest.build(builder, loc, *x, semantics, name);
  Type acc = semantics.leafType;
  auto constant = [&](ArrayRef<double> data, ArrayRef<int64_t> shape) {
    SmallVector<Attribute> attrs;
    for (double v : data)
      attrs.push_back(builder.getFloatAttr(acc, v));
    return l1::ConstantOp::create(
        builder, loc,
        DenseElementsAttr::get(RankedTensorType::get(shape, acc), attrs));
  };
  FailureOr<Value> result = s;
  if (!transformInOp) {
    result = create<l1::AddOp>(loc, s, constant(baseValues, {scores}));
    if (succeeded(result) && transform == "LOGISTIC")
      result = create<l1::SigmoidOp>(loc, *result);
    else if (succeeded(result) && transform == "SOFTMAX")
      result = create<l1::SoftmaxOp>(loc, *result, builder.getI64IntegerAttr(1));
  }
  if (succeeded(result) && binary) {
    // [1 - p, p] (votes that are probabilities, or a logistic's), else
    // [-s, s].
    FailureOr<Value> other =
        allPositive || transform == "LOGISTIC"
            ? create<l1::SubOp>(loc, constant({1.0}, {1}), *result)
            : create<l1::NegOp>(loc, *result);
    result = failed(other) ? other
                           : create<l1::ConcatOp>(loc, ValueRange{*other, *result},
                                                  builder.getI64IntegerAttr(1));
  }
  if (failed(result))
    return failure();
  define(node, classifier ? 1 : 0, *result);
  return success();
}

LogicalResult Importer::convertEmbeddedForest(const onnx::NodeProto &node,
                                              Location loc) {
  // A model a library saved, carried whole by cuvil.nn.TreeEnsemble: its
  // own importer builds the forest, with the library's exact semantics,
  // and the forest's ops are copied here over the node's input.
  FailureOr<Value> x = getValue(node, 0);
  if (failed(x))
    return failure();
  std::string text = attrString(node, "model", "");
  trees::ForestOutput output =
      attrInt(node, "pred_leaf", 0) != 0 ? trees::ForestOutput::kLeaf
      : attrInt(node, "output_margin", 0) != 0
          ? trees::ForestOutput::kMargin
          : trees::ForestOutput::kPrediction;
  const onnx::AttributeProto *missing =
      typedAttr(node, "missing", onnx::AttributeProto::FLOAT);
  if (badAttribute)
    return failure();
  std::string path = node.name().empty() ? node.op_type() : node.name();
  absl::StatusOr<OwningOpRef<ModuleOp>> forest;
  if (node.op_type() == "XGBoostModel") {
    XgboostImportOptions xgboost;
    xgboost.modelPath = path;
    xgboost.output = output;
    if (missing)
      xgboost.missingValue = missing->f();
    forest = importXgboostModel(context, text, xgboost);
  } else {
    if (missing)
      return emitError(loc) << node.op_type()
                            << " takes no missing value (LightGBM's nodes "
                               "say how they treat missing values)";
    LightgbmImportOptions lightgbm;
    lightgbm.modelPath = path;
    lightgbm.output = output;
    forest = importLightgbmModel(context, text, lightgbm);
  }
  if (!forest.ok())
    return emitError(loc) << node.op_type() << ": "
                          << std::string(forest.status().message());
  auto main = *(*forest)->getOps<func::FuncOp>().begin();
  auto want = cast<RankedTensorType>(main.getArgument(0).getType());
  auto have = cast<RankedTensorType>(x->getType());
  if (have.getRank() != 2 || have.isDynamicDim(1) ||
      have.getDimSize(1) != want.getDimSize(1))
    return emitError(loc) << node.op_type() << " takes [batch, "
                          << want.getDimSize(1) << "] features, got " << have;
  Value input = *x;
  if (have.getElementType() != want.getElementType())
    input = l1::CastOp::create(builder, loc,
                               have.clone(want.getElementType()), input);
  IRMapping mapping;
  mapping.map(main.getArgument(0), input);
  Value result;
  for (Operation &op : main.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      result = mapping.lookup(ret.getOperand(0));
      break;
    }
    if (auto ensemble = dyn_cast<l1::TreeEnsembleOp>(op)) {
      // Created anew so that its type follows the input's batch.
      SmallVector<Value> operands;
      for (Value operand : ensemble->getOperands())
        operands.push_back(mapping.lookup(operand));
      FailureOr<Operation *> copy = createTyped<l1::TreeEnsembleOp>(
          loc, 1, operands, ensemble->getAttrs());
      if (failed(copy))
        return failure();
      mapping.map(ensemble.getResult(), (*copy)->getResult(0));
      continue;
    }
    builder.clone(op, mapping);
  }
  define(node, 0, result);
  return success();
}

} // namespace cuvil::onnx_import
