//===- LightgbmImporter.h - LightGBM text models to level1 -----*- C++ -*-===//
//
// Reads a model LightGBM saved as text (Booster.save_model("model.txt"),
// format v2 to v4) and builds one func.func of one cuvil.tree_ensemble:
// float64 features [batch, max_feature_idx + 1] in, float64 [batch,
// num_tree_per_iteration] out, with LightGBM's semantics (`<=` in double;
// per node, NaN as zero (missing type None), zero and NaN as missing (Zero)
// or NaN as missing (NaN), missing values to the default child; double
// sums in tree order; the objective's transform).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_IMPORTERS_LIGHTGBM_LIGHTGBMIMPORTER_H
#define CUVIL_IMPORTERS_LIGHTGBM_LIGHTGBMIMPORTER_H

#include "cuvil/importers/trees/Forest.h"

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace cuvil {

struct LightgbmImportOptions {
  /// Shown in locations and errors ("model.txt").
  std::string modelPath = "model.txt";
  /// The objective's prediction, the raw sums (raw_score=True) or each
  /// tree's leaf index as float64 (pred_leaf=True).
  trees::ForestOutput output = trees::ForestOutput::kPrediction;
  /// Take float32 features rather than float64: exact for float32 data
  /// (LightGBM reads it in double, exactly), and the vector walks take
  /// such forests (their float64 thresholds narrowed exactly).
  bool float32Features = false;
};

/// Imports a text model. Fails, with nothing built, on text that is not a
/// LightGBM model, on objectives, linear trees and categorical splits
/// Cuvil does not compile (naming them, with the tree and node), and on
/// malformed trees.
absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>>
importLightgbmModel(mlir::MLIRContext &context, absl::string_view text,
                    const LightgbmImportOptions &options);

} // namespace cuvil

#endif // CUVIL_IMPORTERS_LIGHTGBM_LIGHTGBMIMPORTER_H
