// RUN: cuvil-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// The device description round-trips; parameters at their defaults are not
// printed, floats read back as written.
// CHECK: module attributes {cuvil.target = #cuvil.target<backend = "x86", triple = "x86_64-linux-gnu", cpu = "x86-64-v3", features = ["avx2", "fma"], l2_bytes = 2097152, cores = 2, memory_bytes_per_second = 1.5e+10, batching_threshold = 1.25, int8_weight_max = 64>}
module attributes {cuvil.target = #cuvil.target<backend = "x86", triple = "x86_64-linux-gnu", cpu = "x86-64-v3", features = ["avx2", "fma"], vector_bits = 256, l2_bytes = 2097152, cores = 2, memory_bytes_per_second = 1.5e10, batching_threshold = 1.25, int8_weight_max = 64>} {
}

// -----

// A backend-specific part rides along unchecked by the dialect.
// CHECK: #cuvil.target<backend = "fpga", config = {device = "xczu9eg"}>
module attributes {cuvil.target = #cuvil.target<backend = "fpga", config = {device = "xczu9eg"}>} {
}

// -----

// expected-error @+1 {{#cuvil.target needs a backend name}}
module attributes {cuvil.target = #cuvil.target<backend = "">} {
}

// -----

// expected-error @+1 {{#cuvil.target needs at least one core, got 0}}
module attributes {cuvil.target = #cuvil.target<backend = "x86", cores = 0>} {
}

// -----

// expected-error @+1 {{#cuvil.target vector_bits must be a non-negative multiple of 8, got 100}}
module attributes {cuvil.target = #cuvil.target<backend = "x86", vector_bits = 100>} {
}

// -----

// expected-error @+1 {{#cuvil.target batching_threshold is a speed-up, at least 1, got 0.5}}
module attributes {cuvil.target = #cuvil.target<backend = "x86", batching_threshold = 0.5>} {
}

// -----

// expected-error @+1 {{#cuvil.target int8_weight_max must be in [1, 127], got 128}}
module attributes {cuvil.target = #cuvil.target<backend = "x86", int8_weight_max = 128>} {
}

// -----

// expected-error @+1 {{#cuvil.target bandwidths must be positive}}
module attributes {cuvil.target = #cuvil.target<backend = "x86", l2_bytes_per_second = 0.0>} {
}

// -----

// expected-error @+1 {{#cuvil.target features must be strings}}
module attributes {cuvil.target = #cuvil.target<backend = "x86", features = [1]>} {
}

// -----

// expected-error @+1 {{'cuvil.target' must be a #cuvil.target}}
module attributes {cuvil.target = {l2_bytes = 1 : i64}} {
}

// -----

module {
  // expected-error @+1 {{'cuvil.target' describes a module's target}}
  func.func @f() attributes {cuvil.target = #cuvil.target<backend = "x86">} {
    return
  }
}
