"""A compiled XGBoost model served by cuvil-serve like any other model
(docs/trees.md): the REST answer is xgboost's prediction."""

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
