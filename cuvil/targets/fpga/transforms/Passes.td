//===- Passes.td - the FPGA target's passes ----------------*- tablegen -*-===//

#ifndef CUVIL_TARGETS_FPGA_TRANSFORMS_PASSES_TD
#define CUVIL_TARGETS_FPGA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def CuvilFpgaAssignFixedPoint
    : Pass<"cuvil-fpga-assign-fixed-point", "::mlir::ModuleOp"> {
  let summary = "Give each layer of the model its fixed-point types";
  let description = [{
    Level1, at the end of the pipeline, for the FPGA target: the types a
    design computes in, chosen as hls4ml users choose them, written into the
    IR as the quantization design's `#cuvil.fixed` so that
    `--emit=mlir-level1` shows them and the planner reads them.

    A layer is the op the neutral lowering makes a call of: `cuvil.gemm`,
    `cuvil.matmul`, `cuvil.conv2d`, `cuvil.max_pool2d`, `cuvil.relu`,
    `cuvil.softmax` (an op fused as an epilogue step belongs to its
    group's layer, which takes the group's node name). Each gets
    `cuvil.fixed = {result = ...}`, and those with weights `weight` and
    `bias` too; the function's inputs get `cuvil.fixed` as an argument
    attribute.

    `precision` is every tensor's type (`fixed<16,6>`, `ufixed<8,0,RND,SAT>`,
    `ap_fixed<...>`, `ac_fixed<...>`) or `auto<W>`: W-bit RND / SAT types
    whose integer bits hold the largest magnitude of each tensor, read from
    `cuvil.abs_max` (set from calibration data on each layer's op and input
    argument) and, for weights and biases, from the constants (times a
    gemm's alpha or beta). `layer-precision` gives a layer its own type by
    node name (`NODE=TYPE`). A name that is no layer's is an error that
    lists the layers.
  }];
  let options = [
    Option<"precision", "precision", "std::string", "\"fixed<16,6>\"",
           "Every tensor's fixed-point type, or auto<W>">,
    ListOption<"layerPrecision", "layer-precision", "std::string",
               "A layer's own type: NODE=TYPE">,
  ];
  let statistics = [
    Statistic<"numLayers", "layers", "Layers given types">,
  ];
  let dependentDialects = ["::mlir::quant::QuantDialect"];
}

def CuvilFpgaPlanDesign : Pass<"cuvil-fpga-plan-design", "::mlir::ModuleOp"> {
  let summary = "Schedule the layers onto the FPGA and record the decisions";
  let description = [{
    Level2, on the neutral lowering's calls (their `cuvil.fixed` types from
    `cuvil-fpga-assign-fixed-point`), for the part the module's
    `#cuvil.target` names (`cpu`). Its `config` carries the user's
    `reuse_factor`, `strategy`, `layer_reuse_factor` and `layer_strategy`
    (dictionaries by node name), `clock_ns` and `max_utilization`. The
    network is planned as `plan/Plan.h` does (reuse factors snapped to
    valid ones and raised until the design fits the caps) and each layer's
    call gets `fpga.plan`: its `reuse_factor`, `strategy`, `ii`, `latency`,
    `hints` (a `#cuvil_l2.loop_hints` of its pipeline II and the products
    it unrolls) and, for weights kept in memory, `memory` (a
    `#cuvil_l2.space`: `lutram` or `bram`; weights in logic have none).
    What a person should read (a reuse factor raised) goes on the function
    as `fpga.decisions`. A design that cannot fit, or a layer the target
    cannot build, is an error.
  }];
  let statistics = [
    Statistic<"numPlanned", "planned", "Layers planned">,
    Statistic<"numInMemory", "in-memory", "Layers whose weights are in memory">,
  ];
  let dependentDialects = ["::cuvil::l2::CuvilL2Dialect"];
}

#endif // CUVIL_TARGETS_FPGA_TRANSFORMS_PASSES_TD
