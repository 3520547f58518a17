/*===- neon.h - what the NEON (AdvSIMD) variants share -------------------===*
 *
 * The aarch64 variants of the kernel families are written like their x86
 * twins, through the same tile macros: these wrappers give NEON's
 * intrinsics the x86 ones' shape (fmadd(a, b, c) = a * b + c, fused).
 * Empty outside an aarch64 build with the SIMD variants.
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_NEON_H
#define CUVIL_RUNTIME_NEON_H

#if defined(CUVIL_ENABLE_SIMD_KERNELS) && defined(__aarch64__)
#include <arm_neon.h>

static inline float32x4_t cuvil_neon_fmadd(float32x4_t a, float32x4_t b,
                                           float32x4_t c) {
  return vfmaq_f32(c, a, b);
}

static inline float32x4_t cuvil_neon_zero(void) { return vdupq_n_f32(0.0f); }

#endif

#endif /* CUVIL_RUNTIME_NEON_H */
