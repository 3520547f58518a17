//===- CEmitter.cpp - level2 to C99 ---------------------------------------===//
//
// Walks the (straight-line) level2 function once. Every buffer is a C
// pointer; its dimensions are C expressions ("64", "batch*128"). Heavy ops
// call the reference micro-kernels (runtime/cuvil_kernels.c); elementwise and
// data-movement ops, and fused maps (a kernel around a linalg.generic), become
// loop nests inline, which the C compiler vectorizes for the target CPU.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/x86/CEmitter.h"

#include "cuvil/ir/CuvilL2Ops.h"
#include "cuvil/support/Diagnostics.h"
#include "cuvil/support/ElementsBytes.h"
#include "cuvil/support/SourceEscape.h"
#include "cuvil/targets/x86/Runtime.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <limits>

namespace cuvil::x86 {
namespace {

using namespace mlir;

/// The C ABI version of docs/abi.md the artifact implements.
constexpr int kAbiVersion = 1;

/// A buffer as the generated C sees it.
struct Buffer {
  std::string name;
  MemRefType type;
  /// One C expression per dimension.
  std::vector<std::string> dims;
  /// Channels per block of an NCHW<block>c buffer (cuvil-x86-assign-layouts);
  /// 1 for row-major.
  int64_t block = 1;
};

std::string joinProduct(const std::vector<std::string> &terms) {
  // Fold the static factors: "batch*150528" rather than "batch*3*224*224".
  int64_t constant = 1;
  std::vector<std::string> symbolic;
  for (const std::string &t : terms) {
    int64_t v;
    if (llvm::to_integer(t, v))
      constant *= v;
    else
      symbolic.push_back(t);
  }
  if (constant == 0)
    return "0";
  if (constant != 1 || symbolic.empty())
    symbolic.push_back(std::to_string(constant));
  return symbolic.size() == 1 ? symbolic[0]
                              : "(" + absl::StrJoin(symbolic, "*") + ")";
}

/// The C ABI's row (cuvil/abi/DTypes.def) of an element type.
struct DTypeRow {
  const char *name;
  const char *cType;
  const char *mlir;
};

constexpr DTypeRow kDTypes[] = {
#define CUVIL_DTYPE(name, bytes, c_type, mlir, v2, numpy, torch, served)       \
  {#name, #c_type, #mlir},
#include "cuvil/abi/DTypes.def"
#undef CUVIL_DTYPE
};

const DTypeRow *dtypeRow(Type type) {
  std::string spelled;
  llvm::raw_string_ostream(spelled) << type;
  for (const DTypeRow &row : kDTypes)
    if (spelled == row.mlir)
      return &row;
  return nullptr;
}

/// C type of an element type, or "" if the x86 target cannot compute on it
/// (half and bfloat16 are stored as their bits and computed in float).
std::string cType(Type type) {
  const DTypeRow *row = dtypeRow(type);
  return row ? row->cType : "";
}

int64_t elementBytes(Type type) {
  if (type.isInteger(1))
    return 1;
  return type.getIntOrFloatBitWidth() / 8;
}

/// A float literal of the element type.
std::string literal(double value, Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (std::isnan(value))
    return type.isF32() ? "NAN" : "(double)NAN";
  if (std::isinf(value))
    return std::string(value < 0 ? "-" : "") +
           (type.isF32() ? "INFINITY" : "(double)INFINITY");
  if (isa<FloatType>(type)) {
    os << llvm::format("%.17g", value);
    if (text.find_first_of(".eE") == std::string::npos)
      text += ".0";
    return type.isF32() ? "(float)" + text : text;
  }
  return "(" + cType(type) + ")" + std::to_string(static_cast<int64_t>(value));
}

/// Suffix of <math.h> functions for the type ("f" for float).
std::string mathSuffix(Type type) { return type.isF32() ? "f" : ""; }

/// tanh of `x`; f32 through cuvil_expf, which vectorizes.
std::string tanhExpr(const std::string &x, Type type) {
  if (!type.isF32())
    return "tanh(" + x + ")";
  std::string one = literal(1, type), two = literal(2, type);
  return "(" + one + " - " + two + " / (cuvil_expf(" + two + " * " + x +
         ") + " + one + "))";
}

/// max (`cmp` ">") or min ("<") of `x` and `y`; a NaN in either propagates,
/// as in PyTorch.
std::string extremumExpr(const std::string &cmp, const std::string &x,
                         const std::string &y) {
  return "(" + x + " " + cmp + " " + y + " || " + x + " != " + x + " ? " + x +
         " : " + y + ")";
}

/// Where each dimension of an operand is indexed from in an iteration
/// space: a loop's position, or -1 for a broadcast dimension (index 0).
using DimSources = SmallVector<int64_t, 4>;

class Emitter {
public:
  Emitter(func::FuncOp func, ModuleOp module, const EmitOptions &options)
      : func(func), module(module), options(options) {}

  LogicalResult run();

  /// The run function: the ops' code in static functions of bounded size
  /// (clang's time on one function grows faster than its length), called
  /// in order by cuvil_internal_run.
  std::string runFunctions() const;

  /// Code of the op being emitted.
  std::string body;
  std::string weightsDecls;
  std::string weightsBlob;
  int64_t arenaBytes = 0;
  /// Bytes of all weights (without alignment padding).
  int64_t weightBytes = 0;

private:
  LogicalResult emitOp(Operation *op);
  LogicalResult emitKernel(cuvil::l2::UKernelCallOp call);
  LogicalResult emitWeight(memref::GetGlobalOp getGlobal);
  FailureOr<std::string> indexExpr(Value value);
  FailureOr<Buffer> defineBuffer(Value value, std::string pointer);
  const Buffer &buf(Value value) { return buffers[value]; }

  std::string numel(const Buffer &b) { return joinProduct(b.dims); }
  std::string bytes(const Buffer &b) {
    return joinProduct(
        {numel(b), std::to_string(elementBytes(b.type.getElementType()))});
  }
  /// Row-major strides (C expressions) of `b`.
  std::vector<std::string> strides(const Buffer &b) {
    std::vector<std::string> result(b.dims.size());
    std::vector<std::string> suffix;
    for (int i = static_cast<int>(b.dims.size()) - 1; i >= 0; --i) {
      result[i] = joinProduct(suffix);
      suffix.insert(suffix.begin(), b.dims[i]);
    }
    return result;
  }
  std::string dimsRange(const Buffer &b, size_t from, size_t to) {
    std::vector<std::string> terms(b.dims.begin() + from, b.dims.begin() + to);
    return joinProduct(terms);
  }

  /// out[...] = expr(elements of ins, broadcast to out's shape).
  void emitElementwise(
      const Buffer &out, ArrayRef<const Buffer *> ins,
      const std::function<std::string(ArrayRef<std::string>)> &expr);
  /// A loop over the elements of `out` (one flat loop when nothing
  /// broadcasts); `inner` gets the index expression of each input, read
  /// through its `sources`, and of `out`, and emits the body's statements.
  void emitParallelLoop(const Buffer &out, ArrayRef<const Buffer *> ins,
                        ArrayRef<DimSources> sources,
                        const std::function<void(ArrayRef<std::string>,
                                                 const std::string &)> &inner);
  /// A `cuvil_l2.kernel "map"`: its linalg.generic as one loop nest whose
  /// body is the scalar region in C.
  LogicalResult emitMap(cuvil::l2::KernelOp kernel);
  /// The C expression of one scalar op of a map's region.
  FailureOr<std::string>
  scalarExpr(Operation &op, const llvm::DenseMap<Value, std::string> &values);
  /// A loop nest over `dims` whose body gets the index variable names.
  void emitLoopNest(const std::vector<std::string> &dims,
                    const std::function<void(ArrayRef<std::string>)> &inner);

  std::string tmp() { return "t" + std::to_string(tmpCounter++); }
  void line(const Twine &text) { body += "  " + text.str() + "\n"; }
  /// A statement at the current loop depth.
  void stmt(const Twine &text) {
    body += std::string(2 * indent, ' ') + text.str() + "\n";
  }

  /// Emits `call`, a kernel call lacking its last argument, with the address
  /// of a cuvil_epilogue initialized by `initializer` (or NULL if empty).
  void callWithEpilogue(const std::string &call, const std::string &initializer) {
    if (initializer.empty()) {
      line(call + "NULL);");
      return;
    }
    line("{");
    line("  const cuvil_epilogue epilogue = " + initializer + ";");
    line("  " + call + "&epilogue);");
    line("}");
  }

  /// Declares buffer pointer `name` (a C local of every part that uses it).
  void declare(const std::string &name, const std::string &declaration) {
    declarationIndex[name] = declarations.size();
    declarations.push_back(declaration);
  }

  func::FuncOp func;
  ModuleOp module;
  const EmitOptions &options;
  /// The code of each op that emits any, in order.
  std::vector<std::string> opCode;
  /// Buffer pointer declarations, by first definition, and each one's index
  /// by name.
  std::vector<std::string> declarations;
  llvm::StringMap<size_t> declarationIndex;
  llvm::DenseMap<Value, Buffer> buffers;
  llvm::StringMap<std::string> weightSymbols;
  int tmpCounter = 0;
  int indent = 1;
};

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
           << " is not supported by the x86 target yet";
  // On-chip memories are other targets' (FPGA, MLU): host memory only.
  if (auto space = dyn_cast_or_null<cuvil::l2::MemorySpaceAttr>(
          type.getMemorySpace());
      space && space.getValue() != cuvil::l2::MemorySpace::host)
    return emitError(value.getLoc())
           << "the x86 target has no " << space << " memory (buffer of type "
           << type << ")";
  Buffer b{pointer, type, {}};
  if (auto layout = dyn_cast<cuvil::l2::LayoutAttr>(type.getLayout())) {
    b.block = layout.getBlockSize(1);
    if (layout.getLogical() != "NCHW" ||
        layout.getPhysical() != ("NCHW" + Twine(b.block) + "c").str() ||
        ShapedType::isDynamic(type.getDimSize(1)) ||
        type.getDimSize(1) % b.block != 0)
      return emitError(value.getLoc())
             << "the x86 target computes on row-major and whole-block "
                "NCHW<B>c buffers, not "
             << type;
  } else if (!type.getLayout().isIdentity()) {
    return emitError(value.getLoc())
           << "the x86 target does not support the layout of " << type;
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

void Emitter::emitLoopNest(
    const std::vector<std::string> &dims,
    const std::function<void(ArrayRef<std::string>)> &inner) {
  std::vector<std::string> vars;
  std::string pad(2 * indent, ' ');
  for (const std::string &d : dims) {
    std::string v = tmp();
    body += pad + "for (int64_t " + v + " = 0; " + v + " < " + d + "; ++" + v +
            ") {\n";
    pad += "  ";
    ++indent;
    vars.push_back(v);
  }
  if (dims.empty()) {
    body += pad + "{\n";
    pad += "  ";
    ++indent;
  }
  inner(vars);
  for (size_t i = 0; i < std::max<size_t>(dims.size(), 1); ++i) {
    --indent;
    pad.resize(pad.size() - 2);
    body += pad + "}\n";
  }
}

/// Reads an element as the type computations use (half types as float).
static std::string load(const Buffer &b, const std::string &element) {
  Type t = b.type.getElementType();
  if (t.isF16())
    return "cuvil_h2f(" + element + ")";
  if (t.isBF16())
    return "cuvil_bf2f(" + element + ")";
  return element;
}

/// Converts a computed value to the storage of `b`.
static std::string store(const Buffer &b, const std::string &value) {
  Type t = b.type.getElementType();
  if (t.isF16())
    return "cuvil_f2h(" + value + ")";
  if (t.isBF16())
    return "cuvil_f2bf(" + value + ")";
  return value;
}

void Emitter::emitElementwise(
    const Buffer &out, ArrayRef<const Buffer *> ins,
    const std::function<std::string(ArrayRef<std::string>)> &expr) {
  // Numpy broadcasting: dims align at the end; a size-1 dim repeats.
  SmallVector<DimSources> sources;
  for (const Buffer *b : ins) {
    size_t offset = out.dims.size() - b->dims.size();
    DimSources s;
    for (size_t d = 0; d < b->dims.size(); ++d)
      s.push_back(b->dims[d] == "1" && out.dims[offset + d] != "1"
                      ? -1
                      : static_cast<int64_t>(offset + d));
    sources.push_back(s);
  }
  emitParallelLoop(out, ins, sources,
                   [&](ArrayRef<std::string> index, const std::string &o) {
                     std::vector<std::string> elems;
                     for (auto [b, i] : llvm::zip(ins, index))
                       elems.push_back(load(*b, b->name + "[" + i + "]"));
                     stmt(out.name + "[" + o +
                          "] = " + store(out, expr(elems)) + ";");
                   });
}

void Emitter::emitParallelLoop(
    const Buffer &out, ArrayRef<const Buffer *> ins,
    ArrayRef<DimSources> sources,
    const std::function<void(ArrayRef<std::string>, const std::string &)>
        &inner) {
  bool flat = true;
  for (auto [b, s] : llvm::zip(ins, sources)) {
    flat &= b->dims == out.dims;
    for (size_t d = 0; d < s.size(); ++d)
      flat &= s[d] == static_cast<int64_t>(d);
  }
  if (flat) {
    std::string i = tmp();
    stmt("for (int64_t " + i + " = 0; " + i + " < " + numel(out) + "; ++" + i +
         ") {");
    ++indent;
    inner(std::vector<std::string>(ins.size(), i), i);
    --indent;
    stmt("}");
    return;
  }
  emitLoopNest(out.dims, [&](ArrayRef<std::string> vars) {
    auto index = [&](const Buffer &b, ArrayRef<int64_t> s) {
      std::vector<std::string> own = strides(b), terms;
      for (size_t d = 0; d < s.size(); ++d)
        if (s[d] >= 0)
          terms.push_back(own[d] == "1" ? vars[s[d]]
                                        : vars[s[d]] + "*" + own[d]);
      return terms.empty() ? std::string("0") : absl::StrJoin(terms, " + ");
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

LogicalResult Emitter::emitMap(cuvil::l2::KernelOp kernel) {
  Block &body = kernel.getBody().front();
  // The body: scalar constants (hoisted out of the generic by
  // canonicalization) and one linalg.generic.
  linalg::GenericOp generic;
  llvm::DenseMap<Value, std::string> constants;
  for (Operation &op : body.without_terminator()) {
    if (auto constant = dyn_cast<arith::ConstantOp>(op);
        constant && isa<FloatAttr>(constant.getValue())) {
      FailureOr<std::string> value = scalarExpr(op, constants);
      if (failed(value))
        return failure();
      constants[constant.getResult()] = *value;
    } else if (isa<linalg::GenericOp>(op) && !generic) {
      generic = cast<linalg::GenericOp>(op);
    } else {
      return op.emitOpError("in a kernel body is not supported by the x86 "
                            "target");
    }
  }
  if (kernel.getName() != "map" || !generic || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() != 0)
    return kernel.emitOpError("is not an elementwise map (a linalg.generic "
                              "with parallel loops and one output), the only "
                              "kernel body the x86 target generates");
  // The generic's operands are the kernel's block arguments, which stand for
  // the kernel's operands (ins, then outs).
  auto outer = [&](Value value) -> const Buffer * {
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner() != &body)
      return nullptr;
    return &buffers[kernel->getOperand(arg.getArgNumber())];
  };
  SmallVector<const Buffer *> ins;
  SmallVector<DimSources> sources;
  for (OpOperand *operand : generic.getDpsInputOperands()) {
    const Buffer *b = outer(operand->get());
    if (!b)
      return kernel.emitOpError("map input is not a kernel argument");
    DimSources s;
    for (AffineExpr e : generic.getMatchingIndexingMap(operand).getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        s.push_back(dim.getPosition());
      else if (auto c = dyn_cast<AffineConstantExpr>(e); c && c.getValue() == 0)
        s.push_back(-1);
      else
        return kernel.emitOpError("map input ")
               << operand->getOperandNumber()
               << " has an index that is neither a loop nor a broadcast";
    }
    ins.push_back(b);
    sources.push_back(s);
  }
  OpOperand *init = generic.getDpsInitOperand(0);
  const Buffer *out = outer(init->get());
  if (!out || !generic.getMatchingIndexingMap(init).isIdentity())
    return kernel.emitOpError("map output must be a kernel argument indexed "
                              "by the loops in order");
  // On blocked buffers a map is one flat loop: every operand in the same
  // layout, no broadcast.
  for (auto [b, s] : llvm::zip(ins, sources))
    if ((b->block > 1 || out->block > 1) &&
        (b->block != out->block || b->dims != out->dims ||
         llvm::any_of(llvm::enumerate(s), [](auto d) {
           return d.value() != static_cast<int64_t>(d.index());
         })))
      return kernel.emitOpError("a map on blocked layouts must read every "
                                "operand in the output's layout and shape");
  Block &region = generic.getRegion().front();
  LogicalResult status = success();
  emitParallelLoop(
      *out, ins, sources,
      [&](ArrayRef<std::string> index, const std::string &o) {
        // One const local per scalar value: the C compiler sees the same
        // dataflow as the region and vectorizes the loop.
        llvm::DenseMap<Value, std::string> values = constants;
        for (auto [i, b] : llvm::enumerate(ins)) {
          std::string t = tmp();
          stmt("const " + cType(region.getArgument(i).getType()) + " " + t +
               " = " + load(*b, b->name + "[" + index[i] + "]") + ";");
          values[region.getArgument(i)] = t;
        }
        for (Operation &op : region.without_terminator()) {
          FailureOr<std::string> expr = scalarExpr(op, values);
          if (failed(expr)) {
            status = failure();
            return;
          }
          std::string t = tmp();
          stmt("const " + cType(op.getResult(0).getType()) + " " + t + " = " +
               *expr + ";");
          values[op.getResult(0)] = t;
        }
        stmt(out->name + "[" + o + "] = " +
             store(*out, values.lookup(region.getTerminator()->getOperand(0))) +
             ";");
      });
  return status;
}

FailureOr<std::string>
Emitter::scalarExpr(Operation &op,
                    const llvm::DenseMap<Value, std::string> &values) {
  auto x = [&](unsigned i) { return values.lookup(op.getOperand(i)); };
  Type t = op.getResult(0).getType();
  std::string f = mathSuffix(t);
  auto binary = [&](const char *c) {
    return "(" + x(0) + " " + c + " " + x(1) + ")";
  };
  auto call = [&](const std::string &name) { return name + "(" + x(0) + ")"; };
  using Result = FailureOr<std::string>;
  if (!isa<FloatType>(t) && !isa<arith::CmpFOp>(op))
    return op.emitOpError("on ")
           << t << " in a map is not supported by the x86 target";
  return llvm::TypeSwitch<Operation *, Result>(&op)
      .Case([&](arith::ConstantOp c) -> Result {
        auto value = dyn_cast<FloatAttr>(c.getValue());
        if (!value)
          return c.emitOpError("in a map must be a float scalar");
        return literal(value.getValueAsDouble(), t);
      })
      .Case([&](arith::AddFOp) { return binary("+"); })
      .Case([&](arith::SubFOp) { return binary("-"); })
      .Case([&](arith::MulFOp) { return binary("*"); })
      .Case([&](arith::DivFOp) { return binary("/"); })
      .Case([&](arith::NegFOp) { return "(-" + x(0) + ")"; })
      .Case([&](arith::MaximumFOp) { return extremumExpr(">", x(0), x(1)); })
      .Case([&](arith::MinimumFOp) { return extremumExpr("<", x(0), x(1)); })
      .Case([&](arith::CmpFOp cmp) -> Result {
        // Ordered predicates are C's comparisons (false on NaN); UNE is !=.
        switch (cmp.getPredicate()) {
        case arith::CmpFPredicate::OEQ:
          return binary("==");
        case arith::CmpFPredicate::OGT:
          return binary(">");
        case arith::CmpFPredicate::OGE:
          return binary(">=");
        case arith::CmpFPredicate::OLT:
          return binary("<");
        case arith::CmpFPredicate::OLE:
          return binary("<=");
        case arith::CmpFPredicate::UNE:
          return binary("!=");
        default:
          return cmp.emitOpError("predicate ")
                 << arith::stringifyCmpFPredicate(cmp.getPredicate())
                 << " is not supported by the x86 target";
        }
      })
      .Case([&](arith::SelectOp) {
        return "(" + x(0) + " ? " + x(1) + " : " + x(2) + ")";
      })
      .Case([&](math::ExpOp) { return call(t.isF32() ? "cuvil_expf" : "exp"); })
      .Case([&](math::ErfOp) { return call(t.isF32() ? "cuvil_erff" : "erf"); })
      .Case([&](math::TanhOp) { return tanhExpr(x(0), t); })
      .Case([&](math::LogOp) { return call("log" + f); })
      .Case([&](math::SqrtOp) { return call("sqrt" + f); })
      .Case([&](math::AbsFOp) { return call("fabs" + f); })
      .Case([&](math::PowFOp) {
        return "pow" + f + "(" + x(0) + ", " + x(1) + ")";
      })
      .Default([&](Operation *other) -> Result {
        return other->emitOpError(
            "in a map is not supported by the x86 target (a map's region "
            "may hold float constants, add/sub/mul/div/neg, maximum/minimum, "
            "cmpf, select, and math exp/log/sqrt/tanh/erf/absf/powf)");
      });
}

LogicalResult Emitter::emitWeight(memref::GetGlobalOp getGlobal) {
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      getGlobal, getGlobal.getNameAttr());
  if (!global || !global.getInitialValue())
    return getGlobal.emitOpError("refers to a global without a value");
  std::string &symbol = weightSymbols[global.getSymName()];
  MemRefType type = global.getType();
  Type element = type.getElementType();
  std::string ct = cType(element);
  if (ct.empty())
    return global.emitOpError("has element type ")
           << element << ", not supported by the x86 target yet";
  if (symbol.empty()) {
    // The weight's bytes, as stored in the artifact.
    int64_t count = type.getNumElements();
    absl::StatusOr<std::string> bytes =
        getElementsBytes(*global.getInitialValue());
    if (!bytes.ok())
      return global.emitOpError("has an initial value the x86 target cannot "
                                "store: ")
             << bytes.status().message();
    std::string data = *std::move(bytes);
    if (static_cast<int64_t>(data.size()) != count * elementBytes(element))
      return global.emitOpError("holds ")
             << data.size() << " bytes, but its type needs "
             << count * elementBytes(element);
    weightBytes += static_cast<int64_t>(data.size());
    symbol = "cuvil_w" + std::to_string(weightSymbols.size() - 1);
    if (options.inlineWeights) {
      // A union gives the typed view of the words without breaking C99
      // aliasing rules; words are little-endian like x86.
      size_t words = (data.size() + 7) / 8;
      data.resize(words * 8, 0);
      std::string decl = "static const union { uint64_t words[" +
                         std::to_string(std::max<size_t>(words, 1)) + "]; " +
                         ct + " values[" +
                         std::to_string(std::max<int64_t>(count, 1)) + "]; } " +
                         symbol + " CUVIL_ALIGN64 = {{";
      for (size_t w = 0; w < words; ++w) {
        uint64_t v = 0;
        std::memcpy(&v, data.data() + 8 * w, 8);
        if (w % 4 == 0)
          decl += "\n    ";
        decl += llvm::formatv("{0:x16}u, ", v).str();
      }
      if (words == 0)
        decl += "0";
      decl += "}};\n";
      weightsDecls += decl;
      symbol += ".values";
    } else {
      size_t offset = (weightsBlob.size() + 63) / 64 * 64;
      weightsBlob.resize(offset, 0);
      weightsBlob += data;
      symbol = "((const " + ct + " *)(cuvil_weights + " +
               std::to_string(offset) + "))";
    }
  }
  Buffer b{symbol, cast<MemRefType>(getGlobal.getType()), {}};
  for (int64_t d : type.getShape())
    b.dims.push_back(std::to_string(d));
  buffers[getGlobal.getResult()] = b;
  return success();
}

LogicalResult Emitter::run() {
  if (func.getNumArguments() < 2)
    return func.emitOpError("is not a planned level2 function");
  int64_t numInputs =
      func->getAttrOfType<IntegerAttr>("cuvil.num_inputs").getInt();
  int64_t numOutputs =
      func->getAttrOfType<IntegerAttr>("cuvil.num_outputs").getInt();
  auto arenaType = cast<MemRefType>(func.getArguments().back().getType());
  arenaBytes = arenaType.getNumElements();
  for (int64_t i = 0; i < numInputs + numOutputs; ++i) {
    Value arg = func.getArgument(1 + i);
    auto type = cast<MemRefType>(arg.getType());
    std::string name = (i < numInputs ? "in" : "out") +
                       std::to_string(i < numInputs ? i : i - numInputs);
    std::string ct = cType(type.getElementType());
    if (ct.empty())
      return func.emitError("the x86 target does not support ")
             << type.getElementType() << " tensors yet (model "
             << (i < numInputs ? "input " : "output ")
             << (i < numInputs ? i : i - numInputs) << ")";
    declare(name, (Twine(i < numInputs ? "const " : "") + ct + " *" + name +
                   " = (" + (i < numInputs ? "const " : "") + ct + " *)" +
                   (i < numInputs ? "inputs[" : "outputs[") +
                   std::to_string(i < numInputs ? i : i - numInputs) + "];")
                      .str());
    if (failed(defineBuffer(arg, name)))
      return failure();
  }
  for (Operation &op : func.getBody().front()) {
    if (failed(emitOp(&op)))
      return failure();
    if (!body.empty())
      opCode.push_back(std::move(body));
    body.clear();
  }
  return success();
}

std::string Emitter::runFunctions() const {
  // Parts of at most this many ops or bytes of C: large enough that a call
  // per part costs nothing, small enough that clang's time stays linear in
  // the model (a 4,000-op function took 56 s in one piece).
  constexpr size_t kPartOps = 64, kPartBytes = 32 << 10;
  const char *params = "(int64_t batch, const void *const *inputs,\n"
                       "    void *const *outputs, unsigned char *arena,\n"
                       "    cuvil_pool *pool)";
  std::string parts, calls;
  int numParts = 0;
  for (size_t begin = 0; begin < opCode.size();) {
    size_t end = begin, bytes = 0;
    while (end < opCode.size() && end - begin < kPartOps && bytes < kPartBytes)
      bytes += opCode[end++].size();
    std::string code;
    for (size_t i = begin; i < end; ++i)
      code += opCode[i];
    // The pointers this part uses: identifiers of the code that name a
    // declared buffer, declared in definition order.
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
      auto it = declarationIndex.find(StringRef(code).slice(i, j));
      if (it != declarationIndex.end())
        used.push_back(it->second);
      i = j;
    }
    llvm::sort(used);
    used.erase(std::unique(used.begin(), used.end()), used.end());
    std::string name = "cuvil_run_part" + std::to_string(numParts++);
    // Not inlined back into one function, which would undo the split.
    parts += "static CUVIL_NOINLINE int " + name + params + " {\n"
             "  (void)batch;\n  (void)inputs;\n  (void)outputs;\n"
             "  (void)arena;\n  (void)pool;\n";
    for (size_t index : used)
      parts += "  " + declarations[index] + "\n";
    parts += code + "  return CUVIL_OK;\n}\n\n";
    calls += "  if ((status = " + name +
             "(batch, inputs, outputs, arena, pool)) != CUVIL_OK)\n"
             "    return status;\n";
    begin = end;
  }
  return parts + "CUVIL_INTERNAL int cuvil_internal_run" + params +
         " {\n  int status = CUVIL_OK;\n" + calls + "  return status;\n}\n";
}

LogicalResult Emitter::emitOp(Operation *op) {
  if (isa<arith::ConstantOp, arith::MulIOp, func::ReturnOp>(op))
    return success();
  if (auto getGlobal = dyn_cast<memref::GetGlobalOp>(op))
    return emitWeight(getGlobal);
  if (auto view = dyn_cast<cuvil::l2::ViewOp>(op)) {
    std::string name = "v" + std::to_string(buffers.size());
    std::string ct = cType(view.getType().getElementType());
    if (ct.empty())
      return emitError(view.getLoc(), "the x86 target does not support ")
             << view.getType().getElementType() << " tensors yet";
    declare(name, ct + " *" + name + " = (" + ct + " *)(arena + " +
                      std::to_string(view.getOffset()) + ");");
    return success(succeeded(defineBuffer(view.getResult(), name)));
  }
  if (auto copy = dyn_cast<cuvil::l2::CopyOp>(op)) {
    if (copy.isTransfer())
      return copy.emitOpError("memory-space changes are not supported by the "
                              "x86 target");
    if (copy.isReorder()) {
      // NCHW <-> NCHW<block>c (the only layouts buffers here have).
      const Buffer &from = buf(copy.getSource()), &to = buf(copy.getTarget());
      const Buffer &blocked = from.block > 1 ? from : to;
      if (from.block > 1 && to.block > 1)
        return copy.emitOpError("reorders between two blocked layouts are not "
                                "supported by the x86 target");
      line("cuvil_reorder_f32(" + std::string(to.block > 1 ? "1" : "0") +
           ", " + blocked.dims[0] + ", " + blocked.dims[1] + ", " +
           joinProduct({blocked.dims[2], blocked.dims[3]}) + ", " +
           std::to_string(blocked.block) + ", " + from.name + ", " + to.name +
           ");");
      return success();
    }
    line("memcpy(" + buf(copy.getTarget()).name + ", " +
         buf(copy.getSource()).name + ", (size_t)" +
         bytes(buf(copy.getSource())) + ");");
    return success();
  }
  if (auto call = dyn_cast<cuvil::l2::UKernelCallOp>(op)) {
    body += "  /* " + cCommentText(call.getKernel()) + " at " +
            cCommentText(formatLocation(call.getLoc())) + " */\n";
    return emitKernel(call);
  }
  if (auto kernel = dyn_cast<cuvil::l2::KernelOp>(op)) {
    body += "  /* " + cCommentText(kernel.getName()) + " at " +
            cCommentText(formatLocation(kernel.getLoc())) + " */\n";
    return emitMap(kernel);
  }
  return op->emitOpError("is not supported by the x86 C emitter");
}

// A call's params (UKernelCallOp::getIntParam and friends), by the names
// the kernels below read.
int64_t attrInt(cuvil::l2::UKernelCallOp call, StringRef name, int64_t def) {
  return call.getIntParam(name, def);
}
double attrFloat(cuvil::l2::UKernelCallOp call, StringRef name, double def) {
  return call.getFloatParam(name, def);
}
SmallVector<int64_t> attrInts(cuvil::l2::UKernelCallOp call, StringRef name,
                              SmallVector<int64_t> def = {}) {
  return call.getIntsParam(name, def);
}
/// A string param, or `def`.
std::string attrString(cuvil::l2::UKernelCallOp call, StringRef name,
                       StringRef def) {
  auto value = dyn_cast_or_null<StringAttr>(call.getParam(name));
  return (value ? value.getValue() : def).str();
}

/// The elementwise epilogue fused into a producer's call (`cuvil.epilogue`,
/// from cuvil-fuse-epilogues): its residual input and activation, as the
/// runtime's cuvil_epilogue takes them.
struct Epilogue {
  bool present = false;
  const Buffer *colBias = nullptr;
  const Buffer *residual = nullptr;
  std::string activation = "CUVIL_ACT_NONE";
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  /// Trailing inputs of the call that the epilogue's steps consume.
  size_t inputs = 0;

  /// A C initializer of cuvil_epilogue; `colBias` overrides the step's.
  std::string initializer(const std::string &rowBias = "NULL",
                          const std::string &colBiasName = "") const;
};

FailureOr<Epilogue> getEpilogue(cuvil::l2::UKernelCallOp call,
                                ArrayRef<const Buffer *> ins) {
  using cuvil::l2::EpilogueStep;
  Epilogue epilogue;
  cuvil::l2::EpilogueAttr steps = call.getEpilogueAttr();
  if (!steps)
    return epilogue;
  // The verifier checked the order and the inputs: the steps' inputs are
  // the last ones, col_bias first.
  epilogue.present = true;
  epilogue.inputs = steps.getNumExtraInputs();
  size_t next = ins.size() - epilogue.inputs;
  for (EpilogueStep step : steps.getSteps()) {
    switch (step) {
    case EpilogueStep::col_bias:
      epilogue.colBias = ins[next++];
      break;
    case EpilogueStep::add:
      epilogue.residual = ins[next++];
      break;
    case EpilogueStep::relu:
      epilogue.activation = "CUVIL_ACT_RELU";
      break;
    case EpilogueStep::clip:
      epilogue.activation = "CUVIL_ACT_CLIP";
      if (FloatAttr lo = steps.getClipMin())
        epilogue.lo = lo.getValueAsDouble();
      if (FloatAttr hi = steps.getClipMax())
        epilogue.hi = hi.getValueAsDouble();
      break;
    }
  }
  return epilogue;
}

/// A float bound of cuvil_epilogue (its lo/hi fields are float).
std::string clipLiteral(double value) {
  if (std::isinf(value))
    return value < 0 ? "-INFINITY" : "INFINITY";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.17g", value);
  if (text.find_first_of(".eE") == std::string::npos)
    text += ".0";
  return "(float)" + text;
}

std::string Epilogue::initializer(const std::string &rowBias,
                                  const std::string &colBiasName) const {
  std::string col = !colBiasName.empty() ? colBiasName
                    : colBias            ? colBias->name
                                         : std::string("NULL");
  return "{" + rowBias + ", " + (residual ? residual->name : std::string("NULL")) + ", " +
         activation + ", " + clipLiteral(lo) + ", " + clipLiteral(hi) + ", " + col + "}";
}

LogicalResult Emitter::emitKernel(cuvil::l2::UKernelCallOp call) {
  StringRef k = call.getKernel();
  SmallVector<const Buffer *> ins;
  for (Value v : call.getInputs())
    ins.push_back(&buffers[v]);
  const Buffer &out = buffers[call.getOutputs()[0]];
  Type element = out.type.getElementType();
  Type storage = element;
  // Half types compute in float; loads and stores convert.
  if (element.isF16() || element.isBF16())
    element = Float32Type::get(call.getContext());
  std::string T = cType(element);
  std::string f = mathSuffix(element);
  bool isFloat = isa<FloatType>(element);
  auto floatOnly = [&]() -> LogicalResult {
    if (!isFloat)
      return call.emitOpError("'") << k << "' on " << element
                                   << " is not supported by the x86 target";
    return success();
  };
  auto f32Only = [&](const Buffer &b) -> LogicalResult {
    if (!b.type.getElementType().isF32())
      return call.emitOpError("'") << k << "' on " << b.type.getElementType()
                                   << " is not supported by the x86 target yet";
    return success();
  };
  auto lit = [&](double v) { return literal(v, element); };
  // Blocked (NCHW<B>c) buffers only reach the kernels that have a blocked
  // form (cuvil-x86-assign-layouts places them).
  bool anyBlocked = out.block > 1 || llvm::any_of(ins, [](const Buffer *b) {
                      return b->block > 1;
                    });
  if (anyBlocked && k != "conv2d" && k != "max_pool2d" && k != "avg_pool2d" &&
      k != "global_avg_pool" && k != "global_max_pool")
    return call.emitOpError("'")
           << k << "' has no kernel for blocked layouts on the x86 target";

  // Elementwise unary.
  using Expr = std::function<std::string(ArrayRef<std::string>)>;
  Expr unary;
  if (k == "relu") {
    unary = [&](ArrayRef<std::string> e) {
      return "(" + e[0] + " > " + lit(0) + " ? " + e[0] + " : " + lit(0) + ")";
    };
  } else if (k == "clip") {
    auto minA = dyn_cast_or_null<FloatAttr>(call.getParam("min"));
    auto maxA = dyn_cast_or_null<FloatAttr>(call.getParam("max"));
    unary = [=](ArrayRef<std::string> e) {
      std::string x = e[0];
      if (minA)
        x = "(" + x + " < " + lit(minA.getValueAsDouble()) + " ? " +
            lit(minA.getValueAsDouble()) + " : " + x + ")";
      if (maxA)
        x = "(" + x + " > " + lit(maxA.getValueAsDouble()) + " ? " +
            lit(maxA.getValueAsDouble()) + " : " + x + ")";
      return x;
    };
  } else if (k == "neg") {
    unary = [](ArrayRef<std::string> e) { return "(-" + e[0] + ")"; };
  } else if (k == "abs") {
    unary = [&](ArrayRef<std::string> e) {
      return isFloat ? "fabs" + f + "(" + e[0] + ")"
                     : "(" + e[0] + " < 0 ? -" + e[0] + " : " + e[0] + ")";
    };
  } else if (k == "sigmoid" || k == "tanh" || k == "gelu" || k == "silu" ||
             k == "hardswish" || k == "hardsigmoid" || k == "exp" ||
             k == "log" || k == "sqrt" || k == "rsqrt" || k == "reciprocal" ||
             k == "erf") {
    if (failed(floatOnly()))
      return failure();
    std::string one = lit(1), half = lit(0.5), two = lit(2);
    // f32 exponentials and erf go through the kernels' cuvil_expf and
    // cuvil_erff, which vectorize (libm's are a call per element).
    std::string exp = f == "f" ? "cuvil_expf" : "exp";
    std::string erf = f == "f" ? "cuvil_erff" : "erf";
    if (k == "sigmoid")
      unary = [=](ArrayRef<std::string> e) {
        return "(" + one + " / (" + one + " + " + exp + "(-" + e[0] + ")))";
      };
    else if (k == "tanh")
      unary = [=](ArrayRef<std::string> e) { return tanhExpr(e[0], element); };
    else if (k == "gelu") {
      bool approx = attrString(call, "approximate", "none") == "tanh";
      std::string c1 = lit(0.7978845608028654), c2 = lit(0.044715),
                  r2 = lit(0.7071067811865476);
      unary = [=](ArrayRef<std::string> e) {
        const std::string &x = e[0];
        return approx ? "(" + half + " * " + x + " * (" + one + " + tanh" + f +
                            "(" + c1 + " * (" + x + " + " + c2 + " * " + x +
                            " * " + x + " * " + x + "))))"
                      : "(" + half + " * " + x + " * (" + one + " + " + erf +
                            "(" + x + " * " + r2 + ")))";
      };
    } else if (k == "silu")
      unary = [=](ArrayRef<std::string> e) {
        return "(" + e[0] + " / (" + one + " + " + exp + "(-" + e[0] + ")))";
      };
    else if (k == "hardswish") {
      std::string three = lit(3), six = lit(6), zero = lit(0);
      unary = [=](ArrayRef<std::string> e) {
        std::string r = "(" + e[0] + " + " + three + ")";
        r = "(" + r + " < " + zero + " ? " + zero + " : " + r + " > " + six +
            " ? " + six + " : " + r + ")";
        return "(" + e[0] + " * " + r + " / " + six + ")";
      };
    } else if (k == "hardsigmoid") {
      std::string a = lit(attrFloat(call, "alpha", 1.0 / 6.0)),
                  b = lit(attrFloat(call, "beta", 0.5)), zero = lit(0);
      unary = [=](ArrayRef<std::string> e) {
        std::string r = "(" + a + " * " + e[0] + " + " + b + ")";
        return "(" + r + " < " + zero + " ? " + zero + " : " + r + " > " + one +
               " ? " + one + " : " + r + ")";
      };
    } else if (k == "rsqrt")
      unary = [=](ArrayRef<std::string> e) {
        return "(" + one + " / sqrt" + f + "(" + e[0] + "))";
      };
    else if (k == "reciprocal")
      unary = [=](ArrayRef<std::string> e) {
        return "(" + one + " / " + e[0] + ")";
      };
    else if (k == "exp")
      unary = [=](ArrayRef<std::string> e) { return exp + "(" + e[0] + ")"; };
    else if (k == "erf")
      unary = [=](ArrayRef<std::string> e) { return erf + "(" + e[0] + ")"; };
    else
      unary = [=](ArrayRef<std::string> e) {
        return k.str() + f + "(" + e[0] + ")";
      };
  } else if (k == "cast") {
    unary = [=](ArrayRef<std::string> e) {
      if (element.isInteger(1))
        return "(uint8_t)(" + e[0] + " != 0)";
      return "(" + T + ")(" + e[0] + ")";
    };
  } else if (k == "expand") {
    unary = [](ArrayRef<std::string> e) { return e[0]; };
  }
  if (unary) {
    emitElementwise(out, {ins[0]}, unary);
    return success();
  }

  // Elementwise binary and where.
  static const llvm::StringMap<const char *> binaryOps = {
      {"add", "+"},         {"sub", "-"},     {"mul", "*"},
      {"div", "/"},         {"equal", "=="},  {"less", "<"},
      {"less_equal", "<="}, {"greater", ">"}, {"greater_equal", ">="}};
  if (auto it = binaryOps.find(k); it != binaryOps.end()) {
    std::string op = it->second;
    emitElementwise(out, {ins[0], ins[1]}, [=](ArrayRef<std::string> e) {
      return "(" + e[0] + " " + op + " " + e[1] + ")";
    });
    return success();
  }
  if (k == "max" || k == "min") {
    std::string cmp = k == "max" ? ">" : "<";
    emitElementwise(out, {ins[0], ins[1]}, [=](ArrayRef<std::string> e) {
      return extremumExpr(cmp, e[0], e[1]);
    });
    return success();
  }
  if (k == "pow") {
    if (!isFloat) {
      // Integer power by squaring; negative exponents truncate to 0 (or
      // stay exact for bases 1 and -1), as numpy does for integers.
      emitElementwise(out, {ins[0], ins[1]}, [=](ArrayRef<std::string> e) {
        return "(" + T + ")cuvil_ipow((int64_t)" + e[0] + ", (int64_t)" + e[1] +
               ")";
      });
      return success();
    }
    emitElementwise(out, {ins[0], ins[1]}, [=](ArrayRef<std::string> e) {
      return "pow" + f + "(" + e[0] + ", " + e[1] + ")";
    });
    return success();
  }
  if (k == "where") {
    emitElementwise(out, {ins[0], ins[1], ins[2]}, [](ArrayRef<std::string> e) {
      return "(" + e[0] + " ? " + e[1] + " : " + e[2] + ")";
    });
    return success();
  }

  // Data movement.
  if (k == "reshape" || k == "flatten" || k == "squeeze" || k == "unsqueeze") {
    line("memcpy(" + out.name + ", " + ins[0]->name + ", (size_t)" +
         bytes(out) + ");");
    return success();
  }
  if (k == "transpose") {
    SmallVector<int64_t> perm = attrInts(call, "perm");
    std::vector<std::string> inStrides = strides(*ins[0]);
    std::vector<std::string> outStrides = strides(out);
    emitLoopNest(out.dims, [&](ArrayRef<std::string> vars) {
      std::vector<std::string> src, dst;
      for (size_t d = 0; d < vars.size(); ++d) {
        src.push_back(vars[d] + "*" + inStrides[perm[d]]);
        dst.push_back(vars[d] + "*" + outStrides[d]);
      }
      line(std::string(2 * (indent - 1), ' ') + out.name + "[" +
           (dst.empty() ? "0" : absl::StrJoin(dst, " + ")) +
           "] = " + ins[0]->name + "[" +
           (src.empty() ? "0" : absl::StrJoin(src, " + ")) + "];");
    });
    return success();
  }
  auto normalize = [](int64_t axis, size_t rank) {
    return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
  };
  if (k == "concat" || k == "split") {
    int64_t axis = normalize(attrInt(call, "axis", 0), out.dims.size());
    bool isConcat = k == "concat";
    const Buffer &whole = isConcat ? out : *ins[0];
    std::vector<std::string> wholeStrides = strides(whole);
    std::string offset = "0";
    size_t pieces = isConcat ? ins.size() : call.getOutputs().size();
    for (size_t p = 0; p < pieces; ++p) {
      const Buffer &piece = isConcat ? *ins[p] : buffers[call.getOutputs()[p]];
      std::vector<std::string> pieceStrides = strides(piece);
      emitLoopNest(piece.dims, [&](ArrayRef<std::string> vars) {
        std::vector<std::string> w, q;
        for (size_t d = 0; d < vars.size(); ++d) {
          std::string coord = static_cast<int64_t>(d) == axis && offset != "0"
                                  ? "(" + vars[d] + " + " + offset + ")"
                                  : vars[d];
          w.push_back(coord + "*" + wholeStrides[d]);
          q.push_back(vars[d] + "*" + pieceStrides[d]);
        }
        std::string wi = w.empty() ? "0" : absl::StrJoin(w, " + ");
        std::string qi = q.empty() ? "0" : absl::StrJoin(q, " + ");
        if (isConcat)
          line(std::string(2 * (indent - 1), ' ') + out.name + "[" + wi +
               "] = " + piece.name + "[" + qi + "];");
        else
          line(std::string(2 * (indent - 1), ' ') + piece.name + "[" + qi +
               "] = " + whole.name + "[" + wi + "];");
      });
      offset =
          offset == "0" ? piece.dims[axis] : offset + " + " + piece.dims[axis];
    }
    return success();
  }
  if (k == "slice" || k == "pad") {
    size_t rank = out.dims.size();
    std::vector<std::string> inStrides = strides(*ins[0]);
    std::vector<std::string> outStrides = strides(out);
    if (k == "slice") {
      SmallVector<int64_t> starts = attrInts(call, "starts"),
                           axes = attrInts(call, "axes"),
                           steps = attrInts(call, "steps");
      std::vector<int64_t> start(rank, 0), step(rank, 1);
      for (size_t i = 0; i < axes.size(); ++i) {
        int64_t a = normalize(axes[i], rank);
        int64_t dim = ins[0]->type.getDimSize(a);
        if (ShapedType::isDynamic(dim))
          return call.emitOpError("slicing the dynamic batch is not supported");
        int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
        s = steps[i] > 0 ? std::clamp<int64_t>(s, 0, dim)
                         : std::clamp<int64_t>(s, 0, dim - 1);
        start[a] = s;
        step[a] = steps[i];
      }
      emitLoopNest(out.dims, [&](ArrayRef<std::string> vars) {
        std::vector<std::string> src, dst;
        for (size_t d = 0; d < rank; ++d) {
          src.push_back("(" + std::to_string(start[d]) + " + " + vars[d] + "*" +
                        std::to_string(step[d]) + ")*" + inStrides[d]);
          dst.push_back(vars[d] + "*" + outStrides[d]);
        }
        line(std::string(2 * (indent - 1), ' ') + out.name + "[" +
             (dst.empty() ? "0" : absl::StrJoin(dst, " + ")) +
             "] = " + ins[0]->name + "[" +
             (src.empty() ? "0" : absl::StrJoin(src, " + ")) + "];");
      });
      return success();
    }
    SmallVector<int64_t> pads = attrInts(call, "pads");
    std::string mode = attrString(call, "mode", "constant");
    std::string value = lit(attrFloat(call, "value", 0.0));
    if (storage.isF16() || storage.isBF16()) {
      APFloat v(attrFloat(call, "value", 0.0));
      bool lost;
      v.convert(storage.isF16() ? APFloat::IEEEhalf() : APFloat::BFloat(),
                APFloat::rmNearestTiesToEven, &lost);
      value = "(uint16_t)" + std::to_string(v.bitcastToAPInt().getZExtValue());
    }
    emitLoopNest(out.dims, [&](ArrayRef<std::string> vars) {
      std::string pad(2 * indent, ' ');
      std::vector<std::string> src, dst;
      std::vector<std::string> inside;
      for (size_t d = 0; d < rank; ++d) {
        std::string c = tmp();
        const std::string &dim = ins[0]->dims[d];
        body += pad + "int64_t " + c + " = " + vars[d] + " - " +
                std::to_string(pads[d]) + ";\n";
        if (mode == "reflect")
          body += pad + c + " = " + c + " < 0 ? -" + c + " : " + c +
                  " >= " + dim + " ? 2*(" + dim + ") - 2 - " + c + " : " + c +
                  ";\n";
        else if (mode == "edge")
          body += pad + c + " = " + c + " < 0 ? 0 : " + c + " >= " + dim +
                  " ? " + dim + " - 1 : " + c + ";\n";
        else
          inside.push_back("(" + c + " >= 0 && " + c + " < " + dim + ")");
        src.push_back(c + "*" + inStrides[d]);
        dst.push_back(vars[d] + "*" + outStrides[d]);
      }
      std::string read = ins[0]->name + "[" +
                         (src.empty() ? "0" : absl::StrJoin(src, " + ")) + "]";
      if (!inside.empty())
        read = "(" + absl::StrJoin(inside, " && ") + " ? " + read + " : " +
               value + ")";
      body += pad + out.name + "[" +
              (dst.empty() ? "0" : absl::StrJoin(dst, " + ")) + "] = " + read +
              ";\n";
    });
    return success();
  }
  if (k == "gather") {
    int64_t axis = normalize(attrInt(call, "axis", 0), ins[0]->dims.size());
    const Buffer &data = *ins[0], &indices = *ins[1];
    std::string status = tmp();
    line("{ int " + status + " = cuvil_gather(" +
         std::to_string(elementBytes(data.type.getElementType())) + ", " +
         dimsRange(data, 0, axis) + ", " + data.dims[axis] + ", " +
         dimsRange(data, axis + 1, data.dims.size()) + ", " + data.name + ", " +
         indices.name + ", " +
         (indices.type.getElementType().isInteger(64) ? "1" : "0") + ", " +
         numel(indices) + ", " + out.name + ");");
    line("  if (" + status + ") return CUVIL_ERROR_INVALID_ARGUMENT; }");
    return success();
  }

  // Micro-kernels (float32).
  for (const Buffer *b : ins)
    if (!b->type.getElementType().isIntOrIndex() && failed(f32Only(*b)))
      return failure();
  if (failed(f32Only(out)))
    return failure();
  // Packing scratch of a matrix product (a second output) or NULL.
  std::string productScratch = call.getOutputs().size() > 1
                                   ? buffers[call.getOutputs()[1]].name
                                   : "NULL";
  if (k == "matmul") {
    const Buffer &a = *ins[0], &b = *ins[1];
    std::vector<std::string> aDims = a.dims, bDims = b.dims;
    bool aVector = aDims.size() == 1, bVector = bDims.size() == 1;
    if (aVector)
      aDims.insert(aDims.begin(), "1");
    if (bVector)
      bDims.push_back("1");
    std::string m = aDims[aDims.size() - 2], kk = aDims.back(),
                n = bDims.back();
    size_t outBatchRank = std::max(aDims.size(), bDims.size()) - 2;
    std::vector<std::string> outBatch(outBatchRank);
    std::vector<std::string> aStride(outBatchRank, "0"),
        bStride(outBatchRank, "0");
    std::string aMat = joinProduct({m, kk}), bMat = joinProduct({kk, n});
    for (int side = 0; side < 2; ++side) {
      const std::vector<std::string> &dims = side ? bDims : aDims;
      std::vector<std::string> &stride = side ? bStride : aStride;
      size_t rank = dims.size() - 2, offset = outBatchRank - rank;
      std::string suffix = side ? bMat : aMat;
      for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
        if (dims[d] != "1" || outBatch[offset + d].empty())
          outBatch[offset + d] = dims[d] == "1" && !outBatch[offset + d].empty()
                                     ? outBatch[offset + d]
                                     : dims[d];
        if (dims[d] != "1")
          stride[offset + d] = suffix;
        suffix = joinProduct({suffix, dims[d]});
      }
    }
    for (std::string &d : outBatch)
      if (d.empty())
        d = "1";
    std::string outMat = joinProduct({m, n});
    FailureOr<Epilogue> epilogue = getEpilogue(call, ins);
    if (failed(epilogue))
      return failure();
    if (call.getPackedB()) {
      // B is [K, N] packed in strips at compile time (it broadcasts over
      // A's batches, which are back to back: one product of all A's rows).
      std::vector<std::string> rows(out.dims.begin(), out.dims.end() - 1);
      callWithEpilogue("cuvil_matmul_packed_f32(pool, " + joinProduct(rows) +
                           ", " + out.dims.back() + ", " + kk + ", " + a.name +
                           ", " + kk + ", 1, " + b.name + ", " + out.name +
                           ", ",
                       epilogue->present ? epilogue->initializer() : "");
      return success();
    }
    if (outBatchRank <= 1) {
      std::string count = outBatchRank ? outBatch[0] : "1";
      std::string product = "cuvil_matmul_f32(pool, " + productScratch + ", " +
                            count + ", " + m + ", " + n + ", " + kk + ", " +
                            a.name + ", " + (outBatchRank ? aStride[0] : "0") +
                            ", " + kk + ", 1, " + b.name + ", " +
                            (outBatchRank ? bStride[0] : "0") + ", " + n +
                            ", 1, " + out.name + ", ";
      // A linear layer's bias (col_bias), residual and activation, fused by
      // cuvil-fuse-epilogues, applied to each row as it is finished.
      callWithEpilogue(product, epilogue->present ? epilogue->initializer() : "");
      return success();
    }
    if (epilogue->present)
      return call.emitOpError("a fused epilogue needs a matrix product with at "
                              "most one batch dimension");
    emitLoopNest(outBatch, [&](ArrayRef<std::string> vars) {
      std::vector<std::string> ao, bo, oo;
      std::vector<std::string> outBatchStrides(outBatchRank);
      std::string suffix = outMat;
      for (int d = static_cast<int>(outBatchRank) - 1; d >= 0; --d) {
        outBatchStrides[d] = suffix;
        suffix = joinProduct({suffix, outBatch[d]});
      }
      for (size_t d = 0; d < outBatchRank; ++d) {
        if (aStride[d] != "0")
          ao.push_back(vars[d] + "*" + aStride[d]);
        if (bStride[d] != "0")
          bo.push_back(vars[d] + "*" + bStride[d]);
        oo.push_back(vars[d] + "*" + outBatchStrides[d]);
      }
      auto sum = [](const std::vector<std::string> &t) {
        return t.empty() ? std::string("0") : absl::StrJoin(t, " + ");
      };
      line(std::string(2 * (indent - 1), ' ') + "cuvil_matmul_f32(pool, " +
           productScratch + ", 1, " + m + ", " + n + ", " + kk + ", " + a.name +
           " + " + sum(ao) + ", 0, " + kk + ", 1, " + b.name + " + " + sum(bo) +
           ", 0, " + n + ", 1, " + out.name + " + " + sum(oo) + ", NULL);");
    });
    return success();
  }
  if (k == "gemm") {
    const Buffer &a = *ins[0], &b = *ins[1];
    bool ta = static_cast<bool>(call.getParam("trans_a"));
    bool tb = static_cast<bool>(call.getParam("trans_b"));
    std::string m = out.dims[0], n = out.dims[1];
    std::string kk = ta ? a.dims[0] : a.dims[1];
    std::string product =
        call.getPackedB()
            ? "cuvil_matmul_packed_f32(pool, " + m + ", " + n + ", " + kk +
                  ", " + a.name + ", " + (ta ? "1, " + m : kk + ", 1") + ", " +
                  b.name + ", " + out.name + ", "
            : "cuvil_matmul_f32(pool, " + productScratch + ", 1, " + m + ", " +
                  n + ", " + kk + ", " + a.name + ", 0, " +
                  (ta ? "1, " + m : kk + ", 1") + ", " + b.name + ", 0, " +
                  (tb ? "1, " + kk : n + ", 1") + ", " + out.name + ", ";
    FailureOr<Epilogue> epilogue = getEpilogue(call, ins);
    if (failed(epilogue))
      return failure();
    if (epilogue->present) {
      // cuvil-fuse-epilogues fused it (alpha = beta = 1, a per-column bias):
      // the kernel adds the bias, the residual and the activation per row.
      bool hasBias = ins.size() - epilogue->inputs > 2;
      callWithEpilogue(product,
                       epilogue->initializer("NULL", hasBias ? ins[2]->name : "NULL"));
      return success();
    }
    line(product + "NULL);");
    double alpha = attrFloat(call, "alpha", 1.0),
           beta = attrFloat(call, "beta", 1.0);
    if (ins.size() > 2) {
      std::string al = lit(alpha), be = lit(beta);
      emitElementwise(out, {&out, ins[2]}, [=](ArrayRef<std::string> e) {
        return (alpha == 1.0 ? e[0] : al + " * " + e[0]) + " + " +
               (beta == 1.0 ? e[1] : be + " * " + e[1]);
      });
    } else if (alpha != 1.0) {
      std::string al = lit(alpha);
      emitElementwise(out, {&out}, [=](ArrayRef<std::string> e) {
        return al + " * " + e[0];
      });
    }
    return success();
  }
  if (k == "conv2d") {
    const Buffer &x = *ins[0], &w = *ins[1];
    SmallVector<int64_t> st = attrInts(call, "strides", {1, 1});
    SmallVector<int64_t> pd = attrInts(call, "padding", {0, 0, 0, 0});
    SmallVector<int64_t> dl = attrInts(call, "dilations", {1, 1});
    // With scratch (a second output), the convolution runs as im2col plus
    // the target's matrix-product micro-kernel.
    const std::string &scratch = productScratch;
    FailureOr<Epilogue> epilogue = getEpilogue(call, ins);
    if (failed(epilogue))
      return failure();
    bool hasBias = ins.size() - epilogue->inputs > 2;
    std::optional<cuvil::l2::Algorithm> algorithm = call.getAlgorithm();
    std::string biasName = hasBias ? ins[2]->name : std::string("NULL");
    if (algorithm == cuvil::l2::Algorithm::direct_blocked &&
        attrInt(call, "groups", 1) > 1) {
      // Depthwise, weights packed [C/B][KH][KW][B] by cuvil-x86-assign-layouts.
      if ((out.block != 8 && out.block != 16) || x.block != out.block ||
          w.dims.size() != 4)
        return call.emitOpError("a blocked depthwise convolution needs input "
                                "and output in one NCHW8c or NCHW16c layout");
      callWithEpilogue(
          "(void)cuvil_dwconv_blocked_f32(pool, " + absl::StrJoin(x.dims, ", ") +
              ", " + x.name + ", " + w.dims[1] + ", " + w.dims[2] + ", " +
              w.name + ", " + biasName + ", " + std::to_string(st[0]) + ", " +
              std::to_string(st[1]) + ", " + std::to_string(pd[0]) + ", " +
              std::to_string(pd[1]) + ", " + std::to_string(dl[0]) + ", " +
              std::to_string(dl[1]) + ", " + out.dims[2] + ", " + out.dims[3] +
              ", " + out.name + ", " + std::to_string(out.block) + ", ",
          epilogue->present ? epilogue->initializer() : "");
      return success();
    }
    if (algorithm == cuvil::l2::Algorithm::direct_blocked) {
      // Weights packed [OC/B][C/ib][KH][KW][ib][B] by cuvil-x86-assign-layouts.
      if (out.block == 1 || w.dims.size() != 6 || w.dims[4] != std::to_string(x.block))
        return call.emitOpError("a blocked direct convolution needs a blocked "
                                "output and weights packed for its input");
      callWithEpilogue(
          "cuvil_conv2d_blocked_f32(CUVIL_CONVB, pool, " + scratch + ", " +
              absl::StrJoin(x.dims, ", ") + ", " + x.name + ", " +
              std::to_string(x.block) + ", " + out.dims[1] + ", " + w.dims[2] +
              ", " + w.dims[3] + ", " + w.name + ", " + biasName + ", " +
              std::to_string(st[0]) + ", " + std::to_string(st[1]) + ", " +
              std::to_string(pd[0]) + ", " + std::to_string(pd[1]) + ", " +
              std::to_string(dl[0]) + ", " + std::to_string(dl[1]) + ", " +
              out.dims[2] + ", " + out.dims[3] + ", " + out.name + ", " +
              std::to_string(out.block) + ", ",
          epilogue->present ? epilogue->initializer() : "");
      return success();
    }
    bool winograd = algorithm == cuvil::l2::Algorithm::winograd_f4x3;
    if (!winograd && (x.block > 1 || out.block > 1))
      return call.emitOpError("only direct_blocked and Winograd convolutions "
                              "read or write blocked layouts");
    std::string call_ =
        winograd
            ? "cuvil_conv2d_winograd_f32(pool, " + scratch + ", " +
                  absl::StrJoin(x.dims, ", ") + ", " + x.name + ", " +
                  std::to_string(x.block) + ", " + w.dims[0] + ", " + w.name + ", " +
                  biasName + ", " + std::to_string(pd[0]) + ", " + std::to_string(pd[1]) +
                  ", " + out.dims[2] + ", " + out.dims[3] + ", " + out.name + ", " +
                  std::to_string(out.block) + ", "
            : "cuvil_conv2d_f32(pool, " + scratch + ", " +
        absl::StrJoin(x.dims, ", ") + ", " + x.name + ", " + w.dims[0] + ", " +
        w.dims[2] + ", " + w.dims[3] + ", " + w.name + ", " +
        biasName + ", " + std::to_string(attrInt(call, "groups", 1)) + ", " +
        std::to_string(st[0]) + ", " + std::to_string(st[1]) + ", " +
        std::to_string(pd[0]) + ", " + std::to_string(pd[1]) + ", " +
        std::to_string(dl[0]) + ", " + std::to_string(dl[1]) + ", " +
        out.dims[2] + ", " + out.dims[3] + ", " + out.name + ", ";
    callWithEpilogue(call_, epilogue->present ? epilogue->initializer() : "");
    return success();
  }
  if (k == "max_pool2d" || k == "avg_pool2d") {
    const Buffer &x = *ins[0];
    SmallVector<int64_t> ks = attrInts(call, "kernel_shape");
    SmallVector<int64_t> st = attrInts(call, "strides", {1, 1});
    SmallVector<int64_t> pd = attrInts(call, "padding", {0, 0, 0, 0});
    SmallVector<int64_t> dl = attrInts(call, "dilations", {1, 1});
    if (x.block != out.block)
      return call.emitOpError("pooling keeps its input's layout");
    line(std::string(x.block > 1 ? "cuvil_pool2d_blocked_f32(" : "cuvil_pool2d_f32(") +
         (k == "max_pool2d" ? "0" : "1") +
         ", " + absl::StrJoin(x.dims, ", ") + ", " + x.name + ", " +
         std::to_string(ks[0]) + ", " + std::to_string(ks[1]) + ", " +
         std::to_string(st[0]) + ", " + std::to_string(st[1]) + ", " +
         std::to_string(pd[0]) + ", " + std::to_string(pd[1]) + ", " +
         std::to_string(dl[0]) + ", " + std::to_string(dl[1]) + ", " +
         (call.getParam("count_include_pad") ? "1" : "0") + ", " + out.dims[2] +
         ", " + out.dims[3] + ", " + out.name +
         (x.block > 1 ? ", " + std::to_string(x.block) : std::string()) + ");");
    return success();
  }
  if (k == "global_avg_pool" || k == "global_max_pool") {
    const Buffer &x = *ins[0];
    if (out.block > 1)
      return call.emitOpError("global pooling writes a row-major output");
    // Blocked [N][C/B][HW][B]: reducing the middle of [N*C/B, HW, B] leaves
    // [N][C], the row-major output.
    std::string b = std::to_string(x.block);
    line(std::string("cuvil_reduce_f32(") +
         (k == "global_avg_pool" ? "1" : "2") + ", " +
         (x.block > 1 ? "(" + dimsRange(x, 0, 2) + ")/" + b : dimsRange(x, 0, 2)) +
         ", " + dimsRange(x, 2, x.dims.size()) + ", " + b + ", " + x.name +
         ", " + out.name + ");");
    return success();
  }
  if (k == "adaptive_avg_pool2d") {
    const Buffer &x = *ins[0];
    line("cuvil_adaptive_avg_pool2d_f32(" + absl::StrJoin(x.dims, ", ") + ", " +
         x.name + ", " + out.dims[2] + ", " + out.dims[3] + ", " + out.name +
         ");");
    return success();
  }
  if (k == "softmax" || k == "log_softmax") {
    const Buffer &x = *ins[0];
    int64_t axis = normalize(attrInt(call, "axis", -1), x.dims.size());
    line(std::string("cuvil_softmax_f32(") + (k == "log_softmax" ? "1" : "0") +
         ", " + dimsRange(x, 0, axis) + ", " + x.dims[axis] + ", " +
         dimsRange(x, axis + 1, x.dims.size()) + ", " + x.name + ", " +
         out.name + ");");
    return success();
  }
  if (k == "reduce_sum" || k == "reduce_mean" || k == "reduce_max" ||
      k == "reduce_min") {
    const Buffer &x = *ins[0];
    size_t rank = x.dims.size();
    SmallVector<int64_t> axes;
    for (int64_t a : attrInts(call, "axes"))
      axes.push_back(normalize(a, rank));
    llvm::sort(axes);
    bool contiguous = true;
    for (size_t i = 1; i < axes.size(); ++i)
      contiguous &= axes[i] == axes[i - 1] + 1;
    int kind = k == "reduce_sum"    ? 0
               : k == "reduce_mean" ? 1
               : k == "reduce_max"  ? 2
                                    : 3;
    if (contiguous) {
      line("cuvil_reduce_f32(" + std::to_string(kind) + ", " +
           dimsRange(x, 0, axes.front()) + ", " +
           dimsRange(x, axes.front(), axes.back() + 1) + ", " +
           dimsRange(x, axes.back() + 1, rank) + ", " + x.name + ", " +
           out.name + ");");
      return success();
    }
    // Scattered axes: accumulate over the whole input.
    std::string init = kind == 2   ? "-INFINITY"
                       : kind == 3 ? "INFINITY"
                                   : lit(0);
    std::string i = tmp();
    line("for (int64_t " + i + " = 0; " + i + " < " + numel(out) + "; ++" + i +
         ") " + out.name + "[" + i + "] = " + init + ";");
    std::vector<std::string> xStrides = strides(x);
    std::vector<std::string> outDims;
    for (size_t d = 0; d < rank; ++d)
      if (!llvm::is_contained(axes, static_cast<int64_t>(d)))
        outDims.push_back(x.dims[d]);
    emitLoopNest(x.dims, [&](ArrayRef<std::string> vars) {
      std::vector<std::string> src, dst;
      std::string suffix = "1";
      for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
        src.push_back(vars[d] + "*" + xStrides[d]);
        if (!llvm::is_contained(axes, static_cast<int64_t>(d))) {
          dst.push_back(vars[d] + "*" + suffix);
          suffix = joinProduct({suffix, x.dims[d]});
        }
      }
      std::string o = out.name + "[" +
                      (dst.empty() ? "0" : absl::StrJoin(dst, " + ")) + "]";
      std::string v = x.name + "[" + absl::StrJoin(src, " + ") + "]";
      std::string pad(2 * indent, ' ');
      if (kind == 2)
        body += pad + "if (" + v + " > " + o + ") " + o + " = " + v + ";\n";
      else if (kind == 3)
        body += pad + "if (" + v + " < " + o + ") " + o + " = " + v + ";\n";
      else
        body += pad + o + " += " + v + ";\n";
    });
    if (kind == 1) {
      std::string j = tmp();
      std::vector<std::string> reduced;
      for (int64_t a : axes)
        reduced.push_back(x.dims[a]);
      line("for (int64_t " + j + " = 0; " + j + " < " + numel(out) + "; ++" +
           j + ") " + out.name + "[" + j + "] /= (float)" +
           joinProduct(reduced) + ";");
    }
    return success();
  }
  if (k == "layer_norm") {
    const Buffer &x = *ins[0];
    int64_t axis = normalize(attrInt(call, "axis", -1), x.dims.size());
    std::string inner = dimsRange(x, axis, x.dims.size());
    std::string scale = "NULL", bias = "NULL";
    auto segments =
        dyn_cast_or_null<DenseI32ArrayAttr>(call.getParam("operandSegmentSizes"));
    size_t next = 1;
    for (int s = 1; s <= 2; ++s) {
      bool present = segments ? segments[s] != 0 : next < ins.size();
      if (!present)
        continue;
      const Buffer &p = *ins[next++];
      if (numel(p) != inner)
        return call.emitOpError(
            "layer_norm with broadcast scale or bias is not "
            "supported by the x86 target yet");
      (s == 1 ? scale : bias) = p.name;
    }
    line("cuvil_layer_norm_f32(" + dimsRange(x, 0, axis) + ", " + inner + ", " +
         x.name + ", " + scale + ", " + bias + ", " +
         literal(attrFloat(call, "epsilon", 1e-5),
                 Float64Type::get(call.getContext())) +
         ", " + out.name + ");");
    return success();
  }
  if (k == "batch_norm") {
    const Buffer &x = *ins[0];
    line("cuvil_batch_norm_f32(" + x.dims[0] + ", " + x.dims[1] + ", " +
         dimsRange(x, 2, x.dims.size()) + ", " + x.name + ", " + ins[1]->name +
         ", " + ins[2]->name + ", " + ins[3]->name + ", " + ins[4]->name +
         ", " +
         literal(attrFloat(call, "epsilon", 1e-5),
                 Float64Type::get(call.getContext())) +
         ", " + out.name + ");");
    return success();
  }
  return call.emitOpError("'")
         << k << "' is not supported by the x86 target yet";
}

/// The metadata's dtype name of an element type.
std::string dtypeName(Type type) {
  const DTypeRow *row = dtypeRow(type);
  return row ? row->name : "unknown";
}

/// cpuid checks: (leaf, register index, bit) per feature name.
struct FeatureBit {
  const char *name;
  unsigned leaf, reg, bit;
};
constexpr FeatureBit kFeatureBits[] = {
    {"sse3", 1, 2, 0},      {"ssse3", 1, 2, 9},     {"fma", 1, 2, 12},
    {"sse4.1", 1, 2, 19},   {"sse4.2", 1, 2, 20},   {"popcnt", 1, 2, 23},
    {"avx", 1, 2, 28},      {"f16c", 1, 2, 29},     {"bmi", 7, 1, 3},
    {"avx2", 7, 1, 5},      {"bmi2", 7, 1, 8},      {"avx512f", 7, 1, 16},
    {"avx512dq", 7, 1, 17}, {"avx512cd", 7, 1, 28}, {"avx512bw", 7, 1, 30},
    {"avx512vl", 7, 1, 31},
};

const char *kHeaderTemplate =
    R"cuvil(/* Generated by %COMPILER% for model '%NAME%'. Do not edit.
 *
 * The C ABI of a Cuvil model (docs/abi.md): reentrant, no global state,
 * every call returns a cuvil_status. Link with the model's .so, or dlopen it.
 */
#ifndef CUVIL_MODEL_H
#define CUVIL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cuvil_status {
  CUVIL_OK = 0,
  CUVIL_ERROR_INVALID_ARGUMENT = 1,   /* a null pointer, or bad data */
  CUVIL_ERROR_BATCH_OUT_OF_RANGE = 2, /* batch outside 1..CUVIL_MODEL_MAX_BATCH */
  CUVIL_ERROR_WORKSPACE_TOO_SMALL = 3,
  CUVIL_ERROR_UNSUPPORTED_CPU = 4,    /* the CPU lacks an ISA the code uses */
  CUVIL_ERROR_OUT_OF_MEMORY = 5,
  CUVIL_ERROR_WEIGHTS_UNAVAILABLE = 6, /* --external-weights: file missing */
  CUVIL_ERROR_BUSY = 7,               /* the context is running another call */
  CUVIL_ERROR_TOO_MANY_THREADS = 8    /* above cuvil_context_max_threads() */
} cuvil_status;

#define CUVIL_ABI_VERSION %ABI_VERSION%
#define CUVIL_MODEL_NUM_INPUTS %NUM_INPUTS%
#define CUVIL_MODEL_NUM_OUTPUTS %NUM_OUTPUTS%
/* Largest batch (dynamic dimension 0); 0 if the model has a static shape. */
#define CUVIL_MODEL_MAX_BATCH %MAX_BATCH%
/* Bytes of workspace cuvil_model_run needs (any batch up to the maximum). */
#define CUVIL_MODEL_WORKSPACE_SIZE %WORKSPACE%
/* Threads a context uses when created with num_threads = 0. */
#define CUVIL_MODEL_DEFAULT_THREADS %THREADS%

%IO_COMMENTS%
/* A human-readable description of a status code. */
const char *cuvil_status_message(int status);

/* JSON: inputs and outputs (names, dtypes, shapes with -1 for the batch),
 * the target CPU and its features, compiler version, model hash. */
const char *cuvil_model_metadata(void);

int cuvil_model_num_inputs(void);
int cuvil_model_num_outputs(void);
size_t cuvil_model_workspace_size(void);

/* Runs the model on caller-owned memory: `inputs` and `outputs` hold one
 * pointer per tensor (dense, row-major), `workspace` at least
 * cuvil_model_workspace_size() bytes (64-byte alignment is fastest). For a
 * model with a dynamic batch, `batch` is its size (1..CUVIL_MODEL_MAX_BATCH);
 * otherwise it is ignored. Allocates nothing; safe to call from many threads
 * at once with distinct workspaces. */
int cuvil_model_run(int64_t batch, const void *const *inputs,
                    void *const *outputs, void *workspace,
                    size_t workspace_size);

/* A context owns a workspace and num_threads - 1 worker pthreads (0: the
 * compiled default), so each call needs only the tensors; results are the
 * same for any thread count. One context serves one caller at a time: a
 * call that finds it running another gets CUVIL_ERROR_BUSY. A destroyed
 * context must not be used again (a call may detect it and return
 * CUVIL_ERROR_INVALID_ARGUMENT, but cannot always). cuvil_model_run always
 * runs on the calling thread alone. */
typedef struct cuvil_context cuvil_context;
/* The most threads a context may have: 4 per CPU online, at most 1024. */
int cuvil_context_max_threads(void);
int cuvil_context_create(int num_threads, cuvil_context **context);
int cuvil_context_run(cuvil_context *context, int64_t batch,
                      const void *const *inputs, void *const *outputs);
/* The message of the context's last failed call ("" if none). */
const char *cuvil_context_error(const cuvil_context *context);
void cuvil_context_destroy(cuvil_context *context);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_MODEL_H */
)cuvil";

const char *kAbiTemplate =
    R"cuvil(/* Generated by %COMPILER%: the exported entry points. Built for the
 * baseline x86-64 ISA, so that checking the CPU cannot itself fault. */
%ABI_PRELUDE%#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200112L /* posix_memalign */
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

%HEADER_INCLUDE%

#if defined(__GNUC__)
#define CUVIL_INTERNAL __attribute__((visibility("hidden")))
#define CUVIL_EXPORT __attribute__((visibility("default")))
#else
#define CUVIL_INTERNAL
#define CUVIL_EXPORT
#endif

CUVIL_INTERNAL int cuvil_internal_run(int64_t batch, const void *const *inputs,
                                      void *const *outputs, unsigned char *arena,
                                      struct cuvil_pool *pool);
struct cuvil_pool *cuvil_pool_create(int num_threads);
void cuvil_pool_destroy(struct cuvil_pool *pool);

/* The metadata and the ABI version can be read without running the .so:
 * a loader checks them (ELF section .cuvil.metadata, note .note.cuvil)
 * before it dlopens the file (docs/abi.md). */
#if defined(__GNUC__) && defined(__ELF__)
static const char cuvil_metadata_json[]
    __attribute__((section(".cuvil.metadata"), used)) =
%METADATA%;
static const struct {
  uint32_t name_size, desc_size, type;
  char name[8];
  uint32_t abi_version;
} cuvil_abi_note __attribute__((section(".note.cuvil"), aligned(4), used)) = {
    6, 4, 1, "Cuvil", CUVIL_ABI_VERSION};
#else
static const char cuvil_metadata_json[] =
%METADATA%;
#endif
%WEIGHTS_LOADER%

static void cuvil_cpuid(unsigned leaf, unsigned sub, unsigned regs[4]) {
  __asm__ __volatile__("cpuid"
                       : "=a"(regs[0]), "=b"(regs[1]), "=c"(regs[2]), "=d"(regs[3])
                       : "a"(leaf), "c"(sub));
}

/* Checks once per process; the cached answer is the only static state that
 * changes, and it changes at most once, atomically. */
static int cuvil_cpu_supported(void) {
  static int state; /* 0 unknown, 1 supported, 2 not supported */
  int known = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
  if (known)
    return known == 1;
  unsigned r1[4] = {0, 0, 0, 0}, r7[4] = {0, 0, 0, 0}, r0[4];
  unsigned long long xcr0 = 0;
  int ok = 1;
  cuvil_cpuid(0, 0, r0);
  if (r0[0] >= 1)
    cuvil_cpuid(1, 0, r1);
  if (r0[0] >= 7)
    cuvil_cpuid(7, 0, r7);
  if (r1[2] & (1u << 27)) { /* OSXSAVE: the OS saves extended registers */
    unsigned lo, hi;
    __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = ((unsigned long long)hi << 32) | lo;
  }
  (void)xcr0;
%CPU_CHECKS%
  __atomic_store_n(&state, ok ? 1 : 2, __ATOMIC_RELEASE);
  return ok;
}

CUVIL_EXPORT const char *cuvil_status_message(int status) {
  switch (status) {
  case CUVIL_OK: return "ok";
  case CUVIL_ERROR_INVALID_ARGUMENT: return "invalid argument (a null pointer or bad input data)";
  case CUVIL_ERROR_BATCH_OUT_OF_RANGE: return "batch size out of the compiled range";
  case CUVIL_ERROR_WORKSPACE_TOO_SMALL: return "workspace smaller than cuvil_model_workspace_size()";
  case CUVIL_ERROR_UNSUPPORTED_CPU: return %CPU_MESSAGE%;
  case CUVIL_ERROR_OUT_OF_MEMORY: return "out of memory";
  case CUVIL_ERROR_WEIGHTS_UNAVAILABLE: return "the weights file beside the .so (<name>.weights.bin) is missing, unreadable or of the wrong size";
  case CUVIL_ERROR_BUSY: return "the context is running another call (use one context per thread)";
  case CUVIL_ERROR_TOO_MANY_THREADS: return "more threads than cuvil_context_max_threads() (4 per CPU online, at most 1024)";
  default: return "unknown status";
  }
}

CUVIL_EXPORT const char *cuvil_model_metadata(void) { return cuvil_metadata_json; }
CUVIL_EXPORT int cuvil_model_num_inputs(void) { return CUVIL_MODEL_NUM_INPUTS; }
CUVIL_EXPORT int cuvil_model_num_outputs(void) { return CUVIL_MODEL_NUM_OUTPUTS; }
CUVIL_EXPORT size_t cuvil_model_workspace_size(void) { return CUVIL_MODEL_WORKSPACE_SIZE; }

/* Validates a call; on error writes a message into `message`. */
static int cuvil_check(int64_t batch, const void *const *inputs,
                       void *const *outputs, char *message, size_t size) {
  int i;
  if (!cuvil_cpu_supported()) {
    snprintf(message, size, "%s", cuvil_status_message(CUVIL_ERROR_UNSUPPORTED_CPU));
    return CUVIL_ERROR_UNSUPPORTED_CPU;
  }
  if (!CUVIL_WEIGHTS_READY) {
    snprintf(message, size, "%s", cuvil_status_message(CUVIL_ERROR_WEIGHTS_UNAVAILABLE));
    return CUVIL_ERROR_WEIGHTS_UNAVAILABLE;
  }
  if (CUVIL_MODEL_MAX_BATCH > 0 && (batch < 1 || batch > CUVIL_MODEL_MAX_BATCH)) {
    snprintf(message, size, "batch %lld is outside 1..%lld, the range this model was compiled for",
             (long long)batch, (long long)CUVIL_MODEL_MAX_BATCH);
    return CUVIL_ERROR_BATCH_OUT_OF_RANGE;
  }
  if ((CUVIL_MODEL_NUM_INPUTS > 0 && !inputs) || !outputs) {
    snprintf(message, size, "the %s array is NULL", outputs ? "inputs" : "outputs");
    return CUVIL_ERROR_INVALID_ARGUMENT;
  }
  for (i = 0; i < CUVIL_MODEL_NUM_INPUTS; ++i)
    if (!inputs[i]) {
      snprintf(message, size, "input %d is NULL", i);
      return CUVIL_ERROR_INVALID_ARGUMENT;
    }
  for (i = 0; i < CUVIL_MODEL_NUM_OUTPUTS; ++i)
    if (!outputs[i]) {
      snprintf(message, size, "output %d is NULL", i);
      return CUVIL_ERROR_INVALID_ARGUMENT;
    }
  return CUVIL_OK;
}

CUVIL_EXPORT int cuvil_model_run(int64_t batch, const void *const *inputs,
                    void *const *outputs, void *workspace,
                    size_t workspace_size) {
  char message[8];
  int status = cuvil_check(batch, inputs, outputs, message, sizeof(message));
  if (status != CUVIL_OK)
    return status;
  if (!workspace && CUVIL_MODEL_WORKSPACE_SIZE > 0)
    return CUVIL_ERROR_INVALID_ARGUMENT;
  if (workspace_size < CUVIL_MODEL_WORKSPACE_SIZE)
    return CUVIL_ERROR_WORKSPACE_TOO_SMALL;
  return cuvil_internal_run(batch, inputs, outputs, (unsigned char *)workspace,
                            NULL);
}

/* Set while a context is alive; cleared (and, with free, overwritten) when
 * it is destroyed, so that a stale pointer is refused where it is cheap. */
#define CUVIL_CONTEXT_ALIVE 0x78746376636c6976ull /* "vilcvctx" */

struct cuvil_context {
  unsigned long long alive;
  int busy; /* one call at a time (atomic) */
  void *workspace;
  struct cuvil_pool *pool; /* NULL: run on the calling thread */
  int num_threads;
  char error[256];
};

static int cuvil_context_valid(const cuvil_context *context) {
  return context &&
         __atomic_load_n(&context->alive, __ATOMIC_ACQUIRE) == CUVIL_CONTEXT_ALIVE;
}

CUVIL_EXPORT int cuvil_context_max_threads(void) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 1)
    cpus = 1;
  return cpus > 256 ? 1024 : (int)(4 * cpus);
}

