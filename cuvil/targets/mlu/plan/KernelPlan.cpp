//===- KernelPlan.cpp - tiles, buffers and tasks for one layer ------------===//
//
// Tiles start at sizes that keep the vector unit busy (a few hundred
// values per __bang_* call) and shrink, the dimension whose buffers weigh
// most first, until the buffers fit the core's NRAM less its reserve. Then
// work items are made small enough that every core of the chip gets one.
// Streaming loops (a product's K tiles, a convolution's input channels)
// load their next tile while the vector unit works on this one, so their
// buffers are planned twice.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/mlu/plan/KernelPlan.h"

#include "cuvil/ir/CuvilL2Dialect.h"

#include "absl/strings/str_cat.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <functional>
#include <optional>

namespace cuvil::mlu {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct Planner {
  const Problem &p;
  const Chip &chip;
  int64_t align; // elements per vector alignment

  Planner(const Problem &p, const Chip &chip)
      : p(p), chip(chip), align(kAlignBytes / p.elementBytes) {}

  int64_t up(int64_t elements) const { return alignElements(elements, p.elementBytes); }
  bool half() const { return p.elementBytes == 2; }
  /// Whether the fused activation needs a second scratch row (the hard
  /// ones clip a value computed beside the sums: cuvil_epilogue_activate).
  bool hardActivation() const {
    return p.act == Activation::HardSigmoid || p.act == Activation::HardSwish;
  }
  /// Bytes of the buffers in `space`, each padded to whole vectors.
  int64_t total(const std::vector<OnChipBuffer> &buffers,
                l2::MemorySpace space = l2::MemorySpace::nram) const {
    int64_t sum = 0;
    for (const OnChipBuffer &b : buffers)
      if (b.space == space)
        sum += b.bytes(p.elementBytes);
    return sum;
  }
  bool fits(const std::vector<OnChipBuffer> &buffers) const {
    return total(buffers) <= chip.nramBudget() &&
           total(buffers, l2::MemorySpace::wram) <= chip.wramBytes;
  }
  absl::Status tooBig(const std::vector<OnChipBuffer> &buffers,
                      const std::string &what) const {
    if (total(buffers, l2::MemorySpace::wram) > chip.wramBytes)
      return absl::ResourceExhaustedError(absl::StrCat(
          "its smallest tile (", what, ") needs ",
          total(buffers, l2::MemorySpace::wram), " bytes of WRAM; ", chip.name,
          " has ", chip.wramBytes, " per core"));
    return absl::ResourceExhaustedError(absl::StrCat(
        "its smallest tile (", what, ") needs ", total(buffers),
        " bytes of NRAM; ", chip.name,
        " has ", chip.nramBudget(), " per core after the ",
        chip.nramReserveBytes, "-byte reserve"));
  }

  /// Whether a product's weight block of `blockBytes`, shared by the row
  /// tiles of M rows in Mt, is worth staging in SRAM (Union1): the tiles
  /// would read it more often than there are clusters, every task can get
  /// a row tile of it, and it fits the cluster's SRAM.
  bool stagesRows(int64_t M, int64_t Mt, int64_t blockBytes) const {
    return ceilDiv(M, Mt) > chip.clusters && M >= chip.cores() &&
           blockBytes <= chip.sramBudget();
  }
  /// The same for a convolution's output channel tile of `blockBytes`
  /// shared by `items` (image, row tile) items: every task gets one, and
  /// the block is large enough to matter (a grouped one's few weights are
  /// not).
  bool stagesWindows(int64_t items, int64_t blockBytes) const {
    return items >= chip.cores() && blockBytes <= chip.sramBudget() &&
           blockBytes >= kMinStagedBytes;
  }
  static constexpr int64_t kMinStagedBytes = 4096;

