#include "cuvil/support/Version.h"

#include "llvm/Config/llvm-config.h"

namespace cuvil {

// CUVIL_VERSION comes from build_defs/version.bzl.
const char *getVersionString() { return CUVIL_VERSION; }

const char *getLLVMVersionString() { return LLVM_VERSION_STRING; }

} // namespace cuvil
