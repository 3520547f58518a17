// cuvilc --target=fpga: the HLS project folder, its pragmas, types and
// report, the notes and the errors.
// RUN: rm -rf %t.d && cuvilc --target=fpga --device=xczu9eg %s -o %t.d 2>&1 | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --check-prefix=CPP < %t.d/firmware/myproject.cpp
// RUN: FileCheck %s --check-prefix=TYPES < %t.d/firmware/defines.h
// RUN: FileCheck %s --check-prefix=REPORT < %t.d/report.json
// RUN: test -s %t.d/build_prj.tcl && test -s %t.d/vivado_synth.tcl && test -s %t.d/tb_data/tb_output_predictions.dat
// RUN: cuvilc --quiet --target=fpga --device=xczu9eg --emit=mlir-level2 %s | FileCheck %s --check-prefix=L2
// RUN: rm -rf %t.r && cuvilc --target=fpga --device=xczu9eg --reuse-factor=3 --strategy=resource %s -o %t.r 2>&1 | FileCheck %s --check-prefix=SNAP
// RUN: FileCheck %s --check-prefix=FOLDED < %t.r/firmware/myproject.cpp
// RUN: not cuvilc --target=fpga %s -o %t.e 2>&1 | FileCheck %s --check-prefix=NODEVICE
// RUN: not cuvilc --target=fpga --device=xc7z020 %s -o %t.e 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not cuvilc --target=fpga --device=xczu9eg --precision='fixed<16,6,RND,CLAMP>' %s -o %t.e 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: cuvilc --list-devices | FileCheck %s --check-prefix=DEVICES

func.func @tagger(%x: tensor<1x10xf32>) -> tensor<1x10xf32> {
  %w = cuvil.constant dense<0.25> : tensor<10x10xf32>
  %h = cuvil.matmul %x, %w : tensor<1x10xf32>, tensor<10x10xf32>
  %r = cuvil.relu %h : tensor<1x10xf32>
  %p = cuvil.softmax %r, axis = 1 : tensor<1x10xf32>
  return %p : tensor<1x10xf32>
}

// LOG: cuvilc: [4/5] planning the design on the device
// LOG: cuvilc: wrote {{.*}}.d (14 files; its README.md says how to run them)

// The matrix product and its ReLU are one pipelined function; the top
// pipelines the whole design (every layer is fully parallel).
// CPP: static void layer1(const input_t x[10], layer1_t y[10]) {
// CPP-NEXT: #pragma HLS INLINE off
// CPP-NEXT: #pragma HLS PIPELINE II=1
// CPP: #pragma HLS ARRAY_PARTITION variable=layer1_w complete
// CPP: acc[j] += x[i] * layer1_w[i * 10 + j];
// CPP: y[j] = v > layer1_t(0) ? v : layer1_t(0);
// CPP: static void layer2(const layer1_t x[10], layer2_t y[10]) {
// CPP: e[i] = layer2_exp_table[(d * cuvil::fixed<7, 7, false>(64)).to_int()];
// CPP: void myproject(const input_t input[N_INPUT], result_t output[N_OUTPUT]) {
// CPP: #pragma HLS PIPELINE
// CPP: layer1(input, layer1_out);
// CPP-NEXT: layer2(layer1_out, output);

// TYPES: typedef cuvil::fixed<16, 6, true, cuvil::Q::TRN, cuvil::O::WRAP> input_t;
// Exact sums: 20 fraction bits, 12 + ceil(log2(11)) integer bits.
// TYPES: typedef cuvil::fixed<36, 16, true, cuvil::Q::TRN, cuvil::O::WRAP> layer1_accum_t;

// REPORT: "CSynthesisReport": {
// REPORT: "AvailableDSP": 2520,
// REPORT: "DSP": 110,
// REPORT: "layers": [
// REPORT: "Precision": {
// REPORT: "quant_type": "!quant.uniform<i16:f32, 9.765625E-4>",
// REPORT: "ReuseFactor": 1,
// REPORT: "Strategy": "Latency",
// REPORT: "class_name": "Softmax",

// L2: module attributes {cuvil.target = #cuvil.target<backend = "fpga", triple = "fpga-xilinx-hls", cpu = "xczu9eg"
// L2: cuvil_l2.ukernel_call "matmul" {{.*}}epilogue <steps = [relu]>

// SNAP: cuvilc: note: layer '{{.*}}cuvilc_fpga.mlir:18:8 (layer1)': reuse factor 3 is not valid for 10 inputs and 10 outputs {{.*}}; using 2
// FOLDED: #pragma HLS ARRAY_RESHAPE variable=layer1_w cyclic factor=50
// FOLDED: for (int r = 0; r < 2; ++r) {
// FOLDED-NEXT: #pragma HLS PIPELINE II=1
// FOLDED: #pragma HLS DATAFLOW

// NODEVICE: cuvilc: error: --target=fpga needs --device=NAME; cuvilc --list-devices lists the devices
// UNKNOWN: cuvilc: error: unknown FPGA device 'xc7z020'; this build knows: agf014, xcu250, xcvm1802, xczu9eg
// PRECISION: cuvilc: error: bad FPGA setting precision='fixed<16,6,RND,CLAMP>': bad fixed-point type {{.*}}unknown overflow mode 'CLAMP'
// DEVICES: --target=fpga --device:
// DEVICES: xczu9eg    xczu9eg-ffvb1156-2-e
