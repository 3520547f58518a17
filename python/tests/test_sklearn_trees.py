"""cuvil.compile on scikit-learn tree ensembles (docs/trees.md), through
cuvil.onnx_ml's ONNX-ML form, against scikit-learn's own predict,
predict_proba and decision_function in float64: exact (bit for bit)
wherever scikit-learn computes with + - * / only; within 4 ulp where its
probabilities go through exp (numpy's exp and the artifact's libm may differ
in the last bit, and a softmax sums several of them)."""

import numpy as np
import pytest
from sklearn import datasets, ensemble, tree

import cuvil

ULP4 = 4 * np.finfo(np.float64).eps


def classification(classes=2, seed=0, n=400):
    x, y = datasets.make_classification(n, 8, n_informative=5,
                                        n_classes=classes, random_state=seed)
    return x, y


def regression(seed=0):
    return datasets.make_regression(400, 8, noise=1.0, random_state=seed)


def assert_exact(got, want):
    want = np.asarray(want, dtype=np.float64).reshape(got.shape)
    assert got.dtype == np.float64
    assert np.array_equal(got, want), np.abs(got - want).max()


def assert_close(got, want):
    want = np.asarray(want).reshape(got.shape)
    assert np.all(np.abs(got - want) <= ULP4 * np.maximum(np.abs(want), 1e-300)
                  + 1e-300), np.abs(got - want).max()


def float32_rows(x):
    return np.ascontiguousarray(x, dtype=np.float32)


CLASSIFIERS = [
    tree.DecisionTreeClassifier(max_depth=6, random_state=0),
    tree.ExtraTreeClassifier(max_depth=6, random_state=0),
    ensemble.RandomForestClassifier(25, max_depth=7, random_state=0),
    ensemble.ExtraTreesClassifier(25, max_depth=7, random_state=0),
]


@pytest.mark.parametrize("model", CLASSIFIERS,
                         ids=lambda m: type(m).__name__)
@pytest.mark.parametrize("classes", [2, 3])
def test_forest_probabilities_are_exact(model, classes):
    x, y = classification(classes)
    model.fit(x, y)
    before = model.predict_proba(float32_rows(x))
    compiled = cuvil.compile(model)
    xs = float32_rows(x)
    assert_exact(compiled(xs), model.predict_proba(xs))
    # Converting left the estimator as it was.
    assert np.array_equal(model.predict_proba(xs), before)
    assert compiled.outputs[0]["name"] == "probabilities"
    assert_exact(compiled(xs[:1]), model.predict_proba(xs[:1]))


@pytest.mark.parametrize("model", [
    tree.DecisionTreeRegressor(max_depth=8, random_state=0),
    ensemble.RandomForestRegressor(20, max_depth=8, random_state=0),
    ensemble.ExtraTreesRegressor(20, max_depth=8, random_state=0),
    ensemble.GradientBoostingRegressor(n_estimators=40, random_state=0),
    ensemble.GradientBoostingRegressor(n_estimators=20, loss="huber",
                                       init="zero", random_state=0),
    ensemble.HistGradientBoostingRegressor(max_iter=40, random_state=0),
], ids=lambda m: type(m).__name__)
def test_regressors_are_exact(model):
    x, y = regression()
    model.fit(x, y)
    hist = type(model).__name__.startswith("Hist")
    xs = x if hist else float32_rows(x)
    compiled = cuvil.compile(model)
    assert compiled.outputs[0]["name"] == "prediction"
    assert_exact(compiled(xs), model.predict(xs))


@pytest.mark.parametrize("classes", [2, 3])
def test_gradient_boosting_classifier(classes):
    x, y = classification(classes, seed=1)
    model = ensemble.GradientBoostingClassifier(
        n_estimators=30, max_depth=3, random_state=0).fit(x, y)
    xs = float32_rows(x)
    margins = cuvil.compile(model, output_margin=True)
    assert margins.outputs[0]["name"] == "margin"
    assert_exact(margins(xs), model.decision_function(xs))
    probabilities = cuvil.compile(model)
    assert_close(probabilities(xs), model.predict_proba(xs))
    assert (probabilities(xs).argmax(1) == model.predict(xs)).all()


