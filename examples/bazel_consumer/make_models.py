"""Writes models/*.onnx, the two small models this example compiles.

Run with Debian's Python (it has torch and onnx), from this folder:

    /usr/bin/python3 make_models.py

The files are committed: a user's repository ships its models the same way.
Fixed seeds make them the same bytes on every run of the same torch.
"""

import torch


class Classifier(torch.nn.Module):
    """Four features -> 16 -> 3 class probabilities."""

    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(4, 16)
        self.out = torch.nn.Linear(16, 3)

    def forward(self, features):
        return torch.softmax(self.out(torch.relu(self.hidden(features))), dim=1)


class Scorer(torch.nn.Module):
    """Eight features -> 32 -> 1 score in (0, 1)."""

    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(8, 32)
        self.out = torch.nn.Linear(32, 1)

    def forward(self, features):
        return torch.sigmoid(self.out(torch.tanh(self.hidden(features))))


def export(module, inputs, path):
    torch.onnx.export(
        module.eval(),
        (torch.zeros(1, inputs),),
        path,
        input_names=["features"],
        output_names=["output"],
        dynamic_axes={"features": {0: "batch"}, "output": {0: "batch"}},
        opset_version=13,
    )


if __name__ == "__main__":
    torch.manual_seed(7)
    export(Classifier(), 4, "models/classifier.onnx")
    export(Scorer(), 8, "models/scorer.onnx")
