//===- Report.cpp - report.json and report.txt ----------------------------===//
//
// Per layer: the on-chip bytes its plan uses against the chip's limits,
// its GDRAM traffic, tiles and tasks, and a roofline estimate: the longer
// of its operations at the peak of the unit it runs on (the fp32 vector
// unit, scaled by the cores its tasks occupy) and its traffic at the
// chip's GDRAM bandwidth, plus a launch. Summed per model, so that a user
// sees which layers bound it and by what.
//
//===----------------------------------------------------------------------===//

#include "cuvil/support/SourceEscape.h"
#include "cuvil/targets/mlu/emit/Project.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace cuvil::mlu {

LayerEstimate estimateLayer(const Layer &layer, const Chip &chip) {
  LayerEstimate e;
  double share = static_cast<double>(layer.plan.tasks) / chip.cores();
  // The vector unit does twice as many float16 operations per cycle
  // (mlu-ops' CT_PEAK_FLOAT16 64 against CT_PEAK_FLOAT32 32); products,
  // rows and unary ops compute in float32 whatever the storage.
  bool float32 = layer.problem.elementBytes == 4 ||
                 layer.problem.kind != "binary";
  // The fixed-point products run on the tensor unit, at its int8 peak.
  bool tensorUnit =
      layer.problem.kind == "gemm_int8" || layer.problem.kind == "conv2d_int8";
  double peak = tensorUnit ? chip.peakInt8 : chip.peakFp32 * (float32 ? 1 : 2);
  e.computeSeconds = layer.problem.ops / (peak * std::min(1.0, share));
  e.memorySeconds = layer.plan.gdramBytes / chip.gdramBytesPerSecond;
  e.bound = e.computeSeconds > e.memorySeconds ? "compute" : "memory";
  e.seconds = std::max(e.computeSeconds, e.memorySeconds) + chip.launchSeconds;
  return e;
}

namespace {

llvm::json::Array numbers(const std::vector<int64_t> &values) {
  llvm::json::Array array;
  for (int64_t v : values)
    array.push_back(v);
  return array;
}

llvm::json::Array tensors(const std::vector<TensorInfo> &list) {
  llvm::json::Array array;
  for (const TensorInfo &t : list)
    array.push_back(llvm::json::Object{{"name", jsonText(t.name)},
                                       {"shape", numbers(t.shape)},
                                       {"dtype", "float32"},
                                       {"bytes", t.bytes}});
  return array;
}

} // namespace

