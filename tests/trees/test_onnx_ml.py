"""ONNX-ML forests (ai.onnx.ml TreeEnsembleRegressor / TreeEnsembleClassifier)
compiled by cuvilc and run through the C ABI, against a row-by-row reading of
the ONNX-ML spec written here (walk each tree from its root, a NaN takes the
true branch only where nodes_missing_value_tracks_true says so, sum the
votes in tree order in the weights' precision, add base_values after,
AVERAGE divides by the number of trees, then the post transform), and
against values worked out by hand. No ONNX-ML runtime is installed: the
models are written with onnx.helper. Sums and NONE outputs are compared
bit for bit; transformed outputs within 1e-6 relative (float32) or 1e-15
(float64)."""

import itertools
import math
import pathlib
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
CUVILC = ROOT / "bazel-bin" / "tools" / "cuvilc"
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from cuvil_e2e import CompiledModel  # noqa: E402

COUNTER = itertools.count()
MODES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ",
         "BRANCH_NEQ"]


def random_forest(rng, trees, depth, features, targets, modes=("BRANCH_LEQ",),
                  vote_targets=None, votes_per_leaf=1):
    """nodes_* and votes of random trees; node ids shuffled within a tree
    and trees listed out of id order, as the spec allows."""
    nodes = {k: [] for k in ("treeids", "nodeids", "featureids", "modes",
                             "values", "truenodeids", "falsenodeids",
                             "missing_value_tracks_true")}
    votes = {k: [] for k in ("treeids", "nodeids", "ids", "weights")}
    for tree in rng.permutation(trees) * 3 + 1:
        count = 2 ** (depth + 1) - 1
        ids = rng.permutation(count) + 10
        for i in range(count):
            leaf = i >= 2 ** depth - 1 or (i > 0 and rng.random() < 0.15)
            nodes["treeids"].append(int(tree))
            nodes["nodeids"].append(int(ids[i]))
            nodes["featureids"].append(int(rng.integers(features)))
            nodes["modes"].append("LEAF" if leaf else str(rng.choice(modes)))
            # Thresholds on a coarse grid so that EQ / NEQ sometimes hold.
            nodes["values"].append(float(rng.integers(-4, 5)) / 2)
            nodes["truenodeids"].append(0 if leaf else int(ids[2 * i + 1]))
            nodes["falsenodeids"].append(0 if leaf else int(ids[2 * i + 2]))
            nodes["missing_value_tracks_true"].append(int(rng.integers(2)))
            if leaf:
                for _ in range(votes_per_leaf):
                    votes["treeids"].append(int(tree))
                    votes["nodeids"].append(int(ids[i]))
                    votes["ids"].append(int(rng.integers(targets))
                                        if vote_targets is None
                                        else vote_targets(tree))
                    votes["weights"].append(float(rng.normal()))
    # Nodes under an early leaf are never reached: drop them.
    keep = reachable(nodes)
    for k in nodes:
        nodes[k] = [v for v, kept in zip(nodes[k], keep) if kept]
    kept_leaves = {(t, n) for t, n, m in zip(nodes["treeids"], nodes["nodeids"],
                                             nodes["modes"]) if m == "LEAF"}
    keep_votes = [(t, n) in kept_leaves
                  for t, n in zip(votes["treeids"], votes["nodeids"])]
    for k in votes:
        votes[k] = [v for v, kept in zip(votes[k], keep_votes) if kept]
    return nodes, votes


def reachable(nodes):
    index = {(t, n): i for i, (t, n) in enumerate(zip(nodes["treeids"],
                                                      nodes["nodeids"]))}
    keep = [False] * len(nodes["modes"])
    # random_forest lists each tree's root first.
    first = {}
    for i, t in enumerate(nodes["treeids"]):
        first.setdefault(t, i)
    stack = list(first.values())
    while stack:
        i = stack.pop()
        keep[i] = True
        if nodes["modes"][i] != "LEAF":
            t = nodes["treeids"][i]
            stack += [index[(t, nodes["truenodeids"][i])],
                      index[(t, nodes["falsenodeids"][i])]]
    return keep