  absl::StatusOr<KernelPlan> gemm();
  std::optional<KernelPlan> stagedGemm(int64_t Mt, int64_t Kt, int64_t Nt,
                                       std::vector<OnChipBuffer> buffers);
  absl::StatusOr<KernelPlan> gemmInt8();
  absl::StatusOr<KernelPlan> window();
  std::vector<OnChipBuffer> windowBuffers(int64_t OCt, int64_t Ct,
                                          int64_t Ht) const;
  KernelPlan windowPlan(int64_t OCt, int64_t Ct, int64_t Ht) const;
  std::optional<KernelPlan> stagedConv(int64_t OCt, int64_t Ct, int64_t Ht);
  absl::StatusOr<KernelPlan> convInt8();
  absl::StatusOr<KernelPlan> rows();
  absl::StatusOr<KernelPlan> binary();
  KernelPlan gather();
  KernelPlan parts();
  absl::StatusOr<KernelPlan> pad();
};

OnChipBuffer nram(const char *name, int64_t elements, int64_t copies = 1) {
  return {name, l2::MemorySpace::nram, elements, copies, 0};
}

/// A float32 buffer of sums, whatever the model's precision.
OnChipBuffer sums(const char *name, int64_t elements) {
  return {name, l2::MemorySpace::nram, elements, 1, 4};
}

/// Fixed-point values: int8 in NRAM, or the tensor unit's weights in WRAM.
OnChipBuffer bytes(const char *name, int64_t elements,
                   l2::MemorySpace space = l2::MemorySpace::nram) {
  return {name, space, elements, 1, 1};
}

/// The fixed-point products' work items: rows (output rows) halved until
/// every core gets one; their channel tile stays the tensor unit's 64.
int64_t splitForCores(int64_t &rows, int64_t cores,
                      const std::function<int64_t()> &items) {
  while (items() < cores && rows > 1)
    rows = ceilDiv(rows, 2);
  return items();
}

/// The staged form of a product whose B is shared by many row tiles:
/// Union1 tasks, each cluster copying a K x Nt block of B into its SRAM
/// once and every task's row tiles reading it from there, instead of each
/// item reading it from GDRAM (cuvil_gemm_staged). Chosen when the row
/// tiles, Mt made small enough that every task has one per block, would
/// read each block more often than there are clusters, and the block fits
/// SRAM.
std::optional<KernelPlan>
Planner::stagedGemm(int64_t Mt, int64_t Kt, int64_t Nt,
                    std::vector<OnChipBuffer> buffers) {
  int64_t batch = p.dim("batch"), M = p.dim("M"), N = p.dim("N"),
          K = p.dim("K");
  if (!stagesRows(M, Mt, K * Nt * p.elementBytes))
    return std::nullopt;
  Mt = std::min(Mt, ceilDiv(M, chip.cores()));
  KernelPlan plan;
  plan.tile = {Mt, Kt, Nt};
  plan.buffers = std::move(buffers);
  plan.buffers.push_back({"sb", l2::MemorySpace::sram, K * Nt, 1, 0});
  plan.functionType = FunctionType::Union1;
  plan.workItems = batch * ceilDiv(M, Mt) * ceilDiv(N, Nt);
  plan.doubleBuffered = ceilDiv(K, Kt) > 1;
  // A once per column block; B once per cluster.
  plan.gdramBytes =
      p.elementBytes *
      (batch * M * K * ceilDiv(N, Nt) + chip.clusters * batch * K * N +
       batch * M * N * (p.operands[4] >= 0 ? 2 : 1) +
       (p.operands[3] >= 0 ? batch * ceilDiv(M, Mt) * N : 0));
  return plan;
}

/// The staged form of an ungrouped convolution whose weights many items
/// share: Union1 tasks, each cluster copying an output channel tile's
/// weights into its SRAM once and every task's (image, row tile) items
/// reading them from there (cuvil_conv2d_staged). Chosen when rows can be
/// split so that every task has an item per block, and the block fits.
std::optional<KernelPlan> Planner::stagedConv(int64_t OCt, int64_t Ct,
                                              int64_t Ht) {
  int64_t N = p.dim("N"), C = p.dim("C"), W = p.dim("W"), OC = p.dim("OC"),
          OH = p.dim("OH"), OW = p.dim("OW"), taps = p.dim("KH") * p.dim("KW");
  // N * OH: the most items rows split into (one output row each).
  if (p.dim("G") != 1 ||
      !stagesWindows(N * OH, OCt * C * taps * p.elementBytes))
    return std::nullopt;
  while (N * ceilDiv(OH, Ht) < chip.cores())
    Ht = ceilDiv(Ht, 2);
  KernelPlan plan = windowPlan(OCt, Ct, Ht);
  plan.buffers.push_back({"sw", l2::MemorySpace::sram, OCt * C * taps, 1, 0});
  plan.functionType = FunctionType::Union1;
  int64_t rowsIn = windowRowsIn(p, Ht), octiles = ceilDiv(OC, OCt);
  plan.gdramBytes =
      p.elementBytes * (N * C * rowsIn * W * ceilDiv(OH, Ht) * octiles +
                        N * OC * OH * OW * (p.operands[4] >= 0 ? 2 : 1) +
                        chip.clusters * OC * C * taps);
  return plan;
}

absl::StatusOr<KernelPlan> Planner::gemmInt8() {
  int64_t M = p.dim("M"), N = p.dim("N"), K = p.dim("K"), Np = p.dim("Np"),
          Kp = p.dim("Kp");
  bool residual = p.operands[4] >= 0;
  // 64 weight rows in WRAM at a time: Cambricon's MLU2xx code interleaves
  // a WRAM tile's output channels over the tensor unit's 64 lanes
  // (logical channel lane + 64 i at position lane * (rows / 64) + i), which
  // for one tile of 64 is their plain order (docs/mlu.md).
  int64_t Mt = std::min<int64_t>(M, 64), Nt = 64;
  auto buffers = [&] {
    std::vector<OnChipBuffer> b = {
        nram("row", Kp),      bytes("q", Kp),
        sums("acc", Mt * Nt), sums("tmp", Nt),
        nram("vec", Nt),      bytes("wt", Nt * Kp, l2::MemorySpace::wram)};
    if (residual)
      b.push_back(nram("res", Mt * Nt));
    if (hardActivation())
      b.push_back(sums("act2", Nt));
    return b;
  };
  while (!fits(buffers())) {
    if (Mt > 1)
      Mt = ceilDiv(Mt, 2);
    else
      return tooBig(buffers(), "1 row, 64 columns of all of K");
  }
  auto items = [&] { return ceilDiv(M, Mt) * ceilDiv(N, Nt); };
  KernelPlan plan;
  // Staged as cuvil_gemm_int8_staged when the weights' 64 rows serve more
  // row tiles than the chip has clusters (stagedGemm's rule).
  bool staged = stagesRows(M, Mt, Nt * Kp);
  if (staged) {
    Mt = std::min(Mt, ceilDiv(M, chip.cores()));
    plan.workItems = items();
    plan.functionType = FunctionType::Union1;
  } else {
    plan.workItems = splitForCores(Mt, chip.cores(), items);
  }
  plan.tile = {Mt, Kp, Nt};
  plan.buffers = buffers();
  if (staged)
    plan.buffers.push_back(bytes("sw", Nt * Kp, l2::MemorySpace::sram));
  // A is read once per column tile, the weights once per row tile (once
  // per cluster when staged).
  plan.gdramBytes = 4 * (M * K * ceilDiv(N, Nt) + M * N * (residual ? 2 : 1) +
                         (p.operands[3] >= 0 ? ceilDiv(M, Mt) * N : 0)) +
                    (staged ? chip.clusters : ceilDiv(M, Mt)) * Np * Kp;
  return plan;
}

absl::StatusOr<KernelPlan> Planner::convInt8() {
  int64_t C = p.dim("C"), W = p.dim("W"), OC = p.dim("OC"), OH = p.dim("OH"),
          OW = p.dim("OW"), Cp = p.dim("Cp"), OCp = p.dim("OCp"),
          taps = p.dim("KH") * p.dim("KW");
  int64_t Wp = (OW - 1) * p.dim("SW") + p.dim("KW");
  bool residual = p.operands[4] >= 0;
  // Channel chunks divide Cp, so that a chunk's weights never read past it;
  // 64 output channels at a time in WRAM (their plain order: gemmInt8).
  int64_t Ct = Cp, OCt = 64;
  int64_t Ht = std::clamp<int64_t>(ceilDiv(1024, OW), 1, OH);
  auto buffers = [&] {
    int64_t rowsIn = windowRowsIn(p, Ht), Pt = windowPositions(p, Ht);
    std::vector<OnChipBuffer> b = {
        // The chunk's real channels only (a stem's 3, not its 64).
        sums("x", alignElements(std::min(Ct, C) * rowsIn * W, 1)),
        bytes("q", alignElements(std::min(Ct, C) * rowsIn * W, 1)),
        bytes("xh", rowsIn * Wp * Ct),
        sums("part", OCt * Pt),
        sums("acc", OCt * Pt),
        sums("tmp", Pt),
        sums("vec", OCt),
        bytes("wt", OCt * taps * Ct, l2::MemorySpace::wram)};
    if (residual)
      b.push_back(sums("res", OCt * Pt));
    if (hardActivation())
      b.push_back(sums("act2", Pt));
    return b;
  };
  auto halveChannels = [&] {
    for (int64_t c = Ct - 64; c >= 64; c -= 64)
      if (Cp % c == 0 && c <= Ct / 2)
        return Ct = c, true;
    return Ct > 64 ? (Ct = 64, true) : false;
  };
  while (!fits(buffers())) {
    if (Ct > 64 && Ht == 1)
      halveChannels();
    else if (Ht > 1)
      Ht = ceilDiv(Ht, 2);
    else if (!halveChannels())
      return tooBig(buffers(), "one output row, 64 channels in and out");
  }
  int64_t N = p.dim("N");
  auto items = [&] { return N * ceilDiv(OC, OCt) * ceilDiv(OH, Ht); };
  KernelPlan plan;
  plan.workItems = splitForCores(Ht, chip.cores(), items);
  // Staged as cuvil_conv2d_int8_staged when every task has an (image, row
  // tile) item per channel tile (stagedConv's rule; splitForCores only
  // made the rows fewer).
  int64_t block = OCt * taps * Cp;
  bool staged = stagesWindows(N * ceilDiv(OH, Ht), block);
  if (staged)
    plan.functionType = FunctionType::Union1;
  plan.tile = {OCt, Ct, Ht};
  plan.buffers = buffers();
  if (staged)
    plan.buffers.push_back(bytes("sw", block, l2::MemorySpace::sram));
  int64_t inputReads =
      N * C * windowRowsIn(p, Ht) * W * ceilDiv(OH, Ht) * ceilDiv(OC, OCt);
  int64_t outputs = N * OC * OH * OW;
  plan.gdramBytes =
      4 * (inputReads + outputs * (residual ? 2 : 1)) +
      OCp * taps * Cp * (staged ? chip.clusters : N * ceilDiv(OH, Ht));
  return plan;
}

absl::StatusOr<KernelPlan> Planner::gemm() {
  int64_t batch = p.dim("batch"), M = p.dim("M"), N = p.dim("N"),
          K = p.dim("K");
  bool residual = p.operands[4] >= 0;
  int64_t Mt = std::min<int64_t>(M, 64), Nt = std::min<int64_t>(up(N), 512),
          Kt = std::min<int64_t>(K, 256);
  auto buffers = [&] {
    std::vector<OnChipBuffer> b = {nram("a", Mt * Kt, 2), nram("b", Kt * Nt, 2),
                                   sums("acc", Mt * Nt), sums("tmp", Nt),
                                   nram("vec", Nt)};
    if (residual)
      b.push_back(nram("res", Mt * Nt));
    if (hardActivation())
      b.push_back(sums("act2", Nt));
    if (half()) // float16 widened to sum in float32, and narrowed back
      for (OnChipBuffer extra : {sums("bf", Kt * Nt), sums("vecf", Nt),
                                 nram("out", Mt * Nt)})
        b.push_back(extra);
    return b;
  };
  while (!fits(buffers())) {
    if (Kt > 32)
      Kt = ceilDiv(Kt, 2);
    else if (Mt > 1)
      Mt = ceilDiv(Mt, 2);
    else if (Nt > align)
      Nt = up(Nt / 2);
    else
      return tooBig(buffers(), "1 row, 32 of K, one vector of N");
  }
  if (std::optional<KernelPlan> staged = stagedGemm(Mt, Kt, Nt, buffers()))
    return *staged;
  // Every core gets an item: narrower column tiles first, then fewer rows.
  auto items = [&] { return batch * ceilDiv(M, Mt) * ceilDiv(N, Nt); };
  while (items() < chip.cores() && (Nt > align || Mt > 1)) {
    if (Nt > align)
      Nt = up(Nt / 2);
    else
      Mt = ceilDiv(Mt, 2);
  }
  KernelPlan plan;
  plan.tile = {Mt, Kt, Nt};
  plan.buffers = buffers();
  plan.workItems = items();
  plan.doubleBuffered = ceilDiv(K, Kt) > 1;
  // A is read once per column tile, B once per row tile.
  int64_t mtiles = ceilDiv(M, Mt), ntiles = ceilDiv(N, Nt);
  plan.gdramBytes = p.elementBytes *
                    (batch * M * K * ntiles + batch * mtiles * K * N +
                     batch * M * N * (residual ? 2 : 1) +
                     (p.operands[3] >= 0 ? batch * mtiles * N : 0));
  return plan;
}

std::vector<OnChipBuffer> Planner::windowBuffers(int64_t OCt, int64_t Ct,
                                                 int64_t Ht) const {
  int64_t W = p.dim("W"), taps = p.dim("KH") * p.dim("KW");
  int64_t rowsIn = windowRowsIn(p, Ht), pt = windowPositions(p, Ht);
  if (p.kind != "conv2d")
    return {nram("x", rowsIn * W), nram("p", taps * pt), nram("acc", pt),
            nram("tmp", pt)};
  std::vector<OnChipBuffer> b = {nram("x", Ct * rowsIn * W, 2),
                                 nram("w", OCt * Ct * taps, 2),
                                 nram("p", Ct * taps * pt),
                                 sums("acc", OCt * pt),
                                 sums("tmp", pt),
                                 nram("vec", up(OCt))};
  if (p.operands[4] >= 0)
    b.push_back(nram("res", OCt * pt));
  if (hardActivation())
    b.push_back(sums("act2", pt));
  if (half())
    for (OnChipBuffer extra :
         {sums("pf", Ct * taps * pt), nram("out", OCt * pt)})
      b.push_back(extra);
  return b;
}

KernelPlan Planner::windowPlan(int64_t OCt, int64_t Ct, int64_t Ht) const {
  bool conv = p.kind == "conv2d";
  int64_t N = p.dim("N"), C = p.dim("C"), W = p.dim("W"), OC = p.dim("OC"),
          OH = p.dim("OH"), OW = p.dim("OW"), G = p.dim("G"),
          taps = p.dim("KH") * p.dim("KW");
  int64_t cg = C / G, ocg = OC / G;
  KernelPlan plan;
  plan.tile = {OCt, Ct, Ht};
  plan.buffers = windowBuffers(OCt, Ct, Ht);
  plan.workItems = N * (conv ? G * ceilDiv(ocg, OCt) : C) * ceilDiv(OH, Ht);
  plan.doubleBuffered = conv && ceilDiv(cg, Ct) > 1;
  int64_t inputReads = N * C * windowRowsIn(p, Ht) * W * ceilDiv(OH, Ht) *
                       (conv ? ceilDiv(ocg, OCt) : 1);
  int64_t outputs = N * OC * OH * OW;
  plan.gdramBytes =
      p.elementBytes *
      (inputReads + outputs * (conv && p.operands[4] >= 0 ? 2 : 1) +
       (conv ? OC * cg * taps * N * ceilDiv(OH, Ht) : 0) +
       (p.isMax || conv ? 0 : OH * OW * N * C));
  return plan;
}

absl::StatusOr<KernelPlan> Planner::window() {
  bool conv = p.kind == "conv2d";
  int64_t C = p.dim("C"), OC = p.dim("OC"), OH = p.dim("OH"), OW = p.dim("OW"),
          G = p.dim("G");
  int64_t cg = C / G, ocg = OC / G;
  int64_t OCt = conv ? std::min<int64_t>(ocg, 64) : 1;
  int64_t Ct = conv ? std::min<int64_t>(cg, 64) : 1;
  int64_t Ht = std::clamp<int64_t>(ceilDiv(1024, OW), 1, OH);
  while (!fits(windowBuffers(OCt, Ct, Ht))) {
    if (Ct > 8)
      Ct = ceilDiv(Ct, 2);
    else if (Ht > 1)
      Ht = ceilDiv(Ht, 2);
    else if (OCt > 1)
      OCt = ceilDiv(OCt, 2);
    else if (Ct > 1)
      Ct = ceilDiv(Ct, 2);
    else
      return tooBig(windowBuffers(OCt, Ct, Ht),
                    "one output row of one channel");
  }
  if (conv)
    if (std::optional<KernelPlan> staged = stagedConv(OCt, Ct, Ht))
      return *staged;
  int64_t N = p.dim("N");
  auto items = [&] {
    return N * (conv ? G * ceilDiv(ocg, OCt) : C) * ceilDiv(OH, Ht);
  };
  // Fewer output rows per item while they still fill whole vectors, then
  // fewer channels: rows shorter than a vector would waste its lanes.
  while (items() < chip.cores() && (Ht > 1 || OCt > 1)) {
    bool rowsFill = ceilDiv(Ht, 2) * OW >= align;
    if (Ht > 1 && (rowsFill || OCt == 1))
      Ht = ceilDiv(Ht, 2);
    else
      OCt = ceilDiv(OCt, 2);
  }
  return windowPlan(OCt, Ct, Ht);
}

absl::StatusOr<KernelPlan> Planner::rows() {
  int64_t rows = p.dim("rows"), L = p.dim("L"), Lp = up(L), M = p.dim("M");
  int64_t Rt = std::max<int64_t>(1, ceilDiv(rows, chip.cores()));
  Rt = std::min<int64_t>(Rt, 64);
  // Rows compute in float32; a float16 model's rows are staged in `stage`
  // (also what its vectors of parameters are loaded through).
  int64_t vector = p.kind == "batch_norm" || p.mode == "rows" ? up(M) : Lp;
  auto buffers = [&] {
    std::vector<OnChipBuffer> b = {sums("t", Rt * Lp)};
    if (half())
      b.push_back(nram("stage", std::max(Rt * Lp, vector)));
    if (p.kind == "softmax") {
      b.push_back(sums("e", Lp));
    } else if (p.kind == "layer_norm") {
      for (const char *name : {"sq", "g", "b", "mask"})
        b.push_back(sums(name, Lp));
    } else if (p.kind == "rows_reduce") {
      b.push_back(sums("out", up(Rt)));
    } else if (p.kind == "batch_norm") {
      b.push_back(sums("sc", up(M)));
      b.push_back(sums("sh", up(M)));
      b.push_back(sums("tmp", std::max(Lp, up(M))));
      return b;
    } else { // a broadcast binary: all of b, and a row of scratch
      b.push_back(sums("bv", vector));
      b.push_back(sums("tmp", Lp));
      return b;
    }
    b.push_back(sums("lanes", kAlignBytes / 4));
    return b;
  };
  while (!fits(buffers())) {
    if (Rt == 1)
      return tooBig(buffers(), "one row");
    Rt = ceilDiv(Rt, 2);
  }
  KernelPlan plan;
  plan.tile = {Rt, Lp};
  plan.buffers = buffers();
  plan.workItems = ceilDiv(rows, Rt);
  plan.gdramBytes =
      p.elementBytes * (rows * L + (p.kind == "rows_reduce" ? rows : rows * L));
  return plan;
}

absl::StatusOr<KernelPlan> Planner::binary() {
  int64_t n = p.dim("n");
  int64_t Et = std::min<int64_t>(up(ceilDiv(n, chip.cores())), 16384);
  // A unary op computes in float32 (a float16 model's values staged).
  auto buffers = [&] {
    if (p.kind != "unary")
      return std::vector<OnChipBuffer>{nram("ta", Et), nram("tb", Et)};
    std::vector<OnChipBuffer> b = {sums("ta", Et), sums("tb", Et),
                                   sums("tc", Et)};
    if (p.op == "erf")
      b.push_back(sums("td", Et));
    if (half())
      b.push_back(nram("stage", Et));
    return b;
  };
  while (!fits(buffers()) && Et > align)
    Et = up(Et / 2);
  KernelPlan plan;
  plan.tile = {Et};
  plan.buffers = buffers();
  plan.workItems = ceilDiv(n, Et);
  plan.gdramBytes =
      p.elementBytes * n * (p.mode == "scalar" || p.kind == "unary" ? 2 : 3);
  return plan;
}

KernelPlan Planner::gather() {
  KernelPlan plan;
  int64_t rows = 1, elements = 1;
  for (size_t d = 0; d < p.gatherDims.size(); ++d) {
    elements *= p.gatherDims[d];
    if (d + 1 < p.gatherDims.size())
      rows *= p.gatherDims[d];
  }
  // Long rows are split over the cores (cuvil_gather's pieces), down to
  // 1024 values each.
  plan.workItems =
      std::max(rows, std::min<int64_t>(chip.cores(), ceilDiv(elements, 1024)));
  plan.gdramBytes = 2 * p.elementBytes * elements;
  return plan;
}

absl::StatusOr<KernelPlan> Planner::pad() {
  int64_t Wp = up(p.dim("L"));
  std::vector<OnChipBuffer> buffers = {nram("row", Wp), nram("fill", Wp)};
  if (!fits(buffers))
    return tooBig(buffers, "one row");
  KernelPlan plan;
  plan.buffers = buffers;
  plan.workItems = p.dim("rows");
  int64_t in = 1;
  for (int64_t d : p.gatherStrides)
    in *= d;
  plan.gdramBytes = p.elementBytes * (in + p.dim("rows") * p.dim("L"));
  return plan;
}

KernelPlan Planner::parts() {
  KernelPlan plan;
  plan.workItems = p.dim("outer");
  plan.gdramBytes = 2 * p.elementBytes * p.dim("outer") * p.dim("total");
  return plan;
}

} // namespace