CUVIL_EXPORT int cuvil_context_create(int num_threads, cuvil_context **context) {
  cuvil_context *ctx;
  if (!context)
    return CUVIL_ERROR_INVALID_ARGUMENT;
  *context = NULL;
  if (num_threads < 0)
    return CUVIL_ERROR_INVALID_ARGUMENT;
  if (num_threads > cuvil_context_max_threads())
    return CUVIL_ERROR_TOO_MANY_THREADS;
  ctx = (cuvil_context *)calloc(1, sizeof(*ctx));
  if (!ctx)
    return CUVIL_ERROR_OUT_OF_MEMORY;
  /* Heavy kernels split their work over num_threads pthreads (the caller
   * and num_threads - 1 workers); results never depend on the count. */
  ctx->num_threads = num_threads ? num_threads : CUVIL_MODEL_DEFAULT_THREADS;
  if (ctx->num_threads > cuvil_context_max_threads())
    ctx->num_threads = cuvil_context_max_threads();
  if (ctx->num_threads > 1) {
    ctx->pool = cuvil_pool_create(ctx->num_threads);
    if (!ctx->pool) {
      free(ctx);
      return CUVIL_ERROR_OUT_OF_MEMORY;
    }
  }
  if (CUVIL_MODEL_WORKSPACE_SIZE > 0) {
    if (posix_memalign(&ctx->workspace, 64, (size_t)CUVIL_MODEL_WORKSPACE_SIZE) != 0) {
      cuvil_pool_destroy(ctx->pool);
      free(ctx);
      return CUVIL_ERROR_OUT_OF_MEMORY;
    }
  }
  __atomic_store_n(&ctx->alive, CUVIL_CONTEXT_ALIVE, __ATOMIC_RELEASE);
  *context = ctx;
  return CUVIL_OK;
}

