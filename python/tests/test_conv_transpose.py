"""Transposed convolutions from PyTorch (nn.ConvTranspose1d / 2d, exported
as ONNX ConvTranspose) compiled by cuvil.compile and checked against
PyTorch: strides, padding, output padding, dilation, groups, no bias, and a
UNet-style decoder."""

import pathlib
import sys

import pytest
import torch

import cuvil

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests"
                       / "models"))
import held_out_models  # noqa: E402

CASES = [
    dict(in_channels=4, out_channels=6, kernel_size=3),
    dict(in_channels=4, out_channels=6, kernel_size=2, stride=2),
    dict(in_channels=4, out_channels=6, kernel_size=3, stride=2, padding=1,
         output_padding=1),
    dict(in_channels=4, out_channels=6, kernel_size=(3, 2), stride=(2, 3),
         dilation=(2, 1), bias=False),
    dict(in_channels=4, out_channels=8, kernel_size=3, stride=2, groups=2),
]


def close(got, expected, tolerance=1e-5):
    return float((got - expected).abs().max()) <= tolerance * float(expected.abs().max())


@pytest.mark.parametrize("options", CASES, ids=lambda o: "-".join(
    f"{k}={v}" for k, v in o.items() if k not in ("in_channels",)))
def test_conv_transpose2d_matches_pytorch(options):
    torch.manual_seed(0)
    layer = torch.nn.ConvTranspose2d(**options).eval()
    x = torch.randn(2, 4, 5, 6)
    compiled = cuvil.compile(layer, [("x", torch.float32, (2, 4, 5, 6))])
    with torch.no_grad():
        expected = layer(x)
    got = compiled(x)
    assert got.shape == expected.shape and close(got, expected)


def test_conv_transpose1d_matches_pytorch():
    torch.manual_seed(1)
    layer = torch.nn.ConvTranspose1d(3, 5, 4, stride=2, padding=1).eval()
    x = torch.randn(2, 3, 9)
    compiled = cuvil.compile(layer, [("x", torch.float32, (2, 3, 9))])
    with torch.no_grad():
        expected = layer(x)
    assert close(compiled(x), expected)


def test_unet_with_transposed_convolutions_matches_pytorch():
    torch.manual_seed(2)
    model = held_out_models.TinyUNet().eval()
    x = torch.randn(1, 3, 32, 32)
    compiled = cuvil.compile(model, [("x", torch.float32, (1, 3, 32, 32))])
    with torch.no_grad():
        expected = model(x)
    assert close(compiled(x), expected, 1e-4)
