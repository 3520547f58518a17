//===- CuvilcMain.cpp - the Cuvil compiler command line -------------------===//
//
//   cuvilc model.mlir -o model.level1.mlir
//
// A thin layer over cuvil::compile: flags, progress lines on stderr, and an
// output written atomically (a failed compile leaves no partial file). The
// cuvilc binary and the Python wheel's `cuvilc` entry point both run it.
//
//===----------------------------------------------------------------------===//

#include "tools/cuvilc/CuvilcMain.h"

#include "cuvil/driver/Compiler.h"
#include "cuvil/importers/onnx/OnnxImporter.h"
#include "cuvil/support/FileUtil.h"
#include "cuvil/support/Interrupt.h"
#include "cuvil/support/SourceEscape.h"
#include "cuvil/support/Version.h"
#include "cuvil/targets/AllTargets.h"
#include "tools/common/FlagUtil.h"

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

ABSL_FLAG(std::string, o, "",
          "Output path. --emit=so defaults to <model>.so in the current "
          "directory (with <model>.h beside it); other outputs go to "
          "standard output. Files are written atomically: a failed compile "
          "leaves none.");
ABSL_FLAG(std::string, emit, "",
          "What to produce: one of the target's outputs (listed below; the "
          "first is the default), or mlir-level1 / mlir-level2 for the IR.");
ABSL_FLAG(std::string, target, "x86_64-linux-gnu",
          "The target, by name or triple (listed below).");
ABSL_FLAG(std::string, cpu, "native",
          "CPU to build for: native (this machine), x86-64, x86-64-v2, "
          "x86-64-v3, x86-64-v4, or an LLVM CPU name such as znver4; for "
          "--target=aarch64-linux-gnu, generic (native when cross-compiling) "
          "or an LLVM CPU name such as cortex-a72, cortex-a76 or neoverse-n1. "
          "The artifact refuses to run on a CPU without the features it "
          "uses.");
ABSL_FLAG(bool, external_weights, false,
          "Write the weights to <output>.weights.bin beside the .so, which "
          "maps them when loaded, instead of embedding them (large models).");
ABSL_FLAG(std::string, symbol_prefix, "",
          "Name the model's C ABI NAME_model_run, NAME_context_create, ... "
          "(and its header's macros NAME_MODEL_*) instead of cuvil_*, so that "
          "several models link into one program (--emit=static, so or "
          "header). NAME is a C identifier.");
ABSL_FLAG(int32_t, threads_default, 1,
          "Threads a context of the compiled model uses when created with "
          "num_threads = 0 (results do not depend on the count).");
ABSL_FLAG(bool, print_ir_after_all, false,
          "Print the IR after every compiler pass to standard error.");
ABSL_FLAG(std::vector<std::string>, print_ir_after, {},
          "Print the IR after these passes (comma-separated pass names such "
          "as cuvil-fuse-epilogues,cuvil-plan-memory) to standard error.");
ABSL_FLAG(bool, pass_statistics, false,
          "Report what each compiler pass did (batch norms folded, convolutions "
          "merged, ops fused, bytes saved), to standard error.");
ABSL_FLAG(bool, explain_kernels, false,
          "List, to standard error, which kernel computes each layer (the "
          "algorithm, the layout, the fused epilogue) and why, so that a "
          "layer on a slow path says so: the CPU targets, from "
          "--emit=mlir-level2 on.");
ABSL_FLAG(bool, time_passes, false,
          "Report the time each compiler pass took, to standard error.");
ABSL_FLAG(std::string, reproducer, "",
          "Where a failing pass pipeline writes its reproducer (the IR it "
          "started from and the pipeline; rerun it with cuvil-opt "
          "--run-reproducer). Default: $TMPDIR/cuvilc-<pid>.reproducer.mlir, "
          "kept only when no pass explained the failure with an error of its "
          "own; given, it is always kept.");
ABSL_FLAG(std::vector<std::string>, input_shape, {},
          "ONNX input shapes, overriding the model's: NAME=DIMxDIM..., "
          "comma-separated (e.g. x=1x3x224x224,y=1x10; ? is dynamic).");
ABSL_FLAG(int64_t, max_batch, 0,
          "Make dimension 0 of every input a dynamic batch of 1 to N "
          "(0: the batch is what the model says).");
