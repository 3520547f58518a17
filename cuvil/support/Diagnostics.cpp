#include "cuvil/support/Diagnostics.h"

#include <utility>

#include "cuvil/support/SourceEscape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
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

namespace {

constexpr char kDiagnosticPayload[] = "type.cuvil.dev/cuvil.DiagnosticInfo";

/// The user's "file:line[:col]" and the node name of `loc`, whichever it has.
void describeLocationInto(mlir::Location loc, DiagnosticInfo &info) {
  if (auto name = llvm::dyn_cast<mlir::NameLoc>(loc)) {
    if (info.node.empty())
      info.node = name.getName().str();
    describeLocationInto(name.getChildLoc(), info);
  } else if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(loc)) {
    if (info.location.empty() && file.getLine() > 0)
      info.location = formatLocation(file);
  } else if (auto call = llvm::dyn_cast<mlir::CallSiteLoc>(loc)) {
    describeLocationInto(call.getCallee(), info);
  } else if (auto fused = llvm::dyn_cast<mlir::FusedLoc>(loc)) {
    // A location as metadata is what the error is about (the importer's
    // first unsupported node), before the parts it is reported at.
    if (auto about = llvm::dyn_cast_or_null<mlir::LocationAttr>(fused.getMetadata()))
      describeLocationInto(about, info);
    for (mlir::Location part : fused.getLocations())
      describeLocationInto(part, info);
  }
}

/// The op an error is about. An op error (Operation::emitOpError) starts
/// with the arguments "'", the op's name and "' op "; the importer's list
/// of unsupported operators quotes the first.
std::string opOf(mlir::Diagnostic &diag) {
  auto args = diag.getArguments();
  auto text = [&](size_t i) -> llvm::StringRef {
    return args[i].getKind() == mlir::DiagnosticArgument::DiagnosticArgumentKind::String
               ? args[i].getAsString()
               : llvm::StringRef();
  };
  if (args.size() >= 3 && text(0) == "'" && text(2).starts_with("' op"))
    return text(1).str();
  std::string whole = diag.str();
  llvm::StringRef message = whole;
  if (message.consume_front("unsupported ONNX operators: '"))
    return message.take_until([](char c) { return c == '\''; }).str();
  return "";
}

DiagnosticInfo describe(mlir::Diagnostic &diag) {
  DiagnosticInfo info;
  info.message = printableText(diag.str());
  describeLocationInto(diag.getLocation(), info);
  info.location = printableText(info.location);
  info.node = printableText(info.node);
  info.op = printableText(opOf(diag));
  return info;
}

} // namespace

std::optional<DiagnosticInfo> getDiagnosticInfo(const absl::Status &status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kDiagnosticPayload);
  if (!payload)
    return std::nullopt;
  std::vector<std::string> fields =
      absl::StrSplit(std::string(*payload), '\0');
  if (fields.size() != 4)
    return std::nullopt;
  return DiagnosticInfo{fields[0], fields[1], fields[2], fields[3]};
}

StatusDiagnosticHandler::StatusDiagnosticHandler(mlir::MLIRContext *context)
    : context(context) {
  handlerId =
      context->getDiagEngine().registerHandler([this](mlir::Diagnostic &diag) {
        // A pass that failed with an error of its own (the user's: an op
        // the target cannot build, a design that does not fit) needs no
        // word from MLIR that the pipeline failed.
        if (diag.getSeverity() == mlir::DiagnosticSeverity::Error &&
            !errors.empty() &&
            llvm::StringRef(diag.str()).starts_with(kPipelineFailure))
          return mlir::success();
        std::string text = formatDiagnostic(diag);
        if (diag.getSeverity() == mlir::DiagnosticSeverity::Error) {
          ++numErrors;
          errors.push_back(text);
          if (!firstError)
            firstError = describe(diag);
        } else if (diag.getSeverity() == mlir::DiagnosticSeverity::Warning) {
          warnings.push_back(text);
        }
        messages.push_back(std::move(text));
        return mlir::success();
      });
}

StatusDiagnosticHandler::~StatusDiagnosticHandler() {
  context->getDiagEngine().eraseHandler(handlerId);
}

std::vector<std::string> StatusDiagnosticHandler::takeWarnings() {
  return std::exchange(warnings, {});
}

absl::Status StatusDiagnosticHandler::consumeStatus(absl::StatusCode code) {
  if (errors.empty())
    return absl::OkStatus();
  absl::Status status(code, absl::StrJoin(errors, "\n"));
  if (firstError) {
    // Fields separated by NUL, which printableText escapes in each.
    std::string fields =
        absl::StrJoin({firstError->message, firstError->location,
                       firstError->node, firstError->op},
                      std::string(1, '\0'));
    // From a string_view: Cord's std::string&& constructor is a template
    // whose gcc and clang manglings differ (the clang-built fuzzer links
    // Debian's gcc-built Abseil).
    status.SetPayload(kDiagnosticPayload,
                      absl::Cord(absl::string_view(fields)));
  }
  errors.clear();
  firstError.reset();
  numErrors = 0;
  return status;
}

DiagnosticInfo describeLocation(mlir::Location loc) {
  DiagnosticInfo info;
  describeLocationInto(loc, info);
  return info;
}

} // namespace cuvil
