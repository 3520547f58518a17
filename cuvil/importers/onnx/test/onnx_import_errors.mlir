// Every ONNX importer error: a message naming the node (or file), a non-zero
// exit, and no output file.
// RUN: rm -rf %t && mkdir -p %t
// RUN: cd %t
// RUN: %{gen} truncated truncated.onnx
// RUN: not cuvilc --quiet truncated.onnx -o out.mlir 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// RUN: not test -e out.mlir
// TRUNCATED: cuvilc: error: truncated.onnx: not a valid ONNX model (the file does not parse as an ONNX ModelProto; is it truncated or another format?)

// RUN: echo 'not a model' > text.onnx
// RUN: not cuvilc --quiet text.onnx 2>&1 | FileCheck %s --check-prefix=TRUNCATED2
// TRUNCATED2: cuvilc: error: text.onnx: not a valid ONNX model

// RUN: %{gen} unsupported unsupported.onnx
// RUN: not cuvilc --quiet unsupported.onnx -o out.mlir 2>&1 | FileCheck %s --check-prefix=OPS
// RUN: not test -e out.mlir
// OPS: cuvilc: error: unsupported.onnx: error: unsupported ONNX operators: 'FusedThing' (domain com.example, opset 13) at node custom; 'NonZero' (domain ai.onnx, opset 13) at nodes nz_1, nz_2; 'Unique' (domain ai.onnx, opset 13) at node unique. Left out on purpose: NonZero, Unique (output shapes that depend on the input's values, and Cuvil's outputs have shapes known at compile time (a dynamic batch aside): compute them outside the model, or cut the graph before them). Nothing was compiled

// RUN: %{gen} dangling dangling.onnx
// RUN: not cuvilc --quiet dangling.onnx 2>&1 | FileCheck %s --check-prefix=DANGLING
// DANGLING: cuvilc: error: 'add' (dangling.onnx): error: Add uses 'ghost', which no earlier node, graph input or initializer defines

// RUN: %{gen} dtype_mismatch dtype.onnx
// RUN: not cuvilc --quiet dtype.onnx 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: cuvilc: error: 'mixed_add' (dtype.onnx): error: 'cuvil.add' op expects operands of one element type, got tensor<4xf32> and tensor<4xi64>

// RUN: %{gen} shape_mismatch shape.onnx
// RUN: not cuvilc --quiet shape.onnx 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: cuvilc: error: '/MatMul' (shape.onnx): error: 'cuvil.matmul' op contracting dimensions differ: lhs tensor<1x12xf32> has 12 columns but rhs tensor<10x10xf32> has 10 rows

// RUN: %{gen} negative_dim negative.onnx
// RUN: not cuvilc --quiet negative.onnx 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: cuvilc: error: negative.onnx: error: graph input 'x' has a negative dimension -3

// RUN: %{gen} bad_initializer_size size.onnx
// RUN: not cuvilc --quiet size.onnx 2>&1 | FileCheck %s --check-prefix=SIZE
// SIZE: cuvilc: error: 'fc/MatMul' (size.onnx): error: tensor 'W' holds 636 bytes but its shape [10, 16] of FLOAT needs 640

// RUN: %{gen} unsupported_dtype dtype2.onnx
// RUN: not cuvilc --quiet dtype2.onnx 2>&1 | FileCheck %s --check-prefix=DTYPE2
// DTYPE2: cuvilc: error: dtype2.onnx: error: graph input 'x' has STRING, which Cuvil does not support

// RUN: %{gen} old_opset old.onnx
// RUN: not cuvilc --quiet old.onnx 2>&1 | FileCheck %s --check-prefix=OPSET
// OPSET: cuvilc: error: old.onnx: error: opset 19 is not supported (Cuvil reads opsets up to 18)

// RUN: %{gen} missing_output output.onnx
// RUN: not cuvilc --quiet output.onnx 2>&1 | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: cuvilc: error: output.onnx: error: graph output 'not_produced' is not produced by any node

