// Checks that lit, FileCheck and not from LLVM 22 are wired into Bazel.
// RUN: echo "func.func @f() -> i32" | FileCheck %s
// RUN: not false
// RUN: echo "a b" | not FileCheck %s --check-prefix=ABSENT

// CHECK-LABEL: func.func @f
// CHECK-SAME: -> i32
// ABSENT: this line is not in the input
