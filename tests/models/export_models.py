"""Exports the reference models (random weights, fixed seed) to ONNX.

    /usr/bin/python3 tests/models/export_models.py MODEL OUT.onnx [--opset N]

Models: the torchvision architectures and torch.nn layers Cuvil is checked on.
Nothing is downloaded: weights are random (torch.manual_seed(0)).
"""

import argparse
import sys

import torch


def transformer_encoder_layer():
    layer = torch.nn.TransformerEncoderLayer(d_model=512, nhead=8,
                                             dim_feedforward=2048,
                                             batch_first=True)
    return layer, torch.randn(1, 128, 512)


def fan_in_init(model):
    """torchvision's training initializations (small truncated normals, zero
    heads) make random-weight activations vanish (GoogLeNet's pooled
    features are ~1e-11, its output just the bias), which would make a
    numeric comparison vacuous. Fan-in scaled weights keep every layer's
    activations of order one."""
    for module in model.modules():
        if isinstance(module, (torch.nn.Conv2d, torch.nn.Linear)):
            torch.nn.init.kaiming_normal_(module.weight, mode="fan_in",
                                          nonlinearity="relu")
    return model


def torchvision_model(name, size=224, **kwargs):
    import torchvision
    model = getattr(torchvision.models, name)(**kwargs)
    return fan_in_init(model), torch.randn(1, 3, size, size)


def vit_small():
    """ViT-B/16's architecture (torchvision's VisionTransformer: class token,
    position embedding, pre-norm encoder blocks with GELU MLPs) at ViT-Tiny's
    width and 3 blocks, for the suite's structural and Python-capture checks
    (tests/e2e compiles and checks the full vit_b_16)."""
    import torchvision
    model = torchvision.models.VisionTransformer(
        image_size=224, patch_size=16, num_layers=3, num_heads=3,
        hidden_dim=192, mlp_dim=768)
    return fan_in_init(model), torch.randn(1, 3, 224, 224)


MODELS = {
    "resnet18": lambda: torchvision_model("resnet18"),
    "resnet50": lambda: torchvision_model("resnet50"),
    "mobilenet_v2": lambda: torchvision_model("mobilenet_v2"),
    "mobilenet_v3_small": lambda: torchvision_model("mobilenet_v3_small"),
    "efficientnet_b0": lambda: torchvision_model("efficientnet_b0"),
    "shufflenet_v2_x1_0": lambda: torchvision_model("shufflenet_v2_x1_0"),
    "squeezenet1_0": lambda: torchvision_model("squeezenet1_0"),
    "densenet121": lambda: torchvision_model("densenet121"),
    "regnet_y_400mf": lambda: torchvision_model("regnet_y_400mf"),
    "regnet_x_800mf": lambda: torchvision_model("regnet_x_800mf"),
    "mobilenet_v3_large": lambda: torchvision_model("mobilenet_v3_large"),
    "convnext_tiny": lambda: torchvision_model("convnext_tiny"),
    "googlenet": lambda: torchvision_model("googlenet"),
    "vit_b_16": lambda: torchvision_model("vit_b_16"),
    "vit_small": vit_small,
    "transformer_encoder_layer": transformer_encoder_layer,
}


def export(name, path, opset=13, dynamic_batch=False):
    torch.manual_seed(0)
    model, example = MODELS[name]()
    model.eval()
    axes = {"input": {0: "batch"}, "output": {0: "batch"}} if dynamic_batch else None
    # Grad stays enabled: torch.nn's attention "fast path" (a fused kernel
    # ONNX cannot express) only runs without it.
    torch.onnx.export(model, example, path, input_names=["input"],
                      output_names=["output"], opset_version=opset,
                      dynamic_axes=axes)
    return model, example


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("model", choices=sorted(MODELS))
    parser.add_argument("output")
    parser.add_argument("--opset", type=int, default=13)
    parser.add_argument("--dynamic-batch", action="store_true")
    args = parser.parse_args()
    export(args.model, args.output, args.opset, args.dynamic_batch)


if __name__ == "__main__":
    sys.exit(main())
