//===- EmbeddedSources.h - files the compiler writes as they are -*- C++ -*-===//
//
// bang/cuvil_mlu_kernels.h and emu/cuvil_bang_emu.h, compiled in as raw
// strings by a genrule (BUILD).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_MLU_EMIT_EMBEDDEDSOURCES_H
#define CUVIL_TARGETS_MLU_EMIT_EMBEDDEDSOURCES_H

namespace cuvil::mlu {

extern const char kMluKernelsHeader[];
extern const char kBangEmulatorHeader[];

} // namespace cuvil::mlu

#endif // CUVIL_TARGETS_MLU_EMIT_EMBEDDEDSOURCES_H
