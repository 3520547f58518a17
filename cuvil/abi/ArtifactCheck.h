//===- ArtifactCheck.h - is this file a Cuvil model? ------------*- C++ -*-===//
//
// Checks a `cuvilc` artifact from its bytes alone, before anything loads it:
// dlopen() runs a library's constructors and maps its segments, so a file
// that is truncated (SIGBUS when a page past the end is touched), built for
// another machine, or not a Cuvil model at all must be refused first. Checked:
//
//   - the ELF header: magic, ELFCLASS64, little-endian, ET_DYN, and the
//     machine this code was compiled for (x86-64 or aarch64);
//   - the program and section header tables, and every segment and section,
//     lie inside the file (all offsets and sizes checked for overflow);
//   - the dynamic symbol table (.dynsym / its string table) defines the ten
//     functions of the C ABI (docs/abi.md);
//   - the Cuvil ABI note: a SHT_NOTE section `.note.cuvil` holding a note
//     named "Cuvil", type 1, whose 4-byte descriptor is the C ABI version
//     (uint32, little-endian);
//   - the metadata JSON in section `.cuvil.metadata` (NUL-terminated), the
//     same bytes cuvil_model_metadata() returns.
//
// This catches mistakes (a partial upload, a file for another machine, an
// old or foreign library), not malice: a model is code, and whoever can put
// one in a repository can run code in the process that loads it.
//
// Only Abseil and libc: the server and the Python runtime both link it.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_ABI_ARTIFACTCHECK_H
#define CUVIL_ABI_ARTIFACTCHECK_H

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include <array>
#include <cstdint>
#include <string>

namespace cuvil::abi {

/// The C ABI version (docs/abi.md) this code accepts.
inline constexpr uint32_t kCAbiVersion = 1;

/// The functions every Cuvil model exports.
inline constexpr std::array<const char *, 10> kAbiFunctions = {
    "cuvil_status_message",       "cuvil_model_metadata", "cuvil_model_num_inputs",
    "cuvil_model_num_outputs",    "cuvil_model_workspace_size", "cuvil_model_run",
    "cuvil_context_create",       "cuvil_context_run",    "cuvil_context_error",
    "cuvil_context_destroy"};

/// Name, type and descriptor size of the Cuvil ABI note.
inline constexpr const char kNoteSection[] = ".note.cuvil";
inline constexpr const char kNoteName[] = "Cuvil";
inline constexpr uint32_t kNoteType = 1;
inline constexpr const char kMetadataSection[] = ".cuvil.metadata";

struct ArtifactInfo {
  /// From the Cuvil ABI note.
  uint32_t abiVersion = 0;
  /// The `.cuvil.metadata` section up to its first NUL.
  std::string metadataJson;
  /// e_machine (EM_X86_64, EM_AARCH64, ...).
  uint16_t machine = 0;
};

/// e_machine of the machine this code was compiled for.
uint16_t hostMachine();
/// "x86-64", "aarch64", ..., or "ELF machine 1234".
std::string machineName(uint16_t machine);

/// The e_machine of a name machineName() gives ("x86-64", "aarch64"), or 0.
uint16_t machineNamed(absl::string_view name);

/// Checks `bytes` (a whole file) as a Cuvil model for `machine` (this one,
/// unless a cross-compiled model is checked before it is deployed) whose C
/// ABI version is kCAbiVersion. Errors are InvalidArgument, start with
/// `displayName` and say what is wrong and what to do.
absl::StatusOr<ArtifactInfo> checkArtifact(absl::string_view bytes, absl::string_view displayName,
                                           uint16_t machine = hostMachine());

/// Reads a regular file whole with read(2) (never mmap: a file truncated
/// while mapped faults its reader). Fails if it changes while being read.
absl::StatusOr<std::string> readFileBytes(const std::string &path);

/// readFileBytes + checkArtifact.
absl::StatusOr<ArtifactInfo> checkArtifactFile(const std::string &path);

} // namespace cuvil::abi

#endif // CUVIL_ABI_ARTIFACTCHECK_H
