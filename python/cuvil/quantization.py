"""Reduced-precision options for cuvil.compile: int8 post-training static
quantization, bfloat16 and float16.

    q = cuvil.quantization.Int8(calibration=[x0, x1, ...])
    compiled = cuvil.compile(model, input_signature=..., quantize=q)
    compiled.quantization_report   # each layer's range, scale, zero point

    compiled = cuvil.compile(model, ..., quantize=cuvil.quantization.BF16())
    compiled = cuvil.compile(model, ..., target="aarch64-linux-gnu",
                             cpu="cortex-a76", quantize=cuvil.quantization.FP16())

Calibration runs the float32 model on the batches given (a few hundred
representative samples), observes every quantized layer's activation, and
picks its int8 range. Linear layers (nn.Linear, matmuls by constant
weights) then run on int8 kernels: activations uint8 per tensor
(asymmetric), weights int8 per output channel (symmetric). Everything else
stays float32, with a note saying why. The compiled model still takes and
returns the original float tensors, unless asked for integer I/O.

BF16 needs no calibration: linear layers read their activations and
weights rounded to bfloat16 (to nearest even; the weights stored so, half
their float32 bytes) and sum the products in float32, on AVX-512 BF16's
vdpbf16ps where the CPU has it and by widening to float32 otherwise, with
the same results either way.

FP16 needs no calibration either: linear layers and ungrouped convolutions
compute in float16 arithmetic, sums included (fused multiply-adds in
float16: twice float32's lanes), on CPUs that have it (aarch64 with +fp16:
Cortex-A55, A76, Neoverse N1 and later; docs/edge.md); their biases and
everything else stay float32. On a CPU without float16 arithmetic the model
stays float32, with a note.
"""

import os

import numpy as np

OBSERVERS = ("minmax", "percentile", "entropy")


class Int8:
    """int8 post-training quantization.

    calibration: representative inputs. An iterable of batches, each a
        tensor or array (one-input models), a tuple or list (one per input,
        in order) or a dict by input name; samples along dimension 0. Or
        the path of a .npz written by numpy.savez (one array per input).
    observer: how each activation's range is chosen: "minmax" (the
        extremes seen), "percentile" (clips beyond `percentile`), "entropy"
        (the KL-divergence threshold of TensorRT's calibrator).
    percentile: the percentile observer's p, in (50, 100].
    keep_fp32: ops to keep in float32: node names ("/fc1/Gemm"), module
        paths ("fc1", the attribute path of an nn.Module's submodule) or op
        kinds ("Gemm", "MatMul").
    integer_io: take and return the float32 inputs and outputs as uint8
        quantized tensors (cuvilc --integer-io), for callers that hold 8-bit
        data. Each one's scale and zero point are in the compiled model's
        `inputs` / `outputs` ("quantization"), real = scale * (q - zero_point);
        an input gets the type the first layer reads, an output the range
        calibration saw, and the last layer writes it directly.
    """

    def __init__(self, calibration, *, observer="minmax", percentile=99.99,
                 keep_fp32=(), integer_io=False):
        if calibration is None:
            raise ValueError("Int8 needs calibration data: batches of "
                             "representative inputs")
        if observer not in OBSERVERS:
            raise ValueError(f"observer must be one of {', '.join(OBSERVERS)}, "
                             f"got {observer!r}")
        if not isinstance(percentile, (int, float)) or not 50 < percentile <= 100:
            raise ValueError(f"percentile must be in (50, 100], got {percentile!r}")
        if isinstance(keep_fp32, str):
            keep_fp32 = [keep_fp32]
        self.calibration = calibration
        self.observer = observer
        self.percentile = float(percentile)
        self.keep_fp32 = [str(name) for name in keep_fp32]
        if not isinstance(integer_io, bool):
            raise TypeError(f"integer_io must be True or False, got "
                            f"{integer_io!r}")
        self.integer_io = integer_io

    def __repr__(self):
        return (f"Int8(observer={self.observer!r}, percentile={self.percentile}, "
                f"keep_fp32={self.keep_fp32!r}, integer_io={self.integer_io})")

    def _write_calibration(self, input_names, path):
        """Writes the calibration batches to `path` as a .npz by input name
        (or returns the .npz path given)."""
        data = self.calibration
        if isinstance(data, (str, os.PathLike)):
            return os.fspath(data)
        columns = {name: [] for name in input_names}
        count = 0
        for batch in data:
            count += 1
            if isinstance(batch, dict):
                unknown = sorted(set(batch) - set(input_names))
                if unknown:
                    raise ValueError(f"calibration batch {count} names "
                                     f"{unknown[0]!r}, which is not an input "
                                     f"(inputs: {', '.join(input_names)})")
                values = [batch.get(name) for name in input_names]
            elif isinstance(batch, (tuple, list)):
                values = list(batch)
            else:
                values = [batch]
            if len(values) != len(input_names) or any(v is None for v in values):
                raise ValueError(
                    f"calibration batch {count} has {len(values)} inputs; the "
                    f"model takes {len(input_names)} ({', '.join(input_names)})")
            for name, value in zip(input_names, values):
                columns[name].append(_to_numpy(value))
        if count == 0:
            raise ValueError("calibration holds no batches")
        arrays = {}
        for name, parts in columns.items():
            try:
                arrays[name] = np.concatenate(parts, axis=0)
            except ValueError as error:
                raise ValueError(f"calibration batches of input {name!r} do "
                                 f"not stack along dimension 0: {error}") from None
        np.savez(path, **arrays)
        return path


class _HalfPrecision:
    """What BF16 and FP16 take: the ops to keep in float32."""

    def __init__(self, *, keep_fp32=()):
        if isinstance(keep_fp32, str):
            keep_fp32 = [keep_fp32]
        self.keep_fp32 = [str(name) for name in keep_fp32]

    def __repr__(self):
        return f"{type(self).__name__}(keep_fp32={self.keep_fp32!r})"


class BF16(_HalfPrecision):
    """bfloat16 linear layers, summed in float32.

    keep_fp32: ops to keep in float32, named as for Int8.
    """


class FP16(_HalfPrecision):
    """float16 linear layers and convolutions, summed in float16.

    keep_fp32: ops to keep in float32, named as for Int8.
    """


def _to_numpy(value):
    if hasattr(value, "detach"):  # a torch tensor
        value = value.detach().cpu().numpy()
    array = np.asarray(value)
    if array.ndim == 0:
        raise ValueError("a calibration input is a scalar; samples go along "
                         "dimension 0")
    return np.ascontiguousarray(array)
