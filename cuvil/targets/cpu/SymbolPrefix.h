//===- SymbolPrefix.h - a model's C ABI under a name of its own -*- C++ -*-===//
//
// One program may link several models (cuvilc --emit=static, Bazel's
// cuvil_model): their entry points would all be cuvil_model_run. With
// --symbol-prefix=NAME the ABI functions become NAME_model_run, ...; the
// context type NAME_context; the model's macros NAME_MODEL_* (upper case).
// The objects are built exactly as without a prefix; the symbols are
// renamed in them afterwards (llvm-objcopy), and the public header is the
// unprefixed one with its identifiers mapped, so both say the same thing.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_CPU_SYMBOLPREFIX_H
#define CUVIL_TARGETS_CPU_SYMBOLPREFIX_H

#include "absl/status/status.h"
#include "llvm/ADT/StringRef.h"

#include <array>
#include <string>

namespace cuvil::cpu {

/// Every function a model exports (docs/abi.md), unprefixed.
inline constexpr std::array<const char *, 11> kAbiFunctionNames = {
    "cuvil_status_message",      "cuvil_model_metadata",
    "cuvil_model_num_inputs",    "cuvil_model_num_outputs",
    "cuvil_model_workspace_size", "cuvil_model_run",
    "cuvil_context_max_threads", "cuvil_context_create",
    "cuvil_context_run",         "cuvil_context_error",
    "cuvil_context_destroy"};

/// OK for "" (no prefix) or a C identifier of at most 64 characters that
/// starts with a letter and does not end in '_'.
absl::Status checkSymbolPrefix(llvm::StringRef prefix);

/// The name an ABI function (one of kAbiFunctionNames) has under `prefix`:
/// cuvil_model_run -> resnet_model_run ("" keeps it).
std::string prefixedSymbol(llvm::StringRef function, llvm::StringRef prefix);

/// `header` (a model's model.h) with every identifier of the ABI mapped to
/// `prefix`: functions, the context type, CUVIL_MODEL_* macros and the
/// include guards. The status codes (shared, under CUVIL_STATUS_DEFINED)
/// and CUVIL_ABI_VERSION keep their names.
std::string prefixHeader(llvm::StringRef header, llvm::StringRef prefix);

} // namespace cuvil::cpu

#endif // CUVIL_TARGETS_CPU_SYMBOLPREFIX_H
