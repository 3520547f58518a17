"""LightGBM text models compiled by cuvilc and run through the C ABI.
LightGBM is not packaged for Debian: the models are hand-written
(fixtures/lightgbm_binary.txt, its outputs worked out by hand below) or
generated here in the format GBDT::SaveModelToString writes, and checked
against LightGBM's documented rules, coded here row by row from its
Tree::NumericalDecision (include/LightGBM/tree.h):

    if isnan(x) and missing_type != NaN: x = 0.0
    if (missing_type == Zero and -1e-35f <= x <= 1e-35f) or
       (missing_type == NaN and isnan(x)):
        go to the default child (decision_type bit 1: left)
    else: go left if x <= threshold (double)

decision_type: bit 0 categorical, bit 1 default left, bits 2-3 the missing
type (0 None, 1 Zero, 2 NaN). Raw scores are double sums of the leaf values
in tree order, tree i adding to class i % num_tree_per_iteration, divided by
the number of iterations with average_output; then the objective's
transform (binary: 1 / (1 + exp(-x)); multiclass: softmax; multiclassova:
each class's sigmoid; poisson and the like: exp). Raw scores are compared
bit for bit, transformed ones within 2 ulp (numpy's exp and libm's may
differ in the last bit)."""

import itertools
import math
import pathlib
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CUVILC = ROOT / "bazel-bin" / "tools" / "cuvilc"
FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from cuvil_e2e import CompiledModel  # noqa: E402

COUNTER = itertools.count()
ZERO = float(np.float32(1e-35))
ULP2 = 2 * np.finfo(np.float64).eps


def random_tree(rng, leaves, features, missing_types, grid):
    """A tree of `leaves` leaves as LightGBM numbers it: internal nodes 0..
    leaves-2 (0 the root), leaf j written ~j = -(j + 1)."""
    tree = {"split_feature": [], "threshold": [], "decision_type": [],
            "left_child": [], "right_child": []}
    # Grow by splitting a random pending slot until there are enough leaves.
    nodes = [{"parent": None}]
    leaf_list = [0]  # node ids that are leaves
    while len(leaf_list) < leaves:
        node = leaf_list.pop(rng.integers(len(leaf_list)))
        nodes[node]["split"] = True
        for side in ("left", "right"):
            nodes.append({"parent": node, "side": side})
            nodes[node][side] = len(nodes) - 1
            leaf_list.append(len(nodes) - 1)
    inner = [i for i, n in enumerate(nodes) if n.get("split")]
    inner_id = {n: k for k, n in enumerate(inner)}
    leaf_id = {n: k for k, n in enumerate(sorted(leaf_list))}
    ref = lambda n: inner_id[n] if n in inner_id else ~leaf_id[n]
    for n in inner:
        missing = int(rng.choice(missing_types))
        tree["split_feature"].append(int(rng.integers(features)))
        tree["threshold"].append(float(rng.choice(grid)))
        tree["decision_type"].append((missing << 2) |
                                     (2 if rng.random() < 0.5 else 0))
        tree["left_child"].append(ref(nodes[n]["left"]))
        tree["right_child"].append(ref(nodes[n]["right"]))
    tree["leaf_value"] = rng.normal(size=leaves).tolist()
    return tree


def write_model(path, trees, features, objective="regression",
                per_iteration=1, average=False):
    fmt = lambda values: " ".join(repr(float(v)) if isinstance(v, float)
                                  else str(v) for v in values)
    lines = ["tree", "version=v3", f"num_class={per_iteration}",
             f"num_tree_per_iteration={per_iteration}", "label_index=0",
             f"max_feature_idx={features - 1}", f"objective={objective}"]
    if average:
        lines.append("average_output")
    lines += ["feature_names=" + " ".join(f"f{i}" for i in range(features)),
              "feature_infos=" + " ".join(["none"] * features),
              "tree_sizes=" + " ".join(["100"] * len(trees)), ""]
    for i, t in enumerate(trees):
        leaves = len(t["leaf_value"])
        cats = len(t.get("cat_boundaries", [0])) - 1
        lines += [f"Tree={i}", f"num_leaves={leaves}", f"num_cat={cats}"]
        for key in ("split_feature", "threshold", "decision_type",
                    "left_child", "right_child"):
            lines.append(f"{key}={fmt(t[key])}")
        if cats:
            lines += [f"cat_boundaries={fmt(t['cat_boundaries'])}",
                      f"cat_threshold={fmt(t['cat_threshold'])}"]
        lines += [f"leaf_value={fmt(t['leaf_value'])}",
                  "leaf_count=" + " ".join(["1"] * leaves),
                  "is_linear=0", "shrinkage=0.1", "", ""]
    lines += ["end of trees", "", "parameters:", "end of parameters", "",
              "pandas_categorical:null", ""]
    path.write_text("\n".join(lines))


