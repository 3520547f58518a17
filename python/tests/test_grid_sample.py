"""F.grid_sample (ONNX GridSample) compiled and checked against PyTorch in
every mode, padding mode and corner alignment, with grids reaching outside
[-1, 1] so that every padding rule is exercised, and a dynamic batch."""

import itertools

import pytest
import torch
import torch.nn.functional as F

import cuvil


class Warp(torch.nn.Module):
    def __init__(self, mode, padding_mode, align_corners):
        super().__init__()
        self.options = dict(mode=mode, padding_mode=padding_mode,
                            align_corners=align_corners)

    def forward(self, x, grid):
        return F.grid_sample(x, grid, **self.options)


CASES = list(itertools.product(["bilinear", "nearest", "bicubic"],
                               ["zeros", "border", "reflection"], [False, True]))


@pytest.mark.parametrize("mode,padding_mode,align_corners", CASES)
def test_grid_sample_matches_pytorch(mode, padding_mode, align_corners):
    model = Warp(mode, padding_mode, align_corners)
    compiled = cuvil.compile(model, [("x", torch.float32, (None, 3, 5, 7)),
                                     ("grid", torch.float32, (None, 4, 6, 2))],
                             max_batch=4)
    g = torch.Generator().manual_seed(len(mode) + len(padding_mode))
    for batch in (1, 4):
        x = torch.randn(batch, 3, 5, 7, generator=g)
        # Up to 1.6 outside the image: reflection wraps more than once.
        grid = torch.rand(batch, 4, 6, 2, generator=g) * 5.2 - 2.6
        torch.testing.assert_close(compiled(x, grid), model(x, grid),
                                   rtol=1e-4, atol=1e-5)
