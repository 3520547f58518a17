//===- AssignLayouts.cpp - blocked channel layouts for convolution nets ---===//
//
// The CPU targets' direct convolutions run at the FMA peak when activations
// are channel-blocked, NCHW<B>c with B the target's vector lanes (16 for
// AVX-512, 8 for AVX2, 4 for NEON): a vector of B output channels per
// register, one
// broadcast input per FMA (depthwise: one vector FMA per tap). This pass
// chooses, on level2 buffers, which activations take that layout:
//
//  - Buffers that must share a layout form a class: a convolution's output
//    and its fused residual, a depthwise convolution's input and output, a
//    pooling's input and output, the operands of a map without broadcasts.
//  - A class is blocked when a blockable convolution produces one of its
//    members and every member can be: a [N, C, H, W] f32 intermediate with C
//    a multiple of the block, every access a kernel with a blocked form. The
//    block is B, or B/2 (down to the target's smallest block worth its
//    kernels: 8 on x86, 4 on aarch64; #cuvil.target's config
//    min_channel_block) for channels that are multiples of that only
//    (MobileNet's 24 and 144), and that divides a grouped convolution's
//    channels per group (ResNeXt's 8). An ungrouped or grouped convolution
//    reads either layout
//    (a plain input as blocks of one channel), global pooling writes its
//    plain [N, C] from blocked input directly, and a returned value is
//    reordered into the output buffer. So a network of convolutions, pools
//    and fused epilogues needs no reorder at all. A kernel with no blocked
//    form (a flatten, a broadcast) reads a plain copy of a blocked
//    intermediate, reordered once before its first such reader: one pass
//    over the tensor, where keeping the class plain would put every
//    convolution upstream of it (AlexNet's and VGG's whole feature
//    extractor, by the rule below) on im2col.
//  - Direct convolutions get their weights packed at compile time in the
//    kernels' layout and (ungrouped) the zero-padded image as scratch
//    instead of im2col's; Winograd keeps its own.
//
//===----------------------------------------------------------------------===//

#include "cuvil/ir/CuvilAttrs.h"
#include "cuvil/ir/CuvilL2Ops.h"
#include "cuvil/passes/PassStatistics.h"
#include "cuvil/support/Diagnostics.h"
#include "cuvil/support/ElementsBytes.h"
#include "cuvil/targets/cpu/RuntimeContract.h"
#include "cuvil/targets/cpu/transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/MapVector.h"

#include <cstring>
#include <map>
#include <numeric>
#include <tuple>

namespace cuvil::cpu {
#define GEN_PASS_DEF_CUVILCPUASSIGNLAYOUTS
#include "cuvil/targets/cpu/transforms/Passes.h.inc"
} // namespace cuvil::cpu

using namespace mlir;
using cuvil::cpu::BlockedForm;
using cuvil::cpu::channelBlock;
using cuvil::l2::UKernelCallOp;

namespace {

/// The residual a convolution's fused epilogue adds (its last input), or null.
Value residualOf(UKernelCallOp call) {
  cuvil::l2::EpilogueAttr epilogue = call.getEpilogueAttr();
  if (!epilogue || !epilogue.has(cuvil::l2::EpilogueStep::add))
    return {};
  return call.getInputs().back();
}

bool isWinograd(UKernelCallOp call) {
  return call.getAlgorithm() == cuvil::l2::Algorithm::winograd_f4x3;
}

/// The constant global a buffer reads, or null.
memref::GlobalOp constantGlobal(Value value, SymbolTable &symbols) {
  auto get = value.getDefiningOp<memref::GetGlobalOp>();
  if (!get)
    return {};
  auto global = symbols.lookup<memref::GlobalOp>(get.getName());
  if (!global || !global.getConstant() || !global.getInitialValue())
    return {};
  return global;
}

struct AssignLayouts : cuvil::cpu::impl::CuvilCpuAssignLayoutsBase<AssignLayouts> {
  using CuvilCpuAssignLayoutsBase::CuvilCpuAssignLayoutsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    cuvil::l1::TargetAttr target = cuvil::l1::TargetAttr::lookupOrDefault(module);
    int64_t lanes = block;
    if (lanes == 0)
      lanes = target.getVectorBits() / 32;
    // Below 8 lanes (SSE) a block buys too little to pay for x86's kernels;
    // NEON's 4-lane tiles pay (the target says so).
    minBlock = 8;
    if (mlir::DictionaryAttr config = target.getConfig())
      if (auto min = config.getAs<IntegerAttr>("min_channel_block"))
        minBlock = std::max<int64_t>(min.getInt(), 1);
    if (lanes < minBlock)
      return;
    this->lanes = lanes;
    SymbolTable symbols(module);
    packed.clear();
    for (auto func : module.getOps<func::FuncOp>())
      assign(func, lanes, symbols);
  }

