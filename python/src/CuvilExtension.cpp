//===- CuvilExtension.cpp - cuvil._C, the compiler in Python
//---------------===//
//
// The Python package captures a model (torch -> ONNX bytes) and hands it
// here; everything else (import, checks, passes, code generation, the C
// toolchain) is the C++ compiler cuvilc runs. The GIL is released while it
// works, so other Python threads keep running.
//
//===----------------------------------------------------------------------===//

#include "cuvil/driver/Compiler.h"
#include "cuvil/support/Diagnostics.h"
#include "cuvil/importers/onnx/OnnxImporter.h"
#include "cuvil/support/Version.h"
#include "tools/cuvilc/CuvilcMain.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

/// cuvil._C.CompileOptions: everything a compile takes but the model, set by
/// keyword (cuvil.compile's options, named as there).
struct PyCompileOptions {
  std::string name;
  std::map<std::string, std::vector<int64_t>> inputShapes;
  std::optional<int64_t> maxBatch;
  std::string target = "x86_64-linux-gnu";
  std::string cpu = "native";
  int threadsDefault = 1;
  bool externalWeights = false;
  std::string emit = "so";
  py::object progress = py::none();
  /// Post-training int8 quantization (cuvil.quantization.Int8), if set.
  std::optional<std::string> calibration;
  std::string observer = "minmax";
  double percentile = 99.99;
  /// Also bfloat16's and float16's (cuvil.quantization.BF16, FP16, when
  /// `bf16`, `fp16`).
  std::vector<std::string> keepFp32;
  bool bf16 = false;
  bool fp16 = false;
  /// 8-bit quantized inputs and outputs (Int8(integer_io=True)).
  bool integerIo = false;
  /// A target's own settings (TargetOptions::settings: an FPGA's
  /// precision, reuse factors, ...).
  std::map<std::string, std::string> settings;
  /// A tree ensemble's margins, or each tree's leaf, rather than its
  /// predictions.
  bool treeMargins = false, treeLeaves = false;
  /// A value the features treat as missing besides NaN.
  std::optional<double> treeMissing;
  /// A LightGBM model's features as float32.
  bool treeFloat32Features = false;
  /// cuvilc --sample-parallel: auto, on or off.
  std::string sampleParallel = "auto";
};

/// Raises the Python exception for a failed compile: FileNotFoundError or
/// PermissionError for the input file, cuvil.CompileError (with the op and
/// the location of the first error as fields) for everything else.
[[noreturn]] void raiseCompileError(const absl::Status &status) {
  std::string message(status.message());
  py::object type;
  py::object error;
  if (status.code() == absl::StatusCode::kNotFound ||
      status.code() == absl::StatusCode::kPermissionDenied) {
    type = py::module_::import("builtins")
               .attr(status.code() == absl::StatusCode::kNotFound
                         ? "FileNotFoundError"
                         : "PermissionError");
    error = type(message);
  } else {
    std::optional<cuvil::DiagnosticInfo> info =
        cuvil::getDiagnosticInfo(status);
    auto field = [&](const std::string cuvil::DiagnosticInfo::*member) {
      return info && !((*info).*member).empty() ? py::object(py::str((*info).*member))
                                               : py::object(py::none());
    };
    type = py::module_::import("cuvil._errors").attr("CompileError");
    error = type(message, py::arg("op") = field(&cuvil::DiagnosticInfo::op),
                 py::arg("location") =
                     field(&cuvil::DiagnosticInfo::location),
                 py::arg("node") = field(&cuvil::DiagnosticInfo::node));
  }
  PyErr_SetObject(type.ptr(), error.ptr());
  throw py::error_already_set();
}

/// Compiles a model held in memory; returns {"files": {suffix: bytes},
/// "memory_report": str, "kernel_report": [str], "quantization_report":
/// JSON or None}, or raises
/// (raiseCompileError).
py::dict compileModel(py::bytes model, const PyCompileOptions &py) {
  cuvil::CompileOptions options;
  options.inputPath = py.name;
  options.inputContents = std::string(model);
  options.inputShapes = py.inputShapes;
  options.maxBatch = py.maxBatch;
  options.target = py.target;
  options.targetOptions.cpu = py.cpu;
  options.targetOptions.threadsDefault = py.threadsDefault;
  options.targetOptions.externalWeights = py.externalWeights;
  options.targetOptions.settings = py.settings;
  options.emit = py.emit;
  if (py.calibration) {
    cuvil::CompileOptions::Quantization quantization;
    quantization.calibration.dataPath = *py.calibration;
    absl::StatusOr<cuvil::quantization::ObserverKind> observer =
        cuvil::quantization::parseObserverKind(py.observer);
    if (!observer.ok())
      throw py::value_error(std::string(observer.status().message()));
    quantization.calibration.observer = *observer;
    quantization.calibration.percentile = py.percentile;
    quantization.keepFp32 = py.keepFp32;
    options.quantization = std::move(quantization);
  }
  if (py.bf16)
    options.bf16 = cuvil::CompileOptions::Bf16{py.keepFp32};
  if (py.fp16)
    options.fp16 = cuvil::CompileOptions::Fp16{py.keepFp32};
  options.integerIo = py.integerIo;
  options.sampleParallel = py.sampleParallel;
  options.treeOutput = py.treeLeaves    ? cuvil::trees::ForestOutput::kLeaf
                       : py.treeMargins ? cuvil::trees::ForestOutput::kMargin
                                        : cuvil::trees::ForestOutput::kPrediction;
  options.treeMissing = py.treeMissing;
  options.treeFloat32Features = py.treeFloat32Features;
  // A walk of the lowered module: cheap enough to give every compile.
  options.explainKernels = true;
  std::optional<py::error_already_set> progressError;
  if (!py.progress.is_none()) {
    options.progress = [&](absl::string_view line) {
      py::gil_scoped_acquire gil;
      if (progressError)
        return;
      try {
        py.progress(std::string(line));
      } catch (py::error_already_set &error) {
        progressError = std::move(error);
      }
    };
  }
  absl::StatusOr<cuvil::Artifact> artifact;
  {
    py::gil_scoped_release release;
    artifact = cuvil::compile(options);
  }
  if (progressError)
    throw std::move(*progressError);
  if (!artifact.ok())
    raiseCompileError(artifact.status());
  py::dict files;
  for (const cuvil::ArtifactFile &file : artifact->files)
    files[py::str(file.suffix)] = py::bytes(file.contents);
  py::dict result;
  result["files"] = files;
  result["memory_report"] = artifact->memoryReport;
  py::list kernels;
  for (const std::string &line : artifact->kernelReport)
    kernels.append(py::str(line));
  result["kernel_report"] = kernels;
  result["quantization_report"] =
      artifact->quantizationReport
          ? py::object(py::str(artifact->quantizationReport->toJson()))
          : py::object(py::none());
  return result;
}