// RUN: %{gen} runtime_reshape reshape.onnx
// RUN: not cuvilc --quiet reshape.onnx 2>&1 | FileCheck %s --check-prefix=RESHAPE
// RESHAPE: cuvilc: error: 'reshape' (reshape.onnx): error: Reshape needs its target shape (input 'xi') at compile time, but it is computed at run time

// RUN: mkdir -p ext && %{gen} external_offset ext/m.onnx
// RUN: not cuvilc --quiet ext/m.onnx 2>&1 | FileCheck %s --check-prefix=EXTOFFSET
// EXTOFFSET: cuvilc: error: 'mm' (ext/m.onnx): error: tensor 'W' reads bytes [1000, 1048) of 'weights.bin', which has 64

// RUN: %{gen} external_missing ext/m.onnx
// RUN: not cuvilc --quiet ext/m.onnx 2>&1 | FileCheck %s --check-prefix=EXTMISSING
// EXTMISSING: cuvilc: error: 'mm' (ext/m.onnx): error: tensor 'W' has external data at 'nothere.bin', which cannot be opened (No such file or directory); external data must be a file in the model's folder

// RUN: %{gen} external_escape ext/m.onnx
// RUN: cp ext/weights.bin weights.bin
// RUN: not cuvilc --quiet ext/m.onnx -o out.so 2>&1 | FileCheck %s --check-prefix=EXTESCAPE
// RUN: not test -e out.so
// EXTESCAPE: cuvilc: error: 'mm' (ext/m.onnx): error: tensor 'W' has external data at '../weights.bin', which resolves to {{.*}}/weights.bin, outside the model's folder {{.*}}/ext; external data must be a file in the model's folder

// External data is read where symbolic links lead, which must still be a
// regular file in the model's folder (issue #18: a link to /etc/passwd was
// embedded in the .so).
// RUN: %{gen} external_link ext/m.onnx
// RUN: ln -sf /etc/passwd ext/link.bin
// RUN: not cuvilc --quiet ext/m.onnx -o out.so 2>&1 | FileCheck %s --check-prefix=EXTLINK
// RUN: not test -e out.so
// EXTLINK: cuvilc: error: 'mm' (ext/m.onnx): error: tensor 'W' has external data at 'link.bin', which resolves to /etc/passwd, outside the model's folder {{.*}}/ext; external data must be a file in the model's folder
// RUN: mkdir -p ext/sub && ln -sfn /etc ext/sub/etc
// RUN: ln -sf sub/etc/passwd ext/link.bin
// RUN: not cuvilc --quiet ext/m.onnx 2>&1 | FileCheck %s --check-prefix=EXTLINK2
// EXTLINK2: which resolves to /etc/passwd, outside the model's folder
// A FIFO or device would hang the compiler or never end.
// RUN: rm -f ext/fifo.bin && mkfifo ext/fifo.bin && ln -sf fifo.bin ext/link.bin
// RUN: not cuvilc --quiet ext/m.onnx 2>&1 | FileCheck %s --check-prefix=EXTFIFO
// EXTFIFO: tensor 'W' has external data at 'link.bin', which is not a regular file; external data must be a file in the model's folder
// A link that stays inside the folder is fine.
// RUN: ln -sf weights.bin ext/link.bin
// RUN: cuvilc --quiet ext/m.onnx --emit=mlir-level1 -o ok.mlir

// Ambiguous models are errors that name the node, not silent choices.
// RUN: %{gen} duplicate_output dup.onnx
// RUN: not cuvilc --quiet dup.onnx -o out.so 2>&1 | FileCheck %s --check-prefix=DUPOUT
// RUN: not test -e out.so
// DUPOUT: cuvilc: error: 'fc/Add' (dup.onnx): error: Add writes 'h', which node 'fc/MatMul' already defines; every ONNX value has exactly one producer
// RUN: %{gen} self_duplicate_output dup.onnx
// RUN: not cuvilc --quiet dup.onnx 2>&1 | FileCheck %s --check-prefix=DUPSELF
// DUPSELF: cuvilc: error: 'split' (dup.onnx): error: Split writes 'a' twice; every ONNX value has exactly one producer
// RUN: %{gen} duplicate_input dup.onnx
// RUN: not cuvilc --quiet dup.onnx 2>&1 | FileCheck %s --check-prefix=DUPIN
// DUPIN: cuvilc: error: dup.onnx: error: two graph inputs are named 'x'; every input needs its own name
// RUN: %{gen} duplicate_initializer dup.onnx
// RUN: not cuvilc --quiet dup.onnx 2>&1 | FileCheck %s --check-prefix=DUPINIT
// DUPINIT: cuvilc: error: dup.onnx: error: two initializers are named 'W'; ONNX names every value once, so the model is ambiguous (fix the exporter)

