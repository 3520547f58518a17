// cuvilc --sample-parallel: a context of several threads runs a batch as
// one chunk of samples per thread, each on its own workspace.

// on: the entry splits the batch; each input and output advances by one
// sample's bytes (10 floats) per sample.
// RUN: cuvilc --quiet --max-batch=8 --sample-parallel=on --emit=c %s | FileCheck %s --check-prefix=ON
// ON: static const size_t cuvil_input_sample_bytes[] = {40};
// ON: static const size_t cuvil_output_sample_bytes[] = {40};
// ON: CUVIL_INTERNAL int cuvil_internal_run(
// ON: return cuvil_run_samples(&model, batch, inputs, outputs, arena, arenas, pool);
// ON: \"sample_parallel\":true
// ON: #define CUVIL_MODEL_SAMPLE_PARALLEL 1

// auto: a 10 x 10 linear layer does a quarter of a multiply-add per weight
// byte per sample, above auto's 0.1 (a network with products), so auto
// splits too; off never does.
// RUN: cuvilc --quiet --max-batch=8 --emit=c %s | FileCheck %s --check-prefix=ON
// RUN: cuvilc --quiet --max-batch=8 --sample-parallel=off --emit=c %s | FileCheck %s --check-prefix=OFF
// OFF-NOT: cuvil_run_samples(&model
// OFF: \"sample_parallel\":false
// OFF: #define CUVIL_MODEL_SAMPLE_PARALLEL 0

func.func @classifier(%x: tensor<?x10xf32>) -> tensor<?x10xf32> {
  %w = cuvil.constant dense<0.5> : tensor<10x10xf32>
  %h = cuvil.matmul %x, %w : tensor<?x10xf32>, tensor<10x10xf32>
  %r = cuvil.relu %h : tensor<?x10xf32>
  %p = cuvil.softmax %r, axis = 1 : tensor<?x10xf32>
  return %p : tensor<?x10xf32>
}

// Errors, with no file written: a value the flag does not take, a model
// without a batch to split, and an op that mixes the samples (named with
// its node).
// RUN: not cuvilc --quiet --max-batch=8 --sample-parallel=maybe %s -o %t.so 2>&1 | FileCheck %s --check-prefix=VALUE
// VALUE: cuvilc: --sample-parallel must be auto, on or off, not 'maybe'
// RUN: not cuvilc --quiet --sample-parallel=on %s -o %t.so 2>&1 | FileCheck %s --check-prefix=NOBATCH
// NOBATCH: error: sample-parallel execution needs a dynamic batch of at least 2 (compile with --max-batch=N)
// RUN: sed -n 's|^// SOURCE:||p' %s > %t.mix.mlir
// RUN: not cuvilc --quiet --max-batch=8 --sample-parallel=on %t.mix.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=MIX
// MIX: cuvilc: error: 'Softmax_0' (model.onnx): error: 'cuvil.softmax' op cannot run the batch's samples apart: it works along the batch (dimension 0)
// RUN: not test -e %t.so
// SOURCE:func.func @f(%x: tensor<?x10xf32>) -> tensor<?x10xf32> {
// SOURCE:  %p = cuvil.softmax %x, axis = 0 : tensor<?x10xf32> loc("Softmax_0"("model.onnx":0:0))
// SOURCE:  return %p : tensor<?x10xf32>
// SOURCE:}