int runCuvilc(std::vector<std::string> argv) {
  std::vector<char *> args;
  for (std::string &arg : argv)
    args.push_back(arg.data());
  args.push_back(nullptr);
  py::gil_scoped_release release;
  return cuvil::cuvilcMain(static_cast<int>(argv.size()), args.data());
}

} // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "The Cuvil compiler (C++), as used by the cuvil package.";
  py::class_<PyCompileOptions>(m, "CompileOptions",
                               "What cuvil._C.compile takes besides the model.")
      .def(py::init([](std::string name,
                       std::map<std::string, std::vector<int64_t>> inputShapes,
                       std::optional<int64_t> maxBatch, std::string target,
                       std::string cpu, int threadsDefault,
                       bool externalWeights, std::string emit,
                       py::object progress,
                       std::optional<std::string> calibration,
                       std::string observer, double percentile,
                       std::vector<std::string> keepFp32, bool bf16,
                       bool fp16, bool integerIo,
                       std::map<std::string, std::string> settings,
                       bool treeMargins, bool treeLeaves,
                       std::optional<double> treeMissing,
                       bool treeFloat32Features, std::string sampleParallel) {
             return PyCompileOptions{
                 std::move(name),        std::move(inputShapes),
                 maxBatch,               std::move(target),
                 std::move(cpu),         threadsDefault,
                 externalWeights,        std::move(emit),
                 std::move(progress),    std::move(calibration),
                 std::move(observer),    percentile,
                 std::move(keepFp32),    bf16,
                 fp16,                   integerIo,
                 std::move(settings),
                 treeMargins,            treeLeaves,
                 treeMissing,            treeFloat32Features,
                 std::move(sampleParallel)};
           }),
           py::kw_only(), py::arg("name"),
           py::arg("input_shapes") =
               std::map<std::string, std::vector<int64_t>>(),
           py::arg("max_batch") = py::none(),
           py::arg("target") = "x86_64-linux-gnu", py::arg("cpu") = "native",
           py::arg("threads_default") = 1, py::arg("external_weights") = false,
           py::arg("emit") = "so", py::arg("progress") = py::none(),
           py::arg("calibration") = py::none(),
           py::arg("observer") = "minmax", py::arg("percentile") = 99.99,
           py::arg("keep_fp32") = std::vector<std::string>(),
           py::arg("bf16") = false, py::arg("fp16") = false,
           py::arg("integer_io") = false,
           py::arg("settings") = std::map<std::string, std::string>(),
           py::arg("tree_margins") = false, py::arg("tree_leaves") = false,
           py::arg("tree_missing") = py::none(),
           py::arg("tree_float32_features") = false,
           py::arg("sample_parallel") = "auto")
      .def_readonly("name", &PyCompileOptions::name)
      .def_readonly("target", &PyCompileOptions::target)
      .def_readonly("emit", &PyCompileOptions::emit);
  m.def("compile", &compileModel, py::arg("model"), py::arg("options"),
        "Compiles serialized ONNX (or an XGBoost JSON model, or level1 "
        "MLIR, by options.name's extension); returns {'files': {suffix: "
        "bytes}, 'memory_report': "
        "str, 'kernel_report': [str], 'quantization_report': JSON str or "
        "None}. Raises "
        "cuvil.CompileError (op, location and node as fields), "
        "FileNotFoundError or PermissionError.");
  m.def("cuvilc_main", &runCuvilc, py::arg("argv"),
        "Runs the cuvilc command line; returns its exit status.");
  m.def("supported_onnx_ops", &cuvil::getSupportedOnnxOps);
  m.attr("__version__") = cuvil::getVersionString();
  m.attr("llvm_version") = cuvil::getLLVMVersionString();
}
