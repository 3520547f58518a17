#include "cuvil/support/Version.h"

#include "llvm/Config/llvm-config.h"

namespace cuvil {

const char *getVersionString() { return "0.1.0"; }

const char *getLLVMVersionString() { return LLVM_VERSION_STRING; }

} // namespace cuvil
