//===- Emitter.cpp - the walk over a planned level2 function --------------===//
//
// Buffers, the ops that are not kernel calls (views, copies), the dispatch
// of kernel calls to their family, the loop nests every family writes, and
// the split of the run function into parts.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/cpu/emitter/Emitter.h"

#include "cuvil/passes/SampleSeparability.h"
#include "cuvil/support/Diagnostics.h"
#include "cuvil/support/SourceEscape.h"
#include "cuvil/targets/cpu/RuntimeContract.h"

#include "absl/strings/str_join.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"

#include <algorithm>

namespace cuvil::cpu::emitter {

using namespace mlir;

//===- CWriter ------------------------------------------------------------===//

void CWriter::line(const Twine &text) {
  text_.append(2 * depth, ' ');
  text_ += text.str();
  text_ += '\n';
}

void CWriter::open(const Twine &head) {
  std::string h = head.str();
  line(h.empty() ? "{" : h + " {");
  ++depth;
}

void CWriter::close() {
  --depth;
  line("}");
}

std::string CWriter::take() { return std::exchange(text_, std::string()); }

//===- Kernel calls -------------------------------------------------------===//

InFlightDiagnostic KernelCall::error() const {
  InFlightDiagnostic diag = op.emitOpError("'");
  diag << name << "' ";
  return diag;
}

LogicalResult KernelCall::floatOnly() const {
  if (!isFloat)
    return error() << "on " << element << " is not supported by the CPU targets";
  return success();
}

namespace {

const KernelTable &kernelTable() {
  static const KernelTable table = [] {
    KernelTable t;
    addElementwiseKernels(t);
    addDataMovementKernels(t);
    addProductKernels(t);
    addConvolutionKernels(t);
    addReductionKernels(t);
    addQuantizationKernels(t);
    addTreeKernels(t);
    addRecurrentKernels(t);
    addSelectionKernels(t);
    addSamplingKernels(t);
    return t;
  }();
  return table;
}

} // namespace

//===- Emitter ------------------------------------------------------------===//

Emitter::Emitter(func::FuncOp func, const EmitOptions &options)
    : func(func), options(options) {}

void Emitter::declare(const std::string &name, const std::string &declaration) {
  declarationIndex[name] = declarations.size();
  declarations.push_back(declaration);
}

FailureOr<std::string> Emitter::indexExpr(Value value) {
  if (value == func.getArgument(0))
    return std::string("batch");
  if (auto constant = value.getDefiningOp<arith::ConstantIndexOp>())
    return std::to_string(constant.value());
  if (auto mul = value.getDefiningOp<arith::MulIOp>()) {
    FailureOr<std::string> lhs = indexExpr(mul.getLhs());
    FailureOr<std::string> rhs = indexExpr(mul.getRhs());
    if (failed(lhs) || failed(rhs))
      return failure();
    return joinProduct({*lhs, *rhs});
  }
  return emitError(value.getLoc()) << "cannot express this size in C";
}

FailureOr<Buffer> Emitter::defineBuffer(Value value, std::string pointer) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type)
    return emitError(value.getLoc())
           << "expected a buffer, got " << value.getType();
  if (cType(type.getElementType()).empty())
    return emitError(value.getLoc())
           << "element type " << type.getElementType()
           << " is not supported by the CPU targets yet";
  // On-chip memories are other targets' (FPGA, MLU): host memory only.
  if (auto space = dyn_cast_or_null<cuvil::l2::MemorySpaceAttr>(
          type.getMemorySpace());
      space && space.getValue() != cuvil::l2::MemorySpace::host)
    return emitError(value.getLoc())
           << "the CPU targets have no " << space << " memory (buffer of type "
           << type << ")";
  Buffer b{pointer, type, {}};
  if (auto layout = dyn_cast<cuvil::l2::LayoutAttr>(type.getLayout())) {
    b.block = layout.getBlockSize(1);
    if (layout.getLogical() != "NCHW" ||
        layout.getPhysical() != ("NCHW" + Twine(b.block) + "c").str() ||
        ShapedType::isDynamic(type.getDimSize(1)) ||
        type.getDimSize(1) % b.block != 0)
      return emitError(value.getLoc())
             << "the CPU targets compute on row-major and whole-block "
                "NCHW<B>c buffers, not "
             << type;
  } else if (!type.getLayout().isIdentity()) {
    return emitError(value.getLoc())
           << "the CPU targets do not support the layout of " << type;
  }
  SmallVector<Value> sizes;
  if (auto view = value.getDefiningOp<cuvil::l2::ViewOp>())
    sizes.assign(view.getSizes().begin(), view.getSizes().end());
  size_t next = 0;
  for (int64_t d : type.getShape()) {
    if (!ShapedType::isDynamic(d)) {
      b.dims.push_back(std::to_string(d));
      continue;
    }
    if (next < sizes.size()) {
      FailureOr<std::string> expr = indexExpr(sizes[next++]);
      if (failed(expr))
        return failure();
      b.dims.push_back(*expr);
    } else {
      b.dims.push_back("batch"); // Function arguments: the batch itself.
    }
  }
  buffers[value] = b;
  return b;
}