@pytest.mark.parametrize("classes", [2, 3])
def test_hist_gradient_boosting_routes_missing_values(classes):
    x, y = classification(classes, seed=2)
    rng = np.random.default_rng(0)
    x[rng.random(x.shape) < 0.15] = np.nan
    model = ensemble.HistGradientBoostingClassifier(
        max_iter=30, random_state=0).fit(x, y)
    margins = cuvil.compile(model, output_margin=True)
    assert margins.inputs[0]["dtype"] == "float64"
    assert_exact(margins(x), model.decision_function(x))
    probabilities = cuvil.compile(model, max_batch=len(x), threads=2)
    assert_close(probabilities(x), model.predict_proba(x))


@pytest.mark.parametrize("classes", [2, 3])
def test_hist_gradient_boosting_on_float32_features(classes):
    """float32_features: exact for float32 rows (HistGradientBoosting reads
    them as float64, exactly), NaNs routed as before."""
    x, y = classification(classes, seed=4, n=600)
    x = float32_rows(x)
    x[np.random.default_rng(1).random(x.shape) < 0.1] = np.nan
    model = ensemble.HistGradientBoostingClassifier(
        max_iter=25, max_depth=6, random_state=0).fit(x, y)
    margins = cuvil.compile(model, output_margin=True, float32_features=True)
    assert margins.inputs[0]["dtype"] == "float32"
    assert_exact(margins(x), model.decision_function(x))
    assert_exact(margins(x[:3]), model.decision_function(x[:3]))
    regressor = ensemble.HistGradientBoostingRegressor(
        max_iter=25, random_state=0).fit(x, y.astype(float))
    assert_exact(cuvil.compile(regressor, float32_features=True)(x),
                 regressor.predict(x))


def test_poisson_predictions_go_through_exp():
    x, y = regression(3)
    model = ensemble.HistGradientBoostingRegressor(
        loss="poisson", max_iter=20, random_state=0).fit(x, np.abs(y))
    assert_close(cuvil.compile(model)(x), model.predict(x))


def test_onnx_ml_form_is_an_onnx_model(tmp_path):
    x, y = classification(3)
    model = ensemble.RandomForestClassifier(5, max_depth=4,
                                            random_state=0).fit(x, y)
    proto = cuvil.onnx_ml.from_sklearn(model)
    (forest,) = [n for n in proto.graph.node if n.domain == "ai.onnx.ml"]
    assert forest.op_type == "TreeEnsembleRegressor"
    path = tmp_path / "forest.onnx"
    path.write_bytes(proto.SerializeToString())
    xs = float32_rows(x)
    assert_exact(cuvil.compile(str(path), max_batch=len(x))(xs),
                 model.predict_proba(xs))


def test_what_is_not_supported_is_named():
    x, y = classification()
    with pytest.raises(ValueError, match="loss 'exponential' is not "
                       "supported"):
        cuvil.compile(ensemble.GradientBoostingClassifier(
            n_estimators=3, loss="exponential").fit(x, y))
    with pytest.raises(ValueError, match="an init estimator "
                       r"\(LinearRegression\) is not supported"):
        from sklearn.linear_model import LinearRegression
        cuvil.compile(ensemble.GradientBoostingRegressor(
            n_estimators=3, init=LinearRegression()).fit(x, y))
    with pytest.raises(ValueError, match="categorical splits"):
        xc = x.copy()
        # A category that decides the class: the trees split on it.
        xc[:, 0] = y * 2 + np.arange(len(y)) % 2
        cuvil.compile(ensemble.HistGradientBoostingClassifier(
            max_iter=3, categorical_features=[0]).fit(xc, y))
    with pytest.raises(ValueError, match="multi-output"):
        cuvil.compile(tree.DecisionTreeRegressor(max_depth=3).fit(
            x, np.stack([y, y], 1)))
    with pytest.raises(ValueError, match="output_margin applies to "
                       "gradient-boosted"):
        cuvil.compile(tree.DecisionTreeClassifier(max_depth=2).fit(x, y),
                      output_margin=True)
    with pytest.raises(ValueError, match="missing applies to XGBoost"):
        cuvil.compile(tree.DecisionTreeClassifier(max_depth=2).fit(x, y),
                      missing=-1.0)
    with pytest.raises(ValueError, match="is not fitted"):
        cuvil.compile(ensemble.RandomForestClassifier())
    with pytest.raises(TypeError, match="from_sklearn takes"):
        from sklearn.linear_model import LogisticRegression
        cuvil.onnx_ml.from_sklearn(LogisticRegression())
