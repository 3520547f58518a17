//===- OnnxImporter.h - ONNX models to level1 -------------------*- C++ -*-===//
//
// Reads an ONNX ModelProto (Debian's onnx.proto) and builds a level1 module:
// one func.func whose arguments are the graph inputs that are not
// initializers. Initializers become dense resources, shape-computing
// subgraphs (Shape -> Gather -> Concat -> Reshape) are evaluated at import
// time, and every op carries its node's name as its location.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_IMPORTERS_ONNX_ONNXIMPORTER_H
#define CUVIL_IMPORTERS_ONNX_ONNXIMPORTER_H

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cuvil {

struct OnnxImportOptions {
  /// Shown in locations and errors ("model.onnx").
  std::string modelPath = "model.onnx";
  /// Folder that external-data files are relative to (the model's folder).
  std::string externalDataDir = ".";
  /// Overrides of graph input shapes by name; -1 marks a dynamic dimension.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Make dimension 0 of every input dynamic (a batch chosen per call).
  bool dynamicBatch = false;
};

/// Imports a serialized ONNX model. Fails, with nothing built, on bytes that
/// are not a model, on unsupported operators (one error listing all of them
/// with domain, opset and node names), and on inconsistent graphs (missing
/// values, bad shapes or dtypes), naming the node each time.
absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>>
importOnnxModel(mlir::MLIRContext &context, absl::string_view bytes,
                const OnnxImportOptions &options);

/// A Python source position an exporter recorded for a node.
struct SourceFrame {
  std::string file;
  unsigned line = 0;
  /// 1-based; 0 when unknown.
  unsigned column = 0;
};

/// Reads the source position torch.onnx.export (verbose) stores in a node's
/// doc_string: a TorchScript source range or a traced Python stack. Picks
/// the innermost frame outside torch and Cuvil's own Python modules (the
/// user's code, or the model library's), else the innermost frame; nullopt
/// if there is none.
std::optional<SourceFrame> parseTorchDocString(llvm::StringRef docString);

/// The ONNX operator types the importer lowers (default domain).
std::vector<std::string> getSupportedOnnxOps();

} // namespace cuvil

#endif // CUVIL_IMPORTERS_ONNX_ONNXIMPORTER_H
