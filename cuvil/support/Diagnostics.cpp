#include "cuvil/support/Diagnostics.h"

#include "cuvil/support/SourceEscape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

namespace cuvil {

std::string formatLocation(mlir::Location loc) {
  return llvm::TypeSwitch<mlir::LocationAttr, std::string>(loc)
      .Case([](mlir::FileLineColLoc fileLoc) -> std::string {
        // Line 0: a file without lines (an ONNX model).
        if (fileLoc.getLine() == 0)
          return fileLoc.getFilename().str();
        // Column 0: a line without a known column (a traced Python stack).
        if (fileLoc.getColumn() == 0)
          return absl::StrCat(fileLoc.getFilename().str(), ":",
                              fileLoc.getLine());
        return absl::StrCat(fileLoc.getFilename().str(), ":", fileLoc.getLine(),
                            ":", fileLoc.getColumn());
      })
      .Case([](mlir::NameLoc nameLoc) -> std::string {
        std::string name = nameLoc.getName().str();
        mlir::Location child = nameLoc.getChildLoc();
        if (llvm::isa<mlir::UnknownLoc>(child))
          return absl::StrCat("'", name, "'");
        return absl::StrCat("'", name, "' (", formatLocation(child), ")");
      })
      .Case([](mlir::CallSiteLoc callLoc) -> std::string {
        return absl::StrCat(formatLocation(callLoc.getCallee()),
                            " called from ",
                            formatLocation(callLoc.getCaller()));
      })
      .Case([](mlir::FusedLoc fusedLoc) -> std::string {
        std::vector<std::string> parts;
        for (mlir::Location part : fusedLoc.getLocations())
          parts.push_back(formatLocation(part));
        return absl::StrJoin(parts, ", ");
      })
      .Default([](mlir::LocationAttr other) -> std::string {
        std::string text;
        llvm::raw_string_ostream os(text);
        other.print(os);
        return text;
      });
}

static const char *severityName(mlir::DiagnosticSeverity severity) {
  switch (severity) {
  case mlir::DiagnosticSeverity::Error:
    return "error";
  case mlir::DiagnosticSeverity::Warning:
    return "warning";
  case mlir::DiagnosticSeverity::Note:
    return "note";
  case mlir::DiagnosticSeverity::Remark:
    return "remark";
  }
  return "unknown";
}

/// One diagnostic and its notes, a line each. Locations and messages quote
/// the model's names, which may hold anything: control characters are
/// escaped, so that a name cannot drive the user's terminal or forge lines.
static std::string formatDiagnostic(mlir::Diagnostic &diag) {
  std::string text = absl::StrCat(
      printableText(formatLocation(diag.getLocation())), ": ",
      severityName(diag.getSeverity()), ": ", printableText(diag.str()));
  for (mlir::Diagnostic &note : diag.getNotes())
    absl::StrAppend(&text, "\n  ",
                    printableText(formatLocation(note.getLocation())),
                    ": note: ", printableText(note.str()));
  return text;
}

StatusDiagnosticHandler::StatusDiagnosticHandler(mlir::MLIRContext *context)
    : context(context) {
  handlerId =
      context->getDiagEngine().registerHandler([this](mlir::Diagnostic &diag) {
        std::string text = formatDiagnostic(diag);
        if (diag.getSeverity() == mlir::DiagnosticSeverity::Error) {
          ++numErrors;
          errors.push_back(text);
        }
        messages.push_back(std::move(text));
        return mlir::success();
      });
}

StatusDiagnosticHandler::~StatusDiagnosticHandler() {
  context->getDiagEngine().eraseHandler(handlerId);
}

absl::Status StatusDiagnosticHandler::consumeStatus(absl::StatusCode code) {
  if (errors.empty())
    return absl::OkStatus();
  absl::Status status(code, absl::StrJoin(errors, "\n"));
  errors.clear();
  numErrors = 0;
  return status;
}

} // namespace cuvil