LogicalResult Emitter::declareArguments() {
  numInputs = func->getAttrOfType<IntegerAttr>("cuvil.num_inputs").getInt();
  numOutputs = func->getAttrOfType<IntegerAttr>("cuvil.num_outputs").getInt();
  for (int64_t i = 0; i < numInputs + numOutputs; ++i) {
    bool isInput = i < numInputs;
    std::string index = std::to_string(isInput ? i : i - numInputs);
    Value arg = func.getArgument(1 + i);
    auto type = cast<MemRefType>(arg.getType());
    std::string name = (isInput ? "in" : "out") + index;
    std::string ct = cType(type.getElementType());
    // The ABI's dtypes, and per-tensor quantized values as their storage.
    if (ct.empty() || dtypeName(type.getElementType()) == "unknown")
      return func.emitError("the CPU targets do not support ")
             << type.getElementType() << " tensors yet (model "
             << (isInput ? "input " : "output ") << index << ")";
    std::string constness = isInput ? "const " : "";
    declare(name, constness + ct + " *" + name + " = (" + constness + ct +
                      " *)" + (isInput ? "inputs[" : "outputs[") + index +
                      "];");
    if (failed(defineBuffer(arg, name)))
      return failure();
  }
  return success();
}

LogicalResult Emitter::run() {
  if (func.getNumArguments() < 2)
    return func.emitOpError("is not a planned level2 function");
  arenaBytes =
      cast<MemRefType>(func.getArguments().back().getType()).getNumElements();
  if (failed(declareArguments()))
    return failure();
  for (Operation &op : func.getBody().front()) {
    if (failed(emitOp(&op)))
      return failure();
    if (!c.empty())
      opCode.push_back(c.take());
  }
  return success();
}

LogicalResult Emitter::emitOp(Operation *op) {
  if (isa<arith::ConstantOp, arith::MulIOp, func::ReturnOp>(op))
    return success();
  if (auto getGlobal = dyn_cast<memref::GetGlobalOp>(op))
    return emitWeight(getGlobal);
  if (auto view = dyn_cast<cuvil::l2::ViewOp>(op))
    return emitView(view);
  if (auto copy = dyn_cast<cuvil::l2::CopyOp>(op))
    return emitCopy(copy);
  if (auto ifOp = dyn_cast<cuvil::l2::IfOp>(op))
    return emitIf(ifOp);
  if (auto loop = dyn_cast<cuvil::l2::LoopOp>(op))
    return emitLoop(loop);
  if (auto insert = dyn_cast<cuvil::l2::InsertRowOp>(op))
    return emitInsertRow(insert);
  if (auto call = dyn_cast<cuvil::l2::UKernelCallOp>(op)) {
    c.line("/* " + cCommentText(call.getKernel()) + " at " +
           cCommentText(formatLocation(call.getLoc())) + " */");
    return emitKernel(call);
  }
  if (auto kernel = dyn_cast<cuvil::l2::KernelOp>(op)) {
    c.line("/* " + cCommentText(kernel.getName()) + " at " +
           cCommentText(formatLocation(kernel.getLoc())) + " */");
    return emitMap(kernel);
  }
  return op->emitOpError("is not supported by the CPU targets' C emitter");
}

