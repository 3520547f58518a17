//===- Sampling.cpp - roi_align as loops over regions and bins -----------===//
//
// cuvil.roi_align: per region, its box checked (finite coordinates, a batch
// index in range), then per output bin and grid point the four corners and
// weights of the bilinear tap (ONNX's rules: 0 beyond a pixel outside the
// image, edges clamped), computed once and applied to every channel. The
// coordinates and weights are doubles; values accumulate in the compute
// type. Only grid points within a pixel of the image are visited (the
// others read 0), so a huge box costs what its part over the image does.
//
//===----------------------------------------------------------------------===//

#include "cuvil/targets/cpu/emitter/Emitter.h"

namespace cuvil::cpu::emitter {

using namespace mlir;

namespace {

/// The largest adaptive grid side (2^40 points): past it, a box is bad data.
/// Work does not grow with the grid: only points within a pixel of the
/// image are visited.
constexpr const char *kMaxAdaptiveGrid = "1099511627776.0";

/// C names of one roi_align call's locals, unique per call.
struct RoiNames {
  explicit RoiNames(Emitter &e) : p(e.tmp() + "_") {}
  std::string operator()(const char *name) const { return p + name; }
  std::string p;
};

/// The region's box, its bins' sizes and its grid, as C locals.
void emitRegion(Emitter &e, const KernelCall &call, const RoiNames &v,
                const std::string &n) {
  const Buffer &rois = *call.ins[1], &indices = *call.ins[2];
  double scale = call.op.getFloatParam("spatial_scale", 1.0);
  bool halfPixel = call.op.getParam("half_pixel") != nullptr;
  int64_t ratio = call.op.getIntParam("sampling_ratio", 0);
  std::string oh = std::to_string(call.op.getIntParam("output_height", 1));
  std::string ow = std::to_string(call.op.getIntParam("output_width", 1));
  e.c.line("int64_t " + v("b") + " = " + indices.name + "[" + v("r") + "];");
  e.c.line("if (" + v("b") + " < 0 || " + v("b") + " >= " + n +
           ") return CUVIL_ERROR_INVALID_ARGUMENT;");
  const char *sides[] = {"x1", "y1", "x2", "y2"};
  for (int k = 0; k < 4; ++k) {
    std::string value = load(rois, rois.name + "[" + v("r") + "*4 + " +
                                       std::to_string(k) + "]");
    e.c.line("double " + v(sides[k]) + " = (double)" + value + " * " +
             literal(scale, Float64Type::get(call.op.getContext())) +
             (halfPixel ? " - 0.5;" : ";"));
    e.c.line("if (!isfinite(" + v(sides[k]) +
             ")) return CUVIL_ERROR_INVALID_ARGUMENT;");
  }
  e.c.line("double " + v("rh") + " = " + v("y2") + " - " + v("y1") + ", " +
           v("rw") + " = " + v("x2") + " - " + v("x1") + ";");
  if (!halfPixel) {
    e.c.line(v("rh") + " = fmax(" + v("rh") + ", 1.0);");
    e.c.line(v("rw") + " = fmax(" + v("rw") + ", 1.0);");
  }
  e.c.line("double " + v("bh") + " = " + v("rh") + " / " + oh + ", " +
           v("bw") + " = " + v("rw") + " / " + ow + ";");
  // Finite corners can still span more than a double holds.
  e.c.line("if (!isfinite(" + v("bh") + ") || !isfinite(" + v("bw") +
           ")) return CUVIL_ERROR_INVALID_ARGUMENT;");
  if (ratio > 0) {
    e.c.line("int64_t " + v("gh") + " = " + std::to_string(ratio) + ", " +
             v("gw") + " = " + std::to_string(ratio) + ";");
  } else {
    for (auto [grid, bin] : {std::pair("gh", "bh"), std::pair("gw", "bw")}) {
      e.c.line("double " + v(grid) + "d = ceil(" + v(bin) + ");");
      e.c.line("if (" + v(grid) + "d > " + kMaxAdaptiveGrid +
               ") return CUVIL_ERROR_INVALID_ARGUMENT;");
      e.c.line("int64_t " + v(grid) + " = " + v(grid) + "d > 0 ? (int64_t)" +
               v(grid) + "d : 0;");
    }
  }
  e.c.line("double " + v("count") + " = " + v("gh") + " > 0 && " + v("gw") +
           " > 0 ? (double)" + v("gh") + " * (double)" + v("gw") + " : 1.0;");
}

/// The grid rows [`first`, `end`) of the bin starting at `origin` whose
/// points can fall within a pixel of the image ([-1, size]); the others
/// read 0. With a positive step the bounds are widened by a row each way
/// (the tap rechecks every point), else every row is kept.
void emitGridRange(Emitter &e, const RoiNames &v, const char *axis,
                   const std::string &origin, const std::string &bin,
                   const std::string &grid, const std::string &size) {
  std::string first = v((std::string(axis) + "lo").c_str()),
              end = v((std::string(axis) + "end").c_str()),
              step = v((std::string("s") + axis).c_str());
  e.c.line("int64_t " + first + " = 0, " + end + " = " + grid + ";");
  e.c.line("double " + step + " = " + grid + " > 0 ? " + bin + " / " + grid +
           " : 0;");
  e.c.open("if (" + step + " > 0)");
  e.c.line("double lo = floor((-1.0 - " + origin + ") / " + step +
           " - 0.5) - 1, hi = ceil(((double)(" + size + ") - " + origin +
           ") / " + step + " - 0.5) + 2;");
  e.c.line("if (lo > 0) " + first + " = lo < (double)" + grid +
           " ? (int64_t)lo : " + grid + ";");
  e.c.line("if (hi < (double)" + end + ") " + end + " = hi > (double)" + first +
           " ? (int64_t)hi : " + first + ";");
  e.c.close();
}

/// One axis of the bilinear tap at `pos` (a C double local, updated):
/// `lo`, `hi` corners and `l`, `h` weights, clamped at the last pixel.
void emitAxis(Emitter &e, const std::string &pos, const std::string &size,
              const std::string &lo, const std::string &hi,
              const std::string &l, const std::string &h) {
  e.c.line("if (" + pos + " <= 0) " + pos + " = 0;");
  e.c.line("int64_t " + lo + " = (int64_t)" + pos + ", " + hi + ";");
  e.c.open("if (" + lo + " >= " + size + " - 1)");
  e.c.line(lo + " = " + hi + " = " + size + " - 1;");
  e.c.line(pos + " = (double)" + lo + ";");
  e.c.close();
  e.c.line("else " + hi + " = " + lo + " + 1;");
  e.c.line("double " + l + " = " + pos + " - " + lo + ", " + h + " = 1.0 - " +
           l + ";");
}

/// The four corners' offsets in a channel plane (p1..p4) and weights
/// (w1..w4) of grid point (iy, ix) of the bin at (oy, ox).
void emitTap(Emitter &e, const RoiNames &v, const std::string &height,
             const std::string &width) {
  e.c.line("double " + v("y") + " = " + v("oy") + " + (" + v("iy") +
           " + 0.5) * " + v("sy") + ";");
  e.c.line("double " + v("x") + " = " + v("ox") + " + (" + v("ix") +
           " + 0.5) * " + v("sx") + ";");
  e.c.line("int64_t " + v("p1") + " = 0, " + v("p2") + " = 0, " + v("p3") +
           " = 0, " + v("p4") + " = 0;");
  e.c.line("double " + v("w1") + " = 0, " + v("w2") + " = 0, " + v("w3") +
           " = 0, " + v("w4") + " = 0;");
  // Written so that NaN fails it.
  e.c.open("if (" + v("y") + " >= -1.0 && " + v("y") + " <= " + height +
           " && " + v("x") + " >= -1.0 && " + v("x") + " <= " + width + ")");
  emitAxis(e, v("y"), height, v("yl"), v("yh"), v("ly"), v("hy"));
  emitAxis(e, v("x"), width, v("xl"), v("xh"), v("lx"), v("hx"));
  e.c.line(v("p1") + " = " + v("yl") + " * " + width + " + " + v("xl") + "; " +
           v("p2") + " = " + v("yl") + " * " + width + " + " + v("xh") + ";");
  e.c.line(v("p3") + " = " + v("yh") + " * " + width + " + " + v("xl") + "; " +
           v("p4") + " = " + v("yh") + " * " + width + " + " + v("xh") + ";");
  e.c.line(v("w1") + " = " + v("hy") + " * " + v("hx") + "; " + v("w2") +
           " = " + v("hy") + " * " + v("lx") + ";");
  e.c.line(v("w3") + " = " + v("ly") + " * " + v("hx") + "; " + v("w4") +
           " = " + v("ly") + " * " + v("lx") + ";");
  e.c.close();
}

LogicalResult emitRoiAlign(Emitter &e, const KernelCall &call) {
  Type type = call.out->type.getElementType();
  if (!type.isF32() && !type.isF64())
    return call.error() << "computes in float32 or float64, got " << type;
  const Buffer &x = *call.ins[0], &rois = *call.ins[1],
               &indices = *call.ins[2], &out = *call.out;
  bool max = call.op.getParam("max") != nullptr;
  RoiNames v(e);
  const std::string &n = x.dims[0], &c = x.dims[1], &height = x.dims[2],
                    &width = x.dims[3];
  std::string oh = out.dims[2], ow = out.dims[3];
  if (rois.dims[0] != indices.dims[0])
    e.c.line("if ((" + rois.dims[0] + ") != (" + indices.dims[0] +
             ")) return CUVIL_ERROR_INVALID_ARGUMENT;");
  e.c.open("for (int64_t " + v("r") + " = 0; " + v("r") + " < " +
           out.dims[0] + "; ++" + v("r") + ")");
  emitRegion(e, call, v, n);
  e.c.open("for (int64_t " + v("ph") + " = 0; " + v("ph") + " < " + oh +
           "; ++" + v("ph") + ")");
  e.c.open("for (int64_t " + v("pw") + " = 0; " + v("pw") + " < " + ow +
           "; ++" + v("pw") + ")");
  // Each channel's bin accumulates in its output element (the compute
  // type: the importer casts half precision to float32 around the op).
  std::string plane = "(" + height + ") * (" + width + ")";
  std::string at = "((" + v("r") + " * " + c + " + " + v("c") + ") * " + oh +
                   " + " + v("ph") + ") * " + ow + " + " + v("pw");
  std::string element = out.name + "[" + at + "]";
  auto forChannels = [&] {
    e.c.open("for (int64_t " + v("c") + " = 0; " + v("c") + " < " + c +
             "; ++" + v("c") + ")");
  };
  forChannels();
  e.c.line(element + " = " +
           (max ? "(" + v("gh") + " > 0 && " + v("gw") + " > 0 ? -INFINITY : 0)"
                : call.lit(0)) +
           ";");
  e.c.close();
  e.c.line("double " + v("oy") + " = " + v("y1") + " + " + v("ph") + " * " +
           v("bh") + ", " + v("ox") + " = " + v("x1") + " + " + v("pw") +
           " * " + v("bw") + ";");
  emitGridRange(e, v, "y", v("oy"), v("bh"), v("gh"), height);
  emitGridRange(e, v, "x", v("ox"), v("bw"), v("gw"), width);
  e.c.open("for (int64_t " + v("iy") + " = " + v("ylo") + "; " + v("iy") +
           " < " + v("yend") + "; ++" + v("iy") + ")");
  e.c.open("for (int64_t " + v("ix") + " = " + v("xlo") + "; " + v("ix") +
           " < " + v("xend") + "; ++" + v("ix") + ")");
  emitTap(e, v, height, width);
  forChannels();
  e.c.line("const " + call.T + " *" + v("src") + " = " + x.name + " + (" +
           v("b") + " * " + c + " + " + v("c") + ") * " + plane + ";");
  std::string taps[4];
  for (int k = 0; k < 4; ++k) {
    std::string i = std::to_string(k + 1);
    taps[k] = v(("w" + i).c_str()) + " * " + v("src") + "[" +
              v(("p" + i).c_str()) + "]";
  }
  if (max) {
    e.c.line(call.T + " " + v("v") + " = (" + call.T + ")(" + taps[0] + ");");
    for (int k = 1; k < 4; ++k)
      e.c.line(v("v") + " = fmax(" + v("v") + ", (" + call.T + ")(" +
               taps[k] + "));");
    e.c.line(element + " = fmax(" + element + ", " + v("v") + ");");
  } else {
    e.c.line(element + " += (" + call.T + ")(" + taps[0] + " + " + taps[1] +
             " + " + taps[2] + " + " + taps[3] + ");");
  }
  e.c.close();
  e.c.close();
  e.c.close();
  if (max) {
    // Grid points left out read 0, as ONNX's max takes them.
    e.c.open("if (" + v("ylo") + " > 0 || " + v("yend") + " < " + v("gh") +
             " || " + v("xlo") + " > 0 || " + v("xend") + " < " + v("gw") +
             ")");
    forChannels();
    e.c.line(element + " = fmax(" + element + ", 0);");
    e.c.close();
    e.c.close();
  } else {
    forChannels();
    e.c.line(element + " = (" + call.T + ")(" + element + " / " + v("count") +
             ");");
    e.c.close();
  }
  e.c.close();
  e.c.close();
  e.c.close();
  return success();
}

} // namespace

void addSamplingKernels(KernelTable &table) {
  table["roi_align"] = {emitRoiAlign};
}

} // namespace cuvil::cpu::emitter
