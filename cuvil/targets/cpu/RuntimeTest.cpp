//===- RuntimeTest.cpp - runtime families: selection and assembly ---------===//
//
// The families a planned level2 function needs (hand-written level2 fed to
// selectRuntime), their closure in dependency order, the variant macros,
// and that every file is embedded and includes only its family's closure.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/cpu/Runtime.h"

#include "cuvil/ir/Registration.h"
#include "cuvil/targets/cpu/EmbeddedRuntime.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringRef.h"

#include "gtest/gtest.h"

#include <map>
#include <set>

namespace cuvil::cpu {
namespace {

using Families = std::vector<std::string>;

/// The families selectRuntime picks for the one function in `body`.
std::set<std::string> selected(llvm::StringRef body,
                               std::vector<std::string> features = {},
                               bool simd = false,
                               RuntimeSelection *selection = nullptr) {
  mlir::DialectRegistry registry;
  cuvil::registerCuvilDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(body, &context);
  EXPECT_TRUE(module) << body.str();
  if (!module)
    return {};
  auto func = *module->getOps<mlir::func::FuncOp>().begin();
  RuntimeSelection result =
      selectRuntime(func, "x86-64", features, simd, 1 << 20);
  if (selection)
    *selection = result;
  return result.families;
}

TEST(RuntimeTest, ClosuresAreInDependencyOrderAndComplete) {
  EXPECT_EQ(runtimeClosure({"reduce"}), (Families{"math", "reduce"}));
  EXPECT_EQ(runtimeClosure({"conv"}),
            (Families{"contract", "threads", "math", "neon", "epilogue", "gemm",
                      "conv"}));
  EXPECT_EQ(runtimeClosure({"conv_blocked", "layout", "threads"}),
            (Families{"contract", "threads", "math", "neon", "tiles",
                      "epilogue", "conv_blocked", "layout"}));
  Families all = runtimeFamilies();
  EXPECT_EQ(runtimeClosure(std::set<std::string>(all.begin(), all.end())), all);
  for (const std::string &family : all) {
    Families closure = runtimeClosure({family});
    EXPECT_EQ(closure.back(), family);
  }
}

TEST(RuntimeTest, SelectsTheFamiliesOfTheKernelsCalled) {
  // A softmax: the pool every context owns, the reductions.
  EXPECT_EQ(selected(R"mlir(
    func.func @f(%x: memref<2x10xf32>, %y: memref<2x10xf32>) {
      cuvil_l2.ukernel_call "softmax" ins(%x : memref<2x10xf32>)
          outs(%y : memref<2x10xf32>) params {axis = 1 : i64}
      return
    })mlir"),
            (std::set<std::string>{"threads", "reduce"}));
  // A product, an elementwise call emitted as loops, a gather.
  EXPECT_EQ(selected(R"mlir(
    func.func @f(%a: memref<4x8xf32>, %b: memref<8x8xf32>, %c: memref<4x8xf32>,
                 %i: memref<3xi64>, %g: memref<3x8xf32>) {
      cuvil_l2.ukernel_call "matmul" ins(%a, %b : memref<4x8xf32>, memref<8x8xf32>)
          outs(%c : memref<4x8xf32>)
      cuvil_l2.ukernel_call "sigmoid" ins(%c : memref<4x8xf32>) outs(%c : memref<4x8xf32>)
      cuvil_l2.ukernel_call "gather" ins(%b, %i : memref<8x8xf32>, memref<3xi64>)
          outs(%g : memref<3x8xf32>) params {axis = 0 : i64}
      return
    })mlir"),
            (std::set<std::string>{"threads", "gemm", "math", "data"}));
}

TEST(RuntimeTest, ConvolutionsSelectTheirAlgorithmsFamily) {
  const char *conv = R"mlir(
    func.func @f(%x: memref<1x8x6x6xf32>, %w: memref<8x8x3x3xf32>,
                 %y: memref<1x8x6x6xf32>, %s: memref<4096xf32>) {
      cuvil_l2.ukernel_call "conv2d" ins(%x, %w : memref<1x8x6x6xf32>, memref<8x8x3x3xf32>)
          outs(OUTS) ATTRS
      return
    })mlir";
  auto withAttrs = [&](llvm::StringRef attrs, bool scratch = false) {
    std::string text = conv;
    text.replace(text.find("OUTS"), 4,
                 scratch ? "%y, %s : memref<1x8x6x6xf32>, memref<4096xf32>"
                         : "%y : memref<1x8x6x6xf32>");
    text.replace(text.find("ATTRS"), 5, attrs.str());
    return text;
  };
  EXPECT_EQ(selected(withAttrs("params {padding = array<i64: 1, 1, 1, 1>}")),
            (std::set<std::string>{"threads", "conv"}));
  EXPECT_EQ(selected(withAttrs("algorithm #cuvil_l2.algorithm<im2col>", true)),
            (std::set<std::string>{"threads", "conv"}));
  EXPECT_EQ(selected(withAttrs("algorithm #cuvil_l2.algorithm<winograd_f4x3>",
                               true)),
            (std::set<std::string>{"threads", "winograd"}));
  // Blocked direct: the register tiles of the CPU's variant.
  RuntimeSelection selection;
  const char *blocked = "algorithm #cuvil_l2.algorithm<direct_blocked>";
  EXPECT_EQ(selected(withAttrs(blocked), {"avx2", "fma"}, /*simd=*/true,
                     &selection),
            (std::set<std::string>{"threads", "conv_blocked"}));
  EXPECT_EQ(selection.convb, "avx2");
  EXPECT_EQ(selection.sgemm4, "avx2");
  // Depthwise blocked: its own kernel, no tiles.
  selected(withAttrs("params {groups = 8 : i64} algorithm "
                     "#cuvil_l2.algorithm<direct_blocked>"),
           {"avx512f", "avx2", "fma"}, /*simd=*/true, &selection);
  EXPECT_EQ(selection.convb, "none");
  EXPECT_EQ(selection.sgemm4, "avx512");
  // Grouped, not depthwise: the tiles; in NCHW16c, without the AVX-512
  // tiles of 8-channel pairs.
  selected(withAttrs("params {groups = 2 : i64} algorithm "
                     "#cuvil_l2.algorithm<direct_blocked>"),
           {"avx512f", "avx2", "fma"}, /*simd=*/true, &selection);
  EXPECT_EQ(selection.convb, "avx512");
  EXPECT_FALSE(selection.convbPairs);
  // Writing NCHW8c: with them.
  std::string eight = withAttrs(blocked);
  eight.replace(
      eight.find("%y: memref<1x8x6x6xf32>"), 23,
      "%y: memref<1x8x6x6xf32, #cuvil_l2.layout<\"NCHW\" to \"NCHW8c\">>");
  eight.replace(eight.find("outs(%y : memref<1x8x6x6xf32>)"), 30,
                "outs(%y : memref<1x8x6x6xf32, #cuvil_l2.layout<\"NCHW\" to "
                "\"NCHW8c\">>)");
  selected(eight, {"avx512f", "avx2", "fma"}, /*simd=*/true, &selection);
  EXPECT_EQ(selection.convb, "avx512");
  EXPECT_TRUE(selection.convbPairs);
  // --emit=c keeps to the references.
  selected(withAttrs(blocked), {"avx512f", "avx2", "fma"}, /*simd=*/false,
           &selection);
  EXPECT_EQ(selection.convb, "reference");
  EXPECT_EQ(selection.dwconv, "reference");
}

TEST(RuntimeTest, ReordersAndMapsSelectLayoutAndMath) {
  EXPECT_EQ(selected(R"mlir(
    func.func @f(%x: memref<1x16x2x2xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>,
                 %y: memref<1x16x2x2xf32>, %z: memref<1x16x2x2xf32>) {
      cuvil_l2.copy %x, %y : memref<1x16x2x2xf32, #cuvil_l2.layout<"NCHW" to "NCHW16c">>,
          memref<1x16x2x2xf32>
      cuvil_l2.copy %y, %z : memref<1x16x2x2xf32>, memref<1x16x2x2xf32>
      cuvil_l2.kernel "map" outs(%z : memref<1x16x2x2xf32>) {
      ^bb0(%buf: memref<1x16x2x2xf32>):
        cuvil_l2.end
      }
      return
    })mlir"),
            (std::set<std::string>{"threads", "layout", "math"}));
}

TEST(RuntimeTest, MacrosChooseTheVariants) {
  RuntimeSelection selection;
  selection.families = {"threads"};
  selection.l2Bytes = 1000; // below 64 KiB: clamped
  std::string c = assembleRuntime(selection);
  EXPECT_EQ(c.rfind("#define CUVIL_L2_BYTES 65536\n", 0), 0u) << c.substr(0, 80);
  EXPECT_EQ(c.find("CUVIL_ENABLE_SIMD_KERNELS"), std::string::npos);
  selection.simd = true;
  selection.sgemm4 = "avx512";
  selection.dwconv = "avx2";
  selection.convb = "none";
  c = assembleRuntime(selection);
  EXPECT_NE(c.find("#define CUVIL_ENABLE_SIMD_KERNELS\n"
                   "#define CUVIL_SGEMM4 cuvil_sgemm4_avx512\n"
                   "#define CUVIL_DWCONV cuvil_dwconv_avx2\n"
                   "#define CUVIL_OMIT_CONVB_TILES\n"),
            std::string::npos);
  selection.convb = "avx512";
  EXPECT_NE(
      assembleRuntime(selection).find("#define CUVIL_CONVB cuvil_convb_avx512\n"
                                      "#define CUVIL_OMIT_CONVB_PAIRS\n"),
      std::string::npos);
  selection.convbPairs = true;
  EXPECT_EQ(assembleRuntime(selection).find("CUVIL_OMIT_CONVB_PAIRS"),
            std::string::npos);
  // Only the pool's code: no other family's functions, no own includes.
  EXPECT_NE(c.find("cuvil_parallel_for("), std::string::npos);
  EXPECT_EQ(c.find("cuvil_sgemm4_reference("), std::string::npos);
  EXPECT_EQ(c.find("#include \"cuvil/"), std::string::npos);
}

/// trees.h's CUVIL_TREE_LT and CUVIL_TREE_LE.
constexpr int kLessThan = 1, kLessEqual = 2;

/// A function of perfect forests comparing `first` and `second` (0: a
/// forest walked by its tables).
std::string forests(int first, int second) {
  auto call = [](int comparison) {
    std::string attrs =
        comparison
            ? "{cuvil.forest_comparison = " + std::to_string(comparison) +
                  " : i64, cuvil.forest_depth = 2 : i64}"
            : "";
    return "cuvil_l2.ukernel_call \"tree_ensemble\" ins(%x, %w, %t, %r, %l : "
           "memref<4x3xf32>, memref<2x3xi32>, memref<2x3xf32>, "
           "memref<2xi32>, memref<2x4xf32>) outs(%y : memref<4x1xf32>) " +
           attrs + "\n";
  };
  return "func.func @f(%x: memref<4x3xf32>, %w: memref<2x3xi32>, %t: "
         "memref<2x3xf32>, %r: memref<2xi32>, %l: memref<2x4xf32>, %y: "
         "memref<4x1xf32>) {\n" +
         call(first) + call(second) + "return\n}\n";
}

TEST(RuntimeTest, PerfectWalksCompileForTheForestsComparisonAndDepth) {
  RuntimeSelection selection;
  const std::vector<std::string> avx512 = {"avx2", "fma", "avx512f"};
  selected(forests(kLessEqual, kLessEqual), avx512, true, &selection);
  EXPECT_EQ(selection.perfectComparison, kLessEqual);
  EXPECT_EQ(selection.perfectMaxDepth, 2);
  EXPECT_NE(
      assembleRuntime(selection).find("#define CUVIL_PERFECT_COMPARISON 2\n"
                                      "#define CUVIL_PERFECT_MAX_DEPTH 2\n"),
      std::string::npos);
  // Two comparisons, or a forest walked by its tables: every copy.
  for (auto [first, second] :
       {std::pair{kLessThan, kLessEqual}, std::pair{kLessThan, 0}}) {
    selected(forests(first, second), avx512, true, &selection);
    EXPECT_EQ(selection.perfectComparison, 0);
    EXPECT_EQ(
        assembleRuntime(selection).find("#define CUVIL_PERFECT_COMPARISON"),
        std::string::npos);
  }
}

TEST(RuntimeTest, EveryFileIsEmbeddedAndIncludesOnlyItsClosure) {
  std::map<std::string, std::string> owner;
  std::map<std::string, Families> files;
#define CUVIL_RUNTIME_FAMILY(name, depends, paths)                             \
  for (llvm::StringRef rest = paths; !rest.empty();) {                         \
    auto [file, tail] = rest.split(' ');                                       \
    owner[file.str()] = #name;                                                 \
    files[#name].push_back(file.str());                                        \
    rest = tail;                                                               \
  }
#include "cuvil/targets/cpu/runtime/families.inc"
#undef CUVIL_RUNTIME_FAMILY
  std::map<std::string, llvm::StringRef> embedded;
  for (const EmbeddedFile *f = kRuntimeFiles; f->path; ++f)
    embedded[f->path] = f->text;
  // Besides the families: what every artifact has (ARTIFACT_FILES in
  // runtime/BUILD, pasted by the emitter's artifact writer).
  const std::set<std::string> artifactFiles = {"abi/abi.h", "abi/entry.c",
                                               "math/scalar.h"};
  for (const std::string &path : artifactFiles) {
    EXPECT_TRUE(embedded.count(path)) << path << " is not embedded";
    EXPECT_FALSE(owner.count(path)) << path << " is in a family";
  }
  EXPECT_EQ(embedded.size(), owner.size() + artifactFiles.size());
  const llvm::StringRef prefix = "#include \"cuvil/targets/cpu/runtime/";
  for (const auto &[family, paths] : files) {
    Families closure = runtimeClosure({family});
    for (const std::string &path : paths) {
      ASSERT_TRUE(embedded.count(path)) << path << " is not embedded";
      llvm::SmallVector<llvm::StringRef> lines;
      embedded[path].split(lines, '\n');
      for (llvm::StringRef line : lines) {
        if (!line.consume_front(prefix))
          continue;
        std::string included = line.take_until([](char ch) { return ch == '"'; }).str();
        // The scalar helpers precede every family in a model's text.
        if (included == "math/scalar.h")
          continue;
        ASSERT_TRUE(owner.count(included)) << path << " includes " << included;
        EXPECT_TRUE(llvm::is_contained(closure, owner[included]))
            << path << " (" << family << ") includes " << included << " of "
            << owner[included] << ", not one of its dependencies";
      }
    }
  }
}

} // namespace
} // namespace cuvil::cpu
