"""XGBoost models compiled by cuvilc, run through the C ABI (ctypes), against
xgboost 1.7's own predict: margins identical bit for bit (output_margin),
predictions within 1 ulp (the transforms are XGBoost's float32 formulas on
libm's expf, so they are exact here too, but libm may differ elsewhere);
rows with NaNs, one row and large batches; every objective family; the
vector walk this CPU chooses and the AVX2 one; one and two threads."""

import itertools
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from sklearn import datasets

xgb = pytest.importorskip("xgboost")

ROOT = pathlib.Path(__file__).resolve().parents[2]
CUVILC = ROOT / "bazel-bin" / "tools" / "cuvilc"
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from cuvil_e2e import CompiledModel  # noqa: E402

MAX_BATCH = 20000
COUNTER = itertools.count()


def with_nans(x, seed=0, share=0.1):
    """A copy of `x` (float32) with a share of its entries missing."""
    x = np.array(x, dtype=np.float32)
    rng = np.random.default_rng(seed)
    x[rng.random(x.shape) < share] = np.nan
    return x


def train(x, y, params, rounds=20):
    params = dict(params, seed=0, nthread=1)
    return xgb.train(params, xgb.DMatrix(x, label=y), num_boost_round=rounds)


def compile_booster(booster, tmp_path, *flags):
    # Each .so under its own name: dlopen returns a loaded library again
    # for a path it has seen.
    name = f"model{next(COUNTER)}"
    path = tmp_path / f"{name}.json"
    booster.save_model(str(path))
    so = tmp_path / f"{name}.so"
    subprocess.run([str(CUVILC), "--quiet", str(path), "-o", str(so),
                    f"--max-batch={MAX_BATCH}", *flags], check=True)
    return CompiledModel(so)


def run(model, x, threads=None):
    (out,) = model(np.ascontiguousarray(x, dtype=np.float32), batch=len(x),
                   threads=threads)
    return out


def ulps(a, b):
    a = np.asarray(a, np.float32).view(np.int32).astype(np.int64)
    b = np.asarray(b, np.float32).view(np.int32).astype(np.int64)
    return int(np.abs(a - b).max())


def check(booster, x, tmp_path, cpu_flags=()):
    """Margins bit for bit, predictions within 1 ulp, threads no matter."""
    want_margin = booster.predict(xgb.DMatrix(x), output_margin=True)
    want = booster.predict(xgb.DMatrix(x))
    margins = compile_booster(booster, tmp_path, "--tree-output=margin",
                              *cpu_flags)
    got_margin = run(margins, x).reshape(want_margin.shape)
    assert np.array_equal(got_margin.view(np.uint32),
                          want_margin.view(np.uint32)), (
        f"max |diff| {np.abs(got_margin - want_margin).max()}")
    assert np.array_equal(run(margins, x, threads=2), run(margins, x))
    predictions = compile_booster(booster, tmp_path, *cpu_flags)
    got = run(predictions, x).reshape(want.shape)
    assert ulps(got, want) <= 1
    return margins


OBJECTIVES = {
    "binary:logistic": "binary", "binary:logitraw": "binary",
    "reg:logistic": "binary", "reg:squarederror": "regression",
    "reg:pseudohubererror": "regression", "reg:absoluteerror": "regression",
    "count:poisson": "count", "reg:gamma": "count", "reg:tweedie": "count",
    "multi:softprob": "multiclass",
}


def problem(kind, rows=600, seed=0):
    if kind == "regression":
        return datasets.make_regression(rows, 12, noise=5.0, random_state=seed)
    if kind == "count":
        x, y = datasets.make_regression(rows, 12, random_state=seed)
        return x, np.exp((y - y.mean()) / (3 * y.std()))
    classes = 4 if kind == "multiclass" else 2
    return datasets.make_classification(rows, 12, n_informative=6,
                                        n_classes=classes, random_state=seed)


@pytest.mark.parametrize("objective", sorted(OBJECTIVES))
def test_objectives_match_xgboost(objective, tmp_path):
    kind = OBJECTIVES[objective]
    x, y = problem(kind)
    x = with_nans(x)
    params = {"objective": objective, "max_depth": 5}
    if kind == "multiclass":
        params["num_class"] = 4
    booster = train(x, y, params)
    check(booster, x, tmp_path)


@pytest.mark.parametrize("base_score", [0.3, 0.85])
def test_base_score_becomes_the_objectives_margin(base_score, tmp_path):
    x, y = problem("binary")
    booster = train(with_nans(x), y, {"objective": "binary:logistic",
                                      "base_score": base_score})
    check(booster, with_nans(x, seed=1), tmp_path)


