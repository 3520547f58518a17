//===- Kernels.cpp - kernels.mlu and kernels.h ----------------------------===//
//
// One __mlu_global__ kernel per layer: its on-chip buffers carved from
// one NRAM declaration at the offsets of its plan, its shape and tiles as
// constants, and a call of the device library; and one host function per
// layer that launches it with the plan's task dimension and function type
// (the <<<>>> launch must sit in a file cncc compiles).
//
//===----------------------------------------------------------------------===//

#include "cuvil/support/SourceEscape.h"
#include "cuvil/targets/mlu/emit/Project.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

#include <cmath>
#include <map>

namespace cuvil::mlu {
namespace {

int64_t onChipBytes(const KernelPlan &plan, int64_t elementBytes,
                    l2::MemorySpace space = l2::MemorySpace::nram) {
  return std::max<int64_t>(kAlignBytes, plan.bytesIn(space, elementBytes));
}

/// Declares the plan's buffers, carved from one NRAM and (for the tensor
/// unit's weights) one WRAM area; returns their names, or "nullptr" for
/// those the plan has none of, by name.
std::string declareBuffers(const KernelPlan &plan, int64_t elementBytes,
                           std::map<std::string, std::string> &names) {
  std::string text = absl::StrFormat("  CUVIL_NRAM(char, nram, %d);\n",
                                     onChipBytes(plan, elementBytes));
  struct Area {
    l2::MemorySpace space;
    const char *macro, *name, *prefix;
    int64_t offset = 0;
  };
  Area areas[] = {{l2::MemorySpace::nram, "CUVIL_NRAM", "nram", "n_"},
                  {l2::MemorySpace::wram, "CUVIL_WRAM", "wram", "w_"},
                  {l2::MemorySpace::sram, "CUVIL_SRAM", "sram", "s_"}};
  for (const Area &area : llvm::ArrayRef(areas).drop_front())
    if (plan.bytesIn(area.space, elementBytes) > 0)
      absl::StrAppendFormat(&text, "  %s(char, %s, %d);\n", area.macro,
                            area.name,
                            onChipBytes(plan, elementBytes, area.space));
  for (const OnChipBuffer &buffer : plan.buffers) {
    Area &area = *llvm::find_if(
        areas, [&](const Area &a) { return a.space == buffer.space; });
    std::string name = absl::StrCat(area.prefix, buffer.name);
    int64_t bytes = buffer.elementBytes ? buffer.elementBytes : elementBytes;
    const char *type = bytes == 1 ? "int8_t" : elementCType(bytes == 2);
    absl::StrAppendFormat(&text, "  %s *%s = (%s *)(%s + %d);\n", type, name,
                          type, area.name, area.offset);
    area.offset += buffer.bytes(elementBytes);
    names[buffer.name] = name;
  }
  return text;
}

std::string field(const char *name, int64_t value) {
  return absl::StrFormat("  s.%s = %d;\n", name, value);
}

std::string floatLiteral(double value) {
  if (std::isnan(value))
    return "__builtin_nanf(\"\")";
  if (std::isinf(value))
    return value > 0 ? "__builtin_inff()" : "(-__builtin_inff())";
  return absl::StrFormat("(float)%.9g", value);
}

/// The struct fields and the library call of one layer, in float32 (see
/// layerCode).
std::string layerBody(const Layer &layer,
                      std::map<std::string, std::string> buffers) {
  const Problem &p = layer.problem;
  const std::vector<int64_t> &tile = layer.plan.tile;
  auto buffer = [&](const char *name) {
    auto it = buffers.find(name);
    return it == buffers.end() ? std::string("nullptr") : it->second;
  };
  std::string text;
  std::string act = absl::StrCat(static_cast<int>(p.act));
  std::string lo = floatLiteral(p.clipMin), hi = floatLiteral(p.clipMax);
  if (p.kind == "gemm") {
    text += "  cuvil_gemm_shape s;\n";
    for (const char *name :
         {"batch", "M", "N", "K", "a_batch", "b_batch", "c_batch"})
      text += field(name, p.dim(name));
    text += field("Mt", tile[0]) + field("Kt", tile[1]) + field("Nt", tile[2]);
    text += absl::StrCat("  s.act = ", act, ";\n");
    bool staged = layer.plan.functionType != FunctionType::Block;
    text += absl::StrCat(
        "  cuvil_gemm", staged ? "_staged" : "",
        "<float>(s, p0, p1, p2, p3, p4, ", lo, ", ", hi, ", ", buffer("a"),
        ", ", buffer("b"), ", ", buffer("bf"), ", ", buffer("acc"), ", ",
        buffer("tmp"), ", ", buffer("vec"), ", ", buffer("vecf"), ", ",
        buffer("res"), ", ", buffer("out"), ", ", buffer("act2"),
        staged ? absl::StrCat(", ", buffer("sb")) : "", ");\n");
    return text;
  }
  if (p.kind == "gemm_int8") {
    text += "  cuvil_gemm_int8_shape s;\n";
    for (const char *name : {"M", "N", "K", "Np", "Kp", "pos_a", "pos_w"})
      text += field(name, p.dim(name));
    text += field("Mt", tile[0]) + field("Nt", tile[2]);
    text += absl::StrCat("  s.act = ", act, ";\n");
    bool staged = layer.plan.functionType != FunctionType::Block;
    text += absl::StrCat(
        "  cuvil_gemm_int8", staged ? "_staged" : "",
        "(s, p0, p1, p2, p3, p4, ", lo, ", ", hi, ", ", buffer("row"), ", ",
        buffer("q"), ", ", buffer("acc"), ", ", buffer("tmp"), ", ",
        buffer("vec"), ", nullptr, ", buffer("res"), ", nullptr, ",
        buffer("wt"), ", ", buffer("act2"),
        staged ? absl::StrCat(", ", buffer("sw")) : "", ");\n");
    return text;
  }
  if (p.kind == "conv2d" || p.kind == "pool2d" || p.kind == "conv2d_int8") {
    text += "  cuvil_window_shape s;\n";
    for (const char *name : {"N", "C", "H", "W", "OC", "OH", "OW", "KH", "KW",
                             "SH", "SW", "PT", "PL", "DH", "DW", "G"})
      text += field(name, p.dim(name));
    int64_t Ht = tile[2];
    text += field("OCt", tile[0]) + field("Ct", tile[1]) + field("Ht", Ht);
    text += field("Pt", windowPositions(p, Ht));
    text += field("RowsIn", windowRowsIn(p, Ht));
    text += absl::StrCat("  s.act = ", act, ";\n");
    if (p.kind == "conv2d_int8") {
      text += "  cuvil_fixed_conv f;\n";
      text += absl::StrFormat(
          "  f.Cp = %d;\n  f.OCp = %d;\n  f.Wp = %d;\n  f.pos_x = %d;\n"
          "  f.pos_w = %d;\n",
          p.dim("Cp"), p.dim("OCp"),
          (p.dim("OW") - 1) * p.dim("SW") + p.dim("KW"), p.dim("pos_x"),
          p.dim("pos_w"));
      bool staged = layer.plan.functionType != FunctionType::Block;
      text += absl::StrCat(
          "  cuvil_conv2d_int8", staged ? "_staged" : "",
          "(s, f, p0, p1, p2, p3, p4, ", lo, ", ", hi, ", ", buffer("x"), ", ",
          buffer("q"), ", ", buffer("xh"), ", ", buffer("wt"), ", ",
          buffer("part"), ", ", buffer("acc"), ", ", buffer("tmp"), ", ",
          buffer("vec"), ", ", buffer("res"), ", ", buffer("act2"),
          staged ? absl::StrCat(", ", buffer("sw")) : "", ");\n");
    } else if (p.kind == "conv2d") {
      bool staged = layer.plan.functionType != FunctionType::Block;
      text += absl::StrCat(
          "  cuvil_conv2d", staged ? "_staged" : "",
          "<float>(s, p0, p1, p2, p3, p4, ", lo, ", ", hi, ", ", buffer("x"),
          ", ", buffer("w"), ", ", buffer("p"), ", ", buffer("pf"), ", ",
          buffer("acc"), ", ", buffer("tmp"), ", ", buffer("vec"), ", ",
          buffer("res"), ", ", buffer("out"), ", ", buffer("act2"),
          staged ? absl::StrCat(", ", buffer("sw")) : "", ");\n");
    } else
      text += absl::StrCat("  cuvil_pool2d<float>(s, p0, p1, ",
                           p.isMax ? "nullptr, true" : "p2, false", ", ",
                           buffer("x"), ", ", buffer("p"), ", ",
                           buffer("acc"), ", ", buffer("tmp"), ");\n");
    return text;
  }
  static const std::map<std::string, const char *> kBinaryOps = {
      {"add", "CUVIL_ADD"}, {"sub", "CUVIL_SUB"}, {"mul", "CUVIL_MUL"},
      {"div", "CUVIL_DIV"}, {"max", "CUVIL_MAX"}, {"min", "CUVIL_MIN"}};
  if (p.kind == "softmax" || p.kind == "layer_norm" ||
      p.kind == "rows_reduce" || p.kind == "batch_norm" ||
      (p.kind == "binary" && p.mode != "same" && p.mode != "scalar")) {
    text += "  cuvil_rows_shape s;\n";
    text += field("rows", p.dim("rows")) + field("L", p.dim("L"));
    text += field("Rt", tile[0]) + field("Lp", tile[1]);
    if (p.kind == "softmax")
      text += absl::StrCat("  cuvil_softmax<float>(s, p0, p1, ",
                           p.log ? "true" : "false", ", ", buffer("t"), ", ",
                           buffer("e"), ", ", buffer("lanes"), ", ",
                           buffer("stage"), ");\n");
    else if (p.kind == "layer_norm")
      text += absl::StrCat("  cuvil_layer_norm<float>(s, p0, p1, p2, p3, ",
                           floatLiteral(p.epsilon), ", ", buffer("t"), ", ",
                           buffer("sq"), ", ", buffer("g"), ", ", buffer("b"),
                           ", ", buffer("mask"), ", ", buffer("lanes"), ", ",
                           buffer("stage"), ");\n");
    else if (p.kind == "rows_reduce")
      text += absl::StrCat("  cuvil_rows_reduce<float>(s, p0, p1, ",
                           p.op == "sum"   ? "CUVIL_REDUCE_SUM"
                           : p.op == "max" ? "CUVIL_REDUCE_MAX"
                                           : "CUVIL_REDUCE_MEAN",
                           ", ", buffer("t"), ", ", buffer("out"), ", ",
                           buffer("lanes"), ", ", buffer("stage"), ");\n");
    else if (p.kind == "batch_norm")
      text += absl::StrCat(
          "  cuvil_batch_norm<float>(s, p0, p1, p2, p3, p4, p5, ",
          floatLiteral(p.epsilon), ", ", p.dim("M"), ", ", buffer("t"), ", ",
          buffer("sc"), ", ", buffer("sh"), ", ", buffer("tmp"), ", ",
          buffer("stage"), ");\n");
    else
      text += absl::StrCat(
          "  cuvil_broadcast<float>(s, p0, p1, p2, ", p.dim("M"), ", ",
          p.mode == "rows" ? "CUVIL_PER_ROW" : "CUVIL_PER_COLUMN", ", ",
          kBinaryOps.at(p.op), ", ", p.reversed ? "true" : "false", ", ",
          buffer("t"), ", ", buffer("bv"), ", ", buffer("tmp"), ", ",
          buffer("stage"), ");\n");
    return text;
  }
  if (p.kind == "binary") {
    text += absl::StrCat("  cuvil_binary<float>(p0, p1, p2, ", p.dim("n"),
                         "L, ", p.mode == "scalar" ? "true" : "false", ", ",
                         kBinaryOps.at(p.op), ", ", act, ", ", lo, ", ", hi,
                         ", ", tile[0], ", ", buffer("ta"), ", ",
                         buffer("tb"), ");\n");
    return text;
  }
  if (p.kind == "concat" || p.kind == "split") {
    // p0 is the whole; part i is its values [offset, offset + part) of
    // each row of `total` values.
    bool concat = p.kind == "concat";
    int64_t offset = 0, total = p.dim("total"), bytes = p.elementBytes;
    for (size_t i = 0; i < p.parts.size(); ++i) {
      std::string whole = absl::StrCat("p0 + ", offset);
      std::string part = absl::StrCat("p", i + 1);
      absl::StrAppendFormat(
          &text, "  cuvil_copy_rows(%s, %s, %dL, %d, %dL, %dL);\n",
          concat ? whole : part, concat ? part : whole, p.dim("outer"),
          p.parts[i] * bytes, (concat ? total : p.parts[i]) * bytes,
          (concat ? p.parts[i] : total) * bytes);
      offset += p.parts[i];
    }
    return text;
  }
  if (p.kind == "unary") {
    static const std::map<std::string, const char *> kOps = {
        {"relu", "CUVIL_RELU"},       {"clip", "CUVIL_CLIP"},
        {"sigmoid", "CUVIL_SIGMOID"}, {"tanh", "CUVIL_TANH"},
        {"exp", "CUVIL_EXP"},         {"neg", "CUVIL_NEG"},
        {"silu", "CUVIL_SILU"},       {"hardsigmoid", "CUVIL_HARDSIGMOID"},
        {"hardswish", "CUVIL_HARDSWISH"}, {"abs", "CUVIL_ABS"},
        {"erf", "CUVIL_ERF"}};
    text += absl::StrCat("  cuvil_unary<float>(p0, p1, ", p.dim("n"), "L, ",
                         kOps.at(p.op), ", ", lo, ", ", hi, ", ", tile[0],
                         ", ", buffer("ta"), ", ", buffer("tb"), ", ",
                         buffer("tc"), ", ", buffer("td"), ", ",
                         buffer("stage"), ");\n");
    return text;
  }
  if (p.kind == "pad") {
    text += "  cuvil_pad_shape s;\n";
    text += absl::StrFormat("  s.rank = %d;\n", p.gatherDims.size());
    for (size_t d = 0; d < p.gatherDims.size(); ++d)
      text += absl::StrFormat(
          "  s.odims[%d] = %d;\n  s.idims[%d] = %d;\n  s.lo[%d] = %d;\n", d,
          p.gatherDims[d], d, p.gatherStrides[d], d, p.parts[d]);
    text += absl::StrCat("  cuvil_pad<float>(s, p0, p1, ",
                         floatLiteral(p.epsilon), ", ", buffer("row"), ", ",
                         buffer("fill"), ");\n");
    return text;
  }
  text += "  cuvil_gather_shape s;\n";
  text += absl::StrFormat("  s.rank = %d;\n", p.gatherDims.size());
  for (size_t d = 0; d < p.gatherDims.size(); ++d)
    text += absl::StrFormat("  s.dims[%d] = %d;\n  s.strides[%d] = %d;\n", d,
                            p.gatherDims[d], d, p.gatherStrides[d]);
  text += absl::StrFormat("  s.offset = %d;\n", p.gatherOffset);
  text += "  cuvil_gather<float>(s, p0, p1);\n";
  return text;
}

/// layerBody for the model's precision: the library's templates
/// instantiated on half for fp16.
std::string layerCode(const MluModel &model, const Layer &layer,
                      std::map<std::string, std::string> buffers) {
  std::string text = layerBody(layer, std::move(buffers));
  if (model.half)
    absl::StrReplaceAll({{"<float>(", "<half>("}}, &text);
  return text;
}

std::string parameters(const MluModel &model, const Layer &layer) {
  std::vector<std::string> params;
  for (size_t i = 0; i < layer.pointers.size(); ++i)
    params.push_back(absl::StrCat(
        llvm::is_contained(layer.problem.byteOperands, static_cast<int>(i))
            ? "int8_t"
            : elementCType(model.half),
        " *p", i));
  return absl::StrJoin(params, ", ");
}

std::string argumentNames(const Layer &layer) {
  std::vector<std::string> names;
  for (size_t i = 0; i < layer.pointers.size(); ++i)
    names.push_back(absl::StrCat("p", i));
  return absl::StrJoin(names, ", ");
}

const char *functionTypeEnum(FunctionType type) {
  switch (type) {
  case FunctionType::Block: return "cnrtFuncTypeBlock";
  case FunctionType::Union1: return "cnrtFuncTypeUnion1";
  case FunctionType::Union2: return "cnrtFuncTypeUnion2";
  case FunctionType::Union4: return "cnrtFuncTypeUnion4";
  }
  return "cnrtFuncTypeBlock";
}

/// The largest area of `space` a layer's plan declares: one area serves
/// every kernel under cncc (one kernel runs on a core at a time).
int64_t mostBytes(const MluModel &model, l2::MemorySpace space) {
  int64_t most = kAlignBytes;
  for (const Layer &layer : model.layers)
    most = std::max(most,
                    onChipBytes(layer.plan, layer.problem.elementBytes, space));
  return most;
}

std::string describe(const Layer &layer, size_t index) {
  return absl::StrCat("layer ", index, ": ", layer.op,
                      layer.where.empty() ? "" : " at ",
                      cCommentText(layer.where));
}

} // namespace

std::string kernelsHeader(const MluModel &model) {
  std::string text = R"cuvil(// kernels.h - the launches of kernels.mlu, called by host.cpp.
// Generated by Cuvil; do not edit.
#ifndef CUVIL_MLU_KERNELS_LAUNCH_H
#define CUVIL_MLU_KERNELS_LAUNCH_H

#ifdef CUVIL_BANG_EMULATION
#include "cuvil_bang_emu.h"
#else
#include <cnrt.h>
#endif

)cuvil";
  for (size_t i = 0; i < model.layers.size(); ++i)
    absl::StrAppendFormat(&text, "void cuvil_launch_layer%d(cnrtQueue_t queue, %s);\n",
                          i, parameters(model, model.layers[i]));
  text += "\n#endif\n";
  return text;
}

