//===- Project.h - an MLU project folder from a planned module -*- C++ -*-===//
//
// The planned level2 module read as a sequence of layers on GDRAM buffers
// (`MluModel`), then written as the folder a Cambricon user builds with
// cncc: kernels.mlu (BANG C) and kernels.h, host.cpp (CNRT) and model.h
// (the C API), weights.bin, CMakeLists.txt, README.md, report.json and
// report.txt; and, for the host, the device library and the emulator
// header, emulate_main.cpp and a Makefile that builds them with clang++.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_MLU_EMIT_PROJECT_H
#define CUVIL_TARGETS_MLU_EMIT_PROJECT_H

#include "cuvil/targets/Target.h"
#include "cuvil/targets/mlu/chips/Chip.h"
#include "cuvil/targets/mlu/plan/KernelPlan.h"

#include "absl/status/statusor.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace cuvil::mlu {

struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  int64_t bytes = 0;
};

/// One micro-kernel call: what it computes, its plan, and the GDRAM
/// pointer (a C expression over the model's buffers) of each operand of
/// the device library's function, "nullptr" for an absent one.
struct Layer {
  std::string op;    // the call's kernel name ("conv2d")
  std::string where; // the user's node or source location, or ""
  Problem problem;
  KernelPlan plan;
  std::vector<std::string> pointers;
};

struct MluModel {
  std::string name; // the function's
  Chip chip;
  std::vector<TensorInfo> inputs, outputs;
  std::vector<Layer> layers;
  /// fp16: the kernels, weights and device tensors are float16 (the C API
  /// still takes float32 host tensors, converted by host.cpp).
  bool half = false;
  std::string precision = "fp32"; // fp32, fp16 or int8
  std::string weights; // weights.bin: constants at 128-byte offsets
  int64_t workspaceBytes = 0;
  std::string modelHash, compilerVersion;
};

/// Reads the planned module (every call carries mlu.plan).
absl::StatusOr<MluModel> readModel(mlir::ModuleOp module, const Chip &chip);

/// The folder's files; each suffix is its path inside the folder.
std::vector<ArtifactFile> writeProject(const MluModel &model);

// The pieces, one file each (emit/*.cpp).
std::string kernelsSource(const MluModel &model);
std::string kernelsHeader(const MluModel &model);
std::string hostSource(const MluModel &model);
std::string modelHeader(const MluModel &model);
std::string runnerSource(const MluModel &model);
std::string reportJson(const MluModel &model);
std::string reportText(const MluModel &model);

/// The roofline estimate of one layer, seconds, and what bounds it.
struct LayerEstimate {
  double seconds = 0, computeSeconds = 0, memorySeconds = 0;
  const char *bound = "memory";
};
LayerEstimate estimateLayer(const Layer &layer, const Chip &chip);

/// The C type of the elements the kernels compute on.
inline const char *elementCType(bool half) { return half ? "half" : "float"; }
inline int64_t elementBytes(const MluModel &model) { return model.half ? 2 : 4; }

} // namespace cuvil::mlu

#endif // CUVIL_TARGETS_MLU_EMIT_PROJECT_H