int64_t alignElements(int64_t elements, int64_t elementBytes) {
  int64_t align = kAlignBytes / elementBytes;
  return std::max<int64_t>(align, (elements + align - 1) / align * align);
}

int64_t windowPositions(const Problem &problem, int64_t Ht) {
  return alignElements(Ht * problem.dim("OW"), problem.elementBytes);
}

int64_t windowRowsIn(const Problem &problem, int64_t Ht) {
  return (Ht - 1) * problem.dim("SH") +
         (problem.dim("KH") - 1) * problem.dim("DH") + 1;
}

llvm::StringRef functionTypeName(FunctionType type) {
  switch (type) {
  case FunctionType::Block: return "block";
  case FunctionType::Union1: return "union1";
  case FunctionType::Union2: return "union2";
  case FunctionType::Union4: return "union4";
  }
  return "block";
}

int64_t KernelPlan::bytesIn(l2::MemorySpace space, int64_t elementBytes) const {
  int64_t bytes = 0;
  for (const OnChipBuffer &b : buffers)
    if (b.space == space)
      bytes += b.bytes(elementBytes);
  return bytes;
}

absl::StatusOr<KernelPlan> planKernel(const Problem &problem, const Chip &chip) {
  Planner planner(problem, chip);
  absl::StatusOr<KernelPlan> plan = [&]() -> absl::StatusOr<KernelPlan> {
    if (problem.kind == "gemm")
      return planner.gemm();
    if (problem.kind == "gemm_int8")
      return planner.gemmInt8();
    if (problem.kind == "conv2d_int8")
      return planner.convInt8();
    if (problem.kind == "conv2d" || problem.kind == "pool2d")
      return planner.window();
    if (problem.kind == "softmax" || problem.kind == "layer_norm" ||
        problem.kind == "rows_reduce" || problem.kind == "batch_norm" ||
        (problem.kind == "binary" &&
         (problem.mode == "rows" || problem.mode == "columns")))
      return planner.rows();
    if (problem.kind == "binary" || problem.kind == "unary")
      return planner.binary();
    if (problem.kind == "concat" || problem.kind == "split")
      return planner.parts();
    if (problem.kind == "pad")
      return planner.pad();
    return planner.gather();
  }();
  if (!plan.ok())
    return plan;
  // A Union1 launch takes whole clusters: every core of the chip.
  plan->tasks = plan->functionType == FunctionType::Block
                    ? std::max<int64_t>(
                          1, std::min<int64_t>(plan->workItems, chip.cores()))
                    : chip.cores();
  return plan;
}

