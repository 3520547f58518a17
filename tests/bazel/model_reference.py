"""The example consumer's two models (examples/bazel_consumer/models) in
numpy float64, from their ONNX weights: the reference its programs' outputs
are checked against."""

import pathlib

import numpy as np
import onnx
from onnx import numpy_helper

MODELS = pathlib.Path(__file__).resolve().parents[2] / "examples" / "bazel_consumer" / "models"


def weights(name):
    model = onnx.load(str(MODELS / f"{name}.onnx"))
    return {t.name: numpy_helper.to_array(t).astype(np.float64)
            for t in model.graph.initializer}


def features(rows, columns):
    """two_models.c's inputs: exact in float32."""
    i = np.arange(rows * columns)
    return (((i * 37) % 17 - 8) / 4.0).reshape(rows, columns)


def classifier(x):
    w = weights("classifier")
    hidden = np.maximum(x @ w["hidden.weight"].T + w["hidden.bias"], 0)
    logits = hidden @ w["out.weight"].T + w["out.bias"]
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def scorer(x):
    w = weights("scorer")
    hidden = np.tanh(x @ w["hidden.weight"].T + w["hidden.bias"])
    return 1 / (1 + np.exp(-(hidden @ w["out.weight"].T + w["out.bias"])))


def parse_rows(text, model):
    """The rows a program printed for `model` ("model v v v" lines)."""
    return np.array([[float(v) for v in line.split()[1:]]
                     for line in text.splitlines() if line.split()[0] == model])


def check_two_models(stdout):
    """two_models.c's output against the reference: both models' rows, and
    its call with a batch above the compiled maximum (8)."""
    np.testing.assert_allclose(parse_rows(stdout, "classifier"), classifier(features(3, 4)),
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(parse_rows(stdout, "scorer"), scorer(features(5, 8)),
                               rtol=1e-5, atol=1e-7)
    # CUVIL_ERROR_BATCH_OUT_OF_RANGE, with the context's message.
    assert "classifier_batch_9 2 batch 9 is outside 1..8" in stdout
