"""Interpolation from PyTorch (F.interpolate / nn.Upsample, exported as ONNX
Resize) compiled by cuvil.compile, checked against PyTorch: every mode and
alignment a segmentation or detection head uses, up and down."""

import pytest
import torch
import torch.nn.functional as F

import cuvil


class Interpolate(torch.nn.Module):
    def __init__(self, **options):
        super().__init__()
        self.options = options

    def forward(self, x):
        return F.interpolate(x, **self.options)


CASES = [
    dict(scale_factor=2, mode="nearest"),
    dict(size=(7, 5), mode="nearest"),
    dict(scale_factor=2, mode="bilinear", align_corners=False),
    dict(scale_factor=2, mode="bilinear", align_corners=True),
    dict(size=(3, 4), mode="bilinear", align_corners=False),
    dict(size=(9, 13), mode="bicubic", align_corners=False),
    dict(scale_factor=0.5, mode="bicubic", align_corners=True),
]


@pytest.mark.parametrize("options", CASES, ids=lambda o: "-".join(
    f"{k}={v}" for k, v in o.items()))
def test_interpolate_matches_pytorch(options):
    torch.manual_seed(0)
    x = torch.randn(2, 3, 6, 8)
    model = Interpolate(**options)
    compiled = cuvil.compile(model, [("x", torch.float32, (2, 3, 6, 8))])
    with torch.no_grad():
        expected = model(x)
    got = compiled(x)
    assert got.shape == expected.shape
    assert float((got - expected).abs().max()) <= 1e-5 * float(expected.abs().max())


def test_upsample_in_a_decoder_block_matches_pytorch():
    """A UNet-style step: conv, 2x bilinear upsample, concatenation with
    the skip connection, conv."""
    torch.manual_seed(1)
    down = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
    up = torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
    fuse = torch.nn.Conv2d(11, 4, 3, padding=1)

    class Decoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.down, self.up, self.fuse = down, up, fuse

        def forward(self, x):
            return self.fuse(torch.cat([self.up(torch.relu(self.down(x))), x], 1))

    model = Decoder().eval()
    x = torch.randn(1, 3, 16, 16)
    compiled = cuvil.compile(model, [("x", torch.float32, (1, 3, 16, 16))])
    with torch.no_grad():
        expected = model(x)
    assert float((compiled(x) - expected).abs().max()) <= 1e-4 * float(expected.abs().max())
