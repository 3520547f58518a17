"""cuvil_model: a model compiled by cuvilc as a build action, as a cc_library.

    load("@cuvil//build_defs:cuvil_model.bzl", "cuvil_model")

    cuvil_model(
        name = "resnet",
        src = "resnet18.onnx",
        max_batch = 8,
        cpu = "x86-64-v3",
        threads = 2,
    )

    cc_binary(name = "app", srcs = ["app.c"], deps = [":resnet"])

gives `:resnet`, a cc_library holding `resnet.h` and the compiled model, the
way XLA's tf_library turns a graph into a library at build time. app.c
includes "<package>/resnet.h" and calls resnet_model_run(...),
resnet_context_create(...) (docs/abi.md under the model's name), so any
number of models link into one program. The compile is an ordinary action:
its output depends only on the model, the options and cuvilc, byte for byte,
so Bazel caches it locally and remotely. A model cuvilc refuses fails the
build with cuvilc's message, which names the op and the node.
"""

def _compile_impl(ctx):
    outputs = [ctx.outputs.library, ctx.outputs.header]
    args = ctx.actions.args()
    args.add(ctx.file.src)
    args.add("--quiet")
    args.add("--emit=" + ("static" if ctx.attr.linkage == "static" else "so"))
    args.add(ctx.outputs.library, format = "-o=%s")
    args.add("--target=" + ctx.attr.target)
    args.add("--cpu=" + ctx.attr.cpu)
    args.add("--symbol-prefix=" + ctx.attr.symbol_prefix)
    args.add("--threads-default=%d" % ctx.attr.threads)
    if ctx.attr.max_batch:
        args.add("--max-batch=%d" % ctx.attr.max_batch)
    for input_name, shape in sorted(ctx.attr.input_shapes.items()):
        args.add("--input-shape=%s=%s" % (input_name, shape))
    inputs = [ctx.file.src]
    if ctx.attr.quantize:
        args.add("--quantize=" + ctx.attr.quantize)
    if ctx.file.calibration:
        args.add(ctx.file.calibration, format = "--calibration=%s")
        inputs.append(ctx.file.calibration)
    args.add_all(ctx.attr.cuvilc_flags)
    ctx.actions.run(
        executable = ctx.executable._cuvilc,
        arguments = [args],
        inputs = inputs,
        outputs = outputs,
        mnemonic = "CuvilCompile",
        progress_message = "Compiling model %s with cuvilc (%s, %s)" % (
            ctx.label,
            ctx.attr.target,
            ctx.attr.cpu,
        ),
    )
    return [DefaultInfo(files = depset(outputs))]

_cuvil_model_compile = rule(
    implementation = _compile_impl,
    doc = "Runs cuvilc on a model; writes its library and header.",
    attrs = {
        "src": attr.label(allow_single_file = True, mandatory = True),
        "library": attr.output(mandatory = True),
        "header": attr.output(mandatory = True),
        "linkage": attr.string(values = ["static", "shared"], default = "static"),
        "symbol_prefix": attr.string(mandatory = True),
        "target": attr.string(default = "x86_64-linux-gnu"),
        "cpu": attr.string(mandatory = True),
        "threads": attr.int(default = 1),
        "max_batch": attr.int(default = 0),
        "input_shapes": attr.string_dict(),
        "quantize": attr.string(values = ["", "int8", "bf16", "fp16"], default = ""),
        "calibration": attr.label(allow_single_file = [".npz"]),
        "cuvilc_flags": attr.string_list(),
        # cuvilc in the target configuration, not the exec one: Cuvil's
        # Bazel builds are host builds (cuvilc itself cross-compiles models,
        # --target), and a workspace that also builds @cuvil//tools:cuvilc
        # or the wheel then compiles the compiler once, not twice.
        "_cuvilc": attr.label(
            default = Label("//tools:cuvilc"),
            executable = True,
            cfg = "target",
        ),
    },
)

def _library_impl(ctx):
    # The cc_library's CcInfo (what a cc_binary links), with the compiled
    # files as this target's outputs, so that `bazel build :model` compiles
    # the model (a cc_library of prebuilt files has nothing to build).
    library = ctx.attr.library
    return [
        library[CcInfo],
        DefaultInfo(
            files = ctx.attr.compiled[DefaultInfo].files,
            runfiles = library[DefaultInfo].default_runfiles,
        ),
    ]

_cuvil_model_library = rule(
    implementation = _library_impl,
    doc = "A compiled model as a C/C++ library.",
    attrs = {
        "library": attr.label(providers = [CcInfo], mandatory = True),
        "compiled": attr.label(mandatory = True),
    },
)

def cuvil_model(
        name,
        src,
        cpu = "x86-64-v3",
        target = "x86_64-linux-gnu",
        linkage = "static",
        symbol_prefix = None,
        max_batch = 0,
        threads = 1,
        input_shapes = {},
        quantize = "",
        calibration = None,
        cuvilc_flags = [],
        **kwargs):
    """A model compiled by cuvilc, as a C/C++ library named `name`.

    Args:
      name: the cc_library; its header is `<name>.h` in this package.
      src: the model: .onnx, XGBoost .json / .ubj, LightGBM .txt or level1
        .mlir (cuvilc's MODEL).
      cpu: cuvilc --cpu. A named CPU, not "native": the artifact must not
        depend on the machine that happened to build it (remote caches
        share it). The default, x86-64-v3, is AVX2 + FMA.
      target: cuvilc --target (x86_64-linux-gnu, aarch64-linux-gnu).
      linkage: "static" (an archive linked into the program) or "shared"
        (a .so the program loads at start, shipped in its runfiles).
      symbol_prefix: the C ABI's name (cuvilc --symbol-prefix): functions
        <prefix>_model_run, ...; macros <PREFIX>_MODEL_*. Default: `name`.
      max_batch: cuvilc --max-batch (0: the model's own batch).
      threads: cuvilc --threads-default.
      input_shapes: cuvilc --input-shape, as {input name: "1x3x224x224"}.
      quantize: cuvilc --quantize: "int8" (with `calibration`), "bf16",
        "fp16".
      calibration: a .npz of representative inputs (cuvilc --calibration).
      cuvilc_flags: any other cuvilc flags, e.g. ["--keep-fp32=fc"].
      **kwargs: visibility, tags, testonly, ... for both targets.
    """
    if cpu == "native":
        fail("cuvil_model(%s): cpu = \"native\" would make the artifact depend on " % name +
             "the machine that builds it; name the CPU (x86-64-v3, znver4, cortex-a72, ...)")
    suffix = ".a" if linkage == "static" else ".so"
    _cuvil_model_compile(
        name = name + "_cuvilc",
        src = src,
        library = name + suffix,
        header = name + ".h",
        linkage = linkage,
        symbol_prefix = symbol_prefix if symbol_prefix != None else name,
        target = target,
        cpu = cpu,
        threads = threads,
        max_batch = max_batch,
        input_shapes = input_shapes,
        quantize = quantize,
        calibration = calibration,
        cuvilc_flags = cuvilc_flags,
        **kwargs
    )
    native.cc_library(
        name = name + "_cc",
        srcs = [name + suffix],
        hdrs = [name + ".h"],
        # The model's kernels call libm; its threads are pthreads.
        linkopts = ["-lm", "-lpthread"],
        **kwargs
    )
    _cuvil_model_library(
        name = name,
        library = name + "_cc",
        compiled = name + "_cuvilc",
        **kwargs
    )
