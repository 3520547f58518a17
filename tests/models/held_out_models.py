"""Issue #26's held-out models: scripted models with data-dependent control
flow (script them with torch.jit.script), a text model (embedding, LSTM,
linear head), a UNet with transposed convolutions and torchvision's
segmentation models. The tests check each against PyTorch
(python/tests/test_control_flow.py, test_recurrent.py,
test_conv_transpose.py, test_models.py); benchmarks/held_out_bench.py times
each against TorchScript."""

import torch


class Recurrence(torch.nn.Module):
    """A loop over a trip count from an input's shape, with an if inside
    on the step's values, over a dynamic batch."""

    def __init__(self):
        super().__init__()
        self.cell = torch.nn.Linear(8, 8)
        self.register_buffer("steps", torch.randn(5, 8))

    def forward(self, h: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
        for i in range(self.steps.size(0)):
            h = torch.tanh(self.cell(h) + self.steps[i] + shift)
            if bool(h.mean() > 0.0):
                h = h * 0.5
            else:
                h = h - 0.25
        return h


class BeamSearch(torch.nn.Module):
    """A scripted beam search over a tiny recurrent decoder: K beams per
    sequence, a fixed-size token buffer updated by mask, top-k over every
    beam's extensions each step, and an early stop when every beam has
    emitted the end token."""

    def __init__(self, vocab: int = 11, hidden: int = 16, beams: int = 3,
                 steps: int = 6):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.recur = torch.nn.Linear(hidden, hidden)
        self.out = torch.nn.Linear(hidden, vocab)
        self.vocab, self.beams, self.steps = vocab, beams, steps

    def forward(self, h0: torch.Tensor):
        batch, hidden = h0.shape[0], h0.shape[1]
        k, vocab, steps = self.beams, self.vocab, self.steps
        h = h0.unsqueeze(1).expand(batch, k, hidden).reshape(batch * k, hidden)
        # Only beam 0 is live at first, so the first step's top k are
        # distinct extensions of one hypothesis.
        scores = torch.zeros(batch, k)
        scores[:, 1:] = -1e9
        tokens = torch.zeros(batch, k, steps, dtype=torch.long)
        positions = torch.arange(steps)
        t = 0
        done = False
        while t < steps and not done:
            logp = torch.log_softmax(self.out(h), dim=-1).view(batch, k, vocab)
            candidates = (scores.unsqueeze(-1) + logp).view(batch, k * vocab)
            scores, index = torch.topk(candidates, k, dim=1)
            beam = torch.div(index, vocab, rounding_mode="floor")
            token = index - beam * vocab
            tokens = torch.gather(
                tokens, 1, beam.unsqueeze(-1).expand(batch, k, steps))
            tokens = torch.where(positions == t, token.unsqueeze(-1), tokens)
            rows = (beam + torch.arange(batch).unsqueeze(1) * k).view(-1)
            h = torch.tanh(self.embed(token.view(-1)) +
                           self.recur(h.index_select(0, rows)))
            done = bool((token == 0).all())
            t += 1
        return tokens, scores


class TextClassifier(torch.nn.Module):
    """Token ids -> embedding -> two-layer LSTM -> the last step's state ->
    a linear head."""

    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(50, 16)
        self.lstm = torch.nn.LSTM(16, 32, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(32, 4)

    def forward(self, tokens):
        out, _ = self.lstm(self.embedding(tokens))
        return self.head(out[:, -1])


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


class Segmentation(torch.nn.Module):
    """A torchvision segmentation model (random fan-in scaled weights: with
    torchvision's own initialization deeplabv3's output is one constant per
    class; no auxiliary head) returning its "out" map as one tensor."""

    def __init__(self, name: str, classes: int = 5):
        super().__init__()
        import torchvision

        from export_models import fan_in_init
        self.model = fan_in_init(getattr(torchvision.models.segmentation, name)(
            weights=None, weights_backbone=None, aux_loss=False,
            num_classes=classes))

    def forward(self, x):
        return self.model(x)["out"]