LogicalResult Emitter::emitView(cuvil::l2::ViewOp view) {
  std::string name = "v" + std::to_string(buffers.size());
  std::string ct = cType(view.getType().getElementType());
  if (ct.empty())
    return emitError(view.getLoc(), "the CPU targets do not support ")
           << view.getType().getElementType() << " tensors yet";
  declare(name, ct + " *" + name + " = (" + ct + " *)(arena + " +
                    std::to_string(view.getOffset()) + ");");
  return success(succeeded(defineBuffer(view.getResult(), name)));
}

LogicalResult Emitter::emitCopy(cuvil::l2::CopyOp copy) {
  if (copy.isTransfer())
    return copy.emitOpError("memory-space changes are not supported by the "
                            "CPU targets");
  const Buffer &from = buffer(copy.getSource()), &to = buffer(copy.getTarget());
  if (!copy.isReorder()) {
    c.line("memcpy(" + to.name + ", " + from.name + ", (size_t)" + bytes(from) +
           ");");
    return success();
  }
  // NCHW <-> NCHW<block>c (the only layouts buffers here have).
  if (from.block > 1 && to.block > 1)
    return copy.emitOpError("reorders between two blocked layouts are not "
                            "supported by the CPU targets");
  const Buffer &blocked = from.block > 1 ? from : to;
  c.line("cuvil_reorder_f32(" + std::string(to.block > 1 ? "1" : "0") + ", " +
         blocked.dims[0] + ", " + blocked.dims[1] + ", " +
         joinProduct({blocked.dims[2], blocked.dims[3]}) + ", " +
         std::to_string(blocked.block) + ", " + from.name + ", " + to.name +
         ");");
  return success();
}

LogicalResult Emitter::emitKernel(cuvil::l2::UKernelCallOp op) {
  KernelCall call;
  call.op = op;
  call.name = op.getKernel();
  for (Value v : op.getInputs())
    call.ins.push_back(&buffers[v]);
  call.out = &buffers[op.getOutputs()[0]];
  if (op.getOutputs().size() > 1)
    call.scratch = buffers[op.getOutputs()[1]].name;
  call.storage = call.out->type.getElementType();
  // Half types compute in float; loads and stores convert.
  call.element = call.storage.isF16() || call.storage.isBF16()
                     ? Float32Type::get(op.getContext())
                     : call.storage;
  call.T = cType(call.element);
  call.f = mathSuffix(call.element);
  call.isFloat = isa<FloatType>(call.element);
  // Blocked (NCHW<B>c) buffers only reach the kernels that have a blocked
  // form (cuvil-cpu-assign-layouts places them). A plain elementwise loop
  // reads a per-channel operand's bytes as they are in any layout.
  if (blockedForm(call.name) == BlockedForm::Elementwise &&
      call.out->block <= 1)
    for (const Buffer *&b : call.ins)
      b = plainView(*b);
  bool anyBlocked = call.out->block > 1 ||
                    llvm::any_of(call.ins, [](const Buffer *b) {
                      return b->block > 1;
                    });
  if (anyBlocked && blockedForm(call.name) == BlockedForm::None)
    return call.error() << "has no kernel for blocked layouts on the CPU "
                           "targets";
  if (anyBlocked && blockedForm(call.name) == BlockedForm::Elementwise &&
      (call.out->block <= 1 ||
       llvm::any_of(call.ins, [&](const Buffer *b) {
         return blockedRead(*b, broadcastSources(*b, *call.out), *call.out) ==
                BlockedRead::None;
       })))
    return call.error() << "on blocked layouts must read each operand in the "
                           "output's layout and shape, per channel, or as "
                           "one element";
  cuvil::l2::EpilogueAttr epilogue = op.getEpilogueAttr();
  if (epilogue && epilogue.has(cuvil::l2::EpilogueStep::quantize) &&
      call.name != "quantized_conv2d" && call.name != "quantized_matmul")
    return call.error() << "cannot requantize its results on the CPU targets "
                           "(int8 convolutions and linear layers can)";
  if (epilogue && epilogue.has(cuvil::l2::EpilogueStep::add)) {
    // A quantized residual is read dequantized, by the int8 convolutions,
    // from 8 bits per tensor (cuvil_epilogue's residual8).
    Type residual = call.ins.back()->type.getElementType();
    auto q = dyn_cast<quant::UniformQuantizedType>(residual);
    if (isa<quant::QuantizedType>(residual) &&
        (call.name != "quantized_conv2d" || !q ||
         q.getStorageTypeIntegralWidth() != 8 || !q.getExpressedType().isF32()))
      return call.error() << "cannot add a residual of " << residual
                          << " on the CPU targets (int8 convolutions add "
                             "8-bit residuals quantized per tensor)";
  }
  auto it = kernelTable().find(call.name);
  if (it == kernelTable().end())
    return call.error() << "is not supported by the CPU targets yet";
  // A reduced-precision product (acc_type, or float16 operands) checks its
  // own element types.
  if (it->second.f32Only && !call.op.getParam("acc_type") &&
      !isF16Product(call.op)) {
    // Integer inputs are indices; everything else is float32.
    SmallVector<const Buffer *> checked(llvm::make_filter_range(
        call.ins, [](const Buffer *b) {
          return !b->type.getElementType().isIntOrIndex();
        }));
    checked.push_back(call.out);
    for (const Buffer *b : checked)
      if (!b->type.getElementType().isF32())
        return call.error() << "on " << b->type.getElementType()
                            << " is not supported by the CPU targets yet";
  }
  return it->second.emit(*this, call);
}

