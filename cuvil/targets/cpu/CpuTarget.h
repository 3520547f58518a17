//===- CpuTarget.h - the machine the CPU backend builds for -----*- C++ -*-===//
//
// The x86-64 and aarch64 targets share one backend (the emitter, the
// runtime's kernel families, the toolchain). This is what each tells it
// about its architecture and CPU, derived from the module's #cuvil.target.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGETS_CPU_CPUTARGET_H
#define CUVIL_TARGETS_CPU_CPUTARGET_H

#include <string>
#include <vector>

namespace cuvil::cpu {

struct CpuTarget {
  /// The target's registry name ("x86", "aarch64"), for messages.
  std::string name = "x86";
  /// The triple the artifact runs on (metadata; clang's --target).
  std::string triple = "x86_64-linux-gnu";
  /// The CPU, an LLVM CPU name (metadata; variants tuned per CPU), and
  /// the ISA features the code may use, by LLVM's names (as the variant
  /// lists, runtime/*/*.inc, name them).
  std::string cpu = "x86-64";
  std::vector<std::string> features;
  /// clang flags for the model's code (its CPU) and for the entry points,
  /// which are built for the architecture's baseline so that checking the
  /// CPU cannot itself fault.
  std::vector<std::string> modelFlags = {"-march=x86-64"};
  std::vector<std::string> entryFlags = {"-march=x86-64"};
  /// CUVIL_CHECK_CPU_FEATURES(ok, ...) for runtime/abi/entry.c: clears
  /// `ok` unless the CPU has every feature (its parameters are the
  /// architecture's, entry.c's CPU check says which).
  std::string cpuCheckMacro =
      "#define CUVIL_CHECK_CPU_FEATURES(ok, ...) do { } while (0)\n";

  bool has(const std::string &feature) const {
    for (const std::string &f : features)
      if (f == feature)
        return true;
    return false;
  }
};

} // namespace cuvil::cpu

#endif // CUVIL_TARGETS_CPU_CPUTARGET_H