ABSL_FLAG(std::string, sample_parallel, "auto",
          "With a dynamic batch (--max-batch): a context of several threads "
          "runs a batch as one chunk of samples per thread, each with its own "
          "workspace, instead of splitting every layer across the threads. "
          "auto: when the model's ops keep samples apart and it computes "
          "products (not a tree ensemble); on: whenever "
          "the ops keep samples apart (an error names the op that does "
          "not); off: never. Results are the same bits either way.");
ABSL_FLAG(std::string, quantize, "",
          "Reduced precision: int8 (post-training static quantization: "
          "linear layers and convolutions run on int8 kernels, calibrated on "
          "--calibration), bf16 (linear layers read bfloat16 activations "
          "and weights, summed in float32; no calibration) or fp16 (linear "
          "layers and convolutions in float16 arithmetic, on aarch64 CPUs "
          "with +fp16 such as cortex-a76; no calibration). Inputs and "
          "outputs keep their float types (see --integer-io).");
ABSL_FLAG(bool, integer_io, false,
          "With an int8 model (--quantize=int8, or an ONNX QDQ model that "
          "quantizes its inputs and dequantizes its outputs): take and return "
          "the float32 inputs and outputs as 8-bit quantized tensors; the "
          "header and metadata give each one's scale and zero point (real = "
          "scale * (q - zero_point)).");
ABSL_FLAG(std::string, tree_output, "prediction",
          "For a tree ensemble (an XGBoost .json / .ubj or LightGBM .txt "
          "model): "
          "prediction (what the library's predict returns: probabilities "
          "for logistic, softprob, binary and multiclass objectives), "
          "margin (the raw sums, XGBoost's output_margin=True, LightGBM's "
          "raw_score=True) or leaf (each tree's leaf, in tree order, as "
          "pred_leaf=True returns it: XGBoost's node ids, LightGBM's leaf "
          "indices; to feed embeddings in a model of your own).");
ABSL_FLAG(std::string, tree_features, "",
          "For a LightGBM .txt model: float32 to take float32 features "
          "rather than float64 (exact for float32 data, which LightGBM reads "
          "in double exactly; such forests take the vector walks). XGBoost's "
          "features are float32 already.");
ABSL_FLAG(std::string, tree_missing, "nan",
          "For a tree ensemble: a feature value that counts as missing "
          "besides NaN (XGBoost's `missing` parameter, e.g. -999; the model "
          "file does not record it).");
ABSL_FLAG(std::string, calibration, "",
          "With --quantize: a .npz written by numpy.savez holding "
          "representative inputs, one array per model input by name, samples "
          "along dimension 0 (a few hundred samples of real data). With "
          "--target=fpga: the same, sizing --precision=auto's integer bits "
          "and giving the testbench its vectors. With --target=mlu "
          "--precision=int8: as with --quantize.");
ABSL_FLAG(std::string, observer, "minmax",
          "How calibration chooses each activation's range: minmax (the "
          "extremes seen), percentile (clips beyond --percentile), entropy "
          "(the KL-divergence threshold, clips rare outliers).");
ABSL_FLAG(double, percentile, 99.99,
          "The percentile observer's p: the range is [(100-p)th, p-th] "
          "percentile.");
ABSL_FLAG(std::vector<std::string>, keep_fp32, {},
          "With --quantize (int8, bf16 or fp16): ops to keep in float32, "
          "comma-separated: node "
          "names (/fc1/Gemm), module paths (fc1) or op kinds (Gemm, MatMul).");
ABSL_FLAG(std::string, quantization_report, "",
          "With --quantize: write each quantized layer's observed range, "
          "scale and zero point, and what stayed float32, to this file (JSON "
          "if it ends in .json, a table otherwise).");
ABSL_FLAG(std::string, device, "",
          "--target=fpga: the FPGA part to build for (cuvilc --list-devices "
          "lists them), e.g. xczu9eg. --target=mlu: the Cambricon chip, "
          "mlu270, mlu290 or mlu370.");
