"""Fraud scoring with gradient-boosted trees: train XGBoost, compile it with
Cuvil into one native .so, check it against xgboost, time one transaction.

    /usr/bin/python3 examples/fraud_scoring.py [OUTPUT.so]

The data is synthetic (scikit-learn's make_classification with 1% positives
and some missing values, like card transactions with absent fields). The
compiled model returns the same probabilities as xgboost's predict (its
margins bit for bit), and `cuvilc fraud.json -o fraud.so` builds the same
artifact from the saved model for C, C++ or cuvil-serve (docs/trees.md).

Then GBDT + DNN: the trees' margin and the transaction's fields feed a small
MLP (cuvil.nn.TreeEnsemble inside an nn.Module), and one cuvil.compile call
makes the whole scorer one .so, checked against the torch model.
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
    fused_scorer(model, x, y)


def fused_scorer(model, x, y):
    """Trees and a network in one artifact."""
    import torch
    import cuvil.nn

    class Scorer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.trees = cuvil.nn.TreeEnsemble(model, output_margin=True)
            self.mlp = torch.nn.Sequential(torch.nn.Linear(29, 32),
                                           torch.nn.ReLU(),
                                           torch.nn.Linear(32, 1))

        def forward(self, rows):
            margin = self.trees(rows)  # xgboost's margin, [batch, 1]
            fields = torch.where(rows == rows, rows, torch.tensor(0.0))
            return torch.sigmoid(self.mlp(torch.cat([fields, margin], 1)))

    torch.manual_seed(0)
    scorer = Scorer()
    rows, labels = torch.from_numpy(x[:15000]), torch.from_numpy(
        y[:15000].astype(np.float32)).unsqueeze(1)
    optimizer = torch.optim.Adam(scorer.mlp.parameters(), lr=1e-2)
    for _ in range(30):  # the trees stay as trained; the MLP learns on top
        optimizer.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy(scorer(rows), labels)
        loss.backward()
        optimizer.step()
    scorer.eval()
    compiled = cuvil.compile(scorer, input_signature=[
        ("transaction", torch.float32, (-1, 28))], max_batch=5000)
    test = x[15000:]
    with torch.no_grad():
        want = scorer(torch.from_numpy(test)).numpy()
    gap = np.abs(compiled(test) - want).max()
    print(f"GBDT + DNN in one .so: max |cuvil - torch + xgboost| = {gap:.2g}")
    assert gap <= 1e-6


if __name__ == "__main__":
    main(*sys.argv[1:])
