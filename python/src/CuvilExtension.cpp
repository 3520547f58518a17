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

/// Compiles a model held in memory. Returns (status code, message,
/// artifact): the absl::StatusCode as an int, with artifact None on error,
/// so that the Python layer maps codes to its exception types.
py::tuple
compileModel(py::bytes model, const std::string &name,
             const std::map<std::string, std::vector<int64_t>> &shapes,
             std::optional<int64_t> maxBatch, const std::string &target,
             const std::string &cpu, int threadsDefault, bool externalWeights,
             const std::string &emit, py::object progress) {
  cuvil::CompileOptions options;
  options.inputPath = name;
  options.inputContents = std::string(model);
  options.inputShapes = shapes;
  options.maxBatch = maxBatch;
  options.target = target;
  options.targetOptions.cpu = cpu;
  options.targetOptions.threadsDefault = threadsDefault;
  options.targetOptions.externalWeights = externalWeights;
  options.emit = emit;
  std::optional<py::error_already_set> progressError;
  if (!progress.is_none()) {
    options.progress = [&](absl::string_view line) {
      py::gil_scoped_acquire gil;
      if (progressError)
        return;
      try {
        progress(std::string(line));
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
    return py::make_tuple(static_cast<int>(artifact.status().code()),
                          std::string(artifact.status().message()), py::none());
  py::dict files;
  for (const cuvil::ArtifactFile &file : artifact->files)
    files[py::str(file.suffix)] = py::bytes(file.contents);
  py::dict result;
  result["files"] = files;
  result["memory_report"] = artifact->memoryReport;
  return py::make_tuple(0, std::string(), result);
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
  m.def("compile", &compileModel, py::arg("model"), py::arg("name"),
        py::arg("input_shapes"), py::arg("max_batch"), py::arg("target"),
        py::arg("cpu"), py::arg("threads_default"), py::arg("external_weights"),
        py::arg("emit"), py::arg("progress"),
        "Compiles serialized ONNX (or level1 MLIR, by the name's extension); "
        "returns (status code, message, artifact dict or None).");
  m.def("cuvilc_main", &runCuvilc, py::arg("argv"),
        "Runs the cuvilc command line; returns its exit status.");
  m.def("supported_onnx_ops", &cuvil::getSupportedOnnxOps);
  m.attr("__version__") = cuvil::getVersionString();
  m.attr("llvm_version") = cuvil::getLLVMVersionString();
}
