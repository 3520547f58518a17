//===- IndexingOps.td - level1 element-wise gathers and scatters -*- tablegen -*-===//
//
// Ops that read or write single elements at indices a tensor holds
// (torch.gather / scatter, ONNX GatherElements / ScatterElements), the
// selection that makes such indices (torch.topk, ONNX TopK), and sampling
// at positions a tensor holds (ONNX RoiAlign). Included by CuvilOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_IR_INDEXINGOPS_TD
#define CUVIL_IR_INDEXINGOPS_TD

def Cuvil_GatherElementsOp : Cuvil_Op<"gather_elements",
                                      [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "pick one element of `data` per index (torch.gather)";
  let description = [{
    ONNX GatherElements: the result has the shape of `indices`, and
    `result[i0, .., ir] = data[i0, .., indices[i0, .., ir], .., ir]` with the
    index replacing coordinate `axis`. Negative indices count from the end;
    an index out of range is the caller's bad data (the CPU targets return
    an invalid-argument error). Outside `axis`, `indices` is no larger than
    `data`.
  }];
  let arguments = (ins Cuvil_Tensor:$data, Cuvil_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` type($data) `,` type($indices)
  }];
}

def Cuvil_ScatterElementsOp : Cuvil_Op<"scatter_elements",
                                       [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "a copy of `data` with `updates` written at `indices`";
  let description = [{
    ONNX ScatterElements (and Scatter, its opset 9 name): the result is
    `data` with, for every position `i` of `indices` (and of `updates`, its
    shape), `result[i with coordinate axis = indices[i]]` set to
    `updates[i]`, or combined with it by `reduction` (`add`, `mul`, `max`,
    `min`) in the order of `indices`' elements. With `none`, duplicate
    indices leave the last update (ONNX leaves the order undefined).
    Negative indices count from the end; out of range is an error at run
    time.
  }];
  let arguments = (ins Cuvil_Tensor:$data, Cuvil_IndexTensor:$indices,
                       Cuvil_Tensor:$updates,
                       DefaultValuedAttr<I64Attr, "0">:$axis,
                       DefaultValuedAttr<StrAttr, "\"none\"">:$reduction);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices `,` $updates attr-dict `:` type($data) `,`
    type($indices) `,` type($updates)
  }];
  let hasVerifier = 1;
}

def Cuvil_GatherNDOp : Cuvil_Op<"gather_nd",
                                [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "slices of `data` at index tuples (ONNX GatherND)";
  let description = [{
    The last dimension of `indices` (static, m) holds tuples of coordinates
    into `data`'s dimensions after its first `batch_dims` (which `indices`
    shares); each tuple picks the slice of the dimensions after those m.
    The result's shape is `indices.shape[:-1] + data.shape[batch_dims + m:]`.
    Negative coordinates count from the end; out of range is an error at run
    time.
  }];
  let arguments = (ins Cuvil_Tensor:$data, Cuvil_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` type($data) `,` type($indices)
  }];
}

def Cuvil_RoiAlignOp : Cuvil_Op<"roi_align", [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "bilinear pooling of regions of interest (ONNX RoiAlign)";
  let description = [{
    For each region r, `rois[r]` = (x1, y1, x2, y2) in input coordinates
    times `spatial_scale` (less half a pixel with `half_pixel`, else each
    side at least 1) on image `batch_indices[r]` of the NCHW `input`: the
    region is cut into `output_height` x `output_width` bins, each sampled
    on a grid of `sampling_ratio` x `sampling_ratio` points (0: the bin's
    size in pixels, rounded up, per region), each point interpolated
    bilinearly (0 beyond a pixel outside the image). A bin is the mean of
    its points, or with `max` the largest of their weighted corner values
    (ONNX's definition). The result is [R, C, output_height, output_width].
    A fixed sampling_ratio is at most 1024. A batch index outside [0, N), a
    coordinate that is not finite, or an adaptive grid of more than 2^40
    points per side is the caller's bad data (the CPU targets return an
    invalid-argument error).
  }];
  let arguments = (ins Cuvil_FloatTensor:$input, Cuvil_FloatTensor:$rois,
                       RankedTensorOf<[I64]>:$batch_indices,
                       I64Attr:$output_height, I64Attr:$output_width,
                       I64Attr:$sampling_ratio, F64Attr:$spatial_scale,
                       UnitAttr:$half_pixel, UnitAttr:$max);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $rois `,` $batch_indices attr-dict `:` type($input) `,`
    type($rois) `,` type($batch_indices)
  }];
}

def Cuvil_ScatterNDOp : Cuvil_Op<"scatter_nd",
                                 [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "a copy of `data` with slices of `updates` written at tuples";
  let description = [{
    ONNX ScatterND: for each tuple of the last dimension of `indices`
    (static, m), the slice of `data` it picks is replaced by (or combined by
    `reduction`: `add`, `mul`, `max`, `min` with) the matching slice of
    `updates`, whose shape is `indices.shape[:-1] + data.shape[m:]`. Tuples
    apply in order, so with `none` a repeated tuple leaves the last update.
    Negative coordinates count from the end; out of range is an error at run
    time.
  }];
  let arguments = (ins Cuvil_Tensor:$data, Cuvil_IndexTensor:$indices,
                       Cuvil_Tensor:$updates,
                       DefaultValuedAttr<StrAttr, "\"none\"">:$reduction);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices `,` $updates attr-dict `:` type($data) `,`
    type($indices) `,` type($updates)
  }];
  let hasVerifier = 1;
}

def Cuvil_TopKOp : Cuvil_Op<"top_k", [Pure, Cuvil_InferTypeOpAdaptor]> {
  let summary = "the k largest (or smallest) elements along `axis`, and where";
  let description = [{
    ONNX TopK and torch.topk: along `axis`, the `k` largest elements of each
    slice (the smallest with `largest` false), best first, and their i64
    positions in the slice. Equal elements keep their order (the lower
    position first), so the result is the same with `sorted` false, which
    ONNX leaves unordered. NaN ranks above every number (torch's rule). `k`
    is a constant; it must not exceed a static `axis` dimension, and a
    dynamic one shorter than `k` is an error at run time.
  }];
  let arguments = (ins Cuvil_Tensor:$input, I64Attr:$k,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<BoolAttr, "true">:$largest,
                       DefaultValuedAttr<BoolAttr, "true">:$sorted);
  let results = (outs Cuvil_Tensor:$values, RankedTensorOf<[I64]>:$indices);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

#endif // CUVIL_IR_INDEXINGOPS_TD