//===- Loops --------------------------------------------------------------===//

void Emitter::emitLoopNest(
    const std::vector<std::string> &dims,
    const std::function<void(ArrayRef<std::string>)> &inner) {
  std::vector<std::string> vars;
  // A parallel map's units: its first two dimensions (of three or more) or
  // first (of two) as one loop over [begin_, end_), each index by / and %.
  size_t fused = !units ? 0 : dims.size() >= 3 ? 2 : dims.size() == 2 ? 1 : 0;
  if (fused) {
    std::string u = tmp();
    *units = fused == 2 ? joinProduct({dims[0], dims[1]}) : dims[0];
    units = nullptr;
    c.open("for (int64_t " + u + " = begin_; " + u + " < end_; ++" + u + ")");
    vars.push_back(tmp());
    if (fused == 2) {
      vars.push_back(tmp());
      c.line("const int64_t " + vars[0] + " = " + u + " / (" + dims[1] + ");");
      c.line("const int64_t " + vars[1] + " = " + u + " % (" + dims[1] + ");");
    } else {
      c.line("const int64_t " + vars[0] + " = " + u + ";");
    }
  }
  for (size_t d = fused; d < dims.size(); ++d) {
    std::string v = tmp();
    c.open("for (int64_t " + v + " = 0; " + v + " < " + dims[d] + "; ++" + v +
           ")");
    vars.push_back(v);
  }
  if (dims.empty())
    c.open();
  inner(vars);
  size_t loops = dims.size() - fused + (fused ? 1 : 0);
  for (size_t i = 0; i < std::max<size_t>(loops, 1); ++i)
    c.close();
}

DimSources broadcastSources(const Buffer &b, const Buffer &out) {
  size_t offset = out.dims.size() - b.dims.size();
  DimSources s;
  for (size_t d = 0; d < b.dims.size(); ++d)
    s.push_back(b.dims[d] == "1" && out.dims[offset + d] != "1"
                    ? -1
                    : static_cast<int64_t>(offset + d));
  return s;
}

BlockedRead blockedRead(const Buffer &b, ArrayRef<int64_t> sources,
                        const Buffer &out) {
  auto identity = [&] {
    for (size_t d = 0; d < sources.size(); ++d)
      if (sources[d] != static_cast<int64_t>(d))
        return false;
    return true;
  };
  if (out.dims.size() != 4 || out.block <= 1)
    return BlockedRead::None;
  if (b.dims == out.dims && b.block == out.block && identity())
    return BlockedRead::Same;
  if (llvm::all_of(b.dims, [](const std::string &d) { return d == "1"; }))
    return BlockedRead::Single;
  size_t rank = b.dims.size();
  if ((rank != 3 && rank != 4) || b.dims[rank - 3] != out.dims[1] ||
      b.dims[rank - 2] != "1" || b.dims[rank - 1] != "1" ||
      sources[rank - 3] != 1)
    return BlockedRead::None;
  if (rank == 4 && sources[0] == 0)
    return BlockedRead::BatchChannel;
  return rank == 3 || b.dims[0] == "1" ? BlockedRead::Channel
                                       : BlockedRead::None;
}