  /// The smallest channel block the target has kernels worth using for, and
  /// the target's block (its 32-bit lanes, or the pass option).
  int64_t minBlock = 8, lanes = 16;

  /// Packed weights by (original global, input block, output block): a
  /// weight shared by convolutions is packed once.
  std::map<std::tuple<Operation *, int64_t, int64_t>, memref::GlobalOp> packed;

  /// An element type the blocked kernels read and write: float32, or 8 bits
  /// quantized per tensor (the int8 convolutions and (de)quantize loops).
  static bool blockableElement(Type type) {
    if (type.isF32())
      return true;
    auto q = dyn_cast<quant::UniformQuantizedType>(type);
    return q && q.getStorageTypeIntegralWidth() == 8;
  }

  /// C of a [N, C, H, W] intermediate (a memref.alloc) of a blockable
  /// element type with a static image, or 0 for any other buffer.
  static int64_t channels(Value value) {
    auto type = dyn_cast<MemRefType>(value.getType());
    if (!type || !value.getDefiningOp<memref::AllocOp>() ||
        type.getRank() != 4 || !blockableElement(type.getElementType()) ||
        !type.getLayout().isIdentity() ||
        llvm::any_of(type.getShape().drop_front(), ShapedType::isDynamic))
      return 0;
    return type.getDimSize(1);
  }

  static bool isDepthwise(UKernelCallOp call) {
    auto in = cast<MemRefType>(call.getInputs()[0].getType());
    auto out = cast<MemRefType>(call.getOutputs()[0].getType());
    return in.getRank() == 4 && out.getRank() == 4 &&
           cuvil::cpu::isDepthwiseConv(call.getIntParam("groups", 1),
                                       in.getDimSize(1), out.getDimSize(1));
  }

  /// A grouped convolution that is not depthwise (ResNeXt, RegNet): the
  /// float32 direct kernel computes it group by group when the blocks
  /// divide the groups' widths.
  static bool isGroupedDirect(UKernelCallOp call) {
    return call.getKernel() == "conv2d" && call.getIntParam("groups", 1) != 1 &&
           !isDepthwise(call);
  }

  /// A convolution the blocked kernels compute: f32 with a static image,
  /// ungrouped, depthwise (one filter per channel) or (float32) grouped,
  /// and (for the direct kernels) constant weights to pack.
  bool blockableConv(UKernelCallOp call, SymbolTable &symbols) const {
    return unblockable(call, symbols).empty();
  }

  /// Why the blocked kernels cannot compute `call`, or "" if they can.
  StringRef unblockable(UKernelCallOp call, SymbolTable &symbols) const {
    bool quantized = isQuantized(call);
    if ((call.getKernel() != "conv2d" && !quantized) ||
        call.getInputs().size() < 2)
      return "not a convolution";
    // The int8 and bfloat16 tiles take blocks of 8 or 16 channels.
    if ((quantized || isBf16(call)) && lanes < 8)
      return "the int8 and bfloat16 tiles need 8 or 16 lanes";
    if (call.getIntParam("groups", 1) != 1 && !isDepthwise(call) &&
        (quantized || isBf16(call)))
      return "the int8 and bfloat16 tiles are ungrouped or depthwise";
    auto in = cast<MemRefType>(call.getInputs()[0].getType());
    if (!(quantized ? blockableElement(in.getElementType())
                    : in.getElementType().isF32()) ||
        in.getRank() != 4)
      return "not a float32 (or 8-bit) NCHW image";
    if (llvm::any_of(in.getShape().drop_front(), ShapedType::isDynamic))
      return "its image size is only known at run time";
    // An int8 convolution's weights are constant (level1 folds only those);
    // cuvil-cpu-pack-quantized-weights packs them for the algorithm, and a
    // bfloat16 one's (which reads float32 once its cast is fused).
    if (!quantized && !isWinograd(call) &&
        !constantGlobal(call.getInputs()[1], symbols))
      return "its weights are computed at run time (the tiles read weights "
             "packed at compile time)";
    return "";
  }

