/*===- arch.h - which architectures the variant lists name ---------------===*
 *
 * Each X-macro list of micro-kernel variants (the families' .inc files)
 * names the reference and every architecture's SIMD variants. Code built
 * for one architecture
 * (the runtime, its tests and benchmarks) sees its own: a variant of
 * another does not exist there. The compiler, which chooses variants for
 * any target, defines CUVIL_LIST_EVERY_ARCH to see them all.
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_ARCH_H
#define CUVIL_RUNTIME_ARCH_H

#if defined(CUVIL_LIST_EVERY_ARCH) || defined(__x86_64__)
#define CUVIL_LIST_X86 1
#else
#define CUVIL_LIST_X86 0
#endif

#if defined(CUVIL_LIST_EVERY_ARCH) || defined(__aarch64__)
#define CUVIL_LIST_AARCH64 1
#else
#define CUVIL_LIST_AARCH64 0
#endif

#endif /* CUVIL_RUNTIME_ARCH_H */