CUVIL_EXPORT int cuvil_context_run(cuvil_context *context, int64_t batch,
                      const void *const *inputs, void *const *outputs) {
  int status;
  if (!cuvil_context_valid(context))
    return CUVIL_ERROR_INVALID_ARGUMENT;
  /* A second caller must not share the workspace: refuse, never compute
   * garbage. The error message belongs to the caller that holds it. */
  if (__atomic_exchange_n(&context->busy, 1, __ATOMIC_ACQUIRE))
    return CUVIL_ERROR_BUSY;
  context->error[0] = 0;
  status = cuvil_check(batch, inputs, outputs, context->error, sizeof(context->error));
  if (status == CUVIL_OK) {
    status = cuvil_internal_run(batch, inputs, outputs,
                                (unsigned char *)context->workspace, context->pool);
    if (status != CUVIL_OK)
      snprintf(context->error, sizeof(context->error), "%s", cuvil_status_message(status));
  }
  __atomic_store_n(&context->busy, 0, __ATOMIC_RELEASE);
  return status;
}

CUVIL_EXPORT const char *cuvil_context_error(const cuvil_context *context) {
  if (!context)
    return "the context is NULL";
  return cuvil_context_valid(context) ? context->error
                                      : "not a live context (destroyed?)";
}

CUVIL_EXPORT void cuvil_context_destroy(cuvil_context *context) {
  /* NULL, a destroyed context (when detectable) or one that is running a
   * call: nothing to do safely. */
  if (!cuvil_context_valid(context) ||
      __atomic_load_n(&context->busy, __ATOMIC_ACQUIRE))
    return;
  __atomic_store_n(&context->alive, 0, __ATOMIC_RELEASE);
  cuvil_pool_destroy(context->pool);
  free(context->workspace);
  free(context);
}
)cuvil";