ABSL_FLAG(std::string, precision, "",
          "--target=mlu: fp32 (the default), fp16 (float16 tensors, "
          "float32 sums) or int8 (fixed point with power-of-two positions "
          "on the tensor unit, calibrated on --calibration). --target=fpga: "
          "the model's fixed-point type, as hls4ml and the "
          "vendors write it: fixed<W,I> or fixed<W,I,ROUNDING,OVERFLOW> "
          "(ap_fixed<16,6,AP_RND,AP_SAT> too); W bits, I of them integer "
          "bits with the sign. Default ap_fixed<16,6> (TRN, WRAP). auto (or "
          "auto<W>): W bits (16), RND, SAT, integer bits per tensor from the "
          "--calibration data's ranges and the weights'.");
ABSL_FLAG(std::string, layer_precision, "",
          "--target=fpga: per-layer types by the model's node name, "
          "separated by ';': '/fc1/Gemm=fixed<8,3>;/fc2/Gemm=fixed<12,4,RND,SAT>'.");
ABSL_FLAG(int64_t, reuse_factor, 0,
          "--target=fpga: how many products one multiplier computes, one a "
          "cycle (1: fully parallel). Invalid factors are snapped to the "
          "nearest valid one; a design that does not fit gets larger ones. "
          "Default 1.");
ABSL_FLAG(std::vector<std::string>, layer_reuse_factor, {},
          "--target=fpga: per-layer reuse factors, kept as given: "
          "NODE=N,NODE=N.");
ABSL_FLAG(std::string, strategy, "",
          "--target=fpga: latency (fully parallel, weights in logic) or "
          "resource (folded loops, weights in block RAM). Default: latency "
          "where the reuse factor is 1, resource elsewhere.");
ABSL_FLAG(std::vector<std::string>, layer_strategy, {},
          "--target=fpga: per-layer strategies: NODE=latency,NODE=resource.");
ABSL_FLAG(double, clock_period, 0,
          "--target=fpga: the clock period in ns (default: the device's).");
ABSL_FLAG(double, max_utilization, 0,
          "--target=fpga: the share of each resource (LUT, FF, DSP, block "
          "RAM) the design may use; reuse factors grow until it fits. "
          "Default 0.8.");
ABSL_FLAG(std::string, project, "",
          "--target=fpga: the HLS project's and top function's name "
          "(default myproject).");
ABSL_FLAG(int32_t, test_vectors, 0,
          "--target=fpga: samples in the testbench (default 16; the first "
          "of --calibration's when given, seeded uniform values otherwise).");
ABSL_FLAG(bool, list_devices, false,
          "Print the devices each target builds for (--device), with their "
          "resources, and exit.");
ABSL_FLAG(bool, quiet, false, "Do not print progress lines.");
ABSL_FLAG(bool, list_onnx_ops, false,
          "Print the ONNX operators cuvilc imports, one per line, and exit.");

namespace {

const char kUsage[] = R"(Cuvil: an ahead-of-time compiler for AI inference.

Usage:
  cuvilc [flags] MODEL [-o OUTPUT]

MODEL is an ONNX model (.onnx, ONNX-ML tree ensembles included), an XGBoost
model saved as JSON (.json) or UBJSON (.ubj), a LightGBM model saved as text
(.txt) or a level1 MLIR file (.mlir). cuvilc imports
it, checks every shape and dtype (a mismatch is reported with the op and its
source location: the ONNX node or the MLIR line), runs the optimization
pipeline and writes what --emit asks for.

Examples:
  cuvilc resnet18.onnx -o resnet18.so          # also writes resnet18.h
  cuvilc resnet18.onnx --max-batch 16 --cpu=x86-64-v3 -o resnet18.so
  cuvilc resnet18.onnx --input-shape input=1x3x224x224 --emit=c -o resnet18.c
  cuvilc resnet18.onnx --emit=static --symbol-prefix=resnet \
      -o libresnet.a                               # resnet_model_run, ...
  cuvilc examples/classifier.mlir --emit=mlir-level2
  cuvilc fraud.json --max-batch 65536 -o fraud.so  # XGBoost trees
  cuvilc model.txt --tree-output=margin -o raw.so   # LightGBM raw scores
  cuvilc resnet18.onnx --target=aarch64-linux-gnu --cpu=cortex-a72 \
      -o resnet18.so                               # a Raspberry Pi 4's .so
  cuvilc jet_tagger.onnx --target=fpga --device=xczu9eg \
      --precision='fixed<16,6>' -o jet_tagger/   # an HLS project folder
  cuvilc resnet18.onnx --target=mlu --device=mlu270 \
      -o resnet18_mlu/                  # BANG C + CNRT for a Cambricon MLU

Exit status: 0 on success, non-zero on any error (explained on stderr).)";

