// RUN: cuvil-opt %s --cuvil-mark-sample-parallel=mode=on --split-input-file -verify-diagnostics

// mode=on refuses a function whose samples meet, naming the op; auto and
// off leave such functions unmarked without a word (mark_sample_parallel.mlir).

// The batch dimension is reduced away: samples meet.
module attributes {cuvil.max_batch = 8 : i64} {
func.func @batch_sum(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  // expected-error@+1 {{'cuvil.reduce_mean' op cannot run the batch's samples apart: its result does not keep the batch in dimension 0}}
  %m = cuvil.reduce_mean %x, axes = [0] keepdims : tensor<?x16xf32>
  %d = cuvil.sub %x, %m : tensor<?x16xf32>, tensor<1x16xf32>
  return %d : tensor<?x16xf32>
}
}


// -----

module attributes {cuvil.max_batch = 8 : i64} {
func.func @softmax_over_batch(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  // expected-error@+1 {{'cuvil.softmax' op cannot run the batch's samples apart: it works along the batch (dimension 0)}}
  %s = cuvil.softmax %x, axis = -2 : tensor<?x16xf32>
  return %s : tensor<?x16xf32>
}
}


// -----

module attributes {cuvil.max_batch = 8 : i64} {
func.func @batch_moved(%x: tensor<?x16xf32>) -> tensor<16x?xf32> {
  // expected-error@+1 {{'cuvil.transpose' op cannot run the batch's samples apart: its result has a dynamic dimension other than the batch (dimension 0)}}
  %t = cuvil.transpose %x, perm = [1, 0] : tensor<?x16xf32>
  return %t : tensor<16x?xf32>
}
}


// -----

// A product whose batch is what it contracts over.
module attributes {cuvil.max_batch = 8 : i64} {
// expected-error@+1 {{cannot run the batch's samples apart: an input has a dynamic dimension other than the batch (dimension 0)}}
func.func @contract_batch(%x: tensor<?x16xf32>, %y: tensor<16x?xf32>) -> tensor<?x?xf32> {
  %m = cuvil.matmul %x, %y : tensor<?x16xf32>, tensor<16x?xf32>
  return %m : tensor<?x?xf32>
}
}


// -----

// Two batches end to end.
module attributes {cuvil.max_batch = 8 : i64} {
func.func @concat_batch(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  // expected-error@+1 {{'cuvil.concat' op cannot run the batch's samples apart: it works along the batch (dimension 0)}}
  %c = cuvil.concat(%x, %x) axis = 0 : tensor<?x16xf32>, tensor<?x16xf32>
  return %c : tensor<?x16xf32>
}
}


// -----

// No dynamic batch to split.
module attributes {cuvil.max_batch = 1 : i64} {
// expected-error@+1 {{sample-parallel execution needs a dynamic batch of at least 2 (compile with --max-batch=N)}}
func.func @one(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %r = cuvil.relu %x : tensor<?x16xf32>
  return %r : tensor<?x16xf32>
}
}

// -----

// Two samples' elements in one row: a chunk of one sample would be half a
// row.
module attributes {cuvil.max_batch = 8 : i64} {
func.func @regroup(%x: tensor<?x2xf32>) -> tensor<?x4xf32> {
  // expected-error@+1 {{'cuvil.reshape' op cannot run the batch's samples apart: it puts several samples' elements in one row}}
  %r = cuvil.reshape %x, shape = [-1, 4] : tensor<?x2xf32>
  return %r : tensor<?x4xf32>
}
}

// -----

// Rows within a sample are fine inside; an output must be one row per
// sample, since the artifact moves its pointer one row per sample.
module attributes {cuvil.max_batch = 8 : i64} {
// expected-error@+1 {{cannot run the batch's samples apart: an output has several rows per sample}}
func.func @two_rows(%x: tensor<?x4xf32>) -> tensor<?x2xf32> {
  %r = cuvil.reshape %x, shape = [-1, 2] : tensor<?x4xf32>
  %s = cuvil.relu %r : tensor<?x2xf32>
  return %s : tensor<?x2xf32>
}
}
