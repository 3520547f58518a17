"""Compiled tree ensembles served by cuvil-serve like any other model
(docs/trees.md): the REST answer is xgboost's prediction, or the LightGBM
fixture's hand-worked scores."""

import pathlib
import subprocess

import numpy as np
import pytest
from sklearn.datasets import make_classification

from conftest import CUVILC, Server, install

xgb = pytest.importorskip("xgboost")


def test_served_forest_answers_like_xgboost(tmp_path):
    x, y = make_classification(300, 6, n_informative=4, random_state=0)
    x = x.astype(np.float32)
    booster = xgb.train({"objective": "binary:logistic", "max_depth": 4,
                         "nthread": 1}, xgb.DMatrix(x, label=y), 30)
    booster.save_model(str(tmp_path / "fraud.json"))
    so = tmp_path / "fraud.so"
    subprocess.run([CUVILC, "--quiet", str(tmp_path / "fraud.json"),
                    "--max-batch=16", "-o", str(so)], check=True)
    repository = tmp_path / "repo"
    install(repository, "fraud", 1, so)
    server = Server(repository)
    try:
        rows = x[:5]
        status, body = server.infer("fraud", [{
            "name": "features", "datatype": "FP32", "shape": list(rows.shape),
            "data": rows.ravel().tolist()}])
        assert status == 200, body
        (output,) = body["outputs"]
        assert output["name"] == "prediction" and output["shape"] == [5, 1]
        want = booster.predict(xgb.DMatrix(rows))
        assert np.abs(np.array(output["data"], np.float32) - want).max() <= \
            np.spacing(np.float32(1))
    finally:
        assert server.stop() == 0


def test_served_lightgbm_model_takes_and_answers_float64(tmp_path):
    """The hand-worked LightGBM fixture (tests/trees/test_lightgbm.py): FP64
    rows in, its raw scores out."""
    model = (pathlib.Path(__file__).resolve().parents[1] / "trees" /
             "fixtures" / "lightgbm_binary.txt")
    so = tmp_path / "risk.so"
    subprocess.run([CUVILC, "--quiet", str(model), "--tree-output=margin",
                    "--max-batch=8", "-o", str(so)], check=True)
    repository = tmp_path / "repo"
    install(repository, "risk", 1, so)
    server = Server(repository)
    try:
        rows = [[50.0, 10.0, 0.0], [200.0, 1.0, 0.5]]
        status, body = server.infer("risk", [{
            "name": "features", "datatype": "FP64", "shape": [2, 3],
            "data": sum(rows, [])}])
        assert status == 200, body
        (output,) = body["outputs"]
        assert output["datatype"] == "FP64" and output["shape"] == [2, 1]
        assert output["data"] == [-0.375, 1.625]
    finally:
        assert server.stop() == 0