// A stride of 0 is refused before auto_pad divides by it.
// RUN: %{gen} zero_stride stride.onnx
// RUN: not cuvilc --quiet stride.onnx 2>&1 | FileCheck %s --check-prefix=STRIDE
// STRIDE: cuvilc: error: 'conv' (stride.onnx): error: Conv needs kernel sizes, strides and dilations of at least 1, got kernel 3, stride 0, dilation 1

// An attribute of the wrong type is an error, never its default.
// RUN: %{gen} string_attribute attr.onnx
// RUN: not cuvilc --quiet attr.onnx 2>&1 | FileCheck %s --check-prefix=ATTRSTR
// ATTRSTR: cuvilc: error: 'softmax' (attr.onnx): error: Softmax attribute 'axis' must be INT, but the model gives STRING 'one'
// RUN: %{gen} float_attribute attr.onnx
// RUN: not cuvilc --quiet attr.onnx 2>&1 | FileCheck %s --check-prefix=ATTRFLOAT
// ATTRFLOAT: cuvilc: error: 'softmax' (attr.onnx): error: Softmax attribute 'axis' must be INT, but the model gives FLOAT
// RUN: %{gen} typeless_attribute attr.onnx
// RUN: not cuvilc --quiet attr.onnx 2>&1 | FileCheck %s --check-prefix=ATTRNONE
// ATTRNONE: cuvilc: error: 'softmax' (attr.onnx): error: Softmax attribute 'axis' must be INT, but the model gives INT without a value

// Sizes that overflow 64 bits, found before anything multiplies them.
// RUN: %{gen} overflow_input big.onnx
// RUN: not cuvilc --quiet big.onnx 2>&1 | FileCheck %s --check-prefix=BIGIN
// BIGIN: cuvilc: error: big.onnx: error: graph input 'x' has shape [1099511627776, 1073741824] of 'f32' elements, which needs more than 2^63 bytes
// RUN: %{gen} overflow_result big.onnx
// RUN: not cuvilc --quiet big.onnx 2>&1 | FileCheck %s --check-prefix=BIGOUT
// BIGOUT: cuvilc: error: 'add' (big.onnx): error: the result of cuvil.add has shape [1099511627776, 1099511627776] of 'f32' elements, which needs more than 2^63 bytes
// RUN: %{gen} overflow_initializer big.onnx
// RUN: not cuvilc --quiet big.onnx 2>&1 | FileCheck %s --check-prefix=BIGW
// BIGW: cuvilc: error: big.onnx: error: initializer 'W' has shape [4611686018427387904, 4] of 'f32' elements, which needs more than 2^63 bytes

// Elementwise ops on types or shapes ONNX does not allow them.
// RUN: %{gen} integer_mean mean.onnx
// RUN: not cuvilc --quiet mean.onnx -o out.so 2>&1 | FileCheck %s --check-prefix=MEAN
// RUN: not test -e out.so
// MEAN: cuvilc: error: 'mean' (mean.onnx): error: Mean expects floating-point inputs, got 'i32'
// RUN: %{gen} float_mod mod.onnx
// RUN: not cuvilc --quiet mod.onnx 2>&1 | FileCheck %s --check-prefix=FMOD
// FMOD: cuvilc: error: 'mod' (mod.onnx): error: 'cuvil.mod' op on floats needs fmod (the remainder with the dividend's sign), as ONNX Mod does
// RUN: %{gen} wide_slope prelu.onnx
// RUN: not cuvilc --quiet prelu.onnx 2>&1 | FileCheck %s --check-prefix=SLOPE
// SLOPE: cuvilc: error: 'prelu' (prelu.onnx): error: 'cuvil.prelu' op expects a slope that broadcasts to the input's shape 4, got tensor<2x4xf32>

