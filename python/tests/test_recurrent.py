"""Recurrent layers from PyTorch (nn.LSTM, nn.GRU, nn.RNN, exported as ONNX
LSTM / GRU / RNN) compiled by cuvil.compile and checked against PyTorch
within 1e-5 of the output's scale: one and several layers, uni- and
bidirectional, batch_first, with and without initial states, tanh and relu
RNNs, a dynamic batch, and a text model (embedding, LSTM, linear head)."""

import pathlib
import sys

import pytest
import torch

import cuvil

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests"
                       / "models"))
import held_out_models  # noqa: E402

TOLERANCE = 1e-5


def close(got, expected, tolerance=TOLERANCE):
    got = torch.as_tensor(got)
    scale = max(float(expected.abs().max()), 1e-6)
    return got.shape == expected.shape and \
        float((got - expected).abs().max()) <= tolerance * scale


class Flat(torch.nn.Module):
    """A recurrent layer with its outputs as one flat tuple (output, h_n[,
    c_n]) and optional initial states as inputs."""

    def __init__(self, layer, states=0):
        super().__init__()
        self.layer, self.states = layer, states

    def forward(self, x, *initial):
        if not initial:
            out, state = self.layer(x)
        elif len(initial) == 1:
            out, state = self.layer(x, initial[0])
        else:
            out, state = self.layer(x, tuple(initial))
        return (out, *state) if isinstance(state, tuple) else (out, state)


CASES = [
    ("LSTM", dict(), False),
    ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True), False),
    ("LSTM", dict(bidirectional=True), True),
    ("LSTM", dict(num_layers=2, bias=False), True),
    ("GRU", dict(), False),
    ("GRU", dict(num_layers=2, bidirectional=True, batch_first=True), True),
    ("RNN", dict(), False),
    ("RNN", dict(nonlinearity="relu", bidirectional=True, num_layers=2), True),
]


def case_id(case):
    kind, options, states = case
    return "-".join([kind] + [f"{k}={v}" for k, v in options.items()] +
                    (["initial-states"] if states else []))


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_recurrent_layer_matches_pytorch(case):
    kind, options, with_states = case
    torch.manual_seed(0)
    layer = getattr(torch.nn, kind)(input_size=5, hidden_size=7, **options).eval()
    batch, steps = 3, 6
    x_shape = (batch, steps, 5) if options.get("batch_first") else (steps, batch, 5)
    directions = 2 if options.get("bidirectional") else 1
    state_shape = (options.get("num_layers", 1) * directions, batch, 7)
    inputs = [torch.randn(*x_shape)]
    signature = [("x", torch.float32, x_shape)]
    if with_states:
        for name in (["h0", "c0"] if kind == "LSTM" else ["h0"]):
            inputs.append(torch.randn(*state_shape))
            signature.append((name, torch.float32, state_shape))
    model = Flat(layer).eval()
    compiled = cuvil.compile(model, signature)
    with torch.no_grad():
        expected = model(*inputs)
    got = compiled(*inputs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert close(g, e), (g, e)


def test_lstm_with_a_dynamic_batch_matches_pytorch():
    """PyTorch makes the zero initial states in the batch's shape
    (ConstantOfShape of the input's shape): they import as absent states."""
    torch.manual_seed(1)
    model = Flat(torch.nn.LSTM(4, 8, num_layers=2, batch_first=True,
                               bidirectional=True)).eval()
    compiled = cuvil.compile(model, [("x", torch.float32, (None, 5, 4))], max_batch=8)
    for batch in (1, 3, 8):
        x = torch.randn(batch, 5, 4)
        with torch.no_grad():
            expected = model(x)
        got = compiled(x)
        assert len(got) == 3
        for g, e in zip(got, expected):
            assert close(g, e)


class BatchSizedZeros(torch.nn.Module):
    def forward(self, x):
        return x + torch.zeros(x.shape[0], 4) + 1


def test_batch_sized_zeros_outside_a_recurrent_layer_say_what_to_do():
    with pytest.raises(cuvil.CompileError, match="depends on the dynamic batch; "
                       "compile with a static batch"):
        cuvil.compile(BatchSizedZeros(), [("x", torch.float32, (None, 4))], max_batch=4)


def test_text_model_with_embedding_lstm_and_linear_head_matches_pytorch():
    torch.manual_seed(2)
    model = held_out_models.TextClassifier().eval()
    tokens = torch.randint(0, 50, (2, 12))
    compiled = cuvil.compile(model, [("tokens", torch.int64, (2, 12))])
    with torch.no_grad():
        expected = model(tokens)
    assert close(compiled(tokens), expected)


def test_a_bare_lstm_module_compiles():
    """nn.LSTM itself returns (output, (h_n, c_n)): nested outputs flatten."""
    torch.manual_seed(3)
    layer = torch.nn.LSTM(3, 4).eval()
    x = torch.randn(5, 2, 3)
    compiled = cuvil.compile(layer, [("x", torch.float32, (5, 2, 3))])
    with torch.no_grad():
        out, (h, c) = layer(x)
    got = compiled(x)
    assert len(got) == 3
    for g, e in zip(got, (out, h, c)):
        assert close(g, e)
