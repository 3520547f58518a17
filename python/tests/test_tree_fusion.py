"""GBDT + DNN in one artifact: cuvil.nn.TreeEnsemble inside a torch model,
captured by one cuvil.compile call, against the same torch model run
eagerly (where the module calls xgboost's or scikit-learn's own predict):
within 1e-6."""

import numpy as np
import pytest
import torch
from sklearn import datasets, ensemble

import cuvil
import cuvil.nn

xgb = pytest.importorskip("xgboost")


def transactions(seed=0, n=300):
    x, y = datasets.make_classification(n, 8, n_informative=5,
                                        random_state=seed)
    x = x.astype(np.float32)
    x[np.random.default_rng(seed).random(x.shape) < 0.05] = np.nan
    return x, y


class Scorer(torch.nn.Module):
    """features -> trees -> margins, concatenated with the features -> MLP
    -> probability."""

    def __init__(self, trees, width):
        super().__init__()
        torch.manual_seed(0)
        self.trees = trees
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(8 + width, 16), torch.nn.ReLU(),
            torch.nn.Linear(16, 1))

    def forward(self, x):
        scores = self.trees(x).to(torch.float32)
        # NaN (missing) as 0 for the MLP; the trees take it as missing.
        clean = torch.where(x == x, x, torch.tensor(0.0))
        return torch.sigmoid(self.mlp(torch.cat([clean, scores], 1)))


def compile_and_compare(model, x):
    model = model.eval()
    compiled = cuvil.compile(model, input_signature=[
        ("x", torch.float32, (-1, 8))], max_batch=len(x))
    with torch.no_grad():
        want = model(torch.from_numpy(x)).numpy()
    got = compiled(x)
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= 1e-6
    assert np.abs(compiled(x[:1]) - want[:1]).max() <= 1e-6
    return compiled


def test_xgboost_margins_feed_an_mlp(tmp_path):
    x, y = transactions()
    booster = xgb.train({"objective": "binary:logistic", "max_depth": 4,
                         "nthread": 1}, xgb.DMatrix(x, label=y), 30)
    trees = cuvil.nn.TreeEnsemble(booster, output_margin=True)
    assert trees(torch.from_numpy(x)).dtype == torch.float32
    compiled = compile_and_compare(Scorer(trees, 1), x)
    # One artifact with one C ABI: saved and loaded like any model.
    path = tmp_path / "scorer.so"
    compiled.save(str(path))
    assert np.array_equal(cuvil.load(str(path))(x), compiled(x))


class LeafEmbedding(torch.nn.Module):
    """features -> trees -> each tree's leaf -> an embedding per (tree,
    leaf) -> MLP -> probability (GBDT leaves as categorical features)."""

    def __init__(self, trees, nodes, width=4):
        super().__init__()
        torch.manual_seed(0)
        self.trees = trees
        self.embed = torch.nn.Embedding(trees.targets * nodes, width)
        self.register_buffer("offsets", torch.arange(trees.targets) * nodes)
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(trees.targets * width, 16), torch.nn.ReLU(),
            torch.nn.Linear(16, 1))

    def forward(self, x):
        leaves = self.trees(x).to(torch.int64) + self.offsets
        return torch.sigmoid(self.mlp(self.embed(leaves).flatten(1)))


def test_xgboost_leaves_feed_embeddings():
    x, y = transactions(4)
    booster = xgb.train({"objective": "binary:logistic", "max_depth": 3,
                         "nthread": 1}, xgb.DMatrix(x, label=y), 12)
    trees = cuvil.nn.TreeEnsemble(booster, pred_leaf=True)
    assert trees.targets == 12
    leaves = trees(torch.from_numpy(x)).numpy()
    assert np.array_equal(leaves, booster.predict(xgb.DMatrix(x),
                                                  pred_leaf=True))
    # Depth 3: node ids below 15.
    compile_and_compare(LeafEmbedding(trees, nodes=15), x)


def test_xgboost_class_probabilities_and_missing_value():
    x, y = transactions(1)
    y = y + (x[:, 0] > 0.5)  # three classes
    x[np.random.default_rng(3).random(x.shape) < 0.05] = -999.0
    model = xgb.XGBClassifier(n_estimators=10, max_depth=3, missing=-999.0,
                              n_jobs=1, random_state=0).fit(x, y)
    trees = cuvil.nn.TreeEnsemble(model)
    assert trees.targets == 3 and trees.missing == -999.0
    compile_and_compare(Scorer(trees, 3), x)


def test_scikit_learn_forests_inside_a_model():
    x, y = transactions(2)
    clean = np.nan_to_num(x)
    forest = ensemble.RandomForestClassifier(20, max_depth=6,
                                             random_state=0).fit(clean, y)
    compile_and_compare(Scorer(cuvil.nn.TreeEnsemble(forest), 2), clean)
    # HistGradientBoosting predicts on float64 rows: the graph casts.
    boosted = ensemble.HistGradientBoostingClassifier(
        max_iter=20, random_state=0).fit(x, y)
    trees = cuvil.nn.TreeEnsemble(boosted, output_margin=True)
    assert trees(torch.from_numpy(x)).dtype == torch.float64
    compile_and_compare(Scorer(trees, 1), x)


def test_what_it_takes():
    from sklearn.linear_model import LogisticRegression
    with pytest.raises(TypeError, match="TreeEnsemble takes an XGBoost"):
        cuvil.nn.TreeEnsemble(LogisticRegression())
    x, y = transactions()
    forest = ensemble.RandomForestClassifier(3).fit(np.nan_to_num(x), y)
    with pytest.raises(ValueError, match="missing applies to XGBoost"):
        cuvil.nn.TreeEnsemble(forest, missing=-1.0)
    with pytest.raises(ValueError, match="pred_leaf applies to XGBoost"):
        cuvil.nn.TreeEnsemble(forest, pred_leaf=True)
    booster = xgb.train({"max_depth": 2}, xgb.DMatrix(x, label=y), 2)
    with pytest.raises(ValueError, match="different outputs"):
        cuvil.nn.TreeEnsemble(booster, pred_leaf=True, output_margin=True)
