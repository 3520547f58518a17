"""Transposed convolutions from PyTorch (nn.ConvTranspose1d / 2d, exported
as ONNX ConvTranspose) compiled by cuvil.compile and checked against
PyTorch: strides, padding, output padding, dilation, groups, no bias, and a
UNet-style decoder."""

import pytest
import torch

import cuvil

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


class TinyUNet(torch.nn.Module):
    """Two levels down by strided convolutions, up by transposed ones, with
    skip connections concatenated."""

    def __init__(self):
        super().__init__()
        self.down1 = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.down2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.up2 = torch.nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.up1 = torch.nn.ConvTranspose2d(16, 4, 2, stride=2)
        self.head = torch.nn.Conv2d(7, 2, 1)

    def forward(self, x):
        d1 = torch.relu(self.down1(x))
        d2 = torch.relu(self.down2(d1))
        u2 = torch.relu(self.up2(d2))
        u1 = torch.relu(self.up1(torch.cat([u2, d1], 1)))
        return self.head(torch.cat([u1, x], 1))


def test_unet_with_transposed_convolutions_matches_pytorch():
    torch.manual_seed(2)
    model = TinyUNet().eval()
    x = torch.randn(1, 3, 32, 32)
    compiled = cuvil.compile(model, [("x", torch.float32, (1, 3, 32, 32))])
    with torch.no_grad():
        expected = model(x)
    assert close(compiled(x), expected, 1e-4)
