//===- EmbeddedSources.h - files the compiler writes as they are -*- C++ -*-===//
//
// bang/cuvil_mlu_kernels.h and emu/cuvil_bang_emu.h with the parts they
// include, compiled in as raw strings by a genrule (BUILD).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_MLU_EMIT_EMBEDDEDSOURCES_H
#define CUVIL_TARGETS_MLU_EMIT_EMBEDDEDSOURCES_H

namespace cuvil::mlu {

extern const char kMluKernelsHeader[];
extern const char kMluKernelsRowsHeader[];
extern const char kBangEmulatorHeader[];
extern const char kBangEmulatorVectorHeader[];
extern const char kBangEmulatorCnrtHeader[];

} // namespace cuvil::mlu

#endif // CUVIL_TARGETS_MLU_EMIT_EMBEDDEDSOURCES_H
