//===- FileUtil.h - file I/O with absl::Status ------------------*- C++ -*-===//

#ifndef CUVIL_SUPPORT_FILEUTIL_H
#define CUVIL_SUPPORT_FILEUTIL_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include <string>

namespace cuvil {

/// Reads a whole file; NotFound / PermissionDenied / Internal on failure,
/// with the path and the OS reason in the message.
absl::StatusOr<std::string> readFile(const std::string &path);

/// Writes `contents` to a temporary file beside `path`, then renames it over
/// `path`: a reader never sees a partial artifact, and a failed compile
/// leaves no file behind.
absl::Status writeFileAtomically(const std::string &path,
                                 absl::string_view contents);

} // namespace cuvil

#endif // CUVIL_SUPPORT_FILEUTIL_H
