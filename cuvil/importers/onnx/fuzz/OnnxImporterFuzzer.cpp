//===- OnnxImporterFuzzer.cpp - libFuzzer entry for the ONNX importer -----===//
//
// Any bytes must give a module or a clean error: never a crash, a hang, an
// out-of-bounds access or a leak (AddressSanitizer checks all of them).
//
//===----------------------------------------------------------------------===//

#include "cuvil/importers/onnx/OnnxImporter.h"

#include "mlir/IR/MLIRContext.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  cuvil::OnnxImportOptions options;
  options.modelPath = "fuzz.onnx";
  // External data must not escape: point it at an empty directory.
  options.externalDataDir = "/nonexistent-cuvil-fuzz";
  absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> module =
      cuvil::importOnnxModel(
          context,
          absl::string_view(reinterpret_cast<const char *>(data), size),
          options);
  (void)module;
  return 0;
}
