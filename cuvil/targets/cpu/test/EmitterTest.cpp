//===- EmitterTest.cpp - the CPU emitter on hand-written level2 -----------===//
//
// The emitter's own contract, without the importer or the passes: planned
// level2 written by hand goes through cpu::emitModel, and the C it writes is
// compiled (gcc, strict C99) and run against values computed here. Also the
// errors it gives for level2 it cannot write.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/Registration.h"
#include "cuvil/support/FileUtil.h"
#include "cuvil/targets/cpu/CEmitter.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace cuvil::cpu {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// relu(x @ W + 1) for x [batch, 3], batch up to 4: a micro-kernel call into
// the arena, a map (the scalar region as a loop nest) into the output.
constexpr char kPlanned[] = R"mlir(
#id = affine_map<(d0, d1) -> (d0, d1)>
module attributes {cuvil.max_batch = 4 : i64} {
  memref.global "private" constant @w : memref<3x2xf32> =
      dense<[[1.0, -2.0], [3.0, 4.0], [-5.0, 6.0]]> {alignment = 64 : i64}
  func.func @model(%batch: index {cuvil.name = "batch"},
                   %x: memref<?x3xf32> {cuvil.name = "x"},
                   %y: memref<?x2xf32> {cuvil.name = "y"},
                   %arena: memref<64xi8> {cuvil_l2.arena})
      attributes {cuvil.arena_bytes = 64 : i64, cuvil.num_inputs = 1 : i64,
                  cuvil.num_outputs = 1 : i64} {
    %w = memref.get_global @w : memref<3x2xf32>
    %h = cuvil_l2.view %arena[0] (%batch) bounds [4]
        : memref<64xi8> to memref<?x2xf32>
    cuvil_l2.ukernel_call "matmul" ins(%x, %w : memref<?x3xf32>, memref<3x2xf32>)
        outs(%h : memref<?x2xf32>)
    cuvil_l2.kernel "map" ins(%h : memref<?x2xf32>) outs(%y : memref<?x2xf32>) {
    ^bb0(%a: memref<?x2xf32>, %b: memref<?x2xf32>):
      %one = arith.constant 1.0 : f32
      %zero = arith.constant 0.0 : f32
      linalg.generic {indexing_maps = [#id, #id],
                      iterator_types = ["parallel", "parallel"]}
          ins(%a : memref<?x2xf32>) outs(%b : memref<?x2xf32>) {
      ^bb0(%e: f32, %o: f32):
        %s = arith.addf %e, %one : f32
        %r = arith.maximumf %s, %zero : f32
        linalg.yield %r : f32
      }
    }
    return
  }
}
)mlir";

