//===- ModelConfig.h - per-model serving settings ---------------*- C++ -*-===//
//
// `<repository>/<model>/config.json`, all fields optional (Triton's names
// where Triton has one):
//
//   {"max_batch_size": 8,                       // 0: the compiled maximum
//    "dynamic_batching": {"max_queue_delay_microseconds": 200},  // or false
//    "instance_count": 2,                       // executors (contexts)
//    "threads": 1,                              // per executor, 0: compiled
//    "version_policy": {"latest": {"num_versions": 1}}
//                   | {"all": {}} | {"specific": {"versions": [1, 3]}},
//    "sha256": "<64 hex digits>"                // every served model.so's hash
//            | {"1": "<hex>", "2": "<hex>"}}     // or one per version
//
// A load request may pass a whole config (`parameters.config`), which
// replaces the file's for that load: batching and threads change at run time.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_SERVING_MODELCONFIG_H
#define CUVIL_SERVING_MODELCONFIG_H

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cuvil::serving {

struct VersionPolicy {
  enum class Kind { kLatest, kAll, kSpecific };
  Kind kind = Kind::kLatest;
  int64_t numVersions = 1;
  std::vector<int64_t> versions;

  /// The versions of `available` (ascending) this policy serves.
  std::vector<int64_t> select(const std::vector<int64_t> &available) const;
};

struct ModelConfig {
  int64_t maxBatchSize = 0;
  bool dynamicBatching = true;
  int64_t maxQueueDelayMicroseconds = 0;
  int instanceCount = 1;
  int threads = 1;
  VersionPolicy versionPolicy;
  /// SHA-256 (lowercase hex) every version's model.so must have, and per
  /// version (which takes precedence).
  std::optional<std::string> sha256;
  std::map<int64_t, std::string> versionSha256;

  /// The hash `version`'s model.so must have, if the config records one.
  std::optional<std::string> sha256For(int64_t version) const;

  bool operator==(const ModelConfig &other) const { return toJson() == other.toJson(); }
  std::string toJson() const;
};

/// A version directory name or a requested version as a number: canonical
/// decimal only ("1", "12"; not "01", "+1", " 1" or "0"), so one version
/// has one spelling.
std::optional<int64_t> parseVersionNumber(absl::string_view text);

/// Parses a config; `source` names it in errors (a path or "the load
/// request"). Unknown fields are errors, so a typo does not pass silently.
absl::StatusOr<ModelConfig> parseModelConfig(absl::string_view json, absl::string_view source);

} // namespace cuvil::serving

#endif // CUVIL_SERVING_MODELCONFIG_H
