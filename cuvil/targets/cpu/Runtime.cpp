//===- Runtime.cpp - the runtime text a model's C includes ----------------===//
//
// Families come from runtime/families.inc, their text from the embedded
// files. Within the text, the runtime's own includes
// (#include "cuvil/targets/cpu/runtime/...") are dropped: the headers they
// name are pasted before, once each.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/cpu/Runtime.h"

#include "cuvil/targets/cpu/EmbeddedRuntime.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/ErrorHandling.h"

#include <set>

#include <algorithm>

namespace cuvil::cpu {
namespace {

struct Family {
  std::string name;
  std::vector<std::string> depends;
  std::vector<std::string> headers, sources;
};

std::vector<std::string> splitWords(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> words;
  text.split(words, ' ', -1, /*KeepEmpty=*/false);
  return std::vector<std::string>(words.begin(), words.end());
}

const std::vector<Family> &families() {
  static const std::vector<Family> table = [] {
    std::vector<Family> result;
#define CUVIL_RUNTIME_FAMILY(name, depends, files)                             \
  result.push_back({#name, splitWords(depends), {}, {}});                      \
  for (std::string &file : splitWords(files))                                  \
    (llvm::StringRef(file).ends_with(".h") ? result.back().headers             \
                                           : result.back().sources)            \
        .push_back(std::move(file));
#include "cuvil/targets/cpu/runtime/families.inc"
#undef CUVIL_RUNTIME_FAMILY
    return result;
  }();
  return table;
}

} // namespace

llvm::StringRef runtimeFile(llvm::StringRef path) {
  static const llvm::StringMap<llvm::StringRef> files = [] {
    llvm::StringMap<llvm::StringRef> result;
    for (const EmbeddedFile *f = kRuntimeFiles; f->path; ++f)
      // The genrule starts each text on the line after its opening quote.
      result[f->path] = llvm::StringRef(f->text).drop_front(f->text[0] == '\n');
    return result;
  }();
  auto it = files.find(path);
  if (it == files.end())
    llvm::report_fatal_error(llvm::Twine("runtime file '") + path +
                             "' is not embedded");
  return it->second;
}

namespace {

/// `text` without the runtime's own include lines.
void appendWithoutOwnIncludes(llvm::StringRef text, std::string &out) {
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    if (!line.starts_with("#include \"cuvil/targets/cpu/runtime/"))
      out.append(line.data(), line.size()).push_back('\n');
    text = rest;
  }
}

} // namespace

std::vector<std::string> runtimeFamilies() {
  std::vector<std::string> names;
  for (const Family &family : families())
    names.push_back(family.name);
  return names;
}

std::vector<std::string> runtimeClosure(const std::set<std::string> &wanted) {
  // Dependencies are listed above their users: one pass from the bottom
  // marks them all.
  std::set<std::string> needed = wanted;
  const std::vector<Family> &table = families();
  for (const Family &family : llvm::reverse(table))
    if (needed.count(family.name))
      needed.insert(family.depends.begin(), family.depends.end());
  std::vector<std::string> order;
  for (const Family &family : table)
    if (needed.erase(family.name))
      order.push_back(family.name);
  if (!needed.empty())
    llvm::report_fatal_error(llvm::Twine("unknown runtime family '") +
                             *needed.begin() + "'");
  return order;
}

std::string chooseVariant(
    const std::vector<std::pair<std::string, std::string>> &variants,
    const std::vector<std::string> &cpuFeatures) {
  std::string chosen = "reference";
  for (const auto &[name, features] : variants)
    if (llvm::all_of(splitWords(features), [&](const std::string &f) {
          return llvm::is_contained(cpuFeatures, f);
        }))
      chosen = name;
  return chosen;
}

/// The int8 tiles a model calls, and only those compiled (qconvb.c): the
/// AVX-512BW entries run 8-channel blocks on the AVX2 tiles of their
/// weights (AVX-512 VNNI's on its own ymm tiles).
static std::string qconvbMacros(const RuntimeSelection &selection) {
  std::string text = "#define CUVIL_QCONVB_ONLY\n";
  std::set<std::string> keep;
  for (const std::string &variant :
       {selection.qconvb, selection.qconvbNarrow}) {
    if (variant == "none" || variant == "reference")
      continue;
    keep.insert(variant);
    if (variant == "avx512bw")
      keep.insert("avx2");
    if (variant == "avx512bw_narrow")
      keep.insert("avx2_narrow");
  }
  for (const std::string &variant : keep)
    text += "#define CUVIL_QCONVB_KEEP_" + variant + "\n";
  if (selection.qconvb != "none")
    text += "#define CUVIL_QCONVB cuvil_qconvb_" + selection.qconvb + "\n";
  if (selection.qconvbNarrow != "none")
    text += "#define CUVIL_QCONVB_NARROW cuvil_qconvb_" +
            selection.qconvbNarrow + "\n";
  return text;
}

/// The bfloat16 tiles a model calls, and only those compiled (bconvb.c):
/// the AVX-512 entries run 8-channel blocks on the AVX2 tiles.
static std::string bconvbMacros(const RuntimeSelection &selection) {
  if (selection.bconvb == "none")
    return "";
  std::string text = "#define CUVIL_BCONVB_ONLY\n#define CUVIL_BCONVB "
                     "cuvil_bconvb_" +
                     selection.bconvb + "\n";
  if (selection.bconvb != "reference")
    text += "#define CUVIL_BCONVB_KEEP_" + selection.bconvb + "\n";
  if (selection.bconvb == "avx512" || selection.bconvb == "avx512bf16")
    text += "#define CUVIL_BCONVB_KEEP_avx2\n";
  return text;
}

/// The tree walks a model calls, and only those compiled (trees.c,
/// perfect_*.c): the SIMD walks fall back to the reference walk alone;
/// the perfect walks for the one comparison the model's forests make and
/// the levels they have.
static std::string treesMacros(const RuntimeSelection &selection) {
  const std::string &walk = selection.forestWalk;
  if (walk == "none")
    return "";
  std::string text = "#define CUVIL_TREES_ONLY\n#define CUVIL_FOREST_WALK "
                     "cuvil_forest_walk_" + walk +
                     "\n#define CUVIL_PERFECT_WALK cuvil_perfect_walk_" + walk +
                     "\n";
  if (walk != "reference")
    text += "#define CUVIL_TREES_KEEP_" + walk + "\n";
  if (selection.perfectComparison)
    text += "#define CUVIL_PERFECT_COMPARISON " +
            std::to_string(selection.perfectComparison) + "\n";
  if (selection.perfectMaxDepth)
    text += "#define CUVIL_PERFECT_MAX_DEPTH " +
            std::to_string(selection.perfectMaxDepth) + "\n";
  return text;
}

std::string assembleRuntime(const RuntimeSelection &selection) {
  int64_t l2Bytes = std::max<int64_t>(selection.l2Bytes, 65536);
  std::string text = "#define CUVIL_L2_BYTES " + std::to_string(l2Bytes) + "\n";
  if (selection.simd)
    text +=
        "#define CUVIL_ENABLE_SIMD_KERNELS\n"
        "#define CUVIL_SGEMM4 cuvil_sgemm4_" +
        selection.sgemm4 + "\n#define CUVIL_DWCONV cuvil_dwconv_" +
        selection.dwconv + "\n" +
        (selection.convb != "none"
             ? "#define CUVIL_CONVB cuvil_convb_" + selection.convb
             : std::string("#define CUVIL_OMIT_CONVB_TILES")) +
        "\n" +
        (selection.convb != "none" && !selection.convbPairs
             ? "#define CUVIL_OMIT_CONVB_PAIRS\n"
             : std::string()) +
        (selection.qgemm4 != "none"
             ? "#define CUVIL_QGEMM4 cuvil_qgemm4_" + selection.qgemm4 + "\n"
             : std::string()) +
        (selection.qgemm4Narrow != "none"
             ? "#define CUVIL_QGEMM4_NARROW cuvil_qgemm4_" +
                   selection.qgemm4Narrow + "\n"
             : std::string()) +
        (selection.bgemm8 != "none"
             ? "#define CUVIL_BGEMM8 cuvil_bgemm8_" + selection.bgemm8 + "\n"
             : std::string()) +
        qconvbMacros(selection) + bconvbMacros(selection) +
        (selection.hgemm4 != "none"
             ? "#define CUVIL_HGEMM4 cuvil_hgemm4_" + selection.hgemm4 + "\n"
             : std::string()) +
        treesMacros(selection);
  // Every artifact's scalar helpers (half conversions) come first: the
  // families may use them.
  appendWithoutOwnIncludes(runtimeFile("math/scalar.h"), text);
  std::vector<const Family *> closure;
  for (const std::string &name : runtimeClosure(selection.families))
    closure.push_back(&*llvm::find_if(
        families(), [&](const Family &f) { return f.name == name; }));
  for (const Family *family : closure)
    for (const std::string &header : family->headers)
      appendWithoutOwnIncludes(runtimeFile(header), text);
  for (const Family *family : closure)
    for (const std::string &source : family->sources)
      appendWithoutOwnIncludes(runtimeFile(source), text);
  return text;
}

} // namespace cuvil::cpu
