//===- ControlFlowOps.td - level1 structured control flow --*- tablegen -*-===//
//
// ONNX's If and Loop (and Scan, imported as a Loop) as structured regions,
// in the spirit of upstream scf: a region yields tensors, nested regions
// read the values of the regions around them. Verification:
// ControlFlowOps.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_IR_CONTROLFLOWOPS_TD
#define CUVIL_IR_CONTROLFLOWOPS_TD

include "cuvil/ir/CuvilBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Cuvil_IfOp : Cuvil_Op<"if", [RecursiveMemoryEffects, NoRegionArguments,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "runs one of two regions on a one-element boolean tensor";
  let description = [{
    ONNX's If: `condition` is a tensor of one `i1` (rank 0 or [1]); the
    `then` region runs when it is true, `else` otherwise. Both yield values
    of the result types, so a model whose branches yield different shapes
    (a data-dependent shape) is refused where it is built.

    ```mlir
    %r = cuvil.if %c : tensor<i1> -> tensor<2x3xf32> {
      %a = cuvil.relu %x : tensor<2x3xf32>
      cuvil.yield %a : tensor<2x3xf32>
    } else {
      cuvil.yield %x : tensor<2x3xf32>
    }
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$condition);
  let results = (outs Variadic<Cuvil_Tensor>:$results);
  let regions = (region SizedRegion<1>:$then_region,
                        SizedRegion<1>:$else_region);
  let assemblyFormat = [{
    $condition `:` type($condition) (`->` type($results)^)? $then_region
    `else` $else_region attr-dict
  }];
  let hasRegionVerifier = 1;
  let hasCanonicalizer = 1;
}

def Cuvil_LoopOp : Cuvil_Op<"loop", [RecursiveMemoryEffects,
    AttrSizedOperandSegments]> {
  let summary = "ONNX's Loop: a body run while a trip count and a condition "
                "allow, carrying values and stacking scan outputs";
  let description = [{
    `for (i = 0; (no max_trip_count || i < max_trip_count) && condition;
    ++i)`, the condition a tensor<i1> and the trip count one i64: the body
    receives the iteration number (tensor<i64>), the
    condition (tensor<i1>) and the carried values (first `inits`), and
    yields the next condition, the carried values (of the inits' types:
    their shapes are fixed) and then one value per scan output. Results: the
    carried values after the last iteration (the inits if none ran), then
    each scan output, the yielded values stacked along a new dimension 0.

    A scan output's row count is the iteration count, so a loop with scan
    outputs must run exactly `scan_rows` times: the importer creates one
    only for a constant trip count and a condition that stays true, and the
    generated code never writes past `scan_rows`.

    ```mlir
    %r = cuvil.loop max(%m : tensor<i64>) while %c : tensor<i1>
        iter(%x : tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %a: tensor<4xf32>):
      %b = cuvil.add %a, %a : tensor<4xf32>, tensor<4xf32>
      cuvil.yield %cond, %b : tensor<i1>, tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins Optional<Cuvil_Tensor>:$max_trip_count,
                       Cuvil_Tensor:$condition,
                       Variadic<Cuvil_Tensor>:$inits,
                       OptionalAttr<I64Attr>:$scan_rows);
  let results = (outs Variadic<Cuvil_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`max` `(` $max_trip_count^ `:` type($max_trip_count) `)`)?
    `while` $condition `:` type($condition)
    (`iter` `(` $inits^ `:` type($inits) `)`)?
    (`->` type($results)^)? $body attr-dict
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The body's block arguments: the iteration number, the condition and
    /// the carried values.
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    ::mlir::BlockArgument getIteration() {
      return getBodyBlock().getArgument(0);
    }
    ::mlir::BlockArgument getBodyCondition() {
      return getBodyBlock().getArgument(1);
    }
    ::mlir::Block::BlockArgListType getCarried() {
      return getBodyBlock().getArguments().drop_front(2);
    }
    /// The values the body yields: next condition, carried, scan outputs.
    ::mlir::Operation *getYield() { return getBodyBlock().getTerminator(); }
    unsigned getNumScans() { return getNumResults() - getInits().size(); }
  }];
}

#endif // CUVIL_IR_CONTROLFLOWOPS_TD
