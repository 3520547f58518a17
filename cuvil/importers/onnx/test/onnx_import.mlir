// ONNX models import into level1 with every type inferred.
// RUN: python3 %{cuvil_root}/cuvil/importers/onnx/test/make_model.py mlp %t.mlp.onnx
// RUN: cuvilc --emit=mlir-level1 --quiet %t.mlp.onnx | FileCheck %s --check-prefix=MLP
// MLP-LABEL: func.func @g(%{{.+}}: tensor<1x10xf32> {cuvil.name = "x"}) -> (tensor<1x16xf32> {cuvil.name = "y"})
// Weights are dense resources, never printed inline.
// MLP-DAG: %[[B:.+]] = cuvil.constant dense_resource<b> : tensor<16xf32>
// MLP-DAG: %[[W:.+]] = cuvil.constant dense_resource<W> : tensor<10x16xf32>
// The linear layer and its relu form one epilogue group (the pipeline runs).
// MLP: cuvil.fused_group kind = "epilogue"(%{{.+}}, %[[W]], %[[B]])
// MLP: %[[H:.+]] = cuvil.matmul %{{.+}}, %{{.+}} : tensor<1x10xf32>, tensor<10x16xf32>
// MLP: %[[HB:.+]] = cuvil.add %[[H]], %{{.+}} : tensor<1x16xf32>, tensor<16xf32>
// MLP: cuvil.relu %[[HB]]
// MLP: cuvil.softmax %{{.+}}, axis = 1
// MLP: dialect_resources
// MLP: W: "0x40000000

// Input shapes can be overridden.
// RUN: cuvilc --emit=mlir-level1 --quiet --input-shape=x=4x10 %t.mlp.onnx | FileCheck %s --check-prefix=OVERRIDE
// OVERRIDE: func.func @g(%{{.+}}: tensor<4x10xf32> {cuvil.name = "x"}) -> (tensor<4x16xf32>

// --max-batch makes the batch dynamic and records its bound.
// RUN: cuvilc --emit=mlir-level1 --quiet --max-batch=16 %t.mlp.onnx | FileCheck %s --check-prefix=BATCH
// BATCH: module attributes {cuvil.max_batch = 16 : i64, cuvil.target = #cuvil.target<backend = "x86"
// BATCH: func.func @g(%{{.+}}: tensor<?x10xf32> {cuvil.name = "x"}) -> (tensor<?x16xf32>

// The flatten idiom x.view(x.size(0), -1) resolves statically on a dynamic batch.
// RUN: python3 %{cuvil_root}/cuvil/importers/onnx/test/make_model.py flatten_dynamic %t.flat.onnx
// RUN: cuvilc --emit=mlir-level1 --quiet %t.flat.onnx | FileCheck %s --check-prefix=FLATTEN
// FLATTEN: func.func @g(%[[X:.+]]: tensor<?x8x2x2xf32> {cuvil.name = "x"}) -> (tensor<?x32xf32>
// FLATTEN-NEXT: %[[R:.+]] = cuvil.reshape %[[X]], shape = [-1, 32] : tensor<?x8x2x2xf32>
// FLATTEN-NEXT: return %[[R]]

// Conv with SAME_UPPER auto-padding, BatchNormalization (imported as
// cuvil.batch_norm, which cuvil-fold-batch-norm then folds into the conv's
// weights and a new bias) and ceil-mode pooling.
// RUN: python3 %{cuvil_root}/cuvil/importers/onnx/test/make_model.py conv_bn %t.conv.onnx
// RUN: cuvilc --emit=mlir-level1 --quiet %t.conv.onnx | FileCheck %s --check-prefix=CONV
// CONV: cuvil.conv2d %{{.+}}, %{{.+}}, %{{.+}} {dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>
// CONV-NOT: cuvil.batch_norm
// CONV: cuvil.max_pool2d {{.*}}ceil_mode{{.*}} : tensor<1x4x5x5xf32>
// CONV: return {{.*}} : tensor<1x4x3x3xf32>

// External data: a weight in a file beside the model.
// RUN: rm -rf %t.ext && mkdir -p %t.ext
// RUN: python3 %{cuvil_root}/cuvil/importers/onnx/test/make_model.py external %t.ext/model.onnx
// RUN: cuvilc --emit=mlir-level1 --quiet %t.ext/model.onnx | FileCheck %s --check-prefix=EXTERNAL
// EXTERNAL: cuvil.constant dense_resource<W> : tensor<3x4xf32>
// The 12 floats 0..11 read from offset 16 of weights.bin.
// EXTERNAL: W: "0x40000000000000000000803F0000004000004040