  static bool isQuantized(UKernelCallOp call) {
    return call.getKernel() == "quantized_conv2d";
  }

  /// A bfloat16 convolution (acc_type): like an int8 one, its weights are
  /// packed for its layouts by cuvil-cpu-pack-quantized-weights.
  static bool isBf16(UKernelCallOp call) {
    return call.getKernel() == "conv2d" && call.getParam("acc_type");
  }

  /// The quantization loops are elementwise on per-tensor types only (a
  /// per-axis one indexes its scales by coordinate).
  static bool perTensorQuantization(UKernelCallOp call) {
    StringRef k = call.getKernel();
    if (k != "quantize" && k != "dequantize" && k != "requantize")
      return true;
    return llvm::all_of(call->getOperands(), [](Value v) {
      auto type = dyn_cast<MemRefType>(v.getType());
      return type && !isa<quant::UniformQuantizedPerAxisType>(type.getElementType());
    });
  }

  /// An elementwise operand whose bytes are the same in every layout of a
  /// [N, C, H, W] output: one element, or one per channel ([N or 1, C, 1, 1]
  /// or [C, 1, 1]: a squeeze-excitation scale, a per-channel parameter).
  static bool layoutFree(MemRefType t, MemRefType out) {
    if (t.hasStaticShape() && t.getNumElements() == 1)
      return true;
    if (out.getRank() != 4 || t.getRank() < 3 || t.getRank() > 4 ||
        ShapedType::isDynamic(out.getDimSize(1)))
      return false;
    ArrayRef<int64_t> s = t.getShape().take_back(3);
    bool batch = t.getRank() == 3 || t.getDimSize(0) == 1 ||
                 t.getDimSize(0) == out.getDimSize(0);
    return batch && s[0] == out.getDimSize(1) && s[1] == 1 && s[2] == 1;
  }

  /// The operands of an elementwise kernel (a ukernel of the Elementwise
  /// form, or a map) that share the output's layout: those of its shape.
  /// Fails when another operand broadcasts in a way only row-major
  /// indexing computes.
  static FailureOr<SmallVector<Value>> sameLayoutOperands(ValueRange inputs,
                                                          Value out) {
    auto outType = cast<MemRefType>(out.getType());
    SmallVector<Value> same;
    for (Value v : inputs) {
      auto type = dyn_cast<MemRefType>(v.getType());
      if (!type)
        return failure();
      if (type.getShape() == outType.getShape())
        same.push_back(v);
      else if (!layoutFree(type, outType))
        return failure();
    }
    return same;
  }

  /// A [N, C, H, W] kernel whose other inputs are [C] parameters (an
  /// unfolded batch norm: DenseNet's, after a concatenation).
  static bool perChannelParameters(UKernelCallOp call) {
    auto in = cast<MemRefType>(call.getInputs()[0].getType());
    return in.getRank() == 4 &&
           llvm::all_of(call.getInputs().drop_front(), [&](Value v) {
             auto type = cast<MemRefType>(v.getType());
             return type.getRank() == 1 &&
                    type.getDimSize(0) == in.getDimSize(1);
           });
  }

  /// A reduction over exactly H and W of a [N, C, H, W] (x.mean([2, 3])):
  /// on blocks it is global pooling.
  static bool spatialReduction(UKernelCallOp call) {
    auto in = cast<MemRefType>(call.getInputs()[0].getType());
    SmallVector<int64_t> axes = call.getIntsParam("axes", {});
    for (int64_t &a : axes)
      a = a < 0 ? a + in.getRank() : a;
    llvm::sort(axes);
    return in.getRank() == 4 && axes == SmallVector<int64_t>{2, 3};
  }

  /// A concat or split along C of [N, C, H, W] tensors.
  static bool alongChannels(UKernelCallOp call) {
    auto out = cast<MemRefType>(call.getOutputs()[0].getType());
    int64_t axis = call.getIntParam("axis", 0);
    return out.getRank() == 4 && (axis == 1 || axis == -3);
  }

