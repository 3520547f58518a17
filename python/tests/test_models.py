"""Real models captured directly from Python, against PyTorch eager.

The importers issue's models (torchvision architectures with random
weights, fixed seed; torch.nn.TransformerEncoderLayer) compiled from the
nn.Module itself; the ONNX route is tests/e2e. Tolerance (fp32):
max |cuvil - torch| <= 1e-4 * max |torch|.
"""

import pathlib
import sys

import pytest
import torch

import cuvil

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests"
                       / "models"))
import export_models  # noqa: E402
import held_out_models  # noqa: E402

# vit_small: ViT-B/16's architecture, narrower and shallower (tests/e2e
# runs vit_b_16 itself through ONNX).
MODELS = ["resnet18", "mobilenet_v2", "efficientnet_b0", "vit_small",
          "transformer_encoder_layer"]


@pytest.mark.parametrize("name", MODELS)
def test_model_matches_pytorch(name):
    torch.manual_seed(0)
    model, example = export_models.MODELS[name]()
    model.eval()
    signature = [("input", torch.float32, (None,) + tuple(example.shape[1:]))]
    dynamic = name != "vit_small"  # ViT's class token is expanded per batch
    if not dynamic:
        signature = [("input", torch.float32, tuple(example.shape))]
    compiled = cuvil.compile(model, signature,
                             max_batch=2 if dynamic else None)
    torch.manual_seed(1)
    for batch in (1, 2) if dynamic else (1,):
        x = torch.randn(batch, *example.shape[1:])
        with torch.no_grad():
            expected = model(x)
        result = compiled(x)
        error = float((result - expected).abs().max())
        scale = float(expected.abs().max())
        assert error <= 1e-4 * scale, (name, batch, error, scale)


# Issue #26's held-out segmentation models (Resize, dilated convolutions,
# an ASPP head); fcn_resnet50's compile is the long one, run by
# scripts/bench.
@pytest.mark.parametrize("name", [
    "deeplabv3_mobilenet_v3_large",
    pytest.param("fcn_resnet50", marks=pytest.mark.slow)])
def test_segmentation_model_matches_pytorch(name):
    torch.manual_seed(0)
    model = held_out_models.Segmentation(name).eval()
    compiled = cuvil.compile(model, [("x", torch.float32, (1, 3, 64, 64))])
    x = torch.randn(1, 3, 64, 64)
    with torch.no_grad():
        expected = model(x)
    # Not vacuous: the map varies across the image.
    assert float((expected - expected.mean(dim=(2, 3), keepdim=True)).abs().max()) > 0.1
    error = float((torch.as_tensor(compiled(x)) - expected).abs().max())
    assert error <= 1e-4 * float(expected.abs().max()), error