//===----------------------------------------------------------------------===//
// The plan as an attribute (mlu.plan), and back
//===----------------------------------------------------------------------===//

mlir::DictionaryAttr KernelPlan::toAttr(mlir::MLIRContext *context,
                                        mlir::Type elementType) const {
  mlir::Builder b(context);
  llvm::SmallVector<mlir::NamedAttribute> buffersAttr;
  for (const OnChipBuffer &buffer : buffers) {
    llvm::SmallVector<int64_t> shape;
    if (buffer.copies > 1)
      shape.push_back(buffer.copies);
    shape.push_back(buffer.elements);
    mlir::Type element = buffer.elementBytes == 4 ? mlir::Type(b.getF32Type())
                         : buffer.elementBytes == 1
                             ? mlir::Type(b.getIntegerType(8))
                             : elementType;
    auto type = mlir::MemRefType::get(
        shape, element, mlir::MemRefLayoutAttrInterface(),
        l2::MemorySpaceAttr::get(context, buffer.space));
    buffersAttr.push_back(b.getNamedAttr(buffer.name, mlir::TypeAttr::get(type)));
  }
  int64_t align = kAlignBytes / ((elementType.getIntOrFloatBitWidth() + 7) / 8);
  bool aligned = !tile.empty() && tile.back() % align == 0 && tile.back() > 0 &&
                 tile.size() >= 2;
  llvm::SmallVector<mlir::NamedAttribute> fields = {
      b.getNamedAttr("function_type",
                     b.getStringAttr(functionTypeName(functionType))),
      b.getNamedAttr("task_split", l2::TaskSplitAttr::get(context, 0, tasks)),
      b.getNamedAttr("work_items", b.getI64IntegerAttr(workItems)),
      b.getNamedAttr("gdram_bytes", b.getI64IntegerAttr(gdramBytes)),
      b.getNamedAttr("buffers", b.getDictionaryAttr(buffersAttr)),
  };
  if (!tile.empty())
    fields.push_back(b.getNamedAttr(
        "tile", l2::TileAttr::get(context, tile, aligned ? align : 0)));
  if (doubleBuffered)
    fields.push_back(b.getNamedAttr("double_buffered", b.getUnitAttr()));
  return b.getDictionaryAttr(fields);
}