// LRN: a window size, and channels to slide it over.
// RUN: %{gen} lrn_no_size lrn.onnx
// RUN: not cuvilc --quiet lrn.onnx -o out.so 2>&1 | FileCheck %s --check-prefix=LRNSIZE
// RUN: not test -e out.so
// LRNSIZE: cuvilc: error: 'lrn' (lrn.onnx): error: LRN needs a positive size, got 0
// RUN: %{gen} lrn_flat lrn.onnx
// RUN: not cuvilc --quiet lrn.onnx 2>&1 | FileCheck %s --check-prefix=LRNRANK
// LRNRANK: cuvilc: error: 'lrn' (lrn.onnx): error: LRN expects an input [N, C, ...] of rank >= 3 with static channels, got 'tensor<2x4xf32>'

// Losses: a reduction ONNX defines, a weight per class, integer targets.
// RUN: %{gen} loss_reduction loss.onnx
// RUN: not cuvilc --quiet loss.onnx -o out.so 2>&1 | FileCheck %s --check-prefix=LOSSRED
// RUN: not test -e out.so
// LOSSRED: cuvilc: error: 'nll' (loss.onnx): error: NegativeLogLikelihoodLoss reduction must be 'none', 'sum' or 'mean', got 'max'
// RUN: %{gen} loss_weights loss.onnx
// RUN: not cuvilc --quiet loss.onnx 2>&1 | FileCheck %s --check-prefix=LOSSW
// LOSSW: cuvilc: error: 'sce' (loss.onnx): error: SoftmaxCrossEntropyLoss expects one weight per class, 'tensor<3xf32>', got 'tensor<2xf32>'
// RUN: %{gen} loss_float_targets loss.onnx
// RUN: not cuvilc --quiet loss.onnx 2>&1 | FileCheck %s --check-prefix=LOSST
// LOSST: cuvilc: error: 'nll' (loss.onnx): error: NegativeLogLikelihoodLoss expects integer targets [N, d1, ...] for scores 'tensor<2x3xf32>', got 'tensor<2xf32>'

// Sizes that would make the compiler allocate or overflow without bound.
// RUN: %{gen} dft_huge dft.onnx
// RUN: not cuvilc --quiet dft.onnx -o out.so 2>&1 | FileCheck %s --check-prefix=DFTHUGE
// RUN: not test -e out.so
// DFTHUGE: cuvilc: error: 'dft' (dft.onnx): error: DFT of length 1099511627776 over 8 samples needs a larger transform matrix than Cuvil builds at compile time (4194304 elements)
// RUN: %{gen} unpool_zero_stride unpool.onnx
// RUN: not cuvilc --quiet unpool.onnx 2>&1 | FileCheck %s --check-prefix=UNPOOLSTRIDE
// UNPOOLSTRIDE: cuvilc: error: 'unpool' (unpool.onnx): error: MaxUnpool expects 2 kernel sizes and strides in [1, 2^30) and 4 pads in [0, 2^30)
// RUN: %{gen} conv3d_dilation conv.onnx
// RUN: not cuvilc --quiet conv.onnx 2>&1 | FileCheck %s --check-prefix=CONV3DDIL
// CONV3DDIL: cuvilc: error: 'conv' (conv.onnx): error: Conv needs kernel sizes, strides and dilations in [1, 2^30)
// RUN: %{gen} conv3d_deep conv.onnx
// RUN: not cuvilc --quiet conv.onnx 2>&1 | FileCheck %s --check-prefix=CONV3DDEEP
// CONV3DDEEP: cuvilc: error: 'conv' (conv.onnx): error: Conv of an NCDHW input supports kernel depths up to 256 (one 2-D convolution per depth tap), got 300
// RUN: %{gen} det_order det.onnx
// RUN: not cuvilc --quiet det.onnx 2>&1 | FileCheck %s --check-prefix=DETN
// DETN: cuvilc: error: 'det' (det.onnx): error: Det supports matrices of order 1 to 128 (its steps are unrolled), got 129
// RUN: %{gen} mel_huge mel.onnx
// RUN: not cuvilc --quiet mel.onnx 2>&1 | FileCheck %s --check-prefix=MELHUGE
// MELHUGE: cuvilc: error: 'mel' (mel.onnx): error: MelWeightMatrix of 549755813889 x 8 exceeds Cuvil's limit of 4194304 elements
// RUN: %{gen} pool3d_pads pool.onnx
// RUN: not cuvilc --quiet pool.onnx 2>&1 | FileCheck %s --check-prefix=POOL3D
// POOL3D: cuvilc: error: 'pool' (pool.onnx): error: MaxPool of an NCDHW input expects 3 kernel sizes, strides and dilations and 6 pads

