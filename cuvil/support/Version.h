//===- Version.h - Cuvil version information --------------------*- C++ -*-===//

#ifndef CUVIL_SUPPORT_VERSION_H
#define CUVIL_SUPPORT_VERSION_H

namespace cuvil {

/// The compiler's semantic version, e.g. "0.1.0".
const char *getVersionString();

/// The LLVM/MLIR release Cuvil was built against, e.g. "22.1.8".
const char *getLLVMVersionString();

} // namespace cuvil

#endif // CUVIL_SUPPORT_VERSION_H
