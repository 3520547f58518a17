//===- EmbeddedFixedHeader.h - cuvil_fixed.h, compiled in -------*- C++ -*-===//

#ifndef CUVIL_TARGETS_FPGA_EMIT_EMBEDDEDFIXEDHEADER_H
#define CUVIL_TARGETS_FPGA_EMIT_EMBEDDEDFIXEDHEADER_H

namespace cuvil::fpga {

/// The text of hls/cuvil_fixed.h, which every project carries (generated
/// by the BUILD file's genrule).
extern const char kCuvilFixedHeader[];

} // namespace cuvil::fpga

#endif // CUVIL_TARGETS_FPGA_EMIT_EMBEDDEDFIXEDHEADER_H
