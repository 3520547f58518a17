//===- ModelConfig.cpp - per-model serving settings -----------------------===//

#include "cuvil/serving/ModelConfig.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace cuvil::serving {
namespace {

using nlohmann::json;

absl::Status checkKeys(const json &object, std::initializer_list<const char *> allowed,
                       absl::string_view where, absl::string_view source) {
  if (!object.is_object())
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", where, " must be an object"));
  for (auto it = object.begin(); it != object.end(); ++it)
    if (std::none_of(allowed.begin(), allowed.end(),
                     [&](const char *key) { return it.key() == key; }))
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": unknown field '", it.key(), "' in ", where));
  return absl::OkStatus();
}

absl::StatusOr<int64_t> integer(const json &object, const char *key, int64_t lo, int64_t hi,
                                absl::string_view source) {
  const json &value = object.at(key);
  if (!value.is_number_integer())
    return absl::InvalidArgumentError(absl::StrCat(source, ": '", key, "' must be an integer"));
  int64_t result = value.get<int64_t>();
  if (result < lo || result > hi)
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": '", key, "' is ", result, ", outside ", lo, "..", hi));
  return result;
}

absl::StatusOr<std::string> parseHash(const json &value, absl::string_view where,
                                      absl::string_view source) {
  std::string hash = value.is_string() ? value.get<std::string>() : "";
  bool hex = hash.size() == 64 && std::all_of(hash.begin(), hash.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c));
  });
  if (!hex)
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": ", where, " must be a SHA-256 of 64 hexadecimal digits (what sha256sum "
        "prints), not ", value.dump()));
  std::transform(hash.begin(), hash.end(), hash.begin(),
                 [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
  return hash;
}

} // namespace

