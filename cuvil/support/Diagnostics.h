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

#include <optional>
#include <string>
#include <vector>

namespace cuvil {

/// Renders a location the way users read it: "file:line:col" for file
/// locations, the node name for named locations (ONNX nodes), and both for a
/// name wrapping a file location.
std::string formatLocation(mlir::Location loc);

/// What the first error of a failed compile is about, for APIs that report
/// it as fields (Python's cuvil.CompileError): a payload of the Status
/// consumeStatus returns.
struct DiagnosticInfo {
  /// The error's own text, without its location.
  std::string message;
  /// The user's source position, "file:line[:col]", when the error has one
  /// (a Python line of a captured model, an MLIR line).
  std::string location;
  /// The model node (an ONNX node name) the error is at, if any.
  std::string node;
  /// The operation it is about: the IR op of an op error
  /// ("cuvil.matmul"), or the first unsupported ONNX operator.
  std::string op;
};

/// The DiagnosticInfo a StatusDiagnosticHandler attached to `status`.
/// The node name and user source position `loc` holds (DiagnosticInfo's
/// `node` and `location`), for reports that name ops as errors do.
DiagnosticInfo describeLocation(mlir::Location loc);

std::optional<DiagnosticInfo> getDiagnosticInfo(const absl::Status &status);

/// How MLIR reports a failed pass pipeline (and the reproducer it wrote).
/// StatusDiagnosticHandler drops it after an error of the failing pass's
/// own: a reproducer is for failures nobody explained.
inline constexpr llvm::StringLiteral kPipelineFailure =
    "Failures have been detected while processing an MLIR pass pipeline";

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
  /// The warnings since the last call ("location: warning: message"), for
  /// a compiler to show as notes (a quantized op kept in float32, ...).
  std::vector<std::string> takeWarnings();

private:
  mlir::MLIRContext *context;
  mlir::DiagnosticEngine::HandlerID handlerId;
  std::vector<std::string> messages;
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
  std::optional<DiagnosticInfo> firstError;
  size_t numErrors = 0;
};

} // namespace cuvil

#endif // CUVIL_SUPPORT_DIAGNOSTICS_H
