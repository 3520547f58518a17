"""Losses in a compiled model (ONNX SoftmaxCrossEntropyLoss and
NegativeLogLikelihoodLoss, as torch.onnx exports F.cross_entropy and
F.nll_loss) checked against PyTorch: every reduction, class weights, an
ignored class, and spatial targets."""

import pytest
import torch
import torch.nn.functional as F

import cuvil


class Loss(torch.nn.Module):
    def __init__(self, kind, reduction, weight=None, ignore_index=-100):
        super().__init__()
        self.kind, self.reduction, self.ignore_index = kind, reduction, ignore_index
        self.weight = weight

    def forward(self, scores, target):
        if self.kind == "cross_entropy":
            return F.cross_entropy(scores, target, weight=self.weight,
                                   ignore_index=self.ignore_index,
                                   reduction=self.reduction)
        return F.nll_loss(F.log_softmax(scores, dim=1), target, weight=self.weight,
                          ignore_index=self.ignore_index, reduction=self.reduction)


def targets(shape, classes, ignore_index, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.randint(0, classes, shape, generator=g)
    # About a quarter of the targets are the ignored class.
    t[torch.rand(shape, generator=g) < 0.25] = ignore_index
    return t


@pytest.mark.parametrize("kind", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("weighted", [False, True])
def test_losses_match_pytorch(kind, reduction, weighted):
    classes = 5
    weight = torch.tensor([0.5, 2.0, 1.0, 0.25, 3.0]) if weighted else None
    model = Loss(kind, reduction, weight, ignore_index=-1)
    compiled = cuvil.compile(model, [("scores", torch.float32, (None, classes)),
                                     ("target", torch.int64, (None,))], max_batch=16)
    torch.manual_seed(1)
    for batch in (1, 7, 16):
        scores = torch.randn(batch, classes) * 3
        target = targets((batch,), classes, -1, batch)
        target[0] = 2  # at least one target counts toward the mean
        torch.testing.assert_close(compiled(scores, target), model(scores, target),
                                   rtol=1e-5, atol=1e-5)


def test_spatial_targets_with_an_ignored_class_inside_the_range():
    # Segmentation: [N, C, H, W] scores, [N, H, W] targets; class 3 ignored.
    model = Loss("cross_entropy", "mean", torch.linspace(0.5, 2.0, 4), ignore_index=3)
    compiled = cuvil.compile(model, [("scores", torch.float32, (2, 4, 5, 6)),
                                     ("target", torch.int64, (2, 5, 6))])
    torch.manual_seed(2)
    scores = torch.randn(2, 4, 5, 6)
    target = targets((2, 5, 6), 4, 3, 2)
    torch.testing.assert_close(compiled(scores, target), model(scores, target),
                               rtol=1e-5, atol=1e-6)


def test_a_target_outside_the_classes_is_a_call_time_error():
    # Not a read outside the scores: the gather checks each target.
    model = Loss("nll_loss", "sum")
    compiled = cuvil.compile(model, [("scores", torch.float32, (3, 4)),
                                     ("target", torch.int64, (3,))])
    for bad in ([0, 4, 1], [0, -5, 1]):
        with pytest.raises(RuntimeError, match="invalid argument"):
            compiled(torch.randn(3, 4), torch.tensor(bad))
