"""torch modules that put what Cuvil compiles besides networks inside a
torch model, so that one cuvil.compile call captures all of it into one
artifact (docs/trees.md).

    class Scorer(torch.nn.Module):
        def __init__(self, booster):
            super().__init__()
            self.trees = cuvil.nn.TreeEnsemble(booster, output_margin=True)
            self.mlp = torch.nn.Sequential(torch.nn.Linear(9, 16), ...)

        def forward(self, x):
            margins = self.trees(x)                      # [batch, 1]
            return torch.sigmoid(self.mlp(torch.cat([x, margins], 1)))

    cuvil.compile(Scorer(booster), input_signature=[("x", torch.float32,
                                                     (-1, 8))], max_batch=64)

Run eagerly, a TreeEnsemble calls the library's own predict (so the torch
model is the reference); exported, it becomes the forest itself: an XGBoost
model is carried whole (the ai.cuvil.XGBoostModel node, read by the same
importer as `cuvilc model.json`), a scikit-learn ensemble as the ONNX-ML
nodes of cuvil.onnx_ml.from_sklearn.
"""

import math

import numpy as np
import torch

from cuvil import onnx_ml
from cuvil._compile import _xgboost_booster

__all__ = ["TreeEnsemble"]

# ONNX attribute types -> torch.onnx's attribute suffixes.
_SUFFIX = {1: "f", 2: "i", 3: "s", 4: "t", 6: "f", 7: "i", 8: "s"}


class TreeEnsemble(torch.nn.Module):
    """A tree ensemble as a torch module: [batch, features] in, [batch,
    targets] out (XGBoost: float32 predictions, or margins with
    output_margin; scikit-learn: float64, what cuvil.onnx_ml.from_sklearn
    describes). Not trainable: its trees are the fitted model's.

    model: an XGBoost model (Booster, XGBClassifier, XGBRegressor, ...) or a
        scikit-learn tree ensemble.
    pred_leaf: XGBoost: [batch, trees] of each tree's leaf node id (float32,
        as Booster.predict(pred_leaf=True) returns it), for embeddings.
    missing: XGBoost's missing value besides NaN (an estimator's own by
        default).
    """

    def __init__(self, model, output_margin=False, missing=None,
                 pred_leaf=False):
        super().__init__()
        booster = _xgboost_booster(model)
        if pred_leaf and output_margin:
            raise ValueError("pred_leaf and output_margin are different "
                             "outputs: ask for one")
        if pred_leaf and booster is None:
            raise ValueError("pred_leaf applies to XGBoost models")
        self.output_margin = bool(output_margin)
        self.pred_leaf = bool(pred_leaf)
        # The ONNX domain of the forest's nodes (for the exporter's opsets).
        self.onnx_domain = "ai.cuvil" if booster is not None else \
            "ai.onnx.ml"
        if booster is not None:
            self._init_xgboost(booster, model, missing)
        elif onnx_ml.is_sklearn_ensemble(model):
            if missing is not None:
                raise ValueError("missing applies to XGBoost models")
            self._init_sklearn(model)
        else:
            raise TypeError(f"TreeEnsemble takes an XGBoost model or a "
                            f"scikit-learn tree ensemble, not a "
                            f"{type(model).__name__}")
        self._function = _function_for(self)

    def _init_xgboost(self, booster, model, missing):
        import xgboost

        if missing is None:
            missing = getattr(model, "missing", float("nan"))
        self.missing = float(missing)
        self.features = booster.num_features()
        self._model = bytes(booster.save_raw("json")).decode()
        self.dtype = torch.float32
        probe = booster.predict(xgboost.DMatrix(
            np.zeros((1, self.features), np.float32)),
            output_margin=self.output_margin, pred_leaf=self.pred_leaf)
        self.targets = int(np.asarray(probe).reshape(1, -1).shape[1])

        def predict(x):
            rows = xgboost.DMatrix(x.astype(np.float32, copy=False),
                                   missing=self.missing)
            return np.asarray(booster.predict(
                rows, output_margin=self.output_margin,
                pred_leaf=self.pred_leaf), dtype=np.float32)
        self._predict = predict

    def _init_sklearn(self, model):
        self._proto = onnx_ml.from_sklearn(model, self.output_margin)
        graph = self._proto.graph
        dims = graph.output[0].type.tensor_type.shape.dim
        self.targets = dims[1].dim_value
        self.features = model.n_features_in_
        self.dtype = torch.float64
        # float32 rows, as scikit-learn casts them (float64 for
        # HistGradientBoosting*).
        self._row_type = np.float64 if \
            graph.input[0].type.tensor_type.elem_type == 11 else np.float32
        method = "decision_function" if self.output_margin else \
            "predict_proba" if hasattr(model, "classes_") else "predict"
        self._predict = lambda x: getattr(model, method)(
            x.astype(self._row_type, copy=False))

    def forward(self, x):
        return self._function.apply(x)

    def extra_repr(self):
        return (f"features={self.features}, targets={self.targets}, "
                f"output_margin={self.output_margin}, "
                f"pred_leaf={self.pred_leaf}")

    # The graph the exporter writes for the forest.
    def _symbolic(self, g, x):
        if hasattr(self, "_model"):
            attrs = dict(model_s=self._model,
                         output_margin_i=int(self.output_margin),
                         pred_leaf_i=int(self.pred_leaf))
            if not math.isnan(self.missing):
                attrs["missing_f"] = self.missing
            return g.op("ai.cuvil::XGBoostModel", x, **attrs)
        return _inline(g, self._proto, x)


