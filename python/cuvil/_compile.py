"""cuvil.compile: capture in Python, compile in C++ (cuvil._C)."""

import json
import math
import os
import platform
import shutil
import sys
import tempfile
import warnings

from cuvil import _signature
from cuvil._errors import CompileError
from cuvil._runtime import ELF_MACHINES, CompiledModule, CrossCompiledModule

# The artifact checker's name of this machine (cuvil/abi).
_HOST_MACHINE = {"x86_64": "x86-64", "aarch64": "aarch64"}.get(platform.machine())

def _is_onnx_model_proto(model):
    return type(model).__name__ == "ModelProto" and hasattr(
        model, "SerializeToString")


def _xgboost_booster(model):
    """The xgboost.Booster of an XGBoost model (Booster, XGBClassifier,
    XGBRegressor, ...), or None, without importing xgboost."""
    if not type(model).__module__.startswith("xgboost"):
        return None
    if hasattr(model, "get_booster"):
        return model.get_booster()
    return model if hasattr(model, "save_raw") else None


def _lightgbm_text(model):
    """The text of a LightGBM model (Booster, LGBMClassifier, ...), or None,
    without importing lightgbm."""
    if not type(model).__module__.startswith("lightgbm"):
        return None
    booster = getattr(model, "booster_", model)
    return booster.model_to_string() if hasattr(
        booster, "model_to_string") else None


def _is_torch_model(model):
    torch = sys.modules.get("torch")
    return torch is not None and (
        isinstance(model, (torch.nn.Module, torch.jit.ScriptFunction))
        or callable(model))


def _source(model, specs, output_margin=False, float32_features=False):
    """(bytes, name) of the model in a format the C++ compiler reads."""
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if not path.endswith((".onnx", ".mlir", ".json", ".ubj", ".txt")):
            raise ValueError(f"cannot compile '{path}': Cuvil reads ONNX "
                             "(.onnx), XGBoost JSON (.json) or UBJSON (.ubj), "
                             "LightGBM text (.txt) and level1 MLIR (.mlir) "
                             "files")
        try:
            with open(path, "rb") as f:
                return f.read(), path
        except OSError as error:
            raise type(error)(error.errno, f"cannot read model: "
                              f"{error.strerror}", path) from None
    booster = _xgboost_booster(model)
    if booster is not None:
        return bytes(booster.save_raw("json")), "xgboost.json"
    text = _lightgbm_text(model)
    if text is not None:
        return text.encode(), "lightgbm.txt"
    from cuvil import onnx_ml
    if onnx_ml.is_sklearn_ensemble(model):
        converted = onnx_ml.from_sklearn(model, output_margin=output_margin,
                                         float32_features=float32_features)
        return converted.SerializeToString(), f"{type(model).__name__}.onnx"
    if _is_onnx_model_proto(model):
        return model.SerializeToString(), f"{model.graph.name or 'model'}.onnx"
    if _is_torch_model(model):
        if specs is None:
            raise ValueError("input_signature is required for torch models: "
                             "[(name, dtype, shape), ...], e.g. "
                             "[('x', torch.float32, (1, 10))]")
        from cuvil import _capture
        name = next((n for n in (getattr(model, attr, None) for attr in (
            "__name__", "name", "original_name")) if isinstance(n, str) and n),
            type(model).__name__)
        return _capture.torch_to_onnx(model, specs), f"{name}.onnx"
    raise TypeError(f"cannot compile a {type(model).__name__}: pass a "
                    "torch.jit.script function or module, a traced module, "
                    "an nn.Module, a callable on tensors, an ONNX file path, "
                    "an onnx.ModelProto, an XGBoost or LightGBM model or a "
                    "scikit-learn tree ensemble")


def _input_names(contents, name, specs):
    """The model's input names, in order (for calibration data)."""
    if specs is not None:
        return [spec.name for spec in specs]
    if not name.endswith(".onnx"):
        raise ValueError("quantize needs the model's inputs: compile an ONNX "
                         "or torch model, or give input_signature")
    import onnx
    graph = onnx.load_model_from_string(contents).graph
    initializers = {init.name for init in graph.initializer}
    return [i.name for i in graph.input if i.name not in initializers]


