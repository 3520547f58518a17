//===- Ubjson.h - UBJSON documents as JSON text -----------------*- C++ -*-===//
//
// XGBoost 1.6+ saves models as UBJSON (Booster.save_model("m.ubj")), the
// same document as its JSON in a binary form (ubjson.org, draft 12:
// big-endian numbers, typed and counted containers). The importer reads
// JSON; this writes a UBJSON document as JSON text, numbers exactly
// (float32 with 9 significant digits, float64 with 17; NaN and infinities
// as XGBoost's own JSON writes them).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_IMPORTERS_XGBOOST_UBJSON_H
#define CUVIL_IMPORTERS_XGBOOST_UBJSON_H

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include <string>

namespace cuvil {

/// The JSON text of the UBJSON document `bytes`; fails (saying where) on a
/// truncated or malformed document, or nesting deeper than 64.
absl::StatusOr<std::string> ubjsonToJson(absl::string_view bytes);

} // namespace cuvil

#endif // CUVIL_IMPORTERS_XGBOOST_UBJSON_H