std::optional<int64_t> parseVersionNumber(absl::string_view text) {
  if (text.empty() || text.size() > 18 || text[0] == '0' ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  int64_t number = 0;
  for (char c : text)
    number = number * 10 + (c - '0');
  return number;
}

std::optional<std::string> ModelConfig::sha256For(int64_t version) const {
  auto it = versionSha256.find(version);
  if (it != versionSha256.end())
    return it->second;
  return sha256;
}

std::vector<int64_t> VersionPolicy::select(const std::vector<int64_t> &available) const {
  switch (kind) {
  case Kind::kAll:
    return available;
  case Kind::kSpecific: {
    std::vector<int64_t> chosen;
    for (int64_t version : available)
      if (std::find(versions.begin(), versions.end(), version) != versions.end())
        chosen.push_back(version);
    return chosen;
  }
  case Kind::kLatest:
    break;
  }
  size_t keep = std::min<size_t>(available.size(), static_cast<size_t>(numVersions));
  return std::vector<int64_t>(available.end() - keep, available.end());
}

std::string ModelConfig::toJson() const {
  json policy;
  switch (versionPolicy.kind) {
  case VersionPolicy::Kind::kLatest:
    policy = {{"latest", {{"num_versions", versionPolicy.numVersions}}}};
    break;
  case VersionPolicy::Kind::kAll:
    policy = {{"all", json::object()}};
    break;
  case VersionPolicy::Kind::kSpecific:
    policy = {{"specific", {{"versions", versionPolicy.versions}}}};
    break;
  }
  json config = {{"max_batch_size", maxBatchSize},
                 {"instance_count", instanceCount},
                 {"threads", threads},
                 {"version_policy", policy}};
  if (dynamicBatching)
    config["dynamic_batching"] = {{"max_queue_delay_microseconds", maxQueueDelayMicroseconds}};
  else
    config["dynamic_batching"] = false;
  if (!versionSha256.empty()) {
    json hashes = json::object();
    for (const auto &[version, hash] : versionSha256)
      hashes[std::to_string(version)] = hash;
    config["sha256"] = hashes;
  } else if (sha256) {
    config["sha256"] = *sha256;
  }
  return config.dump();
}

absl::StatusOr<ModelConfig> parseModelConfig(absl::string_view text, absl::string_view source) {
  json config = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded())
    return absl::InvalidArgumentError(absl::StrCat(source, ": not valid JSON"));
  absl::Status keys = checkKeys(config,
                                {"max_batch_size", "dynamic_batching", "instance_count",
                                 "threads", "version_policy", "sha256"},
                                "the model config", source);
  if (!keys.ok())
    return keys;
  ModelConfig result;
  // Batching is on unless `"dynamic_batching": false`: with no queue delay it
  // only merges requests that are already waiting, which costs no latency.
  if (config.contains("dynamic_batching") && config["dynamic_batching"].is_boolean())
    result.dynamicBatching = config["dynamic_batching"].get<bool>();
  if (config.contains("max_batch_size")) {
    absl::StatusOr<int64_t> value = integer(config, "max_batch_size", 0, 1 << 20, source);
    if (!value.ok())
      return value.status();
    result.maxBatchSize = *value;
  }
  if (config.contains("instance_count")) {
    absl::StatusOr<int64_t> value = integer(config, "instance_count", 1, 64, source);
    if (!value.ok())
      return value.status();
    result.instanceCount = static_cast<int>(*value);
  }
  if (config.contains("threads")) {
    absl::StatusOr<int64_t> value = integer(config, "threads", 0, 256, source);
    if (!value.ok())
      return value.status();
    result.threads = static_cast<int>(*value);
  }
  if (config.contains("dynamic_batching") && !config["dynamic_batching"].is_boolean()) {
    const json &batching = config["dynamic_batching"];
    absl::Status status =
        checkKeys(batching, {"max_queue_delay_microseconds"}, "dynamic_batching", source);
    if (!status.ok())
      return status;
    if (batching.contains("max_queue_delay_microseconds")) {
      absl::StatusOr<int64_t> value =
          integer(batching, "max_queue_delay_microseconds", 0, 10'000'000, source);
      if (!value.ok())
        return value.status();
      result.maxQueueDelayMicroseconds = *value;
    }
  }
  if (config.contains("sha256")) {
    const json &hashes = config["sha256"];
    if (hashes.is_object()) {
      // One per version: {"1": "<hex>", ...}; a version left out has none.
      for (auto it = hashes.begin(); it != hashes.end(); ++it) {
        std::optional<int64_t> version = parseVersionNumber(it.key());
        if (!version)
          return absl::InvalidArgumentError(absl::StrCat(
              source, ": the keys of 'sha256' are version numbers, not '", it.key(), "'"));
        absl::StatusOr<std::string> hash =
            parseHash(it.value(), absl::StrCat("sha256 of version ", it.key()), source);
        if (!hash.ok())
          return hash.status();
        result.versionSha256[*version] = *hash;
      }
    } else {
      absl::StatusOr<std::string> hash = parseHash(hashes, "'sha256'", source);
      if (!hash.ok())
        return hash.status();
      result.sha256 = *hash;
    }
  }
  if (config.contains("version_policy")) {
    const json &policy = config["version_policy"];
    absl::Status status =
        checkKeys(policy, {"latest", "all", "specific"}, "version_policy", source);
    if (!status.ok())
      return status;
    if (policy.size() != 1)
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": version_policy takes exactly one of latest, all, specific"));
    VersionPolicy &out = result.versionPolicy;
    if (policy.contains("latest")) {
      out.kind = VersionPolicy::Kind::kLatest;
      status = checkKeys(policy["latest"], {"num_versions"}, "version_policy.latest", source);
      if (!status.ok())
        return status;
      if (policy["latest"].contains("num_versions")) {
        absl::StatusOr<int64_t> value =
            integer(policy["latest"], "num_versions", 1, 1 << 20, source);
        if (!value.ok())
          return value.status();
        out.numVersions = *value;
      }
    } else if (policy.contains("all")) {
      out.kind = VersionPolicy::Kind::kAll;
    } else {
      out.kind = VersionPolicy::Kind::kSpecific;
      const json &specific = policy["specific"];
      status = checkKeys(specific, {"versions"}, "version_policy.specific", source);
      if (!status.ok())
        return status;
      if (!specific.contains("versions") || !specific["versions"].is_array() ||
          specific["versions"].empty())
        return absl::InvalidArgumentError(absl::StrCat(
            source, ": version_policy.specific needs a non-empty 'versions' list"));
      for (const json &version : specific["versions"]) {
        if (!version.is_number_integer() || version.get<int64_t>() < 1)
          return absl::InvalidArgumentError(absl::StrCat(
              source, ": version_policy.specific.versions holds positive integers"));
        out.versions.push_back(version.get<int64_t>());
      }
    }
  }
  return result;
}

} // namespace cuvil::serving