def _function_for(module):
    """A torch.autograd.Function running `module`'s forest: the library's
    predict eagerly, its graph when exported."""

    def forward(ctx, x):
        rows = x.detach().cpu().numpy()
        out = np.asarray(module._predict(rows)).reshape(len(rows), -1)
        return torch.from_numpy(np.ascontiguousarray(out)).to(module.dtype)

    def symbolic(g, x):
        y = module._symbolic(g, x)
        sizes = x.type().varyingSizes() or [None]
        y.setType(x.type().with_dtype(module.dtype).with_sizes(
            [sizes[0], module.targets]))
        return y

    return type("TreeEnsembleFunction", (torch.autograd.Function,),
                {"forward": staticmethod(forward),
                 "symbolic": staticmethod(symbolic)})


def _inline(g, proto, x):
    """Writes the nodes of a one-input, one-output ONNX graph into `g`."""
    from onnx import numpy_helper

    graph = proto.graph
    values = {graph.input[0].name: _cast(g, x, graph.input[0])}
    for init in graph.initializer:
        values[init.name] = g.op("Constant", value_t=torch.from_numpy(
            numpy_helper.to_array(init).copy()))
    for node in graph.node:
        attrs = {}
        for a in node.attribute:
            value = {1: lambda: a.f, 2: lambda: a.i,
                     3: lambda: a.s.decode(),
                     4: lambda: torch.from_numpy(
                         numpy_helper.to_array(a.t).copy()),
                     6: lambda: list(a.floats), 7: lambda: list(a.ints),
                     8: lambda: [s.decode() for s in a.strings]}[a.type]()
            attrs[f"{a.name}_{_SUFFIX[a.type]}"] = value
        name = f"{node.domain}::{node.op_type}" if node.domain else \
            node.op_type
        values[node.output[0]] = g.op(
            name, *[values[i] for i in node.input], **attrs)
    return values[graph.output[0].name]


def _cast(g, x, spec):
    """`x` as the graph input `spec`'s element type."""
    want = spec.type.tensor_type.elem_type
    have = {torch.float32: 1, torch.float64: 11}.get(x.type().dtype())
    return x if have == want else g.op("Cast", x, to_i=want)
