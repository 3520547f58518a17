"""cuvil.compile on XGBoost models (docs/trees.md): Booster, the sklearn API
classes and saved .json files, against xgboost's predict."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from sklearn import datasets

import cuvil

xgb = pytest.importorskip("xgboost")


def classification(seed=0):
    x, y = datasets.make_classification(400, 8, n_informative=5,
                                        random_state=seed)
    x = x.astype(np.float32)
    x[np.random.default_rng(seed).random(x.shape) < 0.1] = np.nan
    return x, y


def test_booster_predictions_and_margins():
    x, y = classification()
    booster = xgb.train({"objective": "binary:logistic", "max_depth": 4,
                         "nthread": 1}, xgb.DMatrix(x, label=y), 25)
    margins = cuvil.compile(booster, output_margin=True)
    want = booster.predict(xgb.DMatrix(x), output_margin=True)
    assert np.array_equal(margins(x)[:, 0], want)
    probabilities = cuvil.compile(booster)(x)[:, 0]
    assert np.abs(probabilities - booster.predict(xgb.DMatrix(x))).max() <= \
        np.spacing(np.float32(1))
    assert margins.inputs[0]["name"] == "features"
    assert margins(x[:1])[0, 0] == want[0]
    leaves = cuvil.compile(booster, pred_leaf=True)
    assert leaves.outputs[0]["name"] == "leaf"
    assert np.array_equal(leaves(x), booster.predict(xgb.DMatrix(x),
                                                     pred_leaf=True))


def test_sklearn_classifier_object_and_json_file(tmp_path):
    x, y = datasets.load_iris(return_X_y=True)
    model = xgb.XGBClassifier(n_estimators=20, max_depth=3, n_jobs=1,
                              random_state=0).fit(x, y)
    compiled = cuvil.compile(model)
    x32 = x.astype(np.float32)
    assert np.abs(compiled(x32) - model.predict_proba(x32)).max() <= 1e-7
    assert (compiled(x32).argmax(1) == model.predict(x32)).all()
    path = tmp_path / "iris.json"
    model.save_model(path)
    from_file = cuvil.compile(str(path))
    assert np.array_equal(from_file(x32), compiled(x32))
    model.save_model(tmp_path / "iris.ubj")
    from_ubjson = cuvil.compile(str(tmp_path / "iris.ubj"))
    assert np.array_equal(from_ubjson(x32), compiled(x32))


def test_an_estimators_missing_value_is_its_default():
    x, y = classification(1)
    x[np.random.default_rng(2).random(x.shape) < 0.1] = -1.0
    model = xgb.XGBRegressor(n_estimators=15, max_depth=4, missing=-1.0,
                             n_jobs=1, random_state=0).fit(x, y)
    assert np.array_equal(cuvil.compile(model)(x)[:, 0], model.predict(x))
    booster = model.get_booster()
    assert np.array_equal(
        cuvil.compile(booster, missing=-1.0, output_margin=True)(x)[:, 0],
        booster.inplace_predict(x, missing=-1.0, predict_type="margin"))


def test_errors():
    x, y = classification()
    booster = xgb.train({"objective": "multi:softmax", "num_class": 2,
                         "nthread": 1}, xgb.DMatrix(x, label=y), 2)
    with pytest.raises(cuvil.CompileError, match="multi:softprob"):
        cuvil.compile(booster)
    with pytest.raises(ValueError, match="output_margin and missing apply"):
        cuvil.compile("model.onnx", output_margin=True)
    with pytest.raises(ValueError, match="missing must be a finite number"):
        cuvil.compile(booster, missing=float("inf"))
    with pytest.raises(ValueError, match="float32_features applies to tree"):
        cuvil.compile("model.onnx", float32_features=True)
    with pytest.raises(ValueError, match="pred_leaf applies to XGBoost and"):
        cuvil.compile("model.onnx", pred_leaf=True)
    with pytest.raises(ValueError, match="different outputs"):
        cuvil.compile(booster, pred_leaf=True, output_margin=True)


def test_fraud_scoring_example_runs(package_dir, tmp_path):
    example = pathlib.Path(__file__).resolve().parents[2] / "examples" / \
        "fraud_scoring.py"
    run = subprocess.run([sys.executable, str(example), str(tmp_path / "f.so")],
                         env=dict(os.environ, PYTHONPATH=package_dir),
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "max |cuvil - xgboost| = 0" in run.stdout
    assert "GBDT + DNN in one .so: max |cuvil - torch + xgboost|" in run.stdout
    assert (tmp_path / "f.so").exists()


LIGHTGBM_FIXTURE = (pathlib.Path(__file__).resolve().parents[2] / "tests" /
                    "trees" / "fixtures" / "lightgbm_binary.txt")


def test_lightgbm_text_file_and_booster():
    """A LightGBM model from its .txt file, and from an object with
    lightgbm's model_to_string (lightgbm itself is not packaged here); the
    margins are worked out by hand in tests/trees/test_lightgbm.py."""
    x = np.array([[50.0, 10.0, 0.0], [200.0, 1.0, np.nan]])
    margins = cuvil.compile(str(LIGHTGBM_FIXTURE), output_margin=True)
    assert margins.inputs[0]["dtype"] == "float64"
    assert margins(x)[:, 0].tolist() == [-0.375, 0.375]

    class Booster:
        def model_to_string(self):
            return LIGHTGBM_FIXTURE.read_text()
    Booster.__module__ = "lightgbm.basic"
    compiled = cuvil.compile(Booster())
    assert np.allclose(compiled(x)[:, 0], 1 / (1 + np.exp([0.375, -0.375])),
                       rtol=1e-15, atol=0)
    with pytest.raises(ValueError, match="missing applies to XGBoost"):
        cuvil.compile(Booster(), missing=-1.0)