/// --external-weights: maps <name>.weights.bin (beside the .so) when the
/// .so is loaded. The pointer is written once, before any call can run.
const char *kWeightsLoader = R"cuvil(
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define CUVIL_WEIGHTS_BYTES ((size_t)%BYTES%)
CUVIL_INTERNAL const unsigned char *cuvil_weights_external;
#define CUVIL_WEIGHTS_READY (cuvil_weights_external != NULL)

__attribute__((constructor)) static void cuvil_map_weights(void) {
  Dl_info info;
  char path[4096];
  size_t length;
  struct stat st;
  void *mapped;
  int fd;
  if (!dladdr((void *)&cuvil_map_weights, &info) || !info.dli_fname)
    return;
  length = strlen(info.dli_fname);
  if (length >= 3 && strcmp(info.dli_fname + length - 3, ".so") == 0)
    length -= 3;
  if (length + sizeof(".weights.bin") > sizeof(path))
    return;
  memcpy(path, info.dli_fname, length);
  memcpy(path + length, ".weights.bin", sizeof(".weights.bin"));
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  if (fstat(fd, &st) != 0 || (size_t)st.st_size != CUVIL_WEIGHTS_BYTES ||
      CUVIL_WEIGHTS_BYTES == 0) {
    close(fd);
    return;
  }
  mapped = mmap(NULL, CUVIL_WEIGHTS_BYTES, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (mapped != MAP_FAILED)
    cuvil_weights_external = (const unsigned char *)mapped;
}

__attribute__((destructor)) static void cuvil_unmap_weights(void) {
  if (cuvil_weights_external)
    munmap((void *)cuvil_weights_external, CUVIL_WEIGHTS_BYTES);
}
)cuvil";