class EmitterTest : public ::testing::Test {
protected:
  EmitterTest() {
    mlir::DialectRegistry registry;
    registerCuvilDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  absl::StatusOr<EmittedModel> emit(const char *source) {
    module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    if (!module)
      return absl::InvalidArgumentError("the test's level2 does not parse");
    EmitOptions options;
    options.compilerVersion = "emitter test";
    options.modelHash = "sha256:test";
    return emitModel(*module, options);
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

/// Runs `command`; returns its standard output.
std::string run(const std::string &command, int *status) {
  std::string output;
  FILE *pipe = ::popen(command.c_str(), "r");
  char buffer[4096];
  size_t n;
  while (pipe && (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    output.append(buffer, n);
  *status = pipe ? ::pclose(pipe) : -1;
  return output;
}

/// Compiles `program` with gcc as strict C99 into `name` in the test's
/// temporary folder and runs it, setting `printed` to its standard output.
::testing::AssertionResult compileAndRun(const std::string &program,
                                         const std::string &name,
                                         std::string *printed) {
  const char *tmp = std::getenv("TEST_TMPDIR");
  std::string path = std::string(tmp ? tmp : "/tmp") + "/" + name;
  if (!writeFileAtomically(path + ".c", program).ok())
    return ::testing::AssertionFailure() << "cannot write " << path << ".c";
  int status = 0;
  std::string log = run("gcc -std=c99 -pedantic -Wall -Werror -O1 " + path +
                            ".c -o " + path + " -lm -lpthread 2>&1",
                        &status);
  if (status != 0)
    return ::testing::AssertionFailure() << log;
  *printed = run(path, &status);
  if (status != 0)
    return ::testing::AssertionFailure()
           << name << " exited with " << status << ": " << *printed;
  return ::testing::AssertionSuccess();
}

TEST_F(EmitterTest, HandWrittenLevel2CompilesAndComputes) {
  absl::StatusOr<EmittedModel> emitted = emit(kPlanned);
  ASSERT_TRUE(emitted.ok()) << emitted.status();
  EXPECT_THAT(emitted->header, HasSubstr("#define CUVIL_MODEL_MAX_BATCH 4"));
  EXPECT_THAT(emitted->header, HasSubstr("/* input 0 'x': float32 [batch, 3] */"));
  EXPECT_THAT(emitted->metadata, HasSubstr("\"workspace_bytes\":64"));

  // The model, and a main that runs it on batch 3 and prints the outputs.
  std::string program = emitted->singleSource() + R"c(
#include <stdio.h>
int main(void) {
  static const float x[3][3] = {{1, 0, 0}, {0, 1, 0}, {1, 1, 1}};
  float y[3][2];
  unsigned char workspace[64] __attribute__((aligned(64)));
  const void *inputs[1] = {x};
  void *outputs[1] = {y};
  int i, status = cuvil_model_run(3, inputs, outputs, workspace, sizeof workspace);
  if (status != CUVIL_OK)
    return status;
  for (i = 0; i < 6; ++i)
    printf("%g\n", (double)y[i / 2][i % 2]);
  return 0;
}
)c";
  std::string printed;
  ASSERT_TRUE(compileAndRun(program, "model", &printed));
  // relu(x @ W + 1), computed by hand: rows [1,-2]+1, [3,4]+1, [-1,8]+1.
  EXPECT_EQ(printed, "2\n0\n4\n5\n0\n9\n");
}

// A map of more than 32K elements at the function's top level runs over
// the context's threads (its loop written as a function of a range of
// channels): relu(x * s + t), s and t per channel, on [2, 4, 96, 96].
constexpr char kLargeMap[] = R"mlir(
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch = affine_map<(n, c, h, w) -> (c, 0, 0)>
module attributes {cuvil.max_batch = 1 : i64} {
  func.func @model(%batch: index, %x: memref<2x4x96x96xf32> {cuvil.name = "x"},
                   %s: memref<4x1x1xf32> {cuvil.name = "s"},
                   %t: memref<4x1x1xf32> {cuvil.name = "t"},
                   %y: memref<2x4x96x96xf32> {cuvil.name = "y"},
                   %arena: memref<64xi8> {cuvil_l2.arena})
      attributes {cuvil.arena_bytes = 64 : i64, cuvil.num_inputs = 3 : i64,
                  cuvil.num_outputs = 1 : i64} {
    cuvil_l2.kernel "map" ins(%x, %s, %t : memref<2x4x96x96xf32>, memref<4x1x1xf32>, memref<4x1x1xf32>)
        outs(%y : memref<2x4x96x96xf32>) {
    ^bb0(%a: memref<2x4x96x96xf32>, %b: memref<4x1x1xf32>, %c: memref<4x1x1xf32>, %o: memref<2x4x96x96xf32>):
      %zero = arith.constant 0.0 : f32
      linalg.generic {indexing_maps = [#id, #ch, #ch, #id],
                      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
          ins(%a, %b, %c : memref<2x4x96x96xf32>, memref<4x1x1xf32>, memref<4x1x1xf32>)
          outs(%o : memref<2x4x96x96xf32>) {
      ^bb0(%e: f32, %f: f32, %g: f32, %out: f32):
        %m = arith.mulf %e, %f : f32
        %p = arith.addf %m, %g : f32
        %r = arith.maximumf %p, %zero : f32
        linalg.yield %r : f32
      }
    }
    return
  }
}
)mlir";

TEST_F(EmitterTest, LargeMapRunsOverTheContextsThreads) {
  absl::StatusOr<EmittedModel> emitted = emit(kLargeMap);
  ASSERT_TRUE(emitted.ok()) << emitted.status();
  std::string source = emitted->singleSource();
  // (Checked on the run function's text, not the whole source, so that a
  // failure prints something readable.)
  std::string code =
      source.substr(source.find("typedef struct {\n  int64_t batch;"));
  code = code.substr(0, code.find("cuvil_run_batch"));
  EXPECT_THAT(
      code,
      HasSubstr(
          "static void cuvil_map0(void *p_, int64_t begin_, int64_t end_)"));
  EXPECT_THAT(code, HasSubstr("cuvil_parallel_for(pool, 8, cuvil_map0"));
  // Run on 1 and 3 threads: every element as this main computes it, and the
  // same bits either way.
  std::string program = source + R"c(
#include <stdio.h>
#include <string.h>
static float x[2 * 4 * 96 * 96], out1[2 * 4 * 96 * 96], out3[2 * 4 * 96 * 96];
static int run(int threads, float *y) {
  static const float s[4] = {0.5f, -2.0f, 1.0f, 3.0f}, t[4] = {1.0f, 0.25f, -1.0f, 0.0f};
  const void *inputs[3] = {x, s, t};
  void *outputs[1] = {y};
  cuvil_context *context;
  int status = cuvil_context_create(threads, &context);
  if (status != CUVIL_OK)
    return status;
  status = cuvil_context_run(context, 1, inputs, outputs);
  cuvil_context_destroy(context);
  return status;
}
int main(void) {
  static const float s[4] = {0.5f, -2.0f, 1.0f, 3.0f}, t[4] = {1.0f, 0.25f, -1.0f, 0.0f};
  long i, wrong = 0;
  for (i = 0; i < 2 * 4 * 96 * 96; ++i)
    x[i] = (float)((i * 7919) % 1000) / 250.0f - 2.0f;
  if (run(1, out1) != CUVIL_OK || run(3, out3) != CUVIL_OK)
    return 2;
  for (i = 0; i < 2 * 4 * 96 * 96; ++i) {
    int c = (int)(i / (96 * 96) % 4);
    float want = x[i] * s[c] + t[c];
    want = want > 0.0f ? want : 0.0f;
    wrong += out1[i] != want;
  }
  printf("%ld wrong, threads %s\n", wrong,
         memcmp(out1, out3, sizeof out1) ? "differ" : "agree");
  return 0;
}
)c";
  std::string printed;
  ASSERT_TRUE(compileAndRun(program, "large_map", &printed));
  EXPECT_EQ(printed, "0 wrong, threads agree\n");
}

// An elementwise kernel whose operands share its output's blocked layout
// runs as one flat loop over memory (a nest whose innermost loop is the 8
// lanes of a block is left scalar by clang once a byte store needs alias
// checks: a quantize after every ResNet block took a third of int8
// ResNet-50). Quantize of NCHW8c float32 into NCHW8c uint8.
constexpr char kBlockedQuantize[] = R"mlir(
module attributes {cuvil.max_batch = 1 : i64} {
  func.func @model(%batch: index,
      %x: memref<1x16x2x2xf32, #cuvil_l2.layout<"NCHW" to "NCHW8c">> {cuvil.name = "x"},
      %y: memref<1x16x2x2x!quant.uniform<u8:f32, 0.5:3>, #cuvil_l2.layout<"NCHW" to "NCHW8c">> {cuvil.name = "y"},
      %arena: memref<64xi8> {cuvil_l2.arena})
      attributes {cuvil.arena_bytes = 64 : i64, cuvil.num_inputs = 1 : i64,
                  cuvil.num_outputs = 1 : i64} {
    cuvil_l2.ukernel_call "quantize"
        ins(%x : memref<1x16x2x2xf32, #cuvil_l2.layout<"NCHW" to "NCHW8c">>)
        outs(%y : memref<1x16x2x2x!quant.uniform<u8:f32, 0.5:3>, #cuvil_l2.layout<"NCHW" to "NCHW8c">>)
    return
  }
}
)mlir";

TEST_F(EmitterTest, SameLayoutBlockedMapIsOneFlatLoop) {
  absl::StatusOr<EmittedModel> emitted = emit(kBlockedQuantize);
  ASSERT_TRUE(emitted.ok()) << emitted.status();
  std::string source = emitted->singleSource();
  std::string code = source.substr(source.find("/* quantize"));
  code = code.substr(0, code.find("cuvil_run_batch"));
  EXPECT_THAT(code, HasSubstr("< 64; ++")) << code;
  EXPECT_THAT(code, Not(HasSubstr("/ 8"))) << code;
  // Each byte is x / 0.5 rounded half to even, plus 3, saturated.
  std::string program = source + R"c(
#include <math.h>
#include <stdio.h>
int main(void) {
  float x[64];
  unsigned char y[64];
  const void *inputs[1] = {x};
  void *outputs[1] = {y};
  unsigned char workspace[64] __attribute__((aligned(64)));
  long i, wrong = 0;
  for (i = 0; i < 64; ++i)
    x[i] = (float)(i * 37 % 64) * 2.25f - 20.0f;
  x[5] = NAN;
  if (cuvil_model_run(1, inputs, outputs, workspace, sizeof workspace) != CUVIL_OK)
    return 2;
  for (i = 0; i < 64; ++i) {
    float q = x[i] != x[i] ? 3.0f : nearbyintf(x[i] / 0.5f) + 3.0f;
    wrong += y[i] != (unsigned char)(q < 0.0f ? 0.0f : q > 255.0f ? 255.0f : q);
  }
  printf("%ld wrong, NaN to %d\n", wrong, y[5]);
  return 0;
}
)c";
  std::string printed;
  ASSERT_TRUE(compileAndRun(program, "blocked_quantize", &printed));
  EXPECT_EQ(printed, "0 wrong, NaN to 3\n");
}

TEST_F(EmitterTest, LevelTwoItCannotWriteIsAnErrorNamingTheOp) {
  absl::StatusOr<EmittedModel> unknown = emit(R"mlir(
module {
  func.func @model(%batch: index, %x: memref<4xf32>, %y: memref<4xf32>,
                   %arena: memref<64xi8> {cuvil_l2.arena})
      attributes {cuvil.num_inputs = 1 : i64, cuvil.num_outputs = 1 : i64} {
    cuvil_l2.ukernel_call "fft" ins(%x : memref<4xf32>) outs(%y : memref<4xf32>)
    return
  }
}
)mlir");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(),
              HasSubstr("'cuvil_l2.ukernel_call' op 'fft' is not supported by "
                        "the CPU targets yet"));

  absl::StatusOr<EmittedModel> transfer = emit(R"mlir(
module {
  func.func @model(%batch: index, %x: memref<4xf32>,
                   %y: memref<4xf32, #cuvil_l2.space<nram>>,
                   %arena: memref<64xi8> {cuvil_l2.arena})
      attributes {cuvil.num_inputs = 1 : i64, cuvil.num_outputs = 1 : i64} {
    cuvil_l2.copy %x, %y : memref<4xf32>, memref<4xf32, #cuvil_l2.space<nram>>
    return
  }
}
)mlir");
  ASSERT_FALSE(transfer.ok());
  EXPECT_THAT(transfer.status().message(),
              HasSubstr("the CPU targets have no #cuvil_l2.space<nram> memory"));

  absl::StatusOr<EmittedModel> fixed = emit(R"mlir(
module {
  func.func @model(%batch: index, %x: memref<4x!cuvil_l2.fixed<16, 8>>,
                   %y: memref<4xf32>, %arena: memref<64xi8> {cuvil_l2.arena})
      attributes {cuvil.num_inputs = 1 : i64, cuvil.num_outputs = 1 : i64} {
    return
  }
}
)mlir");
  ASSERT_FALSE(fixed.ok());
  EXPECT_THAT(fixed.status().message(),
              HasSubstr("do not support '!cuvil_l2.fixed<16, 8>' tensors"));

  // Blocked buffers reach only kernels with a blocked form, and an
  // elementwise one reads each operand in its output's layout (or per
  // channel, or as one element).
  auto blockedCall = [&](const std::string &kernel) {
    std::string source = R"mlir(
module {
  func.func @model(%batch: index, %x: memref<1x8x2x2xf32>,
                   %y: memref<1x8x2x2xf32>,
                   %arena: memref<128xi8> {cuvil_l2.arena})
      attributes {cuvil.num_inputs = 1 : i64, cuvil.num_outputs = 1 : i64} {
    %b = cuvil_l2.view %arena[0] : memref<128xi8>
        to memref<1x8x2x2xf32, #cuvil_l2.layout<"NCHW" to "NCHW8c">>
    cuvil_l2.ukernel_call ")mlir" + kernel + R"mlir(" ins(%x : memref<1x8x2x2xf32>)
        outs(%b : memref<1x8x2x2xf32, #cuvil_l2.layout<"NCHW" to "NCHW8c">>)
    return
  }
}
)mlir";
    return emit(source.c_str());
  };
  absl::StatusOr<EmittedModel> blocked = blockedCall("exp");
  ASSERT_FALSE(blocked.ok());
  EXPECT_THAT(blocked.status().message(),
              HasSubstr("'exp' has no kernel for blocked layouts on the CPU "
                        "targets"));
  blocked = blockedCall("relu");
  ASSERT_FALSE(blocked.ok());
  EXPECT_THAT(blocked.status().message(),
              HasSubstr("'relu' on blocked layouts must read each operand in "
                        "the output's layout and shape, per channel, or as "
                        "one element"));

  // The runtime's micro-kernels are float32, or float16 on weights packed
  // at compile time.
  absl::StatusOr<EmittedModel> half = emit(R"mlir(
module {
  func.func @model(%batch: index, %a: memref<2x2xf16>, %b: memref<2x2xf16>,
                   %y: memref<2x2xf16>, %arena: memref<64xi8> {cuvil_l2.arena})
      attributes {cuvil.num_inputs = 2 : i64, cuvil.num_outputs = 1 : i64} {
    cuvil_l2.ukernel_call "matmul" ins(%a, %b : memref<2x2xf16>, memref<2x2xf16>)
        outs(%y : memref<2x2xf16>)
    return
  }
}
)mlir");
  ASSERT_FALSE(half.ok());
  EXPECT_THAT(half.status().message(),
              HasSubstr("'matmul' needs its float16 weights packed at compile "
                        "time (cuvil-cpu-pack-quantized-weights), and no "
                        "epilogue"));
  absl::StatusOr<EmittedModel> wide = emit(R"mlir(
module {
  func.func @model(%batch: index, %a: memref<2x2xf64>, %b: memref<2x2xf64>,
                   %y: memref<2x2xf64>, %arena: memref<64xi8> {cuvil_l2.arena})
      attributes {cuvil.num_inputs = 2 : i64, cuvil.num_outputs = 1 : i64} {
    cuvil_l2.ukernel_call "gemm" ins(%a, %b : memref<2x2xf64>, memref<2x2xf64>)
        outs(%y : memref<2x2xf64>)
    return
  }
}
)mlir");
  ASSERT_FALSE(wide.ok());
  EXPECT_THAT(wide.status().message(),
              HasSubstr("'gemm' on 'f64' is not supported by the CPU targets "
                        "yet"));

  // Only the int8 convolutions requantize in their epilogue.
  absl::StatusOr<EmittedModel> requantized = emit(R"mlir(
module {
  func.func @model(%batch: index, %x: memref<4xf32>, %y: memref<4xf32>,
                   %arena: memref<64xi8> {cuvil_l2.arena})
      attributes {cuvil.num_inputs = 1 : i64, cuvil.num_outputs = 1 : i64} {
    %q = cuvil_l2.view %arena[0] : memref<64xi8>
        to memref<4x!quant.uniform<u8:f32, 0.5>>
    cuvil_l2.ukernel_call "relu" ins(%x : memref<4xf32>)
        outs(%q : memref<4x!quant.uniform<u8:f32, 0.5>>)
        epilogue #cuvil_l2.epilogue<steps = [quantize]>
    return
  }
}
)mlir");
  ASSERT_FALSE(requantized.ok());
  EXPECT_THAT(requantized.status().message(),
              HasSubstr("'relu' cannot requantize its results on the CPU "
                        "targets (int8 convolutions and linear layers can)"));

  // Only the int8 convolutions add a quantized residual (read dequantized).
  absl::StatusOr<EmittedModel> residual = emit(R"mlir(
module {
  func.func @model(%batch: index, %a: memref<2x2xf32>, %b: memref<2x2xf32>,
                   %r: memref<2x2x!quant.uniform<u8:f32, 0.5>>,
                   %y: memref<2x2xf32>, %arena: memref<64xi8> {cuvil_l2.arena})
      attributes {cuvil.num_inputs = 3 : i64, cuvil.num_outputs = 1 : i64} {
    cuvil_l2.ukernel_call "matmul"
        ins(%a, %b, %r : memref<2x2xf32>, memref<2x2xf32>, memref<2x2x!quant.uniform<u8:f32, 0.5>>)
        outs(%y : memref<2x2xf32>)
        epilogue #cuvil_l2.epilogue<steps = [add]>
    return
  }
}
)mlir");
  ASSERT_FALSE(residual.ok());
  EXPECT_THAT(residual.status().message(),
              HasSubstr("'matmul' cannot add a residual of "
                        "'!quant.uniform<u8:f32, 5.000000e-01>' on the CPU "
                        "targets (int8 convolutions add 8-bit residuals "
                        "quantized per tensor)"));

  absl::StatusOr<EmittedModel> unplanned = emit(R"mlir(
module {
  func.func @model(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
)mlir");
  ASSERT_FALSE(unplanned.ok());
  EXPECT_THAT(unplanned.status().message(),
              HasSubstr("no planned level2 function to emit"));
}

} // namespace
} // namespace cuvil::cpu