  /// A blockable convolution that writes a model output (float32) in place
  /// writes a new intermediate instead, copied into the output after it:
  /// its class may then be blocked, the copy a reorder. Returns the
  /// (intermediate, copy) pairs; restoreOutputs undoes the plain ones.
  SmallVector<std::pair<Value, cuvil::l2::CopyOp>>
  redirectOutputs(func::FuncOp func, SymbolTable &symbols) {
    SmallVector<std::pair<Value, cuvil::l2::CopyOp>> redirected;
    Block &body = func.getBody().front();
    for (auto call : llvm::to_vector(func.getOps<UKernelCallOp>())) {
      Value out = call.getOutputs()[0];
      auto arg = dyn_cast<BlockArgument>(out);
      auto type = cast<MemRefType>(out.getType());
      if (!arg || arg.getOwner() != &body || !type.getElementType().isF32() ||
          cuvil::cpu::blockedForm(call.getKernel()) != BlockedForm::Conv ||
          !blockableConv(call, symbols) || type.getRank() != 4)
        continue;
      // N as the input's: its alloc's size, or the batch (argument 0).
      SmallVector<Value> sizes;
      if (type.isDynamicDim(0)) {
        auto input = call.getInputs()[0].getDefiningOp<memref::AllocOp>();
        if (input && input.getDynamicSizes().size() == 1)
          sizes.push_back(input.getDynamicSizes()[0]);
        else
          sizes.push_back(body.getArgument(0));
      }
      if (llvm::any_of(type.getShape().drop_front(), ShapedType::isDynamic))
        continue;
      OpBuilder builder(call);
      auto alloc = memref::AllocOp::create(builder, call.getLoc(), type, sizes,
                                           builder.getI64IntegerAttr(64));
      call.getOutputsMutable()[0].assign(alloc);
      builder.setInsertionPointAfter(call);
      auto copy = cuvil::l2::CopyOp::create(builder, call.getLoc(), alloc, out);
      redirected.push_back({alloc, copy});
    }
    return redirected;
  }

  /// Writes the outputs of the redirected convolutions that stayed plain in
  /// place again.
  static void restoreOutputs(
      ArrayRef<std::pair<Value, cuvil::l2::CopyOp>> redirected,
      const llvm::DenseMap<Value, int64_t> &blocked) {
    for (auto [temporary, copy] : redirected)
      if (!blocked.contains(temporary))
        dropCopy(copy, copy.getTarget());
  }

  /// Erases `copy` and the buffer on its other side than `kept` (an
  /// allocation), whose uses read or write `kept` instead.
  static void dropCopy(cuvil::l2::CopyOp copy, Value kept) {
    Value gone = copy.getSource() == kept ? copy.getTarget() : copy.getSource();
    copy.erase();
    gone.replaceAllUsesWith(kept);
    gone.getDefiningOp()->erase();
  }