void Emitter::emitElementwise(
    const Buffer &out, ArrayRef<const Buffer *> ins,
    const std::function<std::string(ArrayRef<std::string>)> &expr) {
  SmallVector<DimSources> sources;
  for (const Buffer *b : ins)
    sources.push_back(broadcastSources(*b, out));
  emitParallelLoop(out, ins, sources,
                   [&](ArrayRef<std::string> index, const std::string &o) {
                     std::vector<std::string> elems;
                     for (auto [b, i] : llvm::zip(ins, index))
                       elems.push_back(load(*b, b->name + "[" + i + "]"));
                     c.line(out.name + "[" + o +
                            "] = " + store(out, expr(elems)) + ";");
                   });
}

void Emitter::emitParallelLoop(
    const Buffer &out, ArrayRef<const Buffer *> ins,
    ArrayRef<DimSources> sources,
    const std::function<void(ArrayRef<std::string>, const std::string &)>
        &inner) {
  // Operands in the output's own blocked layout make one flat loop too
  // (the blocked nest's innermost 16 or 8 lanes are too short for clang to
  // vectorize once its loads and byte stores need alias checks).
  if (out.block > 1 &&
      !llvm::all_of(llvm::zip(ins, sources), [&](auto operand) {
        return blockedRead(*std::get<0>(operand), std::get<1>(operand), out) ==
               BlockedRead::Same;
      })) {
    emitBlockedLoop(out, ins, sources, inner);
    return;
  }
  bool flat = true;
  for (auto [b, s] : llvm::zip(ins, sources)) {
    flat &= b->dims == out.dims;
    for (size_t d = 0; d < s.size(); ++d)
      flat &= s[d] == static_cast<int64_t>(d);
  }
  if (flat && units) {
    // Chunks of kParallelChunk elements, the last one short.
    std::string u = tmp(), i = tmp(), end = tmp(), n = numel(out);
    std::string chunk = std::to_string(kParallelChunk);
    *units = "((" + n + " + " + chunk + " - 1) / " + chunk + ")";
    units = nullptr;
    c.open("for (int64_t " + u + " = begin_; " + u + " < end_; ++" + u + ")");
    c.line("const int64_t " + end + " = (" + u + " + 1) * " + chunk + " < " +
           n + " ? (" + u + " + 1) * " + chunk + " : " + n + ";");
    c.open("for (int64_t " + i + " = " + u + " * " + chunk + "; " + i + " < " +
           end + "; ++" + i + ")");
    inner(std::vector<std::string>(ins.size(), i), i);
    c.close();
    c.close();
    return;
  }
  if (flat) {
    std::string i = tmp();
    c.open("for (int64_t " + i + " = 0; " + i + " < " + numel(out) + "; ++" +
           i + ")");
    inner(std::vector<std::string>(ins.size(), i), i);
    c.close();
    return;
  }
  emitLoopNest(out.dims, [&](ArrayRef<std::string> vars) {
    auto index = [&](const Buffer &b, ArrayRef<int64_t> s) {
      std::vector<std::string> own = strides(b), terms;
      for (size_t d = 0; d < s.size(); ++d)
        if (s[d] >= 0)
          terms.push_back(own[d] == "1" ? vars[s[d]]
                                        : vars[s[d]] + "*" + own[d]);
      return joinSum(terms);
    };
    std::vector<std::string> indices;
    for (auto [b, s] : llvm::zip(ins, sources))
      indices.push_back(index(*b, s));
    DimSources identity;
    for (size_t d = 0; d < out.dims.size(); ++d)
      identity.push_back(static_cast<int64_t>(d));
    inner(indices, index(out, identity));
  });
}

