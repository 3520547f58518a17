//===- SampleSeparability.h - do a function's samples run apart? -*- C++ -*-===//
//
// Level1 functions with a dynamic batch carry the batch in dimension 0 of
// their dynamic values (`?`, sized batch * k). A function is separable by
// samples when each op computes sample s of its results from sample s of
// its batched operands and from values that do not depend on the batch
// (weights, static inputs): then any chunk of the batch, run alone, gives
// the same values as the whole batch. The analysis is conservative: an op
// it has no rule for, or a dynamic dimension anywhere but dimension 0, makes
// the function not separable.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_PASSES_SAMPLESEPARABILITY_H
#define CUVIL_PASSES_SAMPLESEPARABILITY_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace cuvil {

/// The unit attribute on a level1 (and then level2) function whose batch
/// a target may run as independent chunks of samples.
inline constexpr const char kSampleParallelAttr[] = "cuvil.sample_parallel";

struct SampleSeparability {
  bool separable = false;
  /// Why not: the op (null for the signature) and a sentence.
  mlir::Operation *culprit = nullptr;
  std::string reason;
  /// Multiply-adds of one sample in products with a batch-independent
  /// operand (convolutions, linear layers), and that operand's bytes.
  double macsPerSample = 0, weightBytes = 0;

  /// How often one sample reuses each weight byte; huge with no weights.
  double macsPerWeightByte() const {
    return weightBytes > 0 ? macsPerSample / weightBytes : 1e300;
  }
};

SampleSeparability analyzeSamples(mlir::func::FuncOp func);

} // namespace cuvil

#endif // CUVIL_PASSES_SAMPLESEPARABILITY_H
