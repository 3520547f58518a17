//===- EmbeddedRuntime.h - runtime sources compiled into models -*- C++ -*-===//
//
// The micro-kernel sources (runtime/cuvil_kernels.{h,c}) as strings, embedded
// at build time: every artifact is built from them, and cuvilc needs no
// source tree at run time.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_X86_EMBEDDEDRUNTIME_H
#define CUVIL_TARGETS_X86_EMBEDDEDRUNTIME_H

namespace cuvil::x86 {
extern const char kKernelsHeader[];
extern const char kKernelsSource[];
} // namespace cuvil::x86

#endif // CUVIL_TARGETS_X86_EMBEDDEDRUNTIME_H