  /// Whether one kernel writes `v` and everything else only reads it whole:
  /// then a copy before its first reader holds what every later reader
  /// reads.
  static bool writtenOnce(Value v) {
    int writers = 0;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      unsigned n = use.getOperandNumber();
      if (auto call = dyn_cast<UKernelCallOp>(user))
        writers += n >= call.getInputs().size();
      else if (auto kernel = dyn_cast<cuvil::l2::KernelOp>(user))
        writers += n >= kernel.getInputs().size();
      else if (auto copy = dyn_cast<cuvil::l2::CopyOp>(user))
        writers += copy.getTarget() == v;
      else
        return false; // A view, or anything else that may alias it.
    }
    return writers == 1;
  }

  /// Reads the intermediates that stayed plain directly again (readPlain's
  /// copies of them, and those copies' buffers, go).
  static void
  dropPlainCopies(const llvm::MapVector<Value, cuvil::l2::CopyOp> &copies,
                  const llvm::DenseMap<Value, int64_t> &blocked) {
    for (auto [source, copy] : copies)
      if (!blocked.contains(source))
        dropCopy(copy, source);
  }

  void assign(func::FuncOp func, int64_t lanes, SymbolTable &symbols) {
    SmallVector<std::pair<Value, cuvil::l2::CopyOp>> redirected =
        redirectOutputs(func, symbols);
    llvm::EquivalenceClasses<Value> classes;
    llvm::DenseSet<Value> plainOnly, convOutputs;
    // Channels a buffer's block must also divide: a grouped convolution's
    // width per group, on its input and output.
    llvm::DenseMap<Value, int64_t> groupWidths;
    auto limitBlock = [&](Value v, int64_t width) {
      int64_t &w = groupWidths[v];
      w = w ? std::gcd(w, width) : width;
    };
    auto member = [&](Value v) {
      if (isa<MemRefType>(v.getType()))
        classes.insert(v);
    };
    auto join = [&](Value a, Value b) {
      member(a);
      member(b);
      classes.unionSets(a, b);
    };
    // Why a buffer must stay NCHW (its first reason), for the report of
    // the convolutions it keeps plain (cpu.layout_why).
    llvm::DenseMap<Value, std::string> plainWhy;
    auto needPlain = [&](Value v, const Twine &why) {
      if (!isa<MemRefType>(v.getType()))
        return;
      plainOnly.insert(v);
      plainWhy.try_emplace(v, why.str());
    };
    auto readBy = [](Operation *op) {
      auto call = dyn_cast<UKernelCallOp>(op);
      return ("'" + (call ? call.getKernel() : op->getName().getStringRef()) +
              "' at " + cuvil::formatLocation(op->getLoc()) +
              " uses it and has no blocked form")
          .str();
    };

    // A reader with no blocked form reads a float32 [N, C, H, W]
    // intermediate through a plain copy of it (one per intermediate, made
    // before its first such reader), so the intermediate's class may still
    // be blocked, the copy a reorder: a feature extractor's last
    // convolutions before a flatten (AlexNet, VGG) run the blocked kernels.
    // A class left plain drops its copies again (dropPlainCopies).
    llvm::MapVector<Value, cuvil::l2::CopyOp> plainCopies;
    auto readPlain = [&](OpOperand &use, const Twine &why) {
      Value v = use.get();
      auto type = dyn_cast<MemRefType>(v.getType());
      if (!type || !type.getElementType().isF32() || channels(v) == 0 ||
          !writtenOnce(v))
        return;
      cuvil::l2::CopyOp &copy = plainCopies[v];
      if (!copy) {
        OpBuilder builder(use.getOwner());
        auto alloc = v.getDefiningOp<memref::AllocOp>();
        auto plain = memref::AllocOp::create(builder, alloc.getLoc(), type,
                                             alloc.getDynamicSizes(),
                                             builder.getI64IntegerAttr(64));
        copy = cuvil::l2::CopyOp::create(builder, use.getOwner()->getLoc(), v,
                                         plain);
        member(v);
        needPlain(plain, why);
      }
      use.set(copy.getTarget());
    };

    for (Operation &op : func.getBody().front()) {
      if (auto call = dyn_cast<UKernelCallOp>(op)) {
        BlockedForm form = cuvil::cpu::blockedForm(call.getKernel());
        Value out = call.getOutputs()[0];
        if (form == BlockedForm::Conv && blockableConv(call, symbols)) {
          // The input may be either layout (a depthwise one: the output's);
          // weights and bias are not activations; later outputs are
          // scratch.
          member(call.getInputs()[0]);
          member(out);
          if (isDepthwise(call))
            join(call.getInputs()[0], out);
          if (isGroupedDirect(call)) {
            int64_t groups = call.getIntParam("groups", 1);
            auto in = cast<MemRefType>(call.getInputs()[0].getType());
            auto o = cast<MemRefType>(out.getType());
            limitBlock(call.getInputs()[0], in.getDimSize(1) / groups);
            limitBlock(out, o.getDimSize(1) / groups);
          }
          convOutputs.insert(out);
          if (Value residual = residualOf(call))
            join(out, residual);
          continue;
        }
        if (form == BlockedForm::Same && perTensorQuantization(call) &&
            (call.getInputs().size() == 1 || perChannelParameters(call))) {
          join(call.getInputs()[0], out);
          continue;
        }
        if (form == BlockedForm::Channels && alongChannels(call)) {
          // Fire modules, Inception branches, dense blocks: whole blocks of
          // the concatenation, one class.
          for (Value v : call->getOperands())
            join(out, v);
          continue;
        }
        if (form == BlockedForm::Elementwise) {
          FailureOr<SmallVector<Value>> same =
              sameLayoutOperands(call.getInputs(), out);
          if (succeeded(same) && call.getOutputs().size() == 1) {
            member(out);
            for (Value v : *same)
              join(out, v);
            continue;
          }
        }
        if (form == BlockedForm::ToPlain && call.getInputs().size() == 1 &&
            (!call.getKernel().starts_with("reduce_") ||
             spatialReduction(call))) {
          // Reads blocks, writes plain [N, C] (the same bytes as NC11).
          member(call.getInputs()[0]);
          needPlain(out, "global pooling writes a plain [N, C]");
          continue;
        }
        std::string why =
            form == BlockedForm::Conv
                ? ("the convolution at " + cuvil::formatLocation(op.getLoc()) +
                   " uses it and cannot be blocked: " +
                   unblockable(call, symbols))
                      .str()
                : readBy(&op);
        for (OpOperand &use : call.getInputsMutable())
          readPlain(use, why);
        for (Value v : op.getOperands())
          needPlain(v, why);
        continue;
      }
      if (auto kernel = dyn_cast<cuvil::l2::KernelOp>(op)) {
        // A map over operands of one shape is the same loop on any layout
        // they share (per-channel and single-element operands aside).
        FailureOr<SmallVector<Value>> same = failure();
        if (kernel.getName() == "map" && kernel.getOutputs().size() == 1)
          same = sameLayoutOperands(kernel.getInputs(),
                                    kernel.getOutputs()[0]);
        if (succeeded(same)) {
          member(kernel.getOutputs()[0]);
          for (Value v : *same)
            join(kernel.getOutputs()[0], v);
        } else {
          std::string why = "a fused map at " +
                            cuvil::formatLocation(kernel.getLoc()) +
                            " reads it with a broadcast";
          for (OpOperand &use : kernel.getInputsMutable())
            readPlain(use, why);
          for (Value v : kernel->getOperands())
            needPlain(v, why);
        }
        continue;
      }
      if (auto copy = dyn_cast<cuvil::l2::CopyOp>(op)) {
        // Into a model output: becomes a reorder if the source is blocked
        // (float32 reorders only).
        auto source = cast<MemRefType>(copy.getSource().getType());
        source.getElementType().isF32()
            ? member(copy.getSource())
            : needPlain(copy.getSource(),
                        "it is a model output of an integer type");
        continue;
      }
      // Control flow: everything its regions touch stays plain.
      op.walk([&](Operation *nested) {
        for (Value v : nested->getOperands())
          needPlain(v, "control flow at " + cuvil::formatLocation(op.getLoc()) +
                           " uses it");
      });
    }

    // Decide per class: the target's lanes per block, or half as many
    // (AVX-512 running two 8-channel blocks per register) when some member's
    // channels are only a multiple of that. A convolution whose output stays
    // plain cannot read blocks (the plain kernels read NCHW; a bfloat16 one,
    // whose tiles write blocks it may unblock, can), so its input's class
    // stays plain too, which can leave another output plain: repeat until
    // nothing moves.
    llvm::DenseMap<Value, int64_t> blocked;
    // Why each member of a class a convolution produces stays plain.
    llvm::DenseMap<Value, std::string> classWhy;
    for (bool changed = true; changed;) {
      blocked.clear();
      classWhy.clear();
      for (const auto *leader : classes) {
        if (!leader->isLeader())
          continue;
        SmallVector<Value> members(classes.members(*leader));
        bool produced = false;
        int64_t block = lanes;
        std::string why;
        for (Value v : members) {
          produced |= convOutputs.contains(v);
          int64_t c = plainOnly.contains(v) ? 0 : channels(v);
          int64_t channelCount = c;
          if (auto it = groupWidths.find(v); c != 0 && it != groupWidths.end())
            c = std::gcd(c, it->second);
          while (block >= minBlock && (c == 0 || c % block != 0))
            block /= 2;
          if (block < minBlock && why.empty())
            why = plainReason(v, channelCount, c, plainWhy);
        }
        if (produced && block >= minBlock)
          for (Value v : members)
            blocked[v] = block;
        else if (produced)
          for (Value v : members)
            classWhy[v] = why;
      }
      changed = false;
      for (auto call : func.getOps<UKernelCallOp>()) {
        Value in = call.getInputs().empty() ? Value() : call.getInputs()[0];
        if (cuvil::cpu::blockedForm(call.getKernel()) == BlockedForm::Conv &&
            !isBf16(call) && blocked.contains(in) &&
            !blocked.contains(call.getOutputs()[0])) {
          changed |= plainOnly.insert(in).second;
          plainWhy.try_emplace(in, "the convolution at " +
                                       cuvil::formatLocation(call.getLoc()) +
                                       " reads it and writes NCHW");
        }
      }
    }
    // Before the outputs go back in place: the reasons are the
    // intermediates'.
    explainPlain(func, blocked, classWhy, symbols);
    restoreOutputs(redirected, blocked);
    dropPlainCopies(plainCopies, blocked);
    if (blocked.empty())
      return;

    MLIRContext *context = func.getContext();
    for (auto [v, block] : blocked) {
      auto type = cast<MemRefType>(v.getType());
      auto layout = cuvil::l2::LayoutAttr::get(
          context, "NCHW", ("NCHW" + Twine(block) + "c").str());
      v.setType(MemRefType::get(type.getShape(), type.getElementType(), layout,
                                type.getMemorySpace()));
      cuvil::addStatistic(func, *this, numBlocked, "blocked");
    }
    // Kernel bodies see their operands' types.
    func.walk([&](cuvil::l2::KernelOp kernel) {
      Block &body = kernel.getBody().front();
      for (auto [arg, operand] :
           llvm::zip(body.getArguments(), kernel->getOperands()))
        arg.setType(operand.getType());
    });
    for (auto call : llvm::to_vector(func.getOps<UKernelCallOp>())) {
      if (!blocked.contains(call.getOutputs()[0]))
        continue;
      if (isQuantized(call) || isBf16(call))
        call.setAlgorithm(cuvil::l2::Algorithm::direct_blocked);
      else if (call.getKernel() == "conv2d" && !isWinograd(call))
        prepareDirect(call, symbols);
    }
    func.walk([&](cuvil::l2::CopyOp copy) {
      if (copy.isReorder())
        cuvil::addStatistic(func, *this, numReorders, "reorders");
    });
  }

  /// Why `v` keeps its class plain: a use with no blocked form, or its
  /// `channels` (of which `divisible` must split into blocks) not a
  /// multiple of the smallest block.
  std::string plainReason(Value v, int64_t channels, int64_t divisible,
                          const llvm::DenseMap<Value, std::string> &plainWhy) {
    if (auto it = plainWhy.find(v); it != plainWhy.end())
      return it->second;
    if (channels == 0)
      return "a tensor of its layout class is not a static [N, C, H, W] "
             "intermediate";
    if (divisible != channels)
      return (Twine(channels) + " channels in groups of " + Twine(divisible) +
              " do not split into blocks of " + Twine(minBlock))
          .str();
    return (Twine(channels) + " channels are not a multiple of " +
            Twine(minBlock))
        .str();
  }

  /// Records on each convolution left NCHW why (`cpu.layout_why`), for
  /// cuvilc --explain-kernels: no fallback is silent.
  void explainPlain(func::FuncOp func,
                    const llvm::DenseMap<Value, int64_t> &blocked,
                    const llvm::DenseMap<Value, std::string> &classWhy,
                    SymbolTable &symbols) {
    for (auto call : func.getOps<UKernelCallOp>()) {
      Value out = call.getOutputs()[0];
      if (cuvil::cpu::blockedForm(call.getKernel()) != BlockedForm::Conv ||
          blocked.contains(out))
        continue;
      std::string why = unblockable(call, symbols).str();
      if (why.empty()) {
        auto it = classWhy.find(out);
        why = it != classWhy.end() && !it->second.empty()
                  ? it->second
                  : "its output is in no class a convolution blocks";
      }
      call->setAttr(cuvil::cpu::kLayoutWhyAttr,
                    StringAttr::get(call.getContext(), why));
    }
  }

  /// Packs the weights of a blocked direct convolution and trades im2col's
  /// scratch for the padded image's.
  void prepareDirect(UKernelCallOp call, SymbolTable &symbols) {
    Value x = call.getInputs()[0], w = call.getInputs()[1];
    auto in = cast<MemRefType>(x.getType());
    auto wType = cast<MemRefType>(w.getType());
    auto out = cast<MemRefType>(call.getOutputs()[0].getType());
    bool depthwise = isDepthwise(call);
    // A depthwise filter reads one channel: its packing has no input block.
    int64_t ib = depthwise ? 1 : channelBlock(x),
            lanes = channelBlock(call.getOutputs()[0]);
    int64_t oc = wType.getDimSize(0), c = wType.getDimSize(1),
            kh = wType.getDimSize(2), kw = wType.getDimSize(3);
    // Ungrouped: [OC/B][C/ib][KH][KW][ib][B], grouped the same with the
    // weights' C / groups (each output block reads its group's channels);
    // depthwise: [C/B][KH][KW][B].
    SmallVector<int64_t> shape =
        depthwise ? SmallVector<int64_t>{oc / lanes, kh, kw, lanes}
                  : SmallVector<int64_t>{oc / lanes, c / ib, kh, kw, ib, lanes};
    auto packedType = MemRefType::get(shape, wType.getElementType());

    memref::GlobalOp global = constantGlobal(w, symbols);
    memref::GlobalOp &target = packed[{global, ib, lanes}];
    if (!target) {
      absl::StatusOr<std::string> bytes =
          cuvil::getElementsBytes(*global.getInitialValue());
      if (!bytes.ok() ||
          bytes->size() != static_cast<size_t>(oc * c * kh * kw) * sizeof(float)) {
        call.emitOpError("cannot read the weights to pack: ")
            << (bytes.ok() ? "unexpected size" : bytes.status().message());
        return signalPassFailure();
      }
      std::string data(bytes->size(), '\0');
      const float *src = reinterpret_cast<const float *>(bytes->data());
      float *dst = reinterpret_cast<float *>(data.data());
      int64_t taps = kh * kw;
      for (int64_t o = 0; o < oc; ++o)
        for (int64_t i = 0; i < c; ++i)
          for (int64_t t = 0; t < taps; ++t)
            dst[((((o / lanes) * (c / ib) + i / ib) * taps + t) * ib + i % ib) *
                    lanes +
                o % lanes] = src[(o * c + i) * taps + t];
      AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
          ArrayRef<char>(data.data(), data.size()), 64);
      std::string name = (global.getSymName() + "_blocked" + Twine(lanes) +
                          (ib == 1 && !depthwise ? "_plain" : ""))
                             .str();
      auto value = DenseResourceElementsAttr::get(
          RankedTensorType::get(shape, wType.getElementType()), name,
          std::move(blob));
      OpBuilder builder(global);
      target = memref::GlobalOp::create(
          builder, global.getLoc(), name, builder.getStringAttr("private"),
          packedType, value, /*constant=*/true, builder.getI64IntegerAttr(64));
      symbols.insert(target); // Renames on a clash.
      cuvil::addStatistic(call, *this, numPacked, "packed");
    }

    OpBuilder builder(call);
    SmallVector<Value> inputs(call.getInputs());
    inputs[1] = memref::GetGlobalOp::create(builder, w.getLoc(), packedType,
                                            target.getSymName());
    // The padded image, per image, as the kernel sizes it (none when the
    // input needs no padding; the depthwise kernel tests bounds itself).
    SmallVector<int64_t> st = call.getIntsParam("strides", {1, 1});
    SmallVector<int64_t> pd = call.getIntsParam("padding", {0, 0, 0, 0});
    SmallVector<int64_t> dl = call.getIntsParam("dilations", {1, 1});
    int64_t padded =
        depthwise ? 0
                  : cuvil_conv2d_blocked_scratch_floats(
                        in.getDimSize(1), in.getDimSize(2), in.getDimSize(3), kh, kw, st[0],
                        st[1], pd[0], pd[1], dl[0], dl[1], out.getDimSize(2),
                        out.getDimSize(3));
    SmallVector<Value> outputs = {call.getOutputs()[0]};
    if (padded > 0)
      outputs.push_back(memref::AllocOp::create(
          builder, call.getLoc(),
          MemRefType::get({padded}, wType.getElementType()), ValueRange(),
          builder.getI64IntegerAttr(64)));
    call.cloneWith(builder, inputs, outputs)
        .setAlgorithm(cuvil::l2::Algorithm::direct_blocked);
    SmallVector<Value> dropped(call.getOutputs().drop_front());
    call.erase();
    for (Value v : dropped)
      if (Operation *alloc = v.getDefiningOp(); alloc && alloc->use_empty())
        alloc->erase();
    if (Operation *get = w.getDefiningOp(); get && get->use_empty())
      get->erase();
    if (SymbolTable::symbolKnownUseEmpty(global, symbols.getOp())) {
      // Forget it before its address can be reused.
      for (auto it = packed.begin(); it != packed.end();)
        it = std::get<0>(it->first) == global ? packed.erase(it) : std::next(it);
      symbols.erase(global);
    }
  }
};

} // namespace
