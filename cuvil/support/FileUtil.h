//===- FileUtil.h - file I/O with absl::Status ------------------*- C++ -*-===//

#ifndef CUVIL_SUPPORT_FILEUTIL_H
#define CUVIL_SUPPORT_FILEUTIL_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include <string>
#include <utility>
#include <vector>

namespace cuvil {

/// Reads a whole file; NotFound / PermissionDenied / Internal on failure,
/// with the path and the OS reason in the message.
absl::StatusOr<std::string> readFile(const std::string &path);

/// Writes `contents` to a temporary file beside `path`, then renames it over
/// `path`: a reader never sees a partial artifact, and a failed compile
/// leaves no file behind.
absl::Status writeFileAtomically(const std::string &path,
                                 absl::string_view contents);

/// writeFileAtomically for files that belong together (a .so and its .h):
/// all are written in full before the first replaces its target, so that a
/// failure to write (a full disk) leaves every old file; only a rename
/// failing (a target that became a folder) can leave some replaced.
absl::Status writeFilesAtomically(
    const std::vector<std::pair<std::string, absl::string_view>> &files);

/// Checks, before any work, that `path` can be written: not a folder, in a
/// folder that exists and is writable. The message says what to do.
absl::Status checkOutputPath(const std::string &path);

} // namespace cuvil

#endif // CUVIL_SUPPORT_FILEUTIL_H