/// Where the files of an output go: the main file at `output`, each other
/// beside it, named by its suffix after the main file's stem (model.so ->
/// model.h, model.weights.bin: the name the .so looks for).
std::string companionPath(const std::string &output,
                          const std::string &mainSuffix,
                          const std::string &suffix) {
  bool hasMain = output.size() > mainSuffix.size() &&
                 output.compare(output.size() - mainSuffix.size(),
                                mainSuffix.size(), mainSuffix) == 0;
  return (hasMain ? output.substr(0, output.size() - mainSuffix.size())
                  : output) +
         suffix;
}

/// Every file the output may write (the main one first).
std::vector<std::string>
outputPaths(const std::string &output,
            const std::optional<cuvil::EmitKindInfo> &kind) {
  if (output.empty())
    return {};
  std::vector<std::string> paths = {output};
  if (kind)
    for (size_t i = 1; i < kind->suffixes.size(); ++i)
      paths.push_back(
          companionPath(output, kind->suffixes[0], kind->suffixes[i]));
  return paths;
}

/// The targets and what each writes, for --help.
void printTargets() {
  std::cout << "\nTargets (--target=NAME or a triple) and their outputs "
               "(--emit):\n";
  for (const cuvil::TargetBackend *target : cuvil::getAllTargets().list()) {
    std::cout << "  " << target->getName().str();
    for (const std::string &triple : target->getTriples())
      std::cout << ", " << triple;
    std::cout << "\n      " << target->getDescription().str() << "\n";
    for (const cuvil::EmitKindInfo &kind : target->getEmitKinds())
      std::cout << "      --emit=" << kind.name << ": " << kind.description
                << "\n";
  }
  std::cout << "  Every target: --emit=mlir-level1 (the checked, optimized "
               "tensor IR), --emit=mlir-level2 (the planned buffer IR).\n";
}

/// --quantize, or int8 when an MLU's --precision asks for it (whose
/// calibration flags are then int8's).
std::string quantizeScheme() {
  if (absl::GetFlag(FLAGS_quantize).empty() &&
      absl::GetFlag(FLAGS_target) == "mlu" &&
      absl::GetFlag(FLAGS_precision) == "int8")
    return "int8";
  return absl::GetFlag(FLAGS_quantize);
}

/// The --target=fpga flags as TargetOptions::settings.
absl::Status parseTargetSettings(cuvil::TargetOptions &options) {
  std::map<std::string, std::string> &settings = options.settings;
  if (std::string precision = absl::GetFlag(FLAGS_precision); !precision.empty())
    settings["precision"] = precision;
  // NODE=VALUE items as "SETTING:NODE" settings (node names may hold '=').
  auto perLayer = [&](absl::string_view flag, absl::string_view setting,
                      absl::string_view item) -> absl::Status {
    size_t eq = item.rfind('=');
    if (eq == absl::string_view::npos || eq == 0)
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": '", item, "' is not NODE=VALUE"));
    settings[absl::StrCat(setting, ":", item.substr(0, eq))] =
        std::string(item.substr(eq + 1));
    return absl::OkStatus();
  };
  for (absl::string_view item :
       absl::StrSplit(absl::GetFlag(FLAGS_layer_precision), ';',
                      absl::SkipWhitespace()))
    if (absl::Status status = perLayer("--layer-precision", "precision", item);
        !status.ok())
      return status;
  if (int64_t reuse = absl::GetFlag(FLAGS_reuse_factor); reuse != 0)
    settings["reuse_factor"] = absl::StrCat(reuse);
  for (const std::string &item : absl::GetFlag(FLAGS_layer_reuse_factor))
    if (absl::Status status =
            perLayer("--layer-reuse-factor", "reuse_factor", item);
        !status.ok())
      return status;
  if (std::string strategy = absl::GetFlag(FLAGS_strategy); !strategy.empty())
    settings["strategy"] = strategy;
  for (const std::string &item : absl::GetFlag(FLAGS_layer_strategy))
    if (absl::Status status = perLayer("--layer-strategy", "strategy", item);
        !status.ok())
      return status;
  if (double clock = absl::GetFlag(FLAGS_clock_period); clock != 0)
    settings["clock_period"] = absl::StrCat(clock);
  if (double share = absl::GetFlag(FLAGS_max_utilization); share != 0)
    settings["max_utilization"] = absl::StrCat(share);
  if (std::string project = absl::GetFlag(FLAGS_project); !project.empty())
    settings["project"] = project;
  if (int32_t vectors = absl::GetFlag(FLAGS_test_vectors); vectors != 0)
    settings["test_vectors"] = absl::StrCat(vectors);
  if (std::string device = absl::GetFlag(FLAGS_device); !device.empty()) {
    // An FPGA design's calibration data sizes its types (--precision=auto).
    if (quantizeScheme().empty() && !absl::GetFlag(FLAGS_calibration).empty())
      settings["calibration"] = absl::GetFlag(FLAGS_calibration);
    if (options.cpu != "native")
      return absl::InvalidArgumentError(
          "give --device (an FPGA part) or --cpu (a CPU), not both");
    options.cpu = device;
  }
  return absl::OkStatus();
}

