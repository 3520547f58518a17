//===- SourceEscape.h - model text made safe for generated source -*- C++ -*-===//
//
// Names in a model (tensors, nodes, the graph, source paths in locations)
// are untrusted: a tensor named `x */ __attribute__((constructor)) ...` must
// not become code in the artifact. Every emitter routes such text through
// exactly one function of its output language here, never pastes it.
//
// The C functions serve every C-family output (the x86 C99, HLS C++, BANG
// C): their comments and string literals lex alike. A Verilog emitter adds
// its own next to them.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_SUPPORT_SOURCEESCAPE_H
#define CUVIL_SUPPORT_SOURCEESCAPE_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace cuvil {

/// Longest piece of model text a generated comment quotes; longer text is
/// cut and ends in "...".
constexpr size_t kMaxCommentText = 120;

/// `text` for the inside of a C block comment: letters, digits, space and
/// punctuation other than `*`, `\` and `?` stay; every other byte (control
/// characters, NUL, non-ASCII, `*` so that no `*/` or `/*` can form, `?`
/// against trigraphs) becomes `\xNN`, as does a final `/` (it would meet the
/// comment's closing `*/`). At most `maxText` bytes of `text` are quoted.
std::string cCommentText(llvm::StringRef text,
                         size_t maxText = kMaxCommentText);

/// A C string literal (quotes included) whose value is exactly the bytes of
/// `text`, NULs included: printable ASCII stays, `"` `\` `?` are escaped,
/// every other byte is a three-digit octal escape. Long text is split into
/// adjacent literals on lines of their own, indented by `indent`.
std::string cStringLiteral(llvm::StringRef text, llvm::StringRef indent = "    ");

/// `text` for a message a person reads on a terminal or in a log: control
/// characters (an escape sequence, a newline that would forge a log line)
/// become `\xNN`; everything else, UTF-8 included, stays.
std::string printableText(llvm::StringRef text);

/// `text` as a JSON string value may hold it: valid UTF-8 as is, invalid
/// sequences replaced by U+FFFD (JSON, and llvm::json, require UTF-8).
std::string jsonText(llvm::StringRef text);

} // namespace cuvil

#endif // CUVIL_SUPPORT_SOURCEESCAPE_H