def spec_scores(nodes, votes, x, n_scores, weight_type, threshold_type,
                base=None, average=False, binary=False):
    """The spec, row by row: per-target sums in tree order, then base."""
    index = {(t, n): i for i, (t, n) in enumerate(zip(nodes["treeids"],
                                                      nodes["nodeids"]))}
    children = {(nodes["treeids"][i], c) for i, m in enumerate(nodes["modes"])
                if m != "LEAF"
                for c in (nodes["truenodeids"][i], nodes["falsenodeids"][i])}
    order = list(dict.fromkeys(nodes["treeids"]))
    roots = {t: i for (t, n), i in index.items() if (t, n) not in children}
    # A leaf's votes for one target are one vote of their sum (in double:
    # Cuvil's reading; onnxruntime adds them one by one).
    leaf_votes = {}
    for t, n, k, w in zip(votes["treeids"], votes["nodeids"], votes["ids"],
                          votes["weights"]):
        target = 0 if binary else k
        sums = leaf_votes.setdefault((t, n), {})
        sums[target] = sums.get(target, 0.0) + float(weight_type(w))
    leaf_votes = {key: list(sums.items()) for key, sums in leaf_votes.items()}
    thresholds = np.array(nodes["values"], dtype=threshold_type)
    out = np.zeros((len(x), n_scores), dtype=weight_type)
    for r, row in enumerate(x):
        for tree in order:
            i = roots[tree]
            while nodes["modes"][i] != "LEAF":
                v, t = float(row[nodes["featureids"][i]]), float(thresholds[i])
                mode = nodes["modes"][i]
                if math.isnan(v) and nodes["missing_value_tracks_true"][i]:
                    go = True
                else:
                    go = {"BRANCH_LEQ": v <= t, "BRANCH_LT": v < t,
                          "BRANCH_GTE": v >= t, "BRANCH_GT": v > t,
                          "BRANCH_EQ": v == t, "BRANCH_NEQ": v != t}[mode]
                child = nodes["truenodeids" if go else "falsenodeids"][i]
                i = index[(tree, child)]
            for k, w in leaf_votes.get((tree, nodes["nodeids"][i]), []):
                out[r, k] += weight_type(w)
    if average:
        out /= weight_type(len(order))
    if base is not None:
        out += np.asarray(base, dtype=weight_type)
    return out


def model_of(op, nodes, votes, features, x_type=TensorProto.FLOAT,
             outputs=("Y",), double_nodes=False, double_votes=False,
             prefix="target_", **attrs):
    node_attrs = {f"nodes_{k}": v for k, v in nodes.items()}
    if double_nodes:
        node_attrs["nodes_values_as_tensor"] = helper.make_tensor(
            "v", TensorProto.DOUBLE, [len(nodes["values"])], nodes["values"])
        del node_attrs["nodes_values"]
    vote_attrs = {f"{prefix}{k}": v for k, v in votes.items()}
    if double_votes and "weights" in votes:
        vote_attrs[f"{prefix}weights_as_tensor"] = helper.make_tensor(
            "w", TensorProto.DOUBLE, [len(votes["weights"])], votes["weights"])
        del vote_attrs[f"{prefix}weights"]
    node = helper.make_node(op, ["X"], list(outputs), domain="ai.onnx.ml",
                            name="forest", **node_attrs, **vote_attrs, **attrs)
    graph = helper.make_graph(
        [node], "forest",
        [helper.make_tensor_value_info("X", x_type, ["N", features])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
         for o in outputs if o])
    return helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)])


def compile_model(model, tmp_path, check=True):
    name = f"forest{next(COUNTER)}"
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    so = tmp_path / f"{name}.so"
    result = subprocess.run([str(CUVILC), "--quiet", str(path), "-o", str(so),
                             "--max-batch=4096"], capture_output=True,
                            text=True)
    if not check:
        return result
    assert result.returncode == 0, result.stderr
    return CompiledModel(so)


def rows(rng, n, features, dtype=np.float32, nan_share=0.1):
    x = (rng.integers(-5, 6, size=(n, features)) / 2).astype(dtype)
    x += rng.normal(scale=0.3, size=x.shape).astype(dtype) * \
        (rng.random(x.shape) < 0.5)
    x[rng.random(x.shape) < nan_share] = np.nan
    return x


@pytest.mark.parametrize("double_nodes,double_votes",
                         [(False, False), (True, True), (True, False)])