// Compress: its output's shape needs the condition at compile time.
// RUN: %{gen} compress_at_run_time pick.onnx
// RUN: not cuvilc --quiet pick.onnx -o out.so 2>&1 | FileCheck %s --check-prefix=COMPRESS
// RUN: not test -e out.so
// COMPRESS: cuvilc: error: 'pick' (pick.onnx): error: Compress needs its condition at compile time: the output's shape depends on its values

// DFT over a signal dimension; STFT frames that fit the signal.
// RUN: %{gen} dft_axis dft.onnx
// RUN: not cuvilc --quiet dft.onnx -o out.so 2>&1 | FileCheck %s --check-prefix=DFTAXIS
// RUN: not test -e out.so
// DFTAXIS: cuvilc: error: 'dft' (dft.onnx): error: DFT axis 2 must name a static signal dimension of 'tensor<1x8x2xf32>'
// RUN: %{gen} stft_long_frame stft.onnx
// RUN: not cuvilc --quiet stft.onnx 2>&1 | FileCheck %s --check-prefix=STFTLEN
// STFTLEN: cuvilc: error: 'stft' (stft.onnx): error: STFT needs a positive frame_step and a frame length (the window's, or frame_length) of 1 to 8

// GridSample: one of its modes, 2-D sampling.
// RUN: %{gen} grid_sample_mode warp.onnx
// RUN: not cuvilc --quiet warp.onnx -o out.so 2>&1 | FileCheck %s --check-prefix=GRIDMODE
// RUN: not test -e out.so
// GRIDMODE: cuvilc: error: 'warp' (warp.onnx): error: GridSample mode must be 'bilinear', 'nearest' or 'bicubic', got 'area'
// RUN: %{gen} grid_sample_volume warp.onnx
// RUN: not cuvilc --quiet warp.onnx 2>&1 | FileCheck %s --check-prefix=GRIDRANK
// GRIDRANK: cuvilc: error: 'warp' (warp.onnx): error: GridSample expects a float input [N, C, H, W] with static C, H and W (2-D sampling), got 'tensor<1x2x4x4x4xf32>'

// ReverseSequence: a length per batch entry. MaxUnpool: its kernel, and an
// output_shape no smaller than the unpooled one. DynamicQuantizeLinear:
// float32 values.
// RUN: %{gen} reverse_lengths rev.onnx
// RUN: not cuvilc --quiet rev.onnx -o out.so 2>&1 | FileCheck %s --check-prefix=REVLEN
// RUN: not test -e out.so
// REVLEN: cuvilc: error: 'rev' (rev.onnx): error: ReverseSequence expects one integer length per batch entry (2), got 'tensor<3xi64>'
// RUN: %{gen} unpool_no_kernel unpool.onnx
// RUN: not cuvilc --quiet unpool.onnx 2>&1 | FileCheck %s --check-prefix=UNPOOLK
// UNPOOLK: cuvilc: error: 'unpool' (unpool.onnx): error: MaxUnpool needs kernel_shape, one size per spatial dim (2)
// RUN: %{gen} unpool_smaller unpool.onnx
// RUN: not cuvilc --quiet unpool.onnx 2>&1 | FileCheck %s --check-prefix=UNPOOLS
// UNPOOLS: cuvilc: error: 'unpool' (unpool.onnx): error: MaxUnpool cannot unpool 'tensor<1x1x2x2xf32>' to [1, 1, 3, 3] (unpooled, it is [1, 1, 4, 4])
// RUN: %{gen} dynamic_quantize_double dql.onnx
// RUN: not cuvilc --quiet dql.onnx 2>&1 | FileCheck %s --check-prefix=DQL
// DQL: cuvilc: error: 'dql' (dql.onnx): error: DynamicQuantizeLinear expects float32 input, got 'tensor<4xf64>'