const Buffer *Emitter::plainView(const Buffer &b) {
  size_t rank = b.dims.size();
  if (b.block <= 1 || rank != 4 || b.dims[2] != "1" || b.dims[3] != "1")
    return &b;
  plainViews.push_back(b);
  plainViews.back().block = 1;
  return &plainViews.back();
}

void Emitter::emitBlockedLoop(
    const Buffer &out, ArrayRef<const Buffer *> ins,
    ArrayRef<DimSources> sources,
    const std::function<void(ArrayRef<std::string>, const std::string &)>
        &inner) {
  // [N][C/B][H*W][B], the lanes innermost (clang vectorizes them); a
  // channel's value is at (n * C/B + cb) * B + lane in any layout.
  std::string B = std::to_string(out.block);
  std::string blocks = "(" + out.dims[1] + " / " + B + ")";
  std::string plane = joinProduct({out.dims[2], out.dims[3]});
  emitLoopNest({out.dims[0], blocks, plane, B},
               [&](ArrayRef<std::string> v) {
                 std::string channel = "(" + v[0] + " * " + blocks + " + " +
                                       v[1] + ")";
                 std::string at =
                     "(" + channel + " * " + plane + " + " + v[2] + ") * " +
                     B + " + " + v[3];
                 std::vector<std::string> indices;
                 for (auto [b, s] : llvm::zip(ins, sources))
                   switch (blockedRead(*b, s, out)) {
                   case BlockedRead::Same:
                   case BlockedRead::None: // refused before emitting
                     indices.push_back(at);
                     break;
                   case BlockedRead::BatchChannel:
                     indices.push_back(channel + " * " + B + " + " + v[3]);
                     break;
                   case BlockedRead::Channel:
                     indices.push_back(v[1] + " * " + B + " + " + v[3]);
                     break;
                   case BlockedRead::Single:
                     indices.push_back("0");
                     break;
                   }
                 inner(indices, at);
               });
}

void Emitter::callWithEpilogue(const std::string &call,
                               const std::string &initializer) {
  if (initializer.empty()) {
    c.line(call + "NULL);");
    return;
  }
  c.open();
  c.line("const cuvil_epilogue epilogue = " + initializer + ";");
  c.line(call + "&epilogue);");
  c.close();
}

//===- The run function ---------------------------------------------------===//

namespace {

/// Indices (into `index`) of the identifiers of `code` it holds, sorted.
std::vector<size_t> identifiersIn(StringRef code,
                                  const llvm::StringMap<size_t> &index) {
  std::vector<size_t> used;
  for (size_t i = 0; i < code.size();) {
    if (!std::isalpha(static_cast<unsigned char>(code[i])) && code[i] != '_') {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < code.size() &&
           (std::isalnum(static_cast<unsigned char>(code[j])) || code[j] == '_'))
      ++j;
    auto it = index.find(code.slice(i, j));
    if (it != index.end())
      used.push_back(it->second);
    i = j;
  }
  llvm::sort(used);
  used.erase(std::unique(used.begin(), used.end()), used.end());
  return used;
}

} // namespace

std::string Emitter::parallelMapFunctions() const {
  if (parallelMaps.empty())
    return "";
  // What a run part hands its maps: everything their pointers derive from.
  std::string text = "typedef struct {\n  int64_t batch;\n"
                     "  const void *const *inputs;\n  void *const *outputs;\n"
                     "  unsigned char *arena;\n} cuvil_map_args;\n\n";
  for (const auto &[name, body] : parallelMaps) {
    text += "static void " + name +
            "(void *p_, int64_t begin_, int64_t end_) {\n"
            "  const cuvil_map_args *a_ = (const cuvil_map_args *)p_;\n"
            "  const int64_t batch = a_->batch;\n"
            "  const void *const *inputs = a_->inputs;\n"
            "  void *const *outputs = a_->outputs;\n"
            "  unsigned char *arena = a_->arena;\n"
            "  (void)batch;\n  (void)inputs;\n  (void)outputs;\n"
            "  (void)arena;\n";
    for (size_t index : identifiersIn(body, declarationIndex))
      text += "  " + declarations[index] + "\n";
    text += body + "}\n\n";
  }
  return text;
}

bool Emitter::sampleParallel() const {
  return func->hasAttr(kSampleParallelAttr);
}