def compile(model, input_signature=None, target="x86_64-linux-gnu", *,
            cpu="native", threads=1, max_batch=None, external_weights=False,
            quantize=None, verbose=False, device=None, precision=None,
            reuse_factor=None, strategy=None, clock_period=None,
            max_utilization=None, calibration=None, project=None,
            test_vectors=None, output_margin=False, missing=None,
            pred_leaf=False, float32_features=False, sample_parallel="auto",
            emit=None):
    """Compiles `model` to a native CompiledModule (with target=
    "aarch64-linux-gnu" on another machine, to a cuvil.CrossCompiledModule
    to save and deploy; with target="fpga", to a cuvil.FpgaDesign: an HLS
    project, or a cuvil.VerilogDesign; with target="mlu", to a
    cuvil.MluProject: BANG C and CNRT sources for a Cambricon MLU).

    model: a torch.jit.script function or module, a torch.jit.trace'd
        module, an nn.Module (exported in eval mode, weights frozen), a
        Python callable on tensors (traced), an ONNX file path or an
        onnx.ModelProto, an XGBoost model (xgboost.Booster, XGBClassifier,
        XGBRegressor, or its .json or .ubj file), a LightGBM model (Booster,
        LGBMClassifier, ..., or its text .txt file) or a scikit-learn tree
        ensemble (DecisionTree*, RandomForest*, ExtraTrees*,
        GradientBoosting*, HistGradientBoosting*; cuvil.onnx_ml.from_sklearn;
        docs/trees.md).
    input_signature: [(name, dtype, shape), ...]; -1 or None in a shape
        marks a dynamic dimension (dimension 0, the batch). Required for
        torch models; for ONNX it overrides the model's input shapes.
    target: a registered target, by name or triple (x86 or
        x86_64-linux-gnu, aarch64 or aarch64-linux-gnu, fpga, mlu; `cuvilc
        --help` lists them).
    cpu: native, x86-64, x86-64-v2, x86-64-v3, x86-64-v4 or an LLVM CPU
        name (cuvilc --cpu); for aarch64, generic (native when
        cross-compiling) or an LLVM CPU name such as cortex-a72, cortex-a76
        or neoverse-n1 (docs/edge.md).
    threads: threads a call uses (cuvilc --threads-default).
    max_batch: the largest batch of a dynamic batch (cuvilc --max-batch).
    sample_parallel: with a dynamic batch and threads > 1, run a batch as
        one chunk of samples per thread, each on its own workspace, rather
        than every layer split across the threads (the same bits): "auto"
        where the samples are independent and the model computes
        products (not tree ensembles), "on" wherever they are
        independent (CompileError naming the op that mixes them), "off"
        (cuvilc --sample-parallel).
    external_weights: keep weights in <name>.weights.bin beside the .so.
    quantize: a cuvil.quantization.Int8 (post-training int8 quantization,
        calibrated on its data; cuvilc --quantize=int8; the result's
        `quantization_report` then says what each layer became) or a
        cuvil.quantization.BF16 (linear layers on bfloat16 activations and
        weights, summed in float32; cuvilc --quantize=bf16) or a
        cuvil.quantization.FP16 (linear layers and convolutions in float16
        arithmetic on CPUs with it, aarch64 +fp16; cuvilc --quantize=fp16).
    verbose: print the compiler's progress lines to stderr.
    output_margin: for a boosted tree ensemble, return its margins
        (XGBoost's output_margin=True, LightGBM's raw_score=True,
        scikit-learn's decision_function)
        rather than its predictions.
    float32_features: for a LightGBM model or a HistGradientBoosting
        estimator (which predict on float64 rows), take float32 features:
        exact for float32 data (they convert it to float64 exactly), and
        such forests take the vector walks (cuvilc --tree-features=float32).
    pred_leaf: for an XGBoost or LightGBM model, return each tree's leaf
        (pred_leaf=True: [batch, trees], XGBoost's node ids as float32,
        LightGBM's leaf indices as float64) rather than its predictions.
    missing: for a tree ensemble, a feature value that counts as missing
        besides NaN (XGBoost's `missing`; an XGBClassifier's or
        XGBRegressor's own by default).

    With target="fpga" (docs/fpga.md):
    device: the FPGA part (cuvilc --list-devices), e.g. "xczu9eg".
    precision: the fixed-point type, "fixed<16,6>" (hls4ml's default),
        "ap_fixed<8,3,AP_RND,AP_SAT>", "auto" / "auto<8>" (integer bits
        from `calibration`), or a dict {"default": ..., NODE: ...} by the
        model's node names.
    reuse_factor: an int (1: fully parallel; snapped to a valid one, raised
        to fit), or a dict {"default": ..., NODE: n} (kept as given).
    strategy: "latency" or "resource", or a dict by node name.
    clock_period: ns.
    max_utilization: the share of each resource the design may use (0.8).
    calibration: representative inputs (an array, samples along dimension
        0), for auto precision and the testbench's vectors.
    project: the top function's name (myproject). test_vectors: how many.
    emit: "hls" (the default: a cuvil.FpgaDesign) or "verilog" (a
        cuvil.VerilogDesign: RTL with its testbench; cuvilc --emit=verilog).

    With target="mlu" (docs/mlu.md):
    device: the chip, "mlu270", "mlu290" or "mlu370".
    precision: "fp32" (the default) or "fp16" (float16 weights and
        tensors, products summed in float32) or "int8" (fixed point with
        power-of-two positions, products on the tensor unit; needs
        calibration=, representative inputs as cuvil.quantization.Int8
        takes them).

    Raises CompileError (unsupported op or construct, shape or dtype
    mismatch: with the op and the source line), ValueError (bad arguments)
    or FileNotFoundError.
    """
    fpga, mlu = target == "fpga", target == "mlu"
    fpga_calibration = calibration  # the name is the .npz path's below
    fpga_options = dict(precision=precision, reuse_factor=reuse_factor,
                        strategy=strategy, clock_period=clock_period,
                        max_utilization=max_utilization, project=project,
                        test_vectors=test_vectors)
    if mlu:
        given = [k for k, v in dict(fpga_options, precision=None).items()
                 if v is not None]
        if given:
            raise ValueError(f"{', '.join(given)} apply to target='fpga'")
        if (precision == "int8") != (calibration is not None):
            raise ValueError(
                "precision='int8' needs calibration= (representative inputs, "
                "as cuvil.quantization.Int8 takes them) to choose each "
                "activation's fixed-point position"
                if precision == "int8" else
                "calibration= applies to target='mlu' with precision='int8'")
    elif not fpga and (device is not None or calibration is not None or any(
            v is not None for v in fpga_options.values())):
        given = [k for k, v in dict(fpga_options, device=device,
                                    calibration=calibration).items()
                 if v is not None]
        raise ValueError(f"{', '.join(given)} apply to target='fpga' (device "
                         "and precision also to target='mlu')")
    if (fpga or mlu) and device is None:
        raise ValueError(f"target='{target}' needs device=NAME (cuvilc "
                         f"--list-devices --target={target} lists them)")
    if emit is not None and (not fpga or emit not in ("hls", "verilog")):
        raise ValueError("emit= is 'hls' or 'verilog', with target='fpga'")
    if (fpga or mlu) and quantize is not None:
        raise ValueError(f"a {target.upper()} project's numbers are its "
                         "precision=, not quantize=")
    specs = _signature.parse(input_signature)
    if mlu and precision == "int8":
        from cuvil import quantization
        quantize = quantization.Int8(calibration)
    if not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be an int >= 1, got {threads!r}")
    if max_batch is not None and (not isinstance(max_batch, int)
                                  or max_batch < 1):
        raise ValueError(f"max_batch must be an int >= 1, got {max_batch!r}")
    if sample_parallel not in ("auto", "on", "off"):
        raise ValueError("sample_parallel must be 'auto', 'on' or 'off', got "
                         f"{sample_parallel!r}")
    for spec in specs or ():
        for dim in spec.dynamic_dims:
            if dim != 0:
                raise CompileError(
                    f"dimension {dim} of input '{spec.name}' is dynamic; "
                    "Cuvil compiles a dynamic batch (dimension 0) only. Give "
                    "the other dimensions their sizes.",
                    location=f"input_signature[{spec.name}]")
    dynamic = any(spec.dynamic_dims for spec in specs or ())
    if max_batch is not None and specs is not None and not dynamic:
        raise ValueError("max_batch needs a dynamic batch: write dimension 0 "
                         "of the inputs as -1 or None in input_signature")
    if dynamic and max_batch is None:
        warnings.warn("the model has a dynamic batch; it is bounded to 1 "
                      "(pass max_batch=N for batches up to N)", stacklevel=2)

    from cuvil import quantization
    if quantize is not None and not isinstance(
            quantize, (quantization.Int8, quantization.BF16, quantization.FP16)):
        raise TypeError("quantize must be a cuvil.quantization.Int8, BF16 or "
                        f"FP16, got {type(quantize).__name__}")

    from cuvil import onnx_ml
    xgboost = _xgboost_booster(model) is not None or (
        isinstance(model, (str, os.PathLike))
        and os.fspath(model).endswith((".json", ".ubj")))
    lightgbm = _lightgbm_text(model) is not None or (
        isinstance(model, (str, os.PathLike))
        and os.fspath(model).endswith(".txt"))
    sklearn = onnx_ml.is_sklearn_ensemble(model)
    trees = xgboost or lightgbm or sklearn
    if (output_margin or missing is not None) and not trees:
        raise ValueError("output_margin and missing apply to tree ensembles "
                         "(XGBoost, LightGBM and scikit-learn models)")
    if float32_features and not trees:
        raise ValueError("float32_features applies to tree ensembles "
                         "(LightGBM and HistGradientBoosting models)")
    if pred_leaf and not (xgboost or lightgbm):
        raise ValueError("pred_leaf applies to XGBoost and LightGBM models")
    if pred_leaf and output_margin:
        raise ValueError("pred_leaf and output_margin are different outputs: "
                         "ask for one")
    if missing is not None and not xgboost:
        raise ValueError("missing applies to XGBoost models; LightGBM's and "
                         "scikit-learn's trees route missing values "
                         "themselves")
    if missing is None:
        missing = getattr(model, "missing", None) if xgboost else None
    if missing is not None and not math.isnan(missing):
        if not math.isfinite(missing):
            raise ValueError(f"missing must be a finite number or NaN, got "
                             f"{missing!r}")
        tree_missing = float(missing)
    else:
        tree_missing = None
    if trees and max_batch is None:
        # A forest needs no workspace: any batch up to 2^20 rows by default.
        max_batch = 1 << 20
    contents, name = _source(model, specs, output_margin, float32_features)
    input_shapes = {spec.name: [-1 if d is None else d for d in spec.shape]
                    for spec in specs or ()}
    progress = (lambda line: print(f"cuvil: {line}", file=sys.stderr)) \
        if verbose else None

    from cuvil import _C
    directory = tempfile.mkdtemp(prefix="cuvil-")
    calibration = os.path.join(directory, "calibration.npz")
    try:
        quantization_options = {}
        if isinstance(quantize, quantization.BF16):
            quantization_options = dict(bf16=True, keep_fp32=quantize.keep_fp32)
        elif isinstance(quantize, quantization.FP16):
            quantization_options = dict(fp16=True, keep_fp32=quantize.keep_fp32)
        elif quantize is not None:
            quantization_options = dict(
                calibration=quantize._write_calibration(
                    _input_names(contents, name, specs), calibration),
                observer=quantize.observer, percentile=quantize.percentile,
                keep_fp32=quantize.keep_fp32, integer_io=quantize.integer_io)
        settings = {}
        if fpga:
            from cuvil import _fpga
            settings = _fpga.settings_for(device, **fpga_options)
            if fpga_calibration is not None:
                import numpy as np
                np.savez(calibration, **{
                    _input_names(contents, name, specs)[0]:
                        np.asarray(fpga_calibration, dtype=np.float32)})
                settings["calibration"] = calibration
            cpu = device
        elif mlu:
            settings = {"precision": precision or "fp32"}
            cpu = device
        options = _C.CompileOptions(
            name=name, input_shapes=input_shapes, max_batch=max_batch,
            target=target, cpu=cpu, threads_default=threads,
            external_weights=external_weights,
            emit=(emit or "hls") if fpga else "mlu" if mlu else "so",
            progress=progress,
            settings=settings, tree_margins=output_margin,
            tree_leaves=bool(pred_leaf),
            tree_missing=tree_missing,
            tree_float32_features=bool(float32_features) and lightgbm,
            sample_parallel=sample_parallel, **quantization_options)
        # Raises CompileError (built by the compiler, with its fields),
        # FileNotFoundError or PermissionError.
        artifact = _C.compile(contents, options)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    finally:
        if os.path.exists(calibration):
            os.remove(calibration)

    files = artifact["files"]  # {".so": bytes, ".h": bytes, ...}
    if mlu:
        shutil.rmtree(directory, ignore_errors=True)
        from cuvil._mlu import MluProject
        return MluProject(files)
    if fpga:
        shutil.rmtree(directory, ignore_errors=True)
        from cuvil._fpga import FpgaDesign, VerilogDesign
        return VerilogDesign(files) if emit == "verilog" else FpgaDesign(files)
    machine = ELF_MACHINES.get(int.from_bytes(files[".so"][18:20], "little"))
    if machine != _HOST_MACHINE:
        # Cross-compiled (target="aarch64-linux-gnu" on x86-64).
        shutil.rmtree(directory, ignore_errors=True)
        return CrossCompiledModule(files, machine or "", name=name)
    for suffix, data in files.items():
        with open(os.path.join(directory, "model" + suffix), "wb") as f:
            f.write(data)
    compiled = CompiledModule(os.path.join(directory, "model.so"), files,
                              owned_dir=directory)
    report = artifact.get("quantization_report")
    compiled.quantization_report = json.loads(report) if report else None
    compiled.kernel_report = list(artifact.get("kernel_report", []))
    return compiled
