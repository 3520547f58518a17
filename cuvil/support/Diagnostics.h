//===- Diagnostics.h - MLIR diagnostics to absl::Status bridge --*- C++ -*-===//
//
// Compiler code reports problems as MLIR diagnostics (emitOpError and
// friends); API boundaries speak absl::Status. A StatusDiagnosticHandler
// captures every diagnostic emitted while it is in scope and turns the errors
// into one Status whose message names each location, so that no error is
// printed without also failing, and none is lost.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_SUPPORT_DIAGNOSTICS_H
#define CUVIL_SUPPORT_DIAGNOSTICS_H

#include "absl/status/status.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <string>
#include <vector>

namespace cuvil {

/// Renders a location the way users read it: "file:line:col" for file
/// locations, the node name for named locations (ONNX nodes), and both for a
/// name wrapping a file location.
std::string formatLocation(mlir::Location loc);

/// Collects diagnostics emitted on `context` while alive.
class StatusDiagnosticHandler {
public:
  explicit StatusDiagnosticHandler(mlir::MLIRContext *context);
  ~StatusDiagnosticHandler();
  StatusDiagnosticHandler(const StatusDiagnosticHandler &) = delete;
  StatusDiagnosticHandler &operator=(const StatusDiagnosticHandler &) = delete;

  /// Every error collected so far, one "location: error: message" per line
  /// (with attached notes indented below), as a Status with `code`; OK when
  /// no error was emitted.
  absl::Status
  consumeStatus(absl::StatusCode code = absl::StatusCode::kInvalidArgument);

  /// All diagnostics collected so far (errors, warnings, remarks), formatted.
  const std::vector<std::string> &getMessages() const { return messages; }
  bool hadError() const { return numErrors != 0; }

private:
  mlir::MLIRContext *context;
  mlir::DiagnosticEngine::HandlerID handlerId;
  std::vector<std::string> messages;
  std::vector<std::string> errors;
  size_t numErrors = 0;
};

} // namespace cuvil

#endif // CUVIL_SUPPORT_DIAGNOSTICS_H