std::string Emitter::runFunctions() const {
  // Parts of at most this many ops or bytes of C: large enough that a call
  // per part costs nothing, small enough that clang's time stays linear in
  // the model (a 4,000-op function took 56 s in one piece).
  constexpr size_t kPartOps = 64, kPartBytes = 32 << 10;
  const char *params = "(int64_t batch, const void *const *inputs,\n"
                       "    void *const *outputs, unsigned char *arena,\n"
                       "    cuvil_pool *pool)";
  std::string parts = parallelMapFunctions(), calls;
  int numParts = 0;
  for (size_t begin = 0; begin < opCode.size();) {
    size_t end = begin, bytes = 0;
    while (end < opCode.size() && end - begin < kPartOps && bytes < kPartBytes)
      bytes += opCode[end++].size();
    std::string code;
    for (size_t i = begin; i < end; ++i)
      code += opCode[i];
    std::string name = "cuvil_run_part" + std::to_string(numParts++);
    // Not inlined back into one function, which would undo the split.
    parts += "static CUVIL_NOINLINE int " + name + params + " {\n"
             "  (void)batch;\n  (void)inputs;\n  (void)outputs;\n"
             "  (void)arena;\n  (void)pool;\n";
    // The pointers this part uses, declared in definition order.
    for (size_t index : identifiersIn(code, declarationIndex))
      parts += "  " + declarations[index] + "\n";
    parts += code + "  return CUVIL_OK;\n}\n\n";
    calls += "  if ((status = " + name +
             "(batch, inputs, outputs, arena, pool)) != CUVIL_OK)\n"
             "    return status;\n";
    begin = end;
  }
  const char *entryParams = "(int64_t batch, const void *const *inputs,\n"
                            "    void *const *outputs, unsigned char *arena,\n"
                            "    int arenas, cuvil_pool *pool)";
  std::string batchFunction = "static int cuvil_run_batch" +
                              std::string(params) +
                              " {\n  int status = CUVIL_OK;\n" + calls +
                              "  return status;\n}\n\n";
  std::string entry = "CUVIL_INTERNAL int cuvil_internal_run" +
                      std::string(entryParams) + " {\n";
  if (!sampleParallel())
    return parts + batchFunction + entry +
           "  (void)arenas;\n"
           "  return cuvil_run_batch(batch, inputs, outputs, arena, pool);\n"
           "}\n";
  return parts + batchFunction + sampleParallelEntry(entry);
}

std::string Emitter::sampleParallelEntry(const std::string &entry) const {
  func::FuncOp function = func; // Op handles have non-const accessors.
  // Bytes of one sample of each argument: 0 for a batch-independent one.
  auto sampleBytes = [&](int64_t first, int64_t count) {
    std::vector<std::string> bytes;
    for (int64_t i = 0; i < count; ++i) {
      auto type =
          cast<MemRefType>(function.getArgument(1 + first + i).getType());
      int64_t sample = 0;
      if (type.getRank() > 0 && type.isDynamicDim(0)) {
        sample = elementBytes(type.getElementType());
        for (int64_t d : type.getShape().drop_front())
          sample *= d;
      }
      bytes.push_back(std::to_string(sample));
    }
    return "{" + absl::StrJoin(bytes, ", ") + (bytes.empty() ? "0" : "") +
           "}";
  };
  return "static const size_t cuvil_input_sample_bytes[] = " +
         sampleBytes(0, numInputs) +
         ";\nstatic const size_t cuvil_output_sample_bytes[] = " +
         sampleBytes(numInputs, numOutputs) + ";\n\n" + entry +
         "  static const cuvil_sample_model model = {\n"
         "      cuvil_run_batch, " + std::to_string(numInputs) + ", " +
         std::to_string(numOutputs) +
         ", cuvil_input_sample_bytes, cuvil_output_sample_bytes,\n"
         "      (CUVIL_MODEL_WORKSPACE_SIZE + 63) / 64 * 64};\n"
         "  return cuvil_run_samples(&model, batch, inputs, outputs, arena, "
         "arenas, pool);\n}\n";
}

} // namespace cuvil::cpu::emitter