mlir::FailureOr<KernelPlan> KernelPlan::fromAttr(mlir::DictionaryAttr attr) {
  if (!attr)
    return mlir::failure();
  KernelPlan plan;
  auto split = attr.getAs<l2::TaskSplitAttr>("task_split");
  auto items = attr.getAs<mlir::IntegerAttr>("work_items");
  auto traffic = attr.getAs<mlir::IntegerAttr>("gdram_bytes");
  auto buffers = attr.getAs<mlir::DictionaryAttr>("buffers");
  auto type = attr.getAs<mlir::StringAttr>("function_type");
  if (!split || !items || !traffic || !buffers || !type)
    return mlir::failure();
  plan.tasks = split.getParts();
  plan.workItems = items.getInt();
  plan.gdramBytes = traffic.getInt();
  for (FunctionType t : {FunctionType::Block, FunctionType::Union1,
                         FunctionType::Union2, FunctionType::Union4})
    if (functionTypeName(t) == type.getValue())
      plan.functionType = t;
  if (auto tile = attr.getAs<l2::TileAttr>("tile"))
    plan.tile.assign(tile.getSizes().begin(), tile.getSizes().end());
  plan.doubleBuffered = static_cast<bool>(attr.get("double_buffered"));
  for (mlir::NamedAttribute named : buffers) {
    auto typeAttr = llvm::dyn_cast<mlir::TypeAttr>(named.getValue());
    auto memref = typeAttr ? llvm::dyn_cast<mlir::MemRefType>(typeAttr.getValue())
                           : mlir::MemRefType();
    auto space = memref ? llvm::dyn_cast_or_null<l2::MemorySpaceAttr>(
                              memref.getMemorySpace())
                        : l2::MemorySpaceAttr();
    if (!space)
      return mlir::failure();
    OnChipBuffer buffer{named.getName().str(), space.getValue(),
                        memref.getShape().back(),
                        memref.getRank() > 1 ? memref.getShape()[0] : 1,
                        memref.getElementTypeBitWidth() / 8};
    plan.buffers.push_back(buffer);
  }
  return plan;
}

} // namespace cuvil::mlu
