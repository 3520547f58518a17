"""Fraud scoring with gradient-boosted trees: train XGBoost, compile it with
Cuvil into one native .so, check it against xgboost, time one transaction.

    /usr/bin/python3 examples/fraud_scoring.py [OUTPUT.so]

The data is synthetic (scikit-learn's make_classification with 1% positives
and some missing values, like card transactions with absent fields). The
compiled model returns the same probabilities as xgboost's predict (its
margins bit for bit), and `cuvilc fraud.json -o fraud.so` builds the same
artifact from the saved model for C, C++ or cuvil-serve (docs/trees.md).
"""

import sys
import time

import numpy as np
import xgboost as xgb
from sklearn.datasets import make_classification

import cuvil


def main(output=None):
    x, y = make_classification(n_samples=20000, n_features=28, n_informative=12,
                               weights=[0.99], flip_y=0.002, random_state=7)
    x = x.astype(np.float32)
    x[np.random.default_rng(7).random(x.shape) < 0.05] = np.nan  # absent fields
    model = xgb.XGBClassifier(n_estimators=200, max_depth=6, learning_rate=0.1,
                              n_jobs=1, random_state=0).fit(x[:15000], y[:15000])

    compiled = cuvil.compile(model)  # one native .so, libc only
    test = x[15000:]
    want = model.predict_proba(test)[:, 1]
    got = compiled(test)[:, 0]
    print(f"probabilities: max |cuvil - xgboost| = {np.abs(got - want).max():.2g}")
    assert np.abs(got - want).max() <= 1e-7

    one = test[:1]
    timings = []
    for _ in range(200):
        start = time.perf_counter()
        compiled(one)
        timings.append(time.perf_counter() - start)
    booster = model.get_booster()
    start = time.perf_counter()
    for _ in range(20):
        booster.inplace_predict(one)
    xgb_one = (time.perf_counter() - start) / 20
    print(f"one transaction: cuvil {np.median(timings) * 1e6:.1f} us "
          f"(CompiledModule from Python), xgboost inplace_predict "
          f"{xgb_one * 1e6:.1f} us")
    if output:
        compiled.save(output)
        print(f"wrote {output}")


if __name__ == "__main__":
    main(*sys.argv[1:])