/// The first calibration flag given (those only int8 takes), if any.
/// (`withData`: --calibration counts too; an FPGA design takes it.)
const char *givenCalibrationFlag(bool withData = true) {
  return withData && !absl::GetFlag(FLAGS_calibration).empty()
             ? "--calibration"
         : !absl::GetFlag(FLAGS_quantization_report).empty()
             ? "--quantization-report"
         : absl::GetFlag(FLAGS_observer) != "minmax" ? "--observer"
                                                     : nullptr;
}

/// --quantize and the flags that go with it.
absl::Status parseQuantizationFlags(cuvil::CompileOptions &options) {
  std::string scheme = quantizeScheme();
  std::string data = absl::GetFlag(FLAGS_calibration);
  if (scheme.empty()) {
    // An FPGA design reads --calibration itself (parseTargetSettings).
    const char *stray =
        givenCalibrationFlag(absl::GetFlag(FLAGS_device).empty());
    if (!stray && !absl::GetFlag(FLAGS_keep_fp32).empty())
      stray = "--keep-fp32";
    if (stray)
      return absl::InvalidArgumentError(
          absl::StrCat(stray, " applies with --quantize=int8"));
    return absl::OkStatus();
  }
  if (scheme == "bf16") {
    if (const char *stray = givenCalibrationFlag())
      return absl::InvalidArgumentError(absl::StrCat(
          stray, " applies with --quantize=int8; bf16 needs no calibration"));
    options.bf16 = cuvil::CompileOptions::Bf16{absl::GetFlag(FLAGS_keep_fp32)};
    return absl::OkStatus();
  }
  if (scheme == "fp16") {
    if (const char *stray = givenCalibrationFlag())
      return absl::InvalidArgumentError(absl::StrCat(
          stray, " applies with --quantize=int8; fp16 needs no calibration"));
    options.fp16 = cuvil::CompileOptions::Fp16{absl::GetFlag(FLAGS_keep_fp32)};
    return absl::OkStatus();
  }
  if (scheme != "int8")
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown --quantize value '", scheme,
        "'; expected int8, bf16 or fp16"));
  if (data.empty() && absl::GetFlag(FLAGS_quantize).empty())
    return absl::InvalidArgumentError(
        "--precision=int8 needs --calibration=FILE.npz: representative "
        "inputs (numpy.savez(FILE, input_name=samples)) to choose each "
        "activation's fixed-point position from");
  if (data.empty())
    return absl::InvalidArgumentError(
        "--quantize=int8 needs --calibration=FILE.npz: representative inputs "
        "(numpy.savez(FILE, input_name=samples)) to choose each activation's "
        "range from");
  cuvil::CompileOptions::Quantization quantization;
  quantization.calibration.dataPath = data;
  absl::StatusOr<cuvil::quantization::ObserverKind> observer =
      cuvil::quantization::parseObserverKind(absl::GetFlag(FLAGS_observer));
  if (!observer.ok())
    return absl::InvalidArgumentError(
        absl::StrCat("--observer: ", observer.status().message()));
  quantization.calibration.observer = *observer;
  double percentile = absl::GetFlag(FLAGS_percentile);
  if (!(percentile > 50 && percentile <= 100))
    return absl::InvalidArgumentError(absl::StrCat(
        "--percentile must be in (50, 100], got ", percentile));
  quantization.calibration.percentile = percentile;
  quantization.keepFp32 = absl::GetFlag(FLAGS_keep_fp32);
  options.quantization = std::move(quantization);
  return absl::OkStatus();
}

