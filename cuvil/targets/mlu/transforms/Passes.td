//===- Passes.td - the MLU target's level2 passes ----------*- tablegen -*-===//

#ifndef CUVIL_TARGETS_MLU_TRANSFORMS_PASSES_TD
#define CUVIL_TARGETS_MLU_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def CuvilMluPlanKernels : Pass<"cuvil-mlu-plan-kernels", "::mlir::ModuleOp"> {
  let summary = "Plan each micro-kernel on the MLU: tiles, on-chip buffers, tasks";
  let description = [{
    Level2, on the neutral lowering's `cuvil_l2.ukernel_call`s, for the chip
    of the module's `#cuvil.target` (its `config`: nram, wram, sram bytes,
    reserves, clusters and cores). Each call is read as a problem of the
    device library (a product, a sliding window, rows, an elementwise
    binary or a gather) on the precision the target's `config` names (fp32,
    or fp16: f16 buffers, 64 to a vector, the products' sums and their
    widened tiles f32) and gets `mlu.plan`: its `#cuvil_l2.tile`, its
    on-chip `buffers` as memrefs in `#cuvil_l2.space<nram>` (a leading
    dimension of 2 for ping-pong buffers; each padded to the vector unit's
    128 bytes), `<wram>` (the tensor unit's weights) or `<sram>` (weights
    a Union1 layer stages once per cluster for all its items),
    `double_buffered`, the `#cuvil_l2.task_split` over the chip's cores,
    the `function_type` (block, or union1 when it stages), its
    `work_items` and the GDRAM bytes it moves. A call the target cannot run, or whose smallest tile does not
    fit NRAM, is an error at its location.
  }];
  let statistics = [
    Statistic<"numPlanned", "planned", "Micro-kernel calls planned">,
    Statistic<"numDoubleBuffered", "double-buffered",
              "Calls whose streaming loop is double buffered">,
  ];
  let dependentDialects = ["::cuvil::l2::CuvilL2Dialect"];
}

def CuvilMluLowerFixedPoint
    : Pass<"cuvil-mlu-lower-fixed-point", "::mlir::ModuleOp"> {
  let summary = "int8 products in the form of the MLU's fixed-point tensor unit";
  let description = [{
    Level2, before planning. Each `quantized_matmul` and `quantized_conv2d`
    call (of the power-of-two types `--precision=int8` gives: int8 per
    tensor, zero point 0, scale 2^p) becomes `fixed_matmul` or
    `fixed_conv2d`: it reads the float32 buffer the model quantized (the
    kernel quantizes it on chip; the `quantize` call goes once nothing else
    reads its output) and its constant weights packed as the tensor unit
    reads them (a product's [K, N] as [Np][Kp], N padded to 64 and K to
    128; a convolution's OIHW as [OCp][KH][KW][Cp], channels padded to 64),
    with params `input_position` and `weight_position`. Other types, a
    grouped or dilated convolution, or weights that are not constant are
    an error at the call.
  }];
  let statistics = [
    Statistic<"numLowered", "lowered", "int8 products put in fixed point">,
  ];
  let dependentDialects = ["::cuvil::l2::CuvilL2Dialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // CUVIL_TARGETS_MLU_TRANSFORMS_PASSES_TD
