// --help explains and exits 0; --version names the compiler and LLVM.
// RUN: cuvilc --help | FileCheck %s
// RUN: cuvilc -h | FileCheck %s
// RUN: cuvilc --version | FileCheck %s --check-prefix=VERSION

// CHECK: Cuvil: an ahead-of-time compiler for AI inference.
// CHECK: Usage:
// CHECK-NEXT: cuvilc [flags] MODEL [-o OUTPUT]
// CHECK: Flags:
// CHECK: --emit=VALUE
// CHECK: mlir-level1
// CHECK: -o=VALUE
// CHECK: --quiet
// CHECK: --version

// VERSION: cuvilc {{[0-9]+\.[0-9]+\.[0-9]+}} (LLVM/MLIR 22.