/// --integer-io, after --quantize.
absl::Status parseIntegerIoFlag(cuvil::CompileOptions &options) {
  options.integerIo = absl::GetFlag(FLAGS_integer_io);
  if (options.integerIo && (options.bf16 || options.fp16))
    return absl::InvalidArgumentError(absl::StrCat(
        "--integer-io passes 8-bit quantized tensors; use it with "
        "--quantize=int8 (or an ONNX QDQ model), not ",
        options.bf16 ? "bf16" : "fp16"));
  return absl::OkStatus();
}

std::string versionString() {
  return absl::StrCat("cuvilc ", cuvil::getVersionString(), " (LLVM/MLIR ",
                      cuvil::getLLVMVersionString(), ")\n");
}

} // namespace

int cuvil::cuvilcMain(int argc, char **argv) {
  if (cuvil::wantsHelp(argc, argv)) {
    cuvil::printFlagsHelp(kUsage, "tools/cuvilc/");
    std::cout << "  --version\n      Print the compiler and LLVM versions.\n";
    printTargets();
    return 0;
  }
  // Flags are spelled with dashes (--input-shape) or underscores.
  std::vector<std::string> storage;
  std::vector<char *> args = cuvil::normalizeFlagSpelling(argc, argv, storage);
  argc = static_cast<int>(args.size());
  argv = args.data();
  absl::SetProgramUsageMessage(kUsage);
  absl::FlagsUsageConfig usageConfig;
  usageConfig.version_string = versionString;
  // --help lists this program's flags, not the libraries'.
  usageConfig.contains_help_flags = [](absl::string_view file) {
    return file.find("tools/cuvilc/") != absl::string_view::npos;
  };
  absl::SetFlagsUsageConfig(usageConfig);
  std::vector<char *> positional = absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_list_devices)) {
    for (const cuvil::TargetBackend *target : cuvil::getAllTargets().list())
      if (std::string devices = target->describeDevices(); !devices.empty())
        std::cout << "--target=" << target->getName().str() << " --device:\n"
                  << devices;
    return 0;
  }
  if (absl::GetFlag(FLAGS_list_onnx_ops)) {
    for (const std::string &op : cuvil::getSupportedOnnxOps())
      std::cout << op << "\n";
    return 0;
  }

  if (positional.size() != 2) {
    std::cerr << "cuvilc: expected exactly one input model, got "
              << positional.size() - 1 << "\nRun 'cuvilc --help' for usage.\n";
    return 2;
  }
  // The target and its output are known before anything is read.
  absl::StatusOr<const cuvil::TargetBackend *> target =
      cuvil::lookupTarget(cuvil::getAllTargets(), absl::GetFlag(FLAGS_target));
  if (!target.ok()) {
    std::cerr << "cuvilc: " << target.status().message() << "\n";
    return 2;
  }
  std::string emitName = absl::GetFlag(FLAGS_emit);
  if (emitName.empty())
    emitName = (*target)->getEmitKinds().front().name;
  absl::StatusOr<std::optional<cuvil::EmitKindInfo>> emit =
      cuvil::lookupEmitKind(**target, emitName);
  if (!emit.ok()) {
    std::cerr << "cuvilc: " << emit.status().message() << "\n";
    return 2;
  }

  cuvil::CompileOptions options;
  options.inputPath = positional[1];
  options.target = absl::GetFlag(FLAGS_target);
  options.targetOptions.cpu = absl::GetFlag(FLAGS_cpu);
  options.targetOptions.threadsDefault = absl::GetFlag(FLAGS_threads_default);
  options.targetOptions.externalWeights = absl::GetFlag(FLAGS_external_weights);
  options.targetOptions.symbolPrefix = absl::GetFlag(FLAGS_symbol_prefix);
  for (const std::string &shape : absl::GetFlag(FLAGS_input_shape)) {
    if (absl::Status status =
            cuvil::parseInputShape(shape, options.inputShapes);
        !status.ok()) {
      std::cerr << "cuvilc: " << status.message() << "\n";
      return 2;
    }
  }
  if (int64_t maxBatch = absl::GetFlag(FLAGS_max_batch); maxBatch != 0)
    options.maxBatch = maxBatch;
  options.sampleParallel = absl::GetFlag(FLAGS_sample_parallel);
  if (options.sampleParallel != "auto" && options.sampleParallel != "on" &&
      options.sampleParallel != "off") {
    std::cerr << "cuvilc: --sample-parallel must be auto, on or off, not '"
              << cuvil::printableText(options.sampleParallel) << "'\n";
    return 2;
  }
  std::string treeOutput = absl::GetFlag(FLAGS_tree_output);
  if (treeOutput != "prediction" && treeOutput != "margin" &&
      treeOutput != "leaf") {
    std::cerr << "cuvilc: --tree-output must be prediction, margin or leaf, "
                 "not '"
              << cuvil::printableText(treeOutput) << "'\n";
    return 2;
  }
  options.treeOutput = treeOutput == "leaf" ? cuvil::trees::ForestOutput::kLeaf
                       : treeOutput == "margin"
                           ? cuvil::trees::ForestOutput::kMargin
                           : cuvil::trees::ForestOutput::kPrediction;
  std::string treeFeatures = absl::GetFlag(FLAGS_tree_features);
  if (!treeFeatures.empty() && treeFeatures != "float32" &&
      treeFeatures != "float64") {
    std::cerr << "cuvilc: --tree-features must be float32 or float64, not '"
              << cuvil::printableText(treeFeatures) << "'\n";
    return 2;
  }
  options.treeFloat32Features = treeFeatures == "float32";
  std::string treeMissing = absl::GetFlag(FLAGS_tree_missing);
  if (treeMissing != "nan") {
    double missing = 0;
    if (!absl::SimpleAtod(treeMissing, &missing) || !std::isfinite(missing)) {
      std::cerr << "cuvilc: --tree-missing must be a finite number or nan, "
                   "not '"
                << cuvil::printableText(treeMissing) << "'\n";
      return 2;
    }
    options.treeMissing = missing;
  }
  absl::Status precision = parseQuantizationFlags(options);
  if (precision.ok())
    precision = parseTargetSettings(options.targetOptions);
  if (precision.ok())
    precision = parseIntegerIoFlag(options);
  if (absl::Status status = precision; !status.ok()) {
    std::cerr << "cuvilc: " << status.message() << "\n";
    return 2;
  }
  options.emit = emitName;
  options.printIrAfterAll = absl::GetFlag(FLAGS_print_ir_after_all);
  options.printIrAfter = absl::GetFlag(FLAGS_print_ir_after);
  options.timePasses = absl::GetFlag(FLAGS_time_passes);
  options.explainKernels = absl::GetFlag(FLAGS_explain_kernels);
  options.reproducerPath = absl::GetFlag(FLAGS_reproducer);
  // Asked for by name, it is kept whatever the failure.
  options.keepExplainedReproducer = !options.reproducerPath.empty();
  if (options.reproducerPath.empty()) {
    const char *tmp = std::getenv("TMPDIR");
    options.reproducerPath =
        absl::StrCat(tmp && *tmp ? tmp : "/tmp", "/cuvilc-", getpid(),
                     ".reproducer.mlir");
  }
  if (!absl::GetFlag(FLAGS_quiet))
    options.progress = [](absl::string_view line) {
      std::cerr << "cuvilc: " << line << std::endl;
    };

  std::string output = absl::GetFlag(FLAGS_o);
  bool folder = *emit && (*emit)->directory;
  if (*emit && (*emit)->binary && output.empty()) {
    // A binary never goes to a terminal: name it after the model.
    std::string base =
        options.inputPath.substr(options.inputPath.rfind('/') + 1);
    output = base.substr(0, base.rfind('.')) +
             (folder ? "_" + (*emit)->name : (*emit)->suffixes.front());
  }
  // Where the files go is checked before the compile, which may be long.
  if (folder) {
    if (absl::Status status = cuvil::checkOutputFolder(output); !status.ok()) {
      std::cerr << "cuvilc: error: " << status.message() << "\n";
      return 1;
    }
  }
  std::vector<std::string> paths =
      folder ? std::vector<std::string>() : outputPaths(output, *emit);
  if (std::string report = absl::GetFlag(FLAGS_quantization_report);
      !report.empty())
    paths.push_back(report);
  for (const std::string &path : paths) {
    if (absl::Status status = cuvil::checkOutputPath(path); !status.ok()) {
      std::cerr << "cuvilc: error: " << status.message() << "\n";
      return 1;
    }
  }
  // A signal during the build ends cuvilc once the toolchain's processes
  // and folder are gone (cuvil/support/Interrupt.h).
  cuvil::installInterruptHandlers();
  absl::StatusOr<cuvil::Artifact> artifact = cuvil::compile(options);
  if (!artifact.ok()) {
    std::cerr << "cuvilc: error: " << artifact.status().message() << "\n";
    return 1;
  }
  bool quiet = absl::GetFlag(FLAGS_quiet);
  if (absl::GetFlag(FLAGS_pass_statistics))
    for (const std::string &line : artifact->passStatistics)
      std::cerr << "cuvilc: " << line << "\n";
  if (options.explainKernels) {
    for (const std::string &line : artifact->kernelReport)
      std::cerr << "cuvilc: kernel: " << line << "\n";
    if (artifact->kernelReport.empty())
      std::cerr << "cuvilc: --explain-kernels: no kernel report (the CPU "
                   "targets give one from --emit=mlir-level2 on; an FPGA or "
                   "MLU project has its report.txt)\n";
  }
  // (A hardware design has no arena: its buffers are its arrays.)
  if (!quiet && !folder && !artifact->memoryReport.empty())
    std::cerr << "cuvilc: memory plan: " << artifact->memoryReport << "\n";
  if (std::string path = absl::GetFlag(FLAGS_quantization_report);
      !path.empty() && artifact->quantizationReport) {
    bool json = path.size() > 5 && path.substr(path.size() - 5) == ".json";
    const cuvil::quantization::QuantizationReport &report =
        *artifact->quantizationReport;
    if (absl::Status status = cuvil::writeFilesAtomically(
            {{path, json ? report.toJson() + "\n" : report.toText()}});
        !status.ok()) {
      std::cerr << "cuvilc: error: " << status.message() << "\n";
      return 1;
    }
  }
  if (folder) {
    std::vector<std::pair<std::string, absl::string_view>> files;
    for (const cuvil::ArtifactFile &file : artifact->files)
      files.push_back({file.suffix, file.contents});
    cuvil::CleanupScope writing; // a signal waits until the folder is whole
    if (absl::Status status = cuvil::writeFolderAtomically(output, files);
        !status.ok()) {
      std::cerr << "cuvilc: error: " << status.message() << "\n";
      return 1;
    }
    if (!quiet)
      std::cerr << "cuvilc: wrote " << output << " (" << files.size()
                << " files; its README.md says how to run them)\n";
    return 0;
  }
  const std::string &mainContents = artifact->files.front().contents;
  if (output.empty()) {
    std::fwrite(mainContents.data(), 1, mainContents.size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  // The main file and its companions are written together, all or none.
  std::vector<std::pair<std::string, absl::string_view>> files;
  const std::string &mainSuffix = artifact->files.front().suffix;
  for (size_t i = 1; i < artifact->files.size(); ++i)
    files.push_back({companionPath(output, mainSuffix, artifact->files[i].suffix),
                     artifact->files[i].contents});
  files.push_back({output, mainContents});
  {
    cuvil::CleanupScope writing; // a signal waits until the files are whole
    if (absl::Status status = cuvil::writeFilesAtomically(files);
        !status.ok()) {
      std::cerr << "cuvilc: error: " << status.message() << "\n";
      return 1;
    }
  }
  if (!quiet) {
    std::cerr << "cuvilc: wrote " << output << " (" << mainContents.size()
              << " bytes)";
    for (size_t i = 0; i + 1 < files.size(); ++i)
      std::cerr << (i + 2 == files.size() ? " and " : ", ") << files[i].first;
    std::cerr << "\n";
  }
  return 0;
}
