"""Tree ensembles of scikit-learn as ONNX-ML models (ai.onnx.ml
TreeEnsembleRegressor with double thresholds and weights), which
cuvil.compile and cuvilc read like any ONNX model.

    model = cuvil.onnx_ml.from_sklearn(estimator)     # an onnx.ModelProto

Each model predicts what the estimator's own methods return, in float64:
predict_proba for classifiers (decision_function with output_margin=True,
for the gradient-boosted ones), predict for regressors. The arithmetic is
scikit-learn's, step for step, so the results are exact (docs/trees.md):

- features are float32 (float64 for HistGradientBoosting*), compared with
  float64 thresholds by `<=`; HistGradientBoosting's missing values go
  where each node says (NaN never counts as missing for the others: it
  fails every `<=` and goes right, as it does in scikit-learn);
- a decision tree's class probabilities are its leaf counts divided by
  their sum (computed here with numpy, as scikit-learn does);
- forests sum their trees' outputs from zero in order and divide by the
  number of trees (AVERAGE);
- gradient boosting starts from its initial prediction (a first tree of one
  leaf, so that the sum starts there) and adds learning_rate * leaf value
  (GradientBoosting*) or the shrunk leaf value (HistGradientBoosting*),
  tree by tree; its probabilities are the logistic (two classes: [1 - p,
  p]) or the softmax of those sums.
"""

import numpy as np

__all__ = ["from_sklearn", "is_sklearn_ensemble"]

# The default-domain and ai.onnx.ml opsets the models import.
_OPSET = 17
_ML_OPSET = 3


def is_sklearn_ensemble(model):
    """Whether `model` is a scikit-learn estimator from_sklearn converts."""
    return type(model).__module__.startswith("sklearn.") and \
        type(model).__name__ in _CONVERTERS


class _Trees:
    """The nodes_* and target_* attributes of one TreeEnsembleRegressor."""

    def __init__(self):
        self.nodes = {k: [] for k in ("treeids", "nodeids", "featureids",
                                      "modes", "values", "truenodeids",
                                      "falsenodeids",
                                      "missing_value_tracks_true")}
        self.targets = {k: [] for k in ("treeids", "nodeids", "ids",
                                        "weights")}
        self.count = 0

    def add(self, left, right, feature, threshold, leaf_values,
            missing_left=None, target=None):
        """Adds one tree: arrays by node (left = -1 at a leaf), and
        leaf_values [nodes, outputs] (one output: to `target`)."""
        tree = self.count
        self.count += 1
        left = np.asarray(left, dtype=np.int64)
        n = len(left)
        leaf = left < 0
        branch = lambda v, dtype=np.int64: np.where(
            leaf, 0, np.asarray(v, dtype=dtype)).tolist()
        nodes = self.nodes
        nodes["treeids"] += [tree] * n
        nodes["nodeids"] += list(range(n))
        nodes["featureids"] += branch(feature)
        nodes["modes"] += np.where(leaf, "LEAF", "BRANCH_LEQ").tolist()
        nodes["values"] += branch(threshold, np.float64)
        nodes["truenodeids"] += branch(left)
        nodes["falsenodeids"] += branch(right)
        nodes["missing_value_tracks_true"] += branch(
            0 if missing_left is None else missing_left)
        values = np.asarray(leaf_values, dtype=np.float64).reshape(n, -1)
        rows = np.flatnonzero(leaf)
        outputs = values.shape[1]
        self.targets["treeids"] += [tree] * (len(rows) * outputs)
        self.targets["nodeids"] += np.repeat(rows, outputs).tolist()
        self.targets["ids"] += (np.tile(np.arange(outputs), len(rows)).tolist()
                                if target is None else
                                [target] * (len(rows) * outputs))
        self.targets["weights"] += values[rows].ravel().tolist()

    def add_constant(self, values):
        """A tree of one leaf adding values[k] to target k."""
        values = np.asarray(values, dtype=np.float64).ravel()
        self.add([-1], [-1], [0], [0.0], values.reshape(1, -1))

    def node(self, helper, TensorProto, n_targets, aggregate="SUM",
             transform="NONE", output="scores"):
        as_tensor = lambda name, v: helper.make_tensor(
            name, TensorProto.DOUBLE, [len(v)], v)
        nodes, targets = self.nodes, self.targets
        return helper.make_node(
            "TreeEnsembleRegressor", ["features"], [output],
            domain="ai.onnx.ml", name="trees",
            n_targets=n_targets, aggregate_function=aggregate,
            post_transform=transform,
            nodes_treeids=nodes["treeids"], nodes_nodeids=nodes["nodeids"],
            nodes_featureids=nodes["featureids"], nodes_modes=nodes["modes"],
            nodes_values_as_tensor=as_tensor("nodes_values", nodes["values"]),
            nodes_truenodeids=nodes["truenodeids"],
            nodes_falsenodeids=nodes["falsenodeids"],
            nodes_missing_value_tracks_true=nodes[
                "missing_value_tracks_true"],
            target_treeids=targets["treeids"],
            target_nodeids=targets["nodeids"], target_ids=targets["ids"],
            target_weights_as_tensor=as_tensor("target_weights",
                                               targets["weights"]))


