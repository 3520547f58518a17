"""A design's outputs computed from its definition, in exact integers: the
independent reference the FPGA target's generated HLS C++ is checked
against (the compiler's own interpreter computes the testbench's expected
outputs; this one shares no code with it).

The layers come from the torch model (weights, biases, activations), the
fixed-point types from the design's report.json (what the user asked and
the compiler chose), the arithmetic from fixed_reference (rationals).
"""

import math
from fractions import Fraction

from fixed_reference import fitted, reference, rounded


def fixed(precision):
    """(W, I, signed, rounding, overflow) of a report's Precision entry."""
    return (precision["width"], precision["integer"], precision["signed"],
            precision["rounding"], precision["overflow"])


def fraction_bits(t):
    return t[0] - t[1]


def from_float(value, t):
    return reference(Fraction(float(value)), *t)


def requantize(raw, frac, t):
    """raw * 2^-frac, exactly, stored in t."""
    w, i, s, q, o = t
    return fitted(rounded(Fraction(raw) * Fraction(2) ** (w - i - frac), q), w, s, o)


def dense(x, fx, layer, weight, bias):
    """y = x W^T + b (torch.nn.Linear's weight), exact sums, quantized once."""
    tw, tb = fixed(layer["Precision"]["weight"]), fixed(layer["Precision"]["bias"])
    tr = fixed(layer["Precision"]["result"])
    fw, fb = fraction_bits(tw), fraction_bits(tb)
    fa = max(fx + fw, fb)
    y = []
    for j, row in enumerate(weight):
        acc = from_float(bias[j], tb) << (fa - fb)
        for xi, wij in zip(x, row):
            acc += (xi * from_float(wij, tw)) << (fa - fx - fw)
        value = requantize(acc, fa, tr)
        y.append(max(value, 0) if layer.get("activation") == "relu" else value)
    return y, fraction_bits(tr)


def conv(x, fx, layer, weight, bias):
    """A convolution (zero padding), each output an exact sum quantized
    once; `weight` is [O][I][KH][KW] (a Conv1d's with KH = 1)."""
    p = layer["Precision"]
    tw, tb, tr = fixed(p["weight"]), fixed(p["bias"]), fixed(p["result"])
    fw, fb = fraction_bits(tw), fraction_bits(tb)
    fa = max(fx + fw, fb)
    (c, h, w), (co_n, oh_n, ow_n) = layer["in_shape"], layer["out_shape"]
    (kh_n, kw_n), (sh, sw) = layer["kernel"], layer["stride"]
    pt, pl = layer["padding"]
    wq = [[[[from_float(v, tw) for v in row] for row in plane]
           for plane in filt] for filt in weight]
    y = [0] * (co_n * oh_n * ow_n)
    for co in range(co_n):
        for oh in range(oh_n):
            for ow in range(ow_n):
                acc = from_float(bias[co], tb) << (fa - fb)
                for ci in range(c):
                    for kh in range(kh_n):
                        for kw in range(kw_n):
                            ih, iw = oh * sh - pt + kh, ow * sw - pl + kw
                            if 0 <= ih < h and 0 <= iw < w:
                                acc += (x[(ci * h + ih) * w + iw] * wq[co][ci][kh][kw]) \
                                    << (fa - fx - fw)
                value = requantize(acc, fa, tr)
                if layer.get("activation") == "relu":
                    value = max(value, 0)
                y[(co * oh_n + oh) * ow_n + ow] = value
    return y, fraction_bits(tr)


def max_pool(x, fx, layer):
    tr = fixed(layer["Precision"]["result"])
    (c, h, w), (_, oh_n, ow_n) = layer["in_shape"], layer["out_shape"]
    (kh_n, kw_n), (sh, sw) = layer["kernel"], layer["stride"]
    y = []
    for ci in range(c):
        for oh in range(oh_n):
            for ow in range(ow_n):
                m = max(x[(ci * h + oh * sh + kh) * w + ow * sw + kw]
                        for kh in range(kh_n) for kw in range(kw_n))
                y.append(requantize(m, fx, tr))
    return y, fraction_bits(tr)


def floor_scaled(value, bits):
    """floor(value * 2^bits) of a non-negative integer."""
    return value << bits if bits >= 0 else value >> -bits


def softmax(x, fx, layer):
    """The table softmax docs/fpga.md defines."""
    p = layer["Precision"]
    te, ti, tr = fixed(p["exp_table"]), fixed(p["inv_table"]), fixed(p["result"])
    entries, inv_entries = layer["table_size"], layer["inv_table_size"]
    index_fraction = 6
    inv_bits = inv_entries.bit_length() - 1
    c = (len(x) - 1).bit_length()  # ceil(log2 n)
    exp_table = [from_float(math.exp(-k / 2 ** index_fraction), te)
                 for k in range(entries)]
    inv_table = [from_float(1 / ((j + 0.5) * 2.0 ** (c - inv_bits)), ti)
                 for j in range(inv_entries)]
    top = max(x)
    e = [exp_table[min(floor_scaled(top - v, index_fraction - fx), entries - 1)]
         for v in x]
    fe = fraction_bits(te)
    j = min(floor_scaled(sum(e), inv_bits - c - fe), inv_entries - 1)
    inv = inv_table[j]
    return ([requantize(v * inv, fe + fraction_bits(ti), tr) for v in e],
            fraction_bits(tr))


def run(report, linears, sample):
    """The design's outputs (floats, exact) for one sample; `linears` are
    the model's torch.nn.Linear and Conv1d / Conv2d layers in order."""
    layers = report["layers"]
    tin = fixed(layers[0]["Precision"]["input"])
    x = [from_float(v, tin) for v in sample]
    fx = fraction_bits(tin)
    remaining = list(linears)
    for layer in layers:
        kind = layer["class_name"]
        if kind == "Dense":
            linear = remaining.pop(0)
            x, fx = dense(x, fx, layer, linear.weight.detach().double().tolist(),
                          linear.bias.detach().double().tolist())
        elif kind == "Conv2D":
            module = remaining.pop(0)
            weight = module.weight.detach().double()
            if weight.dim() == 3:  # Conv1d: a 2-D kernel of height 1
                weight = weight.unsqueeze(2)
            x, fx = conv(x, fx, layer, weight.tolist(),
                         module.bias.detach().double().tolist())
        elif kind == "MaxPooling2D":
            x, fx = max_pool(x, fx, layer)
        elif kind == "Activation":
            tr = fixed(layer["Precision"]["result"])
            x, fx = [requantize(max(v, 0), fx, tr) for v in x], fraction_bits(tr)
        elif kind == "Softmax":
            x, fx = softmax(x, fx, layer)
        else:
            raise ValueError(f"no reference for {kind}")
    assert not remaining
    return [math.ldexp(v, -fx) for v in x]