def test_breast_cancer_one_row_and_a_large_batch(tmp_path):
    x, y = datasets.load_breast_cancer(return_X_y=True)
    booster = train(x, y, {"objective": "binary:logistic", "max_depth": 6},
                    rounds=100)
    margins = check(booster, with_nans(x, seed=2), tmp_path)
    # One row through the C ABI, and a batch past the vector block tails.
    one = with_nans(x[:1], seed=3)
    assert run(margins, one)[0, 0] == booster.predict(
        xgb.DMatrix(one), output_margin=True)[0]
    big = with_nans(np.tile(x, (20, 1))[:MAX_BATCH - 3], seed=4)
    want = booster.predict(xgb.DMatrix(big), output_margin=True)
    assert np.array_equal(run(margins, big)[:, 0], want)


def test_digits_multiclass_on_avx2_and_native(tmp_path):
    x, y = datasets.load_digits(return_X_y=True)
    booster = train(x, y, {"objective": "multi:softprob", "num_class": 10,
                           "max_depth": 4}, rounds=15)
    native = check(booster, with_nans(x, seed=5), tmp_path)
    avx2 = check(booster, with_nans(x, seed=5), tmp_path,
                 cpu_flags=("--cpu=x86-64-v3",))
    assert avx2.metadata["kernels"]["forest_walk"] == "avx2"
    assert native.metadata["kernels"]["forest_walk"] in ("avx2", "avx512")


def test_random_forest_and_sklearn_api(tmp_path):
    x, y = problem("binary", seed=3)
    x = with_nans(x, seed=6)
    forest = xgb.XGBRFClassifier(n_estimators=30, max_depth=6, random_state=0,
                                 n_jobs=1).fit(x, y)
    check(forest.get_booster(), x, tmp_path)
    regressor = xgb.XGBRegressor(n_estimators=40, max_depth=3, n_jobs=1,
                                 random_state=0).fit(x, y)
    check(regressor.get_booster(), x, tmp_path)


@pytest.mark.parametrize("rounds", [12, 40], ids=["perfect", "tables"])
def test_pred_leaf_gives_each_trees_leaf(tmp_path, rounds):
    """--tree-output=leaf: [rows, trees] of leaf node ids, float32, exactly
    as predict(pred_leaf=True) (NaNs to the default child; a categorical
    split; 3 classes x 12 rounds (36 columns) take the perfect walk, x 40
    (120) the tables)."""
    rng = np.random.default_rng(rounds)
    n = 1500
    cat = rng.integers(0, 12, n).astype(np.float32)
    num = rng.normal(size=(n, 5)).astype(np.float32)
    y = (np.isin(cat, [1, 5, 7]) + (num[:, 0] > 0.3)).astype(int)
    x = with_nans(np.concatenate([cat[:, None], num], 1), seed=rounds)
    types = ["c"] + ["q"] * 5
    booster = xgb.train(
        {"objective": "multi:softprob", "num_class": 3, "max_depth": 5,
         "seed": 0, "tree_method": "hist", "nthread": 1},
        xgb.DMatrix(x, label=y, feature_types=types, enable_categorical=True),
        num_boost_round=rounds)
    want = booster.predict(xgb.DMatrix(x, feature_types=types,
                                       enable_categorical=True),
                           pred_leaf=True)
    model = compile_booster(booster, tmp_path, "--tree-output=leaf")
    assert model.metadata["outputs"][0]["name"] == "leaf"
    got = run(model, x)
    assert got.dtype == np.float32 and got.shape == (n, 3 * rounds)
    assert np.array_equal(got, want)
    assert np.array_equal(run(model, x[:1]), want[:1])