def _tree_arrays(tree):
    t = tree.tree_
    if t.n_outputs != 1:
        raise ValueError("multi-output trees are not supported (the "
                         f"estimator predicts {t.n_outputs} outputs)")
    return t.children_left, t.children_right, t.feature, t.threshold


def _class_probabilities(tree, n_classes):
    """Each node's class probabilities, as DecisionTreeClassifier's
    predict_proba computes them for a row reaching it."""
    # A copy: tree_.value is the fitted tree's own memory.
    proba = np.array(
        tree.tree_.value.reshape(tree.tree_.node_count, -1)[:, :n_classes],
        dtype=np.float64, order="C", copy=True)
    normalizer = proba.sum(axis=1)[:, np.newaxis]
    normalizer[normalizer == 0.0] = 1.0
    proba /= normalizer
    return proba


def _decision_trees(model, margin):
    """DecisionTree*, RandomForest*, ExtraTrees*."""
    estimators = getattr(model, "estimators_", [model])
    classifier = hasattr(model, "classes_")
    if classifier and not np.isscalar(model.n_classes_):
        raise ValueError("multi-output classifiers are not supported")
    trees = _Trees()
    for tree in estimators:
        left, right, feature, threshold = _tree_arrays(tree)
        if classifier:
            values = _class_probabilities(tree, model.n_classes_)
        else:
            values = tree.tree_.value.reshape(tree.tree_.node_count, -1)
        trees.add(left, right, feature, threshold, values)
    targets = int(model.n_classes_) if classifier else 1
    aggregate = "SUM" if len(estimators) == 1 else "AVERAGE"
    return trees, targets, aggregate, "NONE", False, np.float32


def _gradient_boosting_init(model):
    """GradientBoosting*'s initial raw prediction (a constant)."""
    init = model.init_
    if not (isinstance(init, str) and init == "zero") and \
            type(init).__name__ not in ("DummyClassifier", "DummyRegressor"):
        raise ValueError(f"an init estimator ({type(init).__name__}) is not "
                         "supported: its prediction depends on the row")
    row = np.zeros((1, model.n_features_in_), dtype=np.float32)
    return np.asarray(model._raw_predict_init(row), dtype=np.float64)[0]


def _gradient_boosting(model, margin):
    classifier = hasattr(model, "classes_")
    loss = getattr(model, "loss", "")
    if classifier and loss not in ("log_loss", "deviance"):
        raise ValueError(f"GradientBoostingClassifier loss '{loss}' is not "
                         "supported (Cuvil compiles log_loss)")
    trees = _Trees()
    init = _gradient_boosting_init(model)
    trees.add_constant(init)
    for stage in model.estimators_:
        for k, tree in enumerate(stage):
            left, right, feature, threshold = _tree_arrays(tree)
            values = model.learning_rate * tree.tree_.value.reshape(-1)
            trees.add(left, right, feature, threshold, values, target=k)
    targets = len(init)
    transform = "NONE"
    if classifier and not margin:
        transform = "LOGISTIC" if targets == 1 else "SOFTMAX"
    return trees, targets, "SUM", transform, classifier and not margin \
        and targets == 1, np.float32