// TopK's k: one constant, no more than the axis holds.
// RUN: %{gen} topk_two_ks topk.onnx
// RUN: not cuvilc --quiet topk.onnx -o out.so 2>&1 | FileCheck %s --check-prefix=TOPKTWO
// RUN: not test -e out.so
// TOPKTWO: cuvilc: error: 'topk' (topk.onnx): error: TopK expects one k, got 2 values
// RUN: %{gen} topk_too_many topk.onnx
// RUN: not cuvilc --quiet topk.onnx 2>&1 | FileCheck %s --check-prefix=TOPKMANY
// TOPKMANY: cuvilc: error: 'topk' (topk.onnx): error: 'cuvil.top_k' op k = 4 exceeds dimension 0 of tensor<3x8xf32>

// RUN: %{gen} resize_area resize.onnx
// RUN: not cuvilc --quiet resize.onnx -o out.so 2>&1 | FileCheck %s --check-prefix=RESIZEMODE
// RUN: not test -e out.so
// RESIZEMODE: cuvilc: error: 'resize' (resize.onnx): error: Resize mode must be nearest, linear or cubic, got 'area'
// RUN: %{gen} resize_short_scales resize.onnx
// RUN: not cuvilc --quiet resize.onnx 2>&1 | FileCheck %s --check-prefix=RESIZESCALES
// RESIZESCALES: cuvilc: error: 'resize' (resize.onnx): error: Resize expects one scale per dimension of its 4-D input, got 2

// RUN: %{gen} mlp mlp.onnx
// RUN: not cuvilc --quiet --input-shape=y=1x10 mlp.onnx 2>&1 | FileCheck %s --check-prefix=NOINPUT
// NOINPUT: cuvilc: error: mlp.onnx: error: --input-shape names 'y', which is not an input of the model (inputs: x)
// RUN: not cuvilc --quiet --input-shape=x=1xten mlp.onnx 2>&1 | FileCheck %s --check-prefix=BADSHAPE
// BADSHAPE: cuvilc: bad input shape 'x=1xten': 'ten' is not a dimension; expected NAME=DIMxDIMx... such as x=1x3x224x224 (? or -1: dynamic)
// RUN: not cuvilc --quiet --input-shape=x=1x12 mlp.onnx 2>&1 | FileCheck %s --check-prefix=OVERRIDE
// OVERRIDE: cuvilc: error: 'fc/MatMul' (mlp.onnx): error: 'cuvil.matmul' op contracting dimensions differ
// RUN: not cuvilc --quiet --max-batch=-2 mlp.onnx 2>&1 | FileCheck %s --check-prefix=MAXBATCH
// MAXBATCH: cuvilc: error: --max-batch must be at least 1

// Nodes exported by torch.onnx (verbose) carry their Python source in
// doc_string; errors point at the user's line (TorchScript: with column).
// RUN: %{gen} scripted_shape_mismatch scripted.onnx
// RUN: not cuvilc --quiet scripted.onnx 2>&1 | FileCheck %s --check-prefix=SCRIPTED
// SCRIPTED: cuvilc: error: '/MatMul' (/home/user/model.py:7:26): error: 'cuvil.matmul' op contracting dimensions differ

// RUN: %{gen} traced_unsupported traced.onnx
// RUN: not cuvilc --quiet traced.onnx 2>&1 | FileCheck %s --check-prefix=TRACED
// TRACED: 'FusedThing' (domain com.example, opset 13) at node custom; 'NonZero' (domain ai.onnx, opset 13) at nodes nz_1 (/home/user/net.py:21), nz_2 (/usr/lib/python3/dist-packages/torch/nn/modules/linear.py:114); 'Unique' (domain ai.onnx, opset 13) at node unique (/home/user/model.py:7). Left out on purpose: NonZero, Unique (
