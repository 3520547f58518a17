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

/// The file a folder written by writeFolderAtomically holds: such a folder
/// (or an empty one) may be replaced by the next write; any other is the
/// user's and is left alone.
constexpr char kOutputFolderMarker[] = ".cuvil-output";

/// Checks, before any work, that the folder `dir` can be written: absent,
/// empty, or written by Cuvil before, in a writable folder.
absl::Status checkOutputFolder(const std::string &dir);

/// Writes `files` (paths relative to `dir`, subfolders made as needed) into
/// a new folder beside `dir`, then puts it in `dir`'s place: a reader sees
/// the old folder or the new one whole, and a failure leaves the old one.
absl::Status writeFolderAtomically(
    const std::string &dir,
    const std::vector<std::pair<std::string, absl::string_view>> &files);

} // namespace cuvil

#endif // CUVIL_SUPPORT_FILEUTIL_H
