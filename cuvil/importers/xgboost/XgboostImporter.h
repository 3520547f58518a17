//===- XgboostImporter.h - XGBoost JSON models to level1 --------*- C++ -*-===//
//
// Reads a model XGBoost 1.x saved as JSON (Booster.save_model("m.json"))
// and builds one func.func of one cuvil.tree_ensemble: float32 features
// [batch, num_feature] in, [batch, targets] out, with XGBoost's semantics
// (float32 thresholds, `<`, the default direction for NaN, float32 sums
// in tree order from the base margin, the objective's transform).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_IMPORTERS_XGBOOST_XGBOOSTIMPORTER_H
#define CUVIL_IMPORTERS_XGBOOST_XGBOOSTIMPORTER_H

#include "cuvil/importers/trees/Forest.h"

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>
#include <string>

namespace cuvil {

struct XgboostImportOptions {
  /// Shown in locations and errors ("model.json").
  std::string modelPath = "model.json";
  /// The objective's prediction (probabilities for logistic and softprob),
  /// the margins (output_margin=True) or each tree's leaf node id as
  /// float32 (pred_leaf=True).
  trees::ForestOutput output = trees::ForestOutput::kPrediction;
  /// A value that counts as missing besides NaN (XGBoost's `missing`
  /// parameter, which the model file does not record).
  std::optional<double> missingValue;
};

/// Imports a JSON model. Fails, with nothing built, on text that is not an
/// XGBoost 1.x model, on boosters, objectives and split types Cuvil does
/// not compile (naming them), and on malformed trees (naming the tree and
/// node).
absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>>
importXgboostModel(mlir::MLIRContext &context, absl::string_view json,
                   const XgboostImportOptions &options);

} // namespace cuvil

#endif // CUVIL_IMPORTERS_XGBOOST_XGBOOSTIMPORTER_H