/// Helpers the generated code may call: half-precision conversions (round
/// to nearest even) and integer power.
const char *kHalfHelpers = R"cuvil(
static inline float cuvil_h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu,
           mant = h & 0x3ffu, x;
  float f;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      exp = 113;
      while (!(mant & 0x400u)) {
        mant <<= 1;
        --exp;
      }
      x = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp + 112) << 23) | (mant << 13);
  }
  memcpy(&f, &x, 4);
  return f;
}

static inline uint16_t cuvil_f2h(float value) {
  uint32_t x, sign, exp, mant, half, rem;
  int32_t e;
  memcpy(&x, &value, 4);
  sign = (x >> 16) & 0x8000u;
  exp = (x >> 23) & 0xffu;
  mant = x & 0x7fffffu;
  if (exp == 0xffu)
    return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0u));
  e = (int32_t)exp - 112;
  if (e >= 0x1f)
    return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {
    uint32_t shift;
    if (e < -10)
      return (uint16_t)sign;
    mant |= 0x800000u;
    shift = (uint32_t)(14 - e);
    half = mant >> shift;
    rem = mant & ((1u << shift) - 1u);
    if (rem > (1u << (shift - 1)) || (rem == (1u << (shift - 1)) && (half & 1u)))
      ++half;
    return (uint16_t)(sign | half);
  }
  half = sign | ((uint32_t)e << 10) | (mant >> 13);
  rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u)))
    ++half;
  return (uint16_t)half;
}

