// cuvilc's user-facing errors: each says what is wrong and where, exits
// non-zero, and leaves no output file behind.

// A shape mismatch names the op and its source location: the importer's
// location (an ONNX node name and file) when the op has one.
// RUN: not cuvilc %s -o %t.out --quiet 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not test -e %t.out
// SHAPE: cuvilc: error: 'MatMul_0' (model.onnx): error: 'cuvil.matmul' op contracting dimensions differ: lhs tensor<1x12xf32> has 12 columns but rhs tensor<10x10xf32> has 10 rows
func.func @bad(%x: tensor<1x12xf32>) -> tensor<1x10xf32> {
  %w = cuvil.constant dense<0.5> : tensor<10x10xf32>
  %0 = "cuvil.matmul"(%x, %w) : (tensor<1x12xf32>, tensor<10x10xf32>) -> tensor<1x10xf32> loc("MatMul_0"("model.onnx":0:0))
  return %0 : tensor<1x10xf32>
}

// In textual IR the parser reports the position in the file.
// RUN: sed -n 's|^// BAD2:||p' %s > %t.bad2.mlir
// RUN: not cuvilc --quiet %t.bad2.mlir 2>&1 | FileCheck %s --check-prefix=TEXT
// TEXT: cuvilc: error: {{.*}}bad2.mlir:3:8: error: 'cuvil.conv2d' op weight tensor<8x4x3x3xf32> expects 4 input channels (4 per group x 1 groups) but the input tensor<1x3x8x8xf32> has 3
// BAD2:func.func @f(%x: tensor<1x3x8x8xf32>) -> tensor<1x8x6x6xf32> {
// BAD2:  %w = cuvil.constant dense<0.5> : tensor<8x4x3x3xf32>
// BAD2:  %0 = cuvil.conv2d %x, %w : tensor<1x3x8x8xf32>, tensor<8x4x3x3xf32>
// BAD2:  return %0 : tensor<1x8x6x6xf32>
// BAD2:}

// RUN: echo 'func.func @f() { return }' > %t.ok.mlir
// RUN: not cuvilc %t.missing.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: cuvilc: error: cannot open '{{.*}}.missing.mlir': No such file or directory

// RUN: not cuvilc model.pb 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: cuvilc: error: cannot read 'model.pb': Cuvil reads ONNX (.onnx), XGBoost (.json, .ubj), LightGBM (.txt) and level1 MLIR (.mlir) models

// RUN: not cuvilc --emit=elf %s 2>&1 | FileCheck %s --check-prefix=EMIT
// EMIT: cuvilc: unknown --emit value 'elf'; expected one of: so, static, c, header, mlir-level1, mlir-level2

// --symbol-prefix names a C ABI: a C identifier, for the built outputs.
// RUN: not cuvilc --emit=static --symbol-prefix=9lives %t.ok.mlir -o %t.prefix.a 2>&1 | FileCheck %s --check-prefix=PREFIX
// RUN: not test -e %t.prefix.a
// PREFIX: cuvilc: error: --symbol-prefix must be a C identifier of at most 64 characters that starts with a letter and does not end in '_' (the ABI functions become PREFIX_model_run, ...), not '9lives'
// RUN: not cuvilc --emit=c --symbol-prefix=net %t.ok.mlir 2>&1 | FileCheck %s --check-prefix=PREFIXC
// PREFIXC: cuvilc: error: --symbol-prefix applies to --emit=so, static and header (the symbols of built objects are renamed); --emit=c writes the unprefixed C ABI

// RUN: not cuvilc 2>&1 | FileCheck %s --check-prefix=NOINPUT
// NOINPUT: cuvilc: expected exactly one input model, got 0
// NOINPUT-NEXT: Run 'cuvilc --help' for usage.

// RUN: not cuvilc --cpu=pentium9 %t.ok.mlir 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: cuvilc: error: unknown --cpu 'pentium9'; use native, x86-64, x86-64-v2, x86-64-v3, x86-64-v4 or an LLVM CPU name such as znver4 or skylake-avx512
// RUN: not cuvilc --target=riscv64-linux-gnu %t.ok.mlir 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: cuvilc: unsupported --target 'riscv64-linux-gnu'; this build targets: x86 (x86_64-linux-gnu), aarch64 (aarch64-linux-gnu), fpga

// RUN: not cuvilc --no-such-flag %s 2>&1 | FileCheck %s --check-prefix=FLAG
// FLAG: Unknown command line flag 'no_such_flag'

// Writing into a directory that does not exist fails cleanly, before the
// compile.
// RUN: not cuvilc --emit=mlir-level1 %t.ok.mlir -o %t.nodir/out.mlir 2>&1 | FileCheck %s --check-prefix=WRITE
// WRITE-NOT: [1/
// WRITE: cuvilc: error: cannot write '{{.*}}nodir/out.mlir': the folder '{{.*}}nodir' does not exist; create it first

// A syntax error points at the line.
// RUN: echo 'func.func @f( {' > %t.syntax.mlir
// RUN: not cuvilc --quiet %t.syntax.mlir 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: cuvilc: error: {{.*}}syntax.mlir:1:14: error: expected non-function type