std::string kernelsSource(const MluModel &model) {
  std::string text = absl::StrFormat(
      R"cuvil(// kernels.mlu - BANG C kernels of %s for %s (%s), one per layer.
// Generated by Cuvil %s; do not edit. Build with cncc (CMakeLists.txt), or
// on a host against Cuvil's emulator with -DCUVIL_BANG_EMULATION (Makefile).
#ifdef CUVIL_BANG_EMULATION
#include "cuvil_bang_emu.h"
#define CUVIL_LAUNCH(kernel, dim, type, queue, ...) \
  cuvil_emu::launch(#kernel, kernel, dim, type, queue, __VA_ARGS__)
#else
#include <bang.h>
// One NRAM area shared by every kernel (one runs on a core at a time),
// as large as the largest kernel's plan.
__nram__ char cuvil_nram_area[%d] __attribute__((aligned(128)));
#define CUVIL_NRAM(type, name, count) type *name = (type *)cuvil_nram_area
// Likewise WRAM, for the tensor unit's weights, and the cluster's SRAM,
// where Union1 kernels stage the weights their cores share.
__wram__ char cuvil_wram_area[%d] __attribute__((aligned(128)));
#define CUVIL_WRAM(type, name, count) type *name = (type *)cuvil_wram_area
__mlu_shared__ char cuvil_sram_area[%d] __attribute__((aligned(128)));
#define CUVIL_SRAM(type, name, count) type *name = (type *)cuvil_sram_area
#define CUVIL_LAUNCH(kernel, dim, type, queue, ...) \
  kernel<<<dim, type, queue>>>(__VA_ARGS__)
#endif
#include "cuvil_mlu_kernels.h"
#include "kernels.h"
)cuvil",
      cCommentText(model.name), model.chip.name, model.chip.arch,
      cCommentText(model.compilerVersion),
      mostBytes(model, l2::MemorySpace::nram),
      mostBytes(model, l2::MemorySpace::wram),
      mostBytes(model, l2::MemorySpace::sram));
  for (size_t i = 0; i < model.layers.size(); ++i) {
    const Layer &layer = model.layers[i];
    std::map<std::string, std::string> buffers;
    absl::StrAppendFormat(&text, "\n// %s\n", describe(layer, i));
    absl::StrAppendFormat(&text, "__mlu_global__ void cuvil_layer%d(%s) {\n", i,
                          parameters(model, layer));
    text += declareBuffers(layer.plan, layer.problem.elementBytes, buffers);
    text += layerCode(model, layer, buffers);
    text += "}\n\n";
    absl::StrAppendFormat(
        &text,
        "void cuvil_launch_layer%d(cnrtQueue_t queue, %s) {\n"
        "  cnrtDim3_t dim = {%d, 1, 1};\n"
        "  CUVIL_LAUNCH(cuvil_layer%d, dim, %s, queue, %s);\n}\n",
        i, parameters(model, layer), layer.plan.tasks, i,
        functionTypeEnum(layer.plan.functionType), argumentNames(layer));
  }
  return text;
}

} // namespace cuvil::mlu