static inline float cuvil_bf2f(uint16_t b) {
  uint32_t x = (uint32_t)b << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

static inline uint16_t cuvil_f2bf(float value) {
  uint32_t x;
  memcpy(&x, &value, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

static inline int64_t cuvil_ipow(int64_t base, int64_t exponent) {
  int64_t result = 1;
  if (exponent < 0)
    return base == 1 ? 1 : base == -1 ? (exponent % 2 ? -1 : 1) : 0;
  while (exponent) {
    if (exponent & 1)
      result *= base;
    base *= base;
    exponent >>= 1;
  }
  return result;
}
)cuvil";

/// `text` with every key of `subs` replaced in one pass: substituted text
/// (which may quote the model) is never searched for keys again.
std::string
replaceAll(const std::string &text,
           const std::vector<std::pair<std::string, std::string>> &subs) {
  return absl::StrReplaceAll(text, subs);
}

} // namespace

std::string EmittedModel::singleSource() const {
  // One translation unit: the header once, then the model, then the ABI;
  // the model's feature macro (the thread pool's sched_getcpu) goes first.
  std::string model =
      absl::StrReplaceAll(modelSource, {{"#include \"model.h\"\n", ""}});
  std::string abi =
      absl::StrReplaceAll(abiSource, {{"#include \"model.h\"\n", ""}});
  return "#ifndef _GNU_SOURCE\n#define _GNU_SOURCE\n#endif\n" + header + "\n" +
         model + "\n" + abi;
}

absl::StatusOr<EmittedModel> emitModel(ModuleOp module,
                                       const EmitOptions &options) {
  StatusDiagnosticHandler diagnostics(module.getContext());
  func::FuncOp func;
  for (func::FuncOp candidate : module.getOps<func::FuncOp>()) {
    if (candidate.isExternal())
      continue;
    if (func)
      return absl::UnimplementedError(
          "the x86 target compiles one function per model");
    func = candidate;
  }
  if (!func || !func->hasAttr("cuvil.num_inputs"))
    return absl::InvalidArgumentError("no planned level2 function to emit");
  Emitter emitter(func, module, options);
  if (failed(emitter.run()))
    return diagnostics.consumeStatus(absl::StatusCode::kInvalidArgument);

  int64_t numInputs =
      func->getAttrOfType<IntegerAttr>("cuvil.num_inputs").getInt();
  int64_t numOutputs =
      func->getAttrOfType<IntegerAttr>("cuvil.num_outputs").getInt();
  int64_t maxBatch = 0;
  if (auto attr = module->getAttrOfType<IntegerAttr>("cuvil.max_batch"))
    maxBatch = attr.getInt();

  // Metadata and the header's description of each tensor. Names come from
  // the model: comments quote them escaped, JSON holds them as UTF-8.
  std::string ioComments;
  auto describe = [&](int64_t index, bool isInput) {
    BlockArgument arg = func.getArgument(1 + index + (isInput ? 0 : numInputs));
    auto type = cast<MemRefType>(arg.getType());
    std::string name = isInput ? "input" + std::to_string(index)
                               : "output" + std::to_string(index);
    if (auto attr =
            func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "cuvil.name"))
      name = attr.str();
    llvm::json::Array shape;
    std::vector<std::string> dims;
    for (int64_t d : type.getShape()) {
      bool dynamic = ShapedType::isDynamic(d);
      shape.push_back(dynamic ? int64_t{-1} : d);
      dims.push_back(dynamic ? "batch" : std::to_string(d));
    }
    ioComments += "/* " + std::string(isInput ? "input " : "output ") +
                  std::to_string(index) + " '" + cCommentText(name) +
                  "': " + dtypeName(type.getElementType()) + " [" +
                  absl::StrJoin(dims, ", ") + "] */\n";
    return llvm::json::Object{{"name", jsonText(name)},
                              {"dtype", dtypeName(type.getElementType())},
                              {"shape", std::move(shape)}};
  };
  llvm::json::Array inputs, outputs, features;
  for (int64_t i = 0; i < numInputs; ++i)
    inputs.push_back(describe(i, true));
  for (int64_t i = 0; i < numOutputs; ++i)
    outputs.push_back(describe(i, false));
  for (const std::string &f : options.cpuFeatures)
    features.push_back(jsonText(f));
  // The runtime families the model calls, and the micro-kernel variants
  // the target's features choose (Runtime.h; the metadata records them).
  RuntimeSelection runtime = selectRuntime(
      func, options.cpuFeatures, !options.inlineWeights, options.l2Bytes);

  EmittedModel result;
  llvm::json::Object metadata{
      {"abi_version", kAbiVersion},
      {"model", jsonText(func.getName())},
      {"inputs", std::move(inputs)},
      {"outputs", std::move(outputs)},
      {"max_batch", maxBatch},
      {"workspace_bytes", emitter.arenaBytes},
      {"weights",
       llvm::json::Object{
           {"storage", options.externalWeights ? "external" : "embedded"},
           {"bytes", emitter.weightBytes}}},
      {"target", llvm::json::Object{{"triple", "x86_64-linux-gnu"},
                                    {"cpu", jsonText(options.cpu)},
                                    {"features", std::move(features)}}},
      {"kernels", llvm::json::Object{{"sgemm4", runtime.sgemm4},
                                     {"dwconv", runtime.dwconv},
                                     {"convb", runtime.convb}}},
      {"compiler", jsonText(options.compilerVersion)},
      {"model_hash", jsonText(options.modelHash)},
  };
  llvm::raw_string_ostream(result.metadata)
      << llvm::json::Value(std::move(metadata));

  // Substituted in one pass, so that no substituted text is read as a key.
  std::vector<std::pair<std::string, std::string>> subs = {
      {"%COMPILER%", cCommentText(options.compilerVersion)},
      {"%NAME%", cCommentText(func.getName())},
      {"%NUM_INPUTS%", std::to_string(numInputs)},
      {"%NUM_OUTPUTS%", std::to_string(numOutputs)},
      {"%MAX_BATCH%", std::to_string(maxBatch)},
      {"%WORKSPACE%", std::to_string(emitter.arenaBytes)},
      {"%THREADS%", std::to_string(std::max(options.threadsDefault, 1))},
      {"%IO_COMMENTS%", ioComments},
      {"%ABI_VERSION%", std::to_string(kAbiVersion)},
      {"%CPU_MESSAGE%",
       cStringLiteral("this CPU lacks an instruction set the model was "
                      "compiled for (" +
                      options.cpu + ")")},
  };
  result.header = replaceAll(kHeaderTemplate, subs);

  // CPU checks for the features the code was built with.
  std::string checks;
  bool needsAvx = false, needsAvx512 = false;
  for (const std::string &f : options.cpuFeatures) {
    for (const FeatureBit &bit : kFeatureBits) {
      if (f != bit.name)
        continue;
      checks += llvm::formatv("  ok &= (r{0}[{1}] >> {2}) & 1; /* {3} */\n",
                              bit.leaf, bit.reg, bit.bit, bit.name)
                    .str();
      needsAvx |= f.rfind("avx", 0) == 0 || f == "fma" || f == "f16c";
      needsAvx512 |= f.rfind("avx512", 0) == 0;
    }
  }
  if (needsAvx)
    checks += "  ok &= (xcr0 & 0x6) == 0x6; /* the OS saves YMM state */\n";
  if (needsAvx512)
    checks += "  ok &= (xcr0 & 0xe6) == 0xe6; /* and ZMM state */\n";
  if (checks.empty())
    checks = "  (void)r1;\n  (void)r7;\n";
  subs.push_back({"%CPU_CHECKS%", checks});
  subs.push_back({"%METADATA%", cStringLiteral(result.metadata)});
  subs.push_back({"%HEADER_INCLUDE%", "#include \"model.h\""});
  if (options.externalWeights) {
    subs.push_back({"%ABI_PRELUDE%", "#define _GNU_SOURCE /* dladdr */\n"});
    subs.push_back(
        {"%WEIGHTS_LOADER%",
         absl::StrReplaceAll(
             kWeightsLoader,
             {{"%BYTES%", std::to_string(emitter.weightsBlob.size())}})});
  } else {
    subs.push_back({"%ABI_PRELUDE%", ""});
    subs.push_back({"%WEIGHTS_LOADER%", "#define CUVIL_WEIGHTS_READY 1\n"});
  }
  result.abiSource = replaceAll(kAbiTemplate, subs);

  std::string model =
      "/* Generated by " + options.compilerVersion +
      ": the model's code. Do not edit. */\n"
      "#ifndef _GNU_SOURCE\n#define _GNU_SOURCE /* the thread pool's "
      "sched_getcpu */\n#endif\n"
      "#include <math.h>\n#include <stdint.h>\n#include <stddef.h>\n"
      "#include <string.h>\n\n#include \"model.h\"\n\n"
      "#if defined(__GNUC__)\n"
      "#define CUVIL_ALIGN64 __attribute__((aligned(64)))\n"
      "#define CUVIL_INTERNAL __attribute__((visibility(\"hidden\")))\n"
      "#define CUVIL_NOINLINE __attribute__((noinline))\n"
      "#else\n#define CUVIL_ALIGN64\n#define CUVIL_INTERNAL\n"
      "#define CUVIL_NOINLINE\n#endif\n\n" +
      assembleRuntime(runtime) + "\n" + kHalfHelpers;
  if (options.inlineWeights) {
    model += emitter.weightsDecls;
  } else if (options.externalWeights) {
    // Mapped by the entry points' constructor (see the ABI source).
    model +=
        "extern const unsigned char *cuvil_weights_external CUVIL_INTERNAL;\n"
        "#define cuvil_weights cuvil_weights_external\n";
    result.weightsBlob = std::move(emitter.weightsBlob);
  } else {
    model += "extern const unsigned char cuvil_weights[] CUVIL_INTERNAL;\n";
    result.weightsBlob = std::move(emitter.weightsBlob);
    result.weightsAsm =
        "/* The model's weights, 64-byte aligned, read-only. */\n"
        "  .section .rodata.cuvil_weights,\"a\",@progbits\n"
        "  .balign 64\n  .globl cuvil_weights\n  .hidden cuvil_weights\n"
        "  .type cuvil_weights,@object\n"
        "cuvil_weights:\n  .incbin \"weights.bin\"\n"
        "  .size cuvil_weights, " +
        std::to_string(result.weightsBlob.size()) +
        "\n"
        "  .section .note.GNU-stack,\"\",@progbits\n";
  }
  model += "\n" + emitter.runFunctions();
  result.modelSource = std::move(model);
  return result;
}

} // namespace cuvil::x86