def test_regressor_of_every_comparison(tmp_path, double_nodes, double_votes):
    rng = np.random.default_rng(0)
    nodes, votes = random_forest(rng, 12, 4, 6, 3, modes=MODES,
                                 votes_per_leaf=2)
    base = [0.5, -1.25, 3.0]
    model = model_of("TreeEnsembleRegressor", nodes, votes, 6, n_targets=3,
                     base_values=base, double_nodes=double_nodes,
                     double_votes=double_votes)
    compiled = compile_model(model, tmp_path)
    x = rows(rng, 700, 6)
    wtype = np.float64 if double_votes else np.float32
    want = spec_scores(nodes, votes, x, 3, wtype,
                       np.float64 if double_nodes else np.float32, base=base)
    (got,) = compiled(x, batch=len(x))
    assert got.dtype == wtype
    assert np.array_equal(got, want)
    (two_threads,) = compiled(x, batch=len(x), threads=2)
    assert np.array_equal(two_threads, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_average_and_one_target_per_tree(tmp_path, dtype):
    # float32 throughout, one comparison and a value per leaf: the vector
    # walks (averaged after them).
    rng = np.random.default_rng(1)
    nodes, votes = random_forest(rng, 9, 3, 5, 3,
                                 vote_targets=lambda tree: int(tree) % 3)
    double = dtype == np.float64
    model = model_of("TreeEnsembleRegressor", nodes, votes, 5, n_targets=3,
                     aggregate_function="AVERAGE", base_values=[1.0, 2.0, 3.0],
                     double_votes=double, double_nodes=double,
                     x_type=TensorProto.DOUBLE if double else TensorProto.FLOAT)
    compiled = compile_model(model, tmp_path)
    x = rows(rng, 300, 5, dtype=dtype)
    want = spec_scores(nodes, votes, x, 3, dtype, dtype,
                       base=[1.0, 2.0, 3.0], average=True)
    (got,) = compiled(x, batch=len(x))
    assert np.array_equal(got, want)


def test_regressor_transforms(tmp_path):
    rng = np.random.default_rng(2)
    nodes, votes = random_forest(rng, 6, 3, 4, 3)
    x = rows(rng, 200, 4)
    sums = spec_scores(nodes, votes, x, 3, np.float32, np.float32)
    for transform, want in [
            ("LOGISTIC", 1 / (1 + np.exp(-sums.astype(np.float64)))),
            ("SOFTMAX", np.exp(sums - sums.max(1, keepdims=True)) /
             np.exp(sums - sums.max(1, keepdims=True)).sum(1, keepdims=True))]:
        model = model_of("TreeEnsembleRegressor", nodes, votes, 4, n_targets=3,
                         post_transform=transform)
        (got,) = compile_model(model, tmp_path)(x, batch=len(x))
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def stump(leaf_weights, class_ids, threshold=0.0, **attrs):
    """A one-split tree on feature 0, as a classifier's votes."""
    nodes = {"treeids": [0, 0, 0], "nodeids": [0, 1, 2],
             "featureids": [0, 0, 0], "modes": ["BRANCH_LEQ", "LEAF", "LEAF"],
             "values": [threshold, 0.0, 0.0], "truenodeids": [1, 0, 0],
             "falsenodeids": [2, 0, 0]}
    votes = {"treeids": [0] * len(leaf_weights),
             "nodeids": [n for n, _ in leaf_weights],
             "ids": class_ids, "weights": [w for _, w in leaf_weights]}
    return nodes, votes


def test_classifier_probabilities_by_hand(tmp_path):
    x = np.array([[-1.0], [1.0]], dtype=np.float32)
    # Three classes, softmax of the votes plus base values.
    nodes, votes = stump([(1, 1.0), (1, 2.0), (2, 3.0)], [0, 1, 2])
    model = model_of("TreeEnsembleClassifier", nodes, votes, 1,
                     outputs=("", "P"), prefix="class_",
                     classlabels_int64s=[10, 20, 30],
                     base_values=[0.0, 0.0, 1.0], post_transform="SOFTMAX")
    (got,) = compile_model(model, tmp_path)(x, batch=2)
    for row, scores in zip(got, [[1.0, 2.0, 1.0], [0.0, 0.0, 4.0]]):
        e = np.exp(np.array(scores) - max(scores))
        np.testing.assert_allclose(row, e / e.sum(), rtol=1e-6)
    # Two labels, votes for one class: its score s is the positive class's.
    nodes, votes = stump([(1, 0.25), (2, 0.75)], [1, 1])
    model = model_of("TreeEnsembleClassifier", nodes, votes, 1,
                     outputs=("", "P"), prefix="class_",
                     classlabels_strings=["no", "yes"])
    (got,) = compile_model(model, tmp_path)(x, batch=2)
    assert got.tolist() == [[0.75, 0.25], [0.25, 0.75]]
    nodes, votes = stump([(1, -0.5), (2, 2.0)], [0, 0])
    model = model_of("TreeEnsembleClassifier", nodes, votes, 1,
                     outputs=("", "P"), prefix="class_",
                     classlabels_int64s=[0, 1], post_transform="LOGISTIC")
    (got,) = compile_model(model, tmp_path)(x, batch=2)
    p = 1 / (1 + np.exp([0.5, -2.0]))
    np.testing.assert_allclose(got, np.stack([1 - p, p], 1), rtol=1e-6)
    model = model_of("TreeEnsembleClassifier", nodes, votes, 1,
                     outputs=("", "P"), prefix="class_",
                     classlabels_int64s=[0, 1])
    (got,) = compile_model(model, tmp_path)(x, batch=2)
    assert got.tolist() == [[0.5, -0.5], [-2.0, 2.0]]


def test_multiclass_classifier_against_the_spec(tmp_path):
    rng = np.random.default_rng(3)
    nodes, votes = random_forest(rng, 10, 4, 7, 4, modes=("BRANCH_LT",
                                                          "BRANCH_GTE"))
    model = model_of("TreeEnsembleClassifier", nodes, votes, 7,
                     outputs=("", "P"), prefix="class_",
                     classlabels_int64s=[0, 1, 2, 3], double_votes=True,
                     double_nodes=True)
    x = rows(rng, 500, 7)
    (got,) = compile_model(model, tmp_path)(x, batch=len(x))
    assert np.array_equal(got, spec_scores(nodes, votes, x, 4, np.float64,
                                           np.float64))


ERRORS = [
    (dict(aggregate_function="MAX"), "aggregate_function 'MAX' is not "
     "supported"),
    (dict(post_transform="PROBIT"), "post_transform 'PROBIT' is not "
     "supported"),
    (dict(mode="BRANCH_MEMBER"), "tree 0 node 0 has mode 'BRANCH_MEMBER'"),
    (dict(true_child=7), "tree 0 node 0 has child 7, which is not a node of "
     "the tree"),
    (dict(vote_id=5), "target_ids[0] is 5, outside the 2 targets"),
    (dict(vote_node=0), "tree 0 node 0 is a branch with target_weights"),
    (dict(vote_tree=4), "1 of its 2 target_weights on no leaf"),
    (dict(feature=9), "tree 0 node 0: splits on feature 9 of 3"),
    (dict(n_targets=0), "has 0 targets"),
    (dict(base_values=[1.0, 2.0, 3.0]), "has 3 base_values for its 2 scores"),
    (dict(node_id=1), "tree 0 has node id 1 twice"),
    (dict(nodes_featureids=[0, 0]), "has nodes_* attributes of different "
     "lengths"),
    (dict(target_ids=[0]), "needs target_treeids, target_nodeids, target_ids "
     "and target_weights of one length"),
    (dict(no_weights=True, target_weights_as_tensor=helper.make_tensor(
        "w", TensorProto.INT64, [2], [1, 2])),
     "attribute 'target_weights_as_tensor' holds INT64; it must be DOUBLE "
     "or FLOAT"),
    (dict(target_weights_as_tensor=helper.make_tensor(
        "w", TensorProto.DOUBLE, [2], [1.0, 2.0])),
     "gives both 'target_weights' and 'target_weights_as_tensor'"),
]


@pytest.mark.parametrize("change,message", ERRORS,
                         ids=[m.split(" ")[0] for _, m in ERRORS])
def test_malformed_forests_are_named(tmp_path, change, message):
    change = dict(change)
    nodes, votes = stump([(1, 1.0), (2, 2.0)], [0, 1])
    nodes["modes"][0] = change.pop("mode", nodes["modes"][0])
    nodes["truenodeids"][0] = change.pop("true_child", 1)
    nodes["featureids"][0] = change.pop("feature", 0)
    votes["ids"][0] = change.pop("vote_id", 0)
    votes["nodeids"][0] = change.pop("vote_node", 1)
    votes["treeids"][0] = change.pop("vote_tree", 0)
    nodes["nodeids"][2] = change.pop("node_id", 2)
    if change.pop("no_weights", False):
        del votes["weights"]
    for key in [k for k in change if k.startswith(("nodes_", "target_"))
                and not k.endswith("_as_tensor")]:
        group = nodes if key.startswith("nodes_") else votes
        group[key.split("_", 1)[1]] = change.pop(key)
    attrs = dict(n_targets=2)
    attrs.update(change)
    model = model_of("TreeEnsembleRegressor", nodes, votes, 3, **attrs)
    result = compile_model(model, tmp_path, check=False)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
    assert "forest" in result.stderr  # the node's name
    assert not list(tmp_path.glob("*.so"))


def test_two_roots_and_a_binary_softmax_are_refused(tmp_path):
    nodes, votes = stump([(1, 1.0), (2, 2.0)], [0, 1])
    nodes["truenodeids"][0] = 2  # node 1 is now nobody's child
    result = compile_model(model_of("TreeEnsembleRegressor", nodes, votes, 1,
                                    n_targets=2), tmp_path, check=False)
    assert "tree 0 has 2 nodes that no node points at; a tree has one root" \
        in result.stderr
    nodes, votes = stump([(1, 1.0), (2, 2.0)], [1, 1])
    result = compile_model(model_of(
        "TreeEnsembleClassifier", nodes, votes, 1, outputs=("", "P"),
        prefix="class_", classlabels_int64s=[0, 1],
        post_transform="SOFTMAX"), tmp_path, check=False)
    assert "post_transform SOFTMAX over a binary classifier's one score is " \
        "not defined; use LOGISTIC" in result.stderr


def test_features_of_unknown_width_are_refused(tmp_path):
    nodes, votes = stump([(1, 1.0), (2, 2.0)], [0, 0])
    model = model_of("TreeEnsembleRegressor", nodes, votes, 1, n_targets=1)
    model.graph.input[0].type.tensor_type.shape.dim[1].dim_param = "F"
    result = compile_model(model, tmp_path, check=False)
    assert "expects X [batch, features] of float or double with known " \
        "features" in result.stderr


def test_a_used_label_output_is_refused(tmp_path):
    nodes, votes = stump([(1, 1.0), (2, 2.0)], [0, 1])
    model = model_of("TreeEnsembleClassifier", nodes, votes, 1,
                     outputs=("label", "P"), prefix="class_",
                     classlabels_int64s=[0, 1])
    result = compile_model(model, tmp_path, check=False)
    assert result.returncode != 0
    assert "output 'label' (the predicted label) is not compiled yet" in \
        result.stderr


def embedded(op, text, features, **attrs):
    """A graph of one ai.cuvil node carrying a saved model (what
    cuvil.nn.TreeEnsemble exports)."""
    node = helper.make_node(op, ["X"], ["Y"], domain="ai.cuvil",
                            name="trees", model=text, **attrs)
    graph = helper.make_graph(
        [node], "embedded",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                       ["N", features])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("ai.cuvil", 1)])


