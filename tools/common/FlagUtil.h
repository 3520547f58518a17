//===- FlagUtil.h - command-line helpers shared by the tools ----*- C++ -*-===//
//
// cuvilc and cuvil-serve parse flags with Abseil; these let users spell them
// with dashes (--model-repository) as well as underscores, and print a help
// text that lists the tool's own flags only (Abseil's --help exits 1 and
// lists every linked library's flags).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TOOLS_COMMON_FLAGUTIL_H
#define CUVIL_TOOLS_COMMON_FLAGUTIL_H

#include "absl/strings/string_view.h"

#include <string>
#include <vector>

namespace cuvil {

/// argv with `--some-flag` rewritten to `--some_flag` (values untouched).
/// The strings live in `storage`; the returned pointers point into it.
std::vector<char *> normalizeFlagSpelling(int argc, char **argv,
                                          std::vector<std::string> &storage);

/// True when argv asks for help (--help, -help, -h).
bool wantsHelp(int argc, char **argv);

/// Prints `usage`, then every flag defined in a file whose path contains
/// `flagFileFilter`, dashed, wrapped at 80 columns, with its default.
void printFlagsHelp(absl::string_view usage, absl::string_view flagFileFilter);

} // namespace cuvil

#endif // CUVIL_TOOLS_COMMON_FLAGUTIL_H
