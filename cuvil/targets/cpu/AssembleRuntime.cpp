//===- AssembleRuntime.cpp - print the runtime text of some families ------===//
//
//   assemble_runtime --list                 the families, in order
//   assemble_runtime [--simd] FAMILY...     their C, as a model includes it
//
// --simd selects the AVX-512 variants (and the blocked convolution's
// tiles), so that every variant's code is in the text. For
// runtime_closure_test, and to read what a model's C starts with.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/cpu/Runtime.h"

#include <cstdio>
#include <cstring>

int main(int argc, char **argv) {
  cuvil::cpu::RuntimeSelection selection;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--list") == 0) {
      for (const std::string &family : cuvil::cpu::runtimeFamilies())
        std::printf("%s\n", family.c_str());
      return 0;
    }
    if (std::strcmp(argv[i], "--simd") == 0) {
      selection.simd = true;
      selection.sgemm4 = selection.dwconv = selection.convb = "avx512";
      continue;
    }
    selection.families.insert(argv[i]);
  }
  std::fputs(cuvil::cpu::assembleRuntime(selection).c_str(), stdout);
  return 0;
}