std::string reportJson(const MluModel &model) {
  const Chip &chip = model.chip;
  llvm::json::Array layers;
  double seconds = 0, ops = 0;
  int64_t traffic = 0, nramMost = 0;
  for (size_t i = 0; i < model.layers.size(); ++i) {
    const Layer &layer = model.layers[i];
    LayerEstimate e = estimateLayer(layer, chip);
    int64_t bytes = layer.problem.elementBytes;
    int64_t nram = layer.plan.bytesIn(l2::MemorySpace::nram, bytes);
    nramMost = std::max(nramMost, nram);
    seconds += e.seconds;
    ops += layer.problem.ops;
    traffic += layer.plan.gdramBytes;
    llvm::json::Object buffers;
    for (const OnChipBuffer &b : layer.plan.buffers)
      buffers[b.name] = llvm::json::Object{
          {"space", l2::stringifyMemorySpace(b.space).str()},
          {"bytes", b.bytes(bytes)},
          {"copies", b.copies}};
    layers.push_back(llvm::json::Object{
        {"index", static_cast<int64_t>(i)},
        {"op", jsonText(layer.op)},
        {"where", jsonText(layer.where)},
        {"kernel", absl::StrCat("cuvil_layer", i)},
        {"library_function", layer.problem.kind},
        {"tile", numbers(layer.plan.tile)},
        {"tasks", layer.plan.tasks},
        {"work_items", layer.plan.workItems},
        {"function_type", functionTypeName(layer.plan.functionType).str()},
        {"double_buffered", layer.plan.doubleBuffered},
        {"nram_bytes", nram},
        {"wram_bytes", layer.plan.bytesIn(l2::MemorySpace::wram, bytes)},
        {"sram_bytes", layer.plan.bytesIn(l2::MemorySpace::sram, bytes)},
        {"buffers", std::move(buffers)},
        {"gdram_bytes", layer.plan.gdramBytes},
        {"ops", layer.problem.ops},
        {"estimated_seconds", e.seconds},
        {"compute_seconds", e.computeSeconds},
        {"memory_seconds", e.memorySeconds},
        {"bound", e.bound}});
  }
  llvm::json::Object device{
      {"name", chip.name},
      {"arch", chip.arch},
      {"nram_bytes", chip.nramBytes},
      {"nram_limit_bytes", chip.nramBudget()},
      {"wram_bytes", chip.wramBytes},
      {"sram_bytes", chip.sramBytes},
      {"sram_limit_bytes", chip.sramBudget()},
      {"clusters", chip.clusters},
      {"cores_per_cluster", chip.coresPerCluster},
      {"gdram_bytes_per_second", chip.gdramBytesPerSecond},
      {"peak_fp32_vector_ops", chip.peakFp32},
      {"peak_int8_tensor_ops", chip.peakInt8},
      {"launch_seconds", chip.launchSeconds}};
  llvm::json::Object root{
      {"model", jsonText(model.name)},
      {"compiler", jsonText(model.compilerVersion)},
      {"model_hash", model.modelHash},
      {"precision", model.precision},
      {"device", std::move(device)},
      {"inputs", tensors(model.inputs)},
      {"outputs", tensors(model.outputs)},
      {"weights_bytes", static_cast<int64_t>(model.weights.size())},
      {"workspace_bytes", model.workspaceBytes},
      {"layers", std::move(layers)},
      {"total", llvm::json::Object{{"estimated_seconds", seconds},
                                   {"ops", ops},
                                   {"gdram_bytes", traffic},
                                   {"nram_bytes_most", nramMost}}}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return text;
}

std::string reportText(const MluModel &model) {
  const Chip &chip = model.chip;
  std::string text = absl::StrFormat(
      "%s in %s on %s (%s): %d clusters x %d cores, NRAM %d KB/core (%d KB "
      "planned into), GDRAM %.1f GB/s, fp32 vector peak %.2f TOP/s\n\n",
      printableText(model.name), model.precision, chip.name, chip.arch,
      chip.clusters, chip.coresPerCluster, chip.nramBytes / 1024,
      chip.nramBudget() / 1024, chip.gdramBytesPerSecond / 1e9,
      chip.peakFp32 / 1e12);
  absl::StrAppendFormat(&text, "%-5s %-16s %-20s %-14s %5s %9s %10s %9s %-7s %s\n",
                        "layer", "op", "tile", "function", "tasks", "NRAM KB",
                        "GDRAM KB", "est. us", "bound", "where");
  double seconds = 0, compute = 0, memory = 0;
  for (size_t i = 0; i < model.layers.size(); ++i) {
    const Layer &layer = model.layers[i];
    LayerEstimate e = estimateLayer(layer, chip);
    seconds += e.seconds;
    (e.bound[0] == 'c' ? compute : memory) += e.seconds;
    absl::StrAppendFormat(
        &text, "%-5d %-16s %-20s %-14s %5d %9.1f %10.1f %9.1f %-7s %s\n", i,
        printableText(layer.op), absl::StrJoin(layer.plan.tile, "x"),
        absl::StrCat(layer.problem.kind,
                     layer.plan.doubleBuffered ? " (2 buf)" : ""),
        layer.plan.tasks,
        layer.plan.bytesIn(l2::MemorySpace::nram, layer.problem.elementBytes) /
            1024.0,
        layer.plan.gdramBytes / 1024.0, e.seconds * 1e6, e.bound,
        printableText(layer.where));
  }
  absl::StrAppendFormat(
      &text,
      "\nestimated %.1f us per run (roofline: %.1f us in compute-bound "
      "layers, %.1f us in memory-bound ones, each with a %.0f us launch)\n"
      "weights %.1f KB, workspace %.1f KB in GDRAM\n"
      "An estimate from peak rates, not a measurement: the emulator checks "
      "what the kernels compute, not their time.\n",
      seconds * 1e6, compute * 1e6, memory * 1e6, chip.launchSeconds * 1e6,
      model.weights.size() / 1024.0, model.workspaceBytes / 1024.0);
  return text;
}

} // namespace cuvil::mlu