def test_embedded_saved_models(tmp_path):
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(6)
    x = rng.normal(size=(300, 4)).astype(np.float32)
    x[rng.random(x.shape) < 0.1] = -7.0
    booster = xgb.train({"objective": "binary:logistic", "max_depth": 3,
                         "nthread": 1, "seed": 0},
                        xgb.DMatrix(x, label=x[:, 0] > 0, missing=-7.0), 10)
    text = bytes(booster.save_raw("json")).decode()
    model = compile_model(embedded("XGBoostModel", text, 4, output_margin=1,
                                   missing=-7.0), tmp_path)
    (got,) = model(x, batch=len(x))
    want = booster.predict(xgb.DMatrix(x, missing=-7.0), output_margin=True)
    assert np.array_equal(got[:, 0], want)
    # The LightGBM fixture takes float64: the float32 input is cast.
    fixture = (pathlib.Path(__file__).parent / "fixtures" /
               "lightgbm_binary.txt").read_text()
    model = compile_model(embedded("LightGBMModel", fixture, 3,
                                   output_margin=1), tmp_path)
    (got,) = model(np.array([[50, 10, 0], [200, 1, 0.5]], np.float32),
                   batch=2)
    assert got[:, 0].tolist() == [-0.375, 1.625]
    for graph, message in [
            (embedded("XGBoostModel", text, 5), "XGBoostModel takes [batch, "
             "4] features"),
            (embedded("XGBoostModel", "{", 4), "XGBoostModel: trees: not "
             "JSON"),
            (embedded("LightGBMModel", fixture, 3, missing=1.0),
             "LightGBMModel takes no missing value")]:
        result = compile_model(graph, tmp_path, check=False)
        assert result.returncode != 0 and message in result.stderr, \
            result.stderr