def reference(trees, x, per_iteration=1, average=False, leaves=False):
    """Sums by LightGBM's documented rules (leaves: each tree's leaf index,
    pred_leaf=True)."""
    out = np.zeros((len(x), len(trees) if leaves else per_iteration))
    for r, row in enumerate(x):
        for i, t in enumerate(trees):
            node = 0 if t.get("left_child") else ~0
            while node >= 0:
                v = float(row[t["split_feature"][node]])
                kind = t["decision_type"][node]
                missing = (kind >> 2) & 3
                if kind & 1:
                    left = category_goes_left(t, node, v)
                    node = t["left_child" if left else "right_child"][node]
                    continue
                if math.isnan(v) and missing != 2:
                    v = 0.0
                if (missing == 1 and -ZERO <= v <= ZERO) or \
                        (missing == 2 and math.isnan(v)):
                    left = bool(kind & 2)
                else:
                    left = v <= t["threshold"][node]
                node = t["left_child" if left else "right_child"][node]
            if leaves:
                out[r, i] = ~node
                continue
            out[r, i % per_iteration] += t["leaf_value"][~node]
    if average:
        out /= len(trees) // per_iteration
    return out


def category_goes_left(tree, node, v):
    """CategoricalDecision: NaN and negative categories go right; else the
    truncated value's bit in the node's set (cat_threshold words
    cat_boundaries[k] .. cat_boundaries[k + 1], k = threshold)."""
    if math.isnan(v) or not -1 < v < 2 ** 31:
        return False
    c = int(v)
    k = int(tree["threshold"][node])
    lo, hi = tree["cat_boundaries"][k], tree["cat_boundaries"][k + 1]
    if c // 32 >= hi - lo:
        return False
    return bool((tree["cat_threshold"][lo + c // 32] >> (c % 32)) & 1)


def add_categorical_splits(rng, tree, features):
    """Turns some of `tree`'s splits into categorical ones on feature 0."""
    tree["cat_boundaries"], tree["cat_threshold"] = [0], []
    for node in range(len(tree["threshold"])):
        if rng.random() < 0.4:
            words = [int(w) for w in rng.integers(0, 2 ** 32, size=int(
                rng.integers(1, 3)), dtype=np.uint64)]
            tree["threshold"][node] = float(len(tree["cat_boundaries"]) - 1)
            tree["cat_threshold"] += words
            tree["cat_boundaries"].append(len(tree["cat_threshold"]))
            tree["decision_type"][node] = 1 | (tree["decision_type"][node] & 2)
            tree["split_feature"][node] = 0
    del features


def compile_text(path, tmp_path, *flags, check=True):
    so = tmp_path / f"lgb{next(COUNTER)}.so"
    result = subprocess.run([str(CUVILC), "--quiet", str(path), "-o", str(so),
                             "--max-batch=4096", *flags],
                            capture_output=True, text=True)
    if not check:
        return result
    assert result.returncode == 0, result.stderr
    return CompiledModel(so)


def rows(rng, n, features):
    grid = np.array([-1.0, -0.5, 0.0, 0.5, 1.0, 1e-36, -1e-36, 2e-35])
    x = rng.normal(size=(n, features))
    pick = rng.random(x.shape)
    x[pick < 0.25] = rng.choice(grid, size=(pick < 0.25).sum())
    x[pick > 0.85] = np.nan
    return x


def forest(rng, count, features, missing_types=(0, 1, 2)):
    grid = [-0.5, 0.0, 0.5, ZERO, -ZERO, 1.25]
    return [random_tree(rng, int(rng.integers(1, 12)), features,
                        missing_types, grid) for _ in range(count)]


def test_fixture_by_hand(tmp_path):
    """Tree 0: amount <= 100.5 (missing None, NaN as 0.0: left) -> -0.5;
    else merchant_risk <= 1e-35f (missing Zero, default left) -> 0.25
    else 1.5. Tree 1: age_days <= 30 (missing NaN, default right) -> 0.125
    else -0.375."""
    model = compile_text(FIXTURES / "lightgbm_binary.txt", tmp_path,
                         "--tree-output=margin")
    nan = float("nan")
    x = np.array([[50.0, 10.0, 0.0],      # -0.5 + 0.125
                  [nan, 40.0, 0.9],       # NaN amount as 0: -0.5 - 0.375
                  [200.0, nan, 0.0],      # zero risk missing: 0.25; NaN -0.375
                  [200.0, 30.0, 5e-36],   # within 1e-35: missing, 0.25; 30 <= 30
                  [200.0, 31.0, -0.2],    # -0.2 <= 1e-35: 0.25 - 0.375
                  [200.0, 1.0, nan],      # NaN risk is missing: 0.25 + 0.125
                  [200.0, 1.0, 0.5]])     # 1.5 + 0.125
    (margins,) = model(x, batch=len(x))
    want = [-0.375, -0.875, -0.125, 0.375, -0.125, 0.375, 1.625]
    assert margins[:, 0].tolist() == want
    probabilities = compile_text(FIXTURES / "lightgbm_binary.txt", tmp_path)
    (p,) = probabilities(x, batch=len(x))
    assert np.allclose(p[:, 0], 1 / (1 + np.exp(-np.array(want))),
                       rtol=ULP2, atol=0)


@pytest.mark.parametrize("missing_types", [(0,), (1,), (2,), (0, 1, 2)],
                         ids=["none", "zero", "nan", "mixed"])
def test_regression_is_exact(tmp_path, missing_types):
    rng = np.random.default_rng(len(missing_types) * 7 + missing_types[0])
    trees = forest(rng, 30, 5, missing_types)
    path = tmp_path / "model.txt"
    write_model(path, trees, 5)
    model = compile_text(path, tmp_path)
    x = rows(rng, 800, 5)
    (got,) = model(x, batch=len(x))
    assert np.array_equal(got, reference(trees, x))
    (two,) = model(x, batch=len(x), threads=2)
    assert np.array_equal(two, got)
    (one,) = model(x[:1], batch=1)
    assert np.array_equal(one, got[:1])


def test_float32_features(tmp_path):
    """--tree-features=float32: float32 rows, exact (LightGBM reads them in
    double, exactly); the None and NaN missing types take the vector walks,
    the Zero type the tables."""
    rng = np.random.default_rng(19)
    for missing_types in [(0, 2), (0, 1, 2)]:
        trees = forest(rng, 40, 6, missing_types)
        path = tmp_path / f"f32_{len(missing_types)}.txt"
        write_model(path, trees, 6)
        model = compile_text(path, tmp_path, "--tree-features=float32")
        assert model.metadata["inputs"][0]["dtype"] == "float32"
        x = rows(rng, 700, 6).astype(np.float32)
        want = reference(trees, x.astype(np.float64))
        (got,) = model(x, batch=len(x))
        assert np.array_equal(got, want)
        (few,) = model(x[:5], batch=5)
        assert np.array_equal(few, want[:5])
    result = compile_text(path, tmp_path, "--tree-features=float16",
                          check=False)
    assert result.returncode == 2
    assert "--tree-features must be float32 or float64" in result.stderr
    result = compile_text(ROOT / "examples" / "classifier.mlir", tmp_path,
                          "--tree-features=float32", check=False)
    assert result.returncode != 0
    assert "--tree-features applies to LightGBM" in result.stderr


def test_pred_leaf_gives_each_trees_leaf_index(tmp_path):
    """--tree-output=leaf: [rows, trees] of leaf indices (float64), every
    missing type and categorical splits routed as for the sums."""
    rng = np.random.default_rng(11)
    trees = forest(rng, 3 * 6, 5)
    for tree in trees[::4]:
        add_categorical_splits(rng, tree, 5)
    path = tmp_path / "leaves.txt"
    write_model(path, trees, 5, objective="multiclass num_class:3",
                per_iteration=3)
    x = rows(rng, 500, 5)
    (got,) = compile_text(path, tmp_path, "--tree-output=leaf")(x, batch=500)
    assert got.dtype == np.float64 and got.shape == (500, 18)
    assert np.array_equal(got, reference(trees, x, leaves=True))


@pytest.mark.parametrize("objective,transform", [
    ("multiclass num_class:3", "softmax"),
    ("multiclassova num_class:3 sigmoid:1", "sigmoid"),
])
def test_multiclass(tmp_path, objective, transform):
    rng = np.random.default_rng(3)
    trees = forest(rng, 3 * 8, 4)
    path = tmp_path / "multi.txt"
    write_model(path, trees, 4, objective, per_iteration=3)
    x = rows(rng, 300, 4)
    raw = reference(trees, x, per_iteration=3)
    (margins,) = compile_text(path, tmp_path, "--tree-output=margin")(
        x, batch=len(x))
    assert np.array_equal(margins, raw)
    (got,) = compile_text(path, tmp_path)(x, batch=len(x))
    if transform == "softmax":
        e = np.exp(raw - raw.max(1, keepdims=True))
        want = e / e.sum(1, keepdims=True)
    else:
        want = 1 / (1 + np.exp(-raw))
    assert np.all(np.abs(got - want) <= 2 * ULP2 * np.abs(want))


def test_random_forest_mode_averages(tmp_path):
    rng = np.random.default_rng(4)
    trees = forest(rng, 12, 3)
    path = tmp_path / "rf.txt"
    write_model(path, trees, 3, "poisson", average=True)
    x = rows(rng, 200, 3)
    raw = reference(trees, x, average=True)
    (margins,) = compile_text(path, tmp_path, "--tree-output=margin")(
        x, batch=len(x))
    assert np.array_equal(margins, raw)
    (got,) = compile_text(path, tmp_path)(x, batch=len(x))
    assert np.all(np.abs(got - np.exp(raw)) <= ULP2 * np.exp(raw))


def test_categorical_splits(tmp_path):
    rng = np.random.default_rng(5)
    trees = forest(rng, 20, 3)
    for tree in trees:
        add_categorical_splits(rng, tree, 3)
    path = tmp_path / "categories.txt"
    write_model(path, trees, 3)
    x = rows(rng, 600, 3)
    # Categories 0..63 (some past the sets' words), negatives, fractions.
    x[:, 0] = rng.choice([*range(64), -1.0, -0.5, 0.5, 31.9, 2.0 ** 31,
                          np.nan], size=len(x))
    (got,) = compile_text(path, tmp_path)(x, batch=len(x))
    assert np.array_equal(got, reference(trees, x))


def test_categorical_fixture_by_hand(tmp_path):
    """The fixture's tree 1 made categorical on feature 1: categories 1, 3
    and 33 go left (words 0b1010 and 0b10), NaN and the rest right."""
    text = (FIXTURES / "lightgbm_binary.txt").read_text()
    text = edit(text, "num_leaves=2\nnum_cat=0", "num_leaves=2\nnum_cat=1")
    text = edit(text, "threshold=30\ndecision_type=8",
                "threshold=0\ndecision_type=1\ncat_boundaries=0 2\n"
                "cat_threshold=10 2")
    path = tmp_path / "categorical.txt"
    path.write_text(text)
    model = compile_text(path, tmp_path, "--tree-output=margin")
    # Tree 0 gives -0.5 (amount 50); tree 1 +0.125 left, -0.375 right.
    ages = [1.0, 3.0, 33.0, 3.7, 2.0, 0.0, -1.0, float("nan"), 64.0]
    x = np.array([[50.0, a, 0.0] for a in ages])
    (margins,) = model(x, batch=len(x))
    assert margins[:, 0].tolist() == [-0.375, -0.375, -0.375, -0.375,
                                      -0.875, -0.875, -0.875, -0.875, -0.875]


def edit(text, old, new):
    assert old in text
    return text.replace(old, new, 1)


ERRORS = [
    (lambda t: edit(t, "decision_type=2 6", "decision_type=3 6"),
     "tree 0 node 0: category set 100.5 is not one of cat_boundaries'"),
    (lambda t: edit(t, "is_linear=0", "is_linear=1"),
     "tree 0: linear trees (linear_tree=true) are not supported"),
    (lambda t: edit(t, "objective=binary sigmoid:1",
                    "objective=binary sigmoid:2"),
     "objective 'binary sigmoid:2' scales its sigmoid"),
    (lambda t: edit(t, "objective=binary sigmoid:1",
                    "objective=cross_entropy_lambda"),
     "objective 'cross_entropy_lambda' is not supported"),
    (lambda t: t[:t.index("end of trees")],
     "the model ends before 'end of trees'"),
    (lambda t: edit(t, "version=v3", "version=v9"),
     "LightGBM model format 'v9' is not supported"),
    (lambda t: "hello\n" + t, "not a LightGBM text model"),
    (lambda t: edit(t, "left_child=-1 -2", "left_child=-1 -7"),
     "tree 0 node 1: leaf 6 of 3"),
    (lambda t: edit(t, "left_child=-1 -2", "left_child=-1 0"),
     "tree 0 node 1: child 0 is not a new node"),
    (lambda t: edit(t, "right_child=1 -3", "right_child=4 -3"),
     "tree 0 node 0: child 4 of 2 internal nodes"),
    (lambda t: edit(t, "split_feature=0 2", "split_feature=0 7"),
     "tree 0 node 1: splits on feature 7 of 3"),
    (lambda t: edit(t, "Tree=1", "Tree=5"), "expected 'Tree=1', found "
     "'Tree=5'"),
    (lambda t: edit(t, "leaf_value=0.125 -0.375", "leaf_value=0.125"),
     "tree 1: leaf_value does not hold num_leaves numbers"),
    (lambda t: edit(t, "decision_type=2 6", "decision_type=2 14"),
     "tree 0 node 1: decision_type 14 is not one LightGBM writes"),
    (lambda t: edit(t, "objective=binary sigmoid:1",
                    "objective=regression sqrt"),
     "objective 'regression sqrt' (sqrt) is not supported"),
    (lambda t: edit(t, "max_feature_idx=2\n", ""),
     "the header needs max_feature_idx and num_tree_per_iteration"),
    (lambda t: edit(t, "threshold=100.5 1.0000000180025095e-35",
                    "threshold=100.5"),
     "tree 0: split_feature, threshold, decision_type, left_child and "
     "right_child must hold num_leaves - 1 numbers"),
    (lambda t: edit(t, "num_cat=0\nsplit_feature=0 2",
                    "num_cat=1\ncat_boundaries=0 x\nsplit_feature=0 2"),
     "tree 0: cat_boundaries or cat_threshold is not numbers"),
    (lambda t: edit(edit(t, "num_tree_per_iteration=1",
                         "num_tree_per_iteration=2"),
                    "objective=binary sigmoid:1",
                    "objective=multiclass num_class:2\naverage_output"),
     "average_output (boosting=rf) with several trees per iteration is not "
     "supported"),
]


@pytest.mark.parametrize("change,message", ERRORS,
                         ids=[m.split(":")[0][:30] for _, m in ERRORS])
def test_errors_name_what_is_wrong(tmp_path, change, message):
    path = tmp_path / "bad.txt"
    path.write_text(change((FIXTURES / "lightgbm_binary.txt").read_text()))
    result = compile_text(path, tmp_path, check=False)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
    assert str(path) in result.stderr
    assert not list(tmp_path.glob("*.so"))


def test_tree_missing_is_refused(tmp_path):
    result = compile_text(FIXTURES / "lightgbm_binary.txt", tmp_path,
                          "--tree-missing=-999", check=False)
    assert result.returncode != 0
    assert "--tree-missing applies to XGBoost models" in result.stderr