def test_stumps_and_a_model_of_no_trees(tmp_path):
    x, y = problem("regression")
    stumps = train(x, y, {"objective": "reg:squarederror", "max_depth": 1})
    check(stumps, with_nans(x), tmp_path)
    empty = train(x, y, {"objective": "reg:squarederror"}, rounds=0)
    check(empty, x[:5], tmp_path)
    path = tmp_path / "empty.json"
    empty.save_model(str(path))
    result = subprocess.run([str(CUVILC), str(path), "--tree-output=leaf"],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "pred_leaf: the model has no trees" in result.stderr


def test_wrong_feature_count_at_call_time_is_an_error(tmp_path):
    x, y = problem("binary")
    model = compile_booster(train(x, y, {"objective": "binary:logistic"}),
                            tmp_path)
    assert model.metadata["inputs"][0]["shape"] == [-1, 12]
    with pytest.raises(RuntimeError, match="batch"):
        run(model, np.zeros((MAX_BATCH + 1, 12), np.float32))


def saved_model(tmp_path, objective="binary:logistic", **params):
    x, y = problem("multiclass" if objective.startswith("multi") else "binary")
    if objective.startswith("multi"):
        params["num_class"] = 4
    booster = train(x, y, dict(params, objective=objective), rounds=3)
    return json.loads(booster.save_raw("json"))


def compile_error(tmp_path, model):
    path = tmp_path / "bad.json"
    path.write_text(model if isinstance(model, str) else json.dumps(model))
    result = subprocess.run([str(CUVILC), str(path), "-o",
                             str(tmp_path / "bad.so")],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert not (tmp_path / "bad.so").exists()
    return result.stderr


def test_unsupported_objective_names_it(tmp_path):
    model = saved_model(tmp_path, "multi:softmax")
    assert "objective 'multi:softmax' predicts a class index" in \
        compile_error(tmp_path, model)
    model["learner"]["objective"]["name"] = "survival:cox"
    assert "objective 'survival:cox' is not supported" in \
        compile_error(tmp_path, model)


def test_unsupported_boosters_and_versions_name_them(tmp_path):
    model = saved_model(tmp_path)
    model["learner"]["gradient_booster"]["name"] = "gblinear"
    assert "booster 'gblinear' is not supported" in compile_error(tmp_path, model)
    model = saved_model(tmp_path)
    model["version"] = [2, 0, 0]
    assert "XGBoost model format version 2 is not supported" in \
        compile_error(tmp_path, model)


@pytest.mark.parametrize("onehot", [1, 64], ids=["partition", "one_hot"])
def test_categorical_splits(tmp_path, onehot):
    """Categorical features (partition-based and one-hot splits): NaN takes
    the default child, a category in the node's set goes right, any other
    (unseen, beyond the set, negative) left."""
    rng = np.random.default_rng(onehot)
    n = 3000
    cat = rng.integers(0, 40, n).astype(np.float32)
    num = rng.normal(size=n).astype(np.float32)
    y = (np.isin(cat, [1, 5, 7, 33, 38]) ^ (num > 0.3)).astype(int)
    x = with_nans(np.stack([cat, num, rng.normal(size=n)], 1), seed=onehot)
    types = ["c", "q", "q"]
    booster = xgb.train(
        {"objective": "binary:logistic", "max_depth": 4, "seed": 0,
         "tree_method": "hist", "max_cat_to_onehot": onehot, "nthread": 1},
        xgb.DMatrix(x, label=y, feature_types=types, enable_categorical=True),
        num_boost_round=15)
    model = compile_booster(booster, tmp_path, "--tree-output=margin")
    probe = x.copy()
    probe[:200, 0] = rng.choice([0, 39, 40, 63, 64, 1000, 2.5, -3.0,
                                 np.nan], size=200)
    want = booster.predict(xgb.DMatrix(probe, feature_types=types,
                                       enable_categorical=True),
                           output_margin=True)
    assert np.array_equal(run(model, probe)[:, 0], want)


def test_ubjson_models_compile_like_their_json(tmp_path):
    x, y = datasets.load_digits(return_X_y=True)
    x = with_nans(x, seed=4)
    booster = train(x, y, {"objective": "multi:softprob", "num_class": 10,
                           "max_depth": 4}, rounds=5)
    booster.set_attr(note='a "quoted" \\ note')
    path = tmp_path / "digits.ubj"
    booster.save_model(str(path))
    so = tmp_path / "digits_ubj.so"
    subprocess.run([str(CUVILC), "--quiet", str(path), "-o", str(so),
                    f"--max-batch={MAX_BATCH}", "--tree-output=margin"],
                   check=True)
    margins = run(CompiledModel(so), x)
    want = booster.predict(xgb.DMatrix(x), output_margin=True)
    assert np.array_equal(margins, want)
    truncated = tmp_path / "truncated.ubj"
    truncated.write_bytes(path.read_bytes()[:-100])
    result = subprocess.run([str(CUVILC), str(truncated), "-o",
                             str(tmp_path / "t.so")], capture_output=True,
                            text=True)
    assert result.returncode != 0
    assert "truncated.ubj: not a UBJSON document" in result.stderr


def test_categorical_split_without_categories_names_tree_and_node(tmp_path):
    model = saved_model(tmp_path)
    tree = model["learner"]["gradient_booster"]["model"]["trees"][1]
    tree["split_type"][0] = 1
    assert "tree 1 node 0: a categorical split without categories" in \
        compile_error(tmp_path, model)
    tree.update(categories=[1.5], categories_nodes=[0],
                categories_segments=[0], categories_sizes=[1])
    assert "tree 1 node 0: category 1.5 is not one XGBoost writes" in \
        compile_error(tmp_path, model)
    tree.update(categories_sizes=[2])
    assert "tree 1: malformed categories" in compile_error(tmp_path, model)


def test_malformed_models_are_errors(tmp_path):
    assert "not JSON" in compile_error(tmp_path, "{")
    assert "not an XGBoost model" in compile_error(tmp_path, {"a": 1})
    model = saved_model(tmp_path)
    tree = model["learner"]["gradient_booster"]["model"]["trees"][0]
    tree["left_children"][0] = 0  # the root as its own child: a cycle
    assert "tree 0 node 0: child 0 is not a new node" in \
        compile_error(tmp_path, model)
    model = saved_model(tmp_path)
    tree = model["learner"]["gradient_booster"]["model"]["trees"][2]
    tree["split_indices"][0] = 99
    assert "tree 2 node 0: splits on feature 99 of 12" in \
        compile_error(tmp_path, model)
    model = saved_model(tmp_path)
    tree = model["learner"]["gradient_booster"]["model"]["trees"][0]
    tree["right_children"].pop()
    assert "tree 0: node arrays of different lengths" in \
        compile_error(tmp_path, model)
    model = saved_model(tmp_path)
    model["learner"]["gradient_booster"]["model"]["tree_info"][0] = 5
    assert "tree 0: not a tree of a class in [0, 1)" in \
        compile_error(tmp_path, model)


def test_tree_output_flag_is_checked(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(saved_model(tmp_path)))
    result = subprocess.run([str(CUVILC), str(path), "--tree-output=logits"],
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert "--tree-output must be prediction, margin or leaf" in result.stderr


def level2(booster, tmp_path):
    path = tmp_path / f"level2_{next(COUNTER)}.json"
    booster.save_model(str(path))
    return subprocess.run([str(CUVILC), "--quiet", str(path),
                           "--emit=mlir-level2"], check=True,
                          capture_output=True, text=True).stdout


def test_deep_trees_keep_the_table_walk(tmp_path):
    # Past 10 levels the perfect layout would take 2^depth leaves a tree;
    # such forests run on the general table walk, as exactly.
    x, y = problem("regression", rows=4000, seed=4)
    deep = train(with_nans(x, seed=8), y, {"objective": "reg:squarederror",
                                           "max_depth": 14, "eta": 0.5},
                 rounds=6)
    deep_level2 = level2(deep, tmp_path)
    assert "cuvil.forest_depth" not in deep_level2
    # One comparison (<): the table walk's vector forms take it.
    assert "cuvil.forest_comparison = 1" in deep_level2
    check(deep, with_nans(x, seed=9), tmp_path)
    shallow = train(x, y, {"objective": "reg:squarederror", "max_depth": 3},
                    rounds=2)
    assert "cuvil.forest_depth = 3" in level2(shallow, tmp_path)


def test_wide_rows(tmp_path):
    # More than 128 features: the vector walk gathers from the rows
    # rather than from a transposed block.
    x, y = datasets.make_classification(700, 150, n_informative=20,
                                        random_state=5)
    booster = train(with_nans(x, seed=10), y,
                    {"objective": "binary:logistic", "max_depth": 6})
    check(booster, with_nans(x, seed=11), tmp_path)


def test_a_configured_missing_value(tmp_path):
    # XGBoost's `missing` (here -999) is not in the model file: cuvilc
    # takes it as --tree-missing; NaN stays missing too.
    x, y = problem("binary", seed=7)
    x = with_nans(x, seed=12)
    x[np.random.default_rng(13).random(x.shape) < 0.1] = -999.0
    booster = xgb.train({"objective": "binary:logistic", "max_depth": 5,
                         "nthread": 1}, xgb.DMatrix(x, label=y, missing=-999.0),
                        20)
    want = booster.inplace_predict(x, missing=-999.0, predict_type="margin")
    model = compile_booster(booster, tmp_path, "--tree-output=margin",
                            "--tree-missing=-999")
    assert np.array_equal(run(model, x)[:, 0], want)
    # A few rows (walked by trees), and the AVX2 walks.
    assert np.array_equal(run(model, x[:3])[:, 0], want[:3])
    avx2 = compile_booster(booster, tmp_path, "--tree-output=margin",
                           "--tree-missing=-999", "--cpu=x86-64-v3")
    assert np.array_equal(run(avx2, x)[:, 0], want)
    assert np.array_equal(run(avx2, x[:3])[:, 0], want[:3])
    # Without it, -999 is a number like any other, as for xgboost.
    plain = compile_booster(booster, tmp_path, "--tree-output=margin")
    assert np.array_equal(run(plain, x)[:, 0], booster.inplace_predict(
        x, predict_type="margin"))
    booster.save_model(str(tmp_path / "flag.json"))
    result = subprocess.run([str(CUVILC), str(tmp_path / "flag.json"),
                             "--tree-missing=lots"], capture_output=True,
                            text=True)
    assert result.returncode == 2
    assert "--tree-missing must be a finite number or nan" in result.stderr