def _hist_gradient_boosting(model, margin):
    classifier = hasattr(model, "classes_")
    baseline = np.asarray(model._baseline_prediction, dtype=np.float64).ravel()
    trees = _Trees()
    trees.add_constant(baseline)
    for iteration in model._predictors:
        for k, predictor in enumerate(iteration):
            nodes = predictor.nodes
            if nodes["is_categorical"].any():
                raise ValueError("categorical splits (categorical_features) "
                                 "are not supported yet")
            left = np.where(nodes["is_leaf"] != 0, -1,
                            nodes["left"].astype(np.int64))
            trees.add(left, nodes["right"], nodes["feature_idx"],
                      nodes["num_threshold"], nodes["value"],
                      missing_left=nodes["missing_go_to_left"], target=k)
    targets = len(baseline)
    link = type(model._loss.link).__name__
    transform = "NONE"
    if not margin:
        if link == "LogLink":
            transform = "EXP"
        elif link == "LogitLink":
            transform = "LOGISTIC"
        elif link == "MultinomialLogit":
            transform = "SOFTMAX"
        elif link != "IdentityLink":
            raise ValueError(f"the loss's link {link} is not supported")
    return trees, targets, "SUM", transform, classifier and not margin \
        and targets == 1, np.float64


_CONVERTERS = {
    "DecisionTreeClassifier": _decision_trees,
    "DecisionTreeRegressor": _decision_trees,
    "ExtraTreeClassifier": _decision_trees,
    "ExtraTreeRegressor": _decision_trees,
    "RandomForestClassifier": _decision_trees,
    "RandomForestRegressor": _decision_trees,
    "ExtraTreesClassifier": _decision_trees,
    "ExtraTreesRegressor": _decision_trees,
    "GradientBoostingClassifier": _gradient_boosting,
    "GradientBoostingRegressor": _gradient_boosting,
    "HistGradientBoostingClassifier": _hist_gradient_boosting,
    "HistGradientBoostingRegressor": _hist_gradient_boosting,
}


def from_sklearn(model, output_margin=False, float32_features=False):
    """The ONNX-ML model of a fitted scikit-learn tree ensemble.

    Its input "features" is [batch, n_features_in_] float32 (float64 for
    HistGradientBoosting*, which predicts on float64 rows, unless
    float32_features: exact for float32 data, which it converts exactly,
    and such forests take Cuvil's vector walks); its output,
    float64, is "probabilities" (classifiers: predict_proba), "margin"
    (GradientBoosting* and HistGradientBoosting* classifiers with
    output_margin=True: decision_function, one column for two classes) or
    "prediction" (regressors: predict, one column).

    Raises TypeError for other estimators and ValueError for what is not
    supported yet (multi-output trees, categorical splits, init estimators,
    the exponential loss), naming it.
    """
    import onnx
    from onnx import TensorProto, helper

    convert = _CONVERTERS.get(type(model).__name__) \
        if type(model).__module__.startswith("sklearn.") else None
    if convert is None:
        raise TypeError(f"cannot convert a {type(model).__name__}: "
                        "from_sklearn takes " + ", ".join(sorted(_CONVERTERS)))
    if not hasattr(model, "n_features_in_"):
        raise ValueError(f"the {type(model).__name__} is not fitted")
    classifier = hasattr(model, "classes_")
    if output_margin and convert is _decision_trees:
        raise ValueError("output_margin applies to gradient-boosted "
                         "ensembles; a forest's output is its prediction")
    trees, targets, aggregate, transform, binary, dtype = convert(
        model, output_margin)
    if float32_features:
        dtype = np.float32
    # ONNX-ML TreeEnsembleRegressor has no EXP: the exp is its own node.
    exp = transform == "EXP"
    name = "margin" if output_margin else \
        "probabilities" if classifier else "prediction"
    nodes = [trees.node(helper, TensorProto, targets, aggregate,
                        "NONE" if exp else transform,
                        "scores" if binary or exp else name)]
    initializers = []
    if exp:
        nodes.append(helper.make_node("Exp", ["scores"], [name]))
    if binary:
        # predict_proba: [1 - p, p].
        initializers.append(helper.make_tensor("one", TensorProto.DOUBLE,
                                               [1], [1.0]))
        nodes += [helper.make_node("Sub", ["one", "scores"], ["negative"]),
                  helper.make_node("Concat", ["negative", "scores"], [name],
                                   axis=1)]
    width = 2 if binary else targets
    elem = TensorProto.FLOAT if dtype == np.float32 else TensorProto.DOUBLE
    graph = helper.make_graph(
        nodes, type(model).__name__,
        [helper.make_tensor_value_info("features", elem,
                                       ["batch", model.n_features_in_])],
        [helper.make_tensor_value_info(name, TensorProto.DOUBLE,
                                       ["batch", width])],
        initializer=initializers)
    return helper.make_model(graph, producer_name="cuvil.onnx_ml",
                             opset_imports=[helper.make_opsetid("", _OPSET),
                                            helper.make_opsetid("ai.onnx.ml",
                                                                _ML_OPSET)])
