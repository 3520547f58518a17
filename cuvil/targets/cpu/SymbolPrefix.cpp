#include "cuvil/targets/cpu/SymbolPrefix.h"

#include "cuvil/support/SourceEscape.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>

namespace cuvil::cpu {
namespace {

bool isIdentifierChar(char c) { return llvm::isAlnum(c) || c == '_'; }

/// What `identifier` of a model's header becomes under `prefix`.
std::string mapIdentifier(llvm::StringRef identifier, llvm::StringRef prefix,
                          llvm::StringRef upperPrefix) {
  if (identifier == "cuvil_context")
    return absl::StrCat(prefix.str(), "_context");
  if (std::find(kAbiFunctionNames.begin(), kAbiFunctionNames.end(),
                identifier) != kAbiFunctionNames.end())
    return prefixedSymbol(identifier, prefix);
  if (identifier == "CUVIL_MODEL_H" || identifier == "CUVIL_ABI_H")
    return absl::StrCat(upperPrefix.str(), "_", identifier.str());
  if (identifier.consume_front("CUVIL_MODEL_"))
    return absl::StrCat(upperPrefix.str(), "_MODEL_", identifier.str());
  return identifier.str();
}

} // namespace

absl::Status checkSymbolPrefix(llvm::StringRef prefix) {
  if (prefix.empty())
    return absl::OkStatus();
  bool valid = prefix.size() <= 64 && llvm::isAlpha(prefix.front()) &&
               prefix.back() != '_' &&
               llvm::all_of(prefix, isIdentifierChar);
  if (!valid)
    return absl::InvalidArgumentError(absl::StrCat(
        "--symbol-prefix must be a C identifier of at most 64 characters "
        "that starts with a letter and does not end in '_' (the ABI "
        "functions become PREFIX_model_run, ...), not '",
        printableText(prefix.str()), "'"));
  return absl::OkStatus();
}

std::string prefixedSymbol(llvm::StringRef function, llvm::StringRef prefix) {
  if (prefix.empty())
    return function.str();
  llvm::StringRef rest = function;
  rest.consume_front("cuvil_");
  return absl::StrCat(prefix.str(), "_", rest.str());
}

std::string prefixHeader(llvm::StringRef header, llvm::StringRef prefix) {
  if (prefix.empty())
    return header.str();
  std::string upper = prefix.upper();
  std::string result;
  result.reserve(header.size() + header.size() / 8);
  size_t i = 0;
  while (i < header.size()) {
    if (!isIdentifierChar(header[i])) {
      result += header[i++];
      continue;
    }
    size_t end = i;
    while (end < header.size() && isIdentifierChar(header[end]))
      ++end;
    llvm::StringRef token = header.slice(i, end);
    // A number (or a word glued to one) is not an identifier.
    result += llvm::isDigit(token.front())
                  ? token.str()
                  : mapIdentifier(token, prefix, upper);
    i = end;
  }
  return result;
}

} // namespace cuvil::cpu
