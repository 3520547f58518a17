//===- EmbeddedRuntime.h - runtime sources compiled into models -*- C++ -*-===//
//
// Every header and source of the runtime's families (runtime/families.inc),
// embedded at build time by the embedded_runtime_cc genrule: artifacts are
// built from them, and cuvilc needs no source tree at run time. Read them
// through assembleRuntime (Runtime.h).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_CPU_EMBEDDEDRUNTIME_H
#define CUVIL_TARGETS_CPU_EMBEDDEDRUNTIME_H

namespace cuvil::cpu {

/// A runtime file: its path under runtime/ ("gemm/gemm.h") and its text.
struct EmbeddedFile {
  const char *path;
  const char *text;
};

/// The runtime's files, then {nullptr, nullptr}.
extern const EmbeddedFile kRuntimeFiles[];

} // namespace cuvil::cpu

#endif // CUVIL_TARGETS_CPU_EMBEDDEDRUNTIME_H
