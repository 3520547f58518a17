//===- FpgaSettings.cpp - what the user asks of an FPGA design ------------===//

#include "cuvil/targets/fpga/FpgaSettings.h"

#include "cuvil/support/SourceEscape.h"
#include "cuvil/support/StatusMacros.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "llvm/ADT/StringRef.h"

namespace cuvil::fpga {

namespace {

absl::Status bad(const std::string &key, const std::string &value,
                 absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      "bad FPGA setting ", printableText(key), "='", printableText(value),
      "': ", what));
}

absl::StatusOr<int64_t> reuseFactor(const std::string &key,
                                    const std::string &value) {
  int64_t reuse = 0;
  if (!absl::SimpleAtoi(value, &reuse) || reuse < 1)
    return bad(key, value, "a reuse factor is a whole number from 1");
  return reuse;
}

bool isIdentifier(const std::string &name) {
  if (name.empty() || name.size() > 64 ||
      !(absl::ascii_isalpha(name[0]) || name[0] == '_'))
    return false;
  for (char c : name)
    if (!absl::ascii_isalnum(c) && c != '_')
      return false;
  return true;
}

} // namespace

absl::StatusOr<FpgaSettings>
parseFpgaSettings(const std::map<std::string, std::string> &settings) {
  FpgaSettings result;
  for (const auto &[key, value] : settings) {
    size_t colon = key.find(':');
    std::string name = key.substr(0, colon);
    std::string node = colon == std::string::npos ? "" : key.substr(colon + 1);
    if (colon != std::string::npos && name != "precision" &&
        name != "reuse_factor" && name != "strategy")
      return bad(key, value, "only precision, reuse_factor and strategy are "
                             "set per layer (NAME:NODE)");
    if (name == "calibration") {
      result.calibration = value;
    } else if (name == "precision") {
      absl::StatusOr<Precision> precision = parsePrecision(value);
      if (!precision.ok() || (!node.empty() && precision->autoWidth))
        return bad(key, value,
                   precision.ok() ? "auto applies to the whole model"
                                  : precision.status().message());
      if (node.empty())
        result.precision = *precision;
      else
        result.layerPrecision[node] = precision->type;
    } else if (name == "reuse_factor") {
      ASSIGN_OR_RETURN(int64_t reuse, reuseFactor(key, value));
      if (node.empty())
        result.plan.reuse = reuse;
      else
        result.plan.layerReuse[node] = reuse;
    } else if (name == "strategy") {
      std::optional<Strategy> strategy = parseStrategy(value);
      if (!strategy)
        return bad(key, value, "the strategy is latency (fully parallel) or "
                               "resource (folded, weights in memory)");
      if (node.empty())
        result.plan.strategy = *strategy;
      else
        result.plan.layerStrategy[node] = *strategy;
    } else if (name == "clock_period") {
      if (!absl::SimpleAtod(value, &result.plan.clockNs) ||
          !(result.plan.clockNs > 0.5 && result.plan.clockNs < 1000))
        return bad(key, value, "the clock period is in ns, 0.5 to 1000");
    } else if (name == "max_utilization") {
      double share = 0;
      if (!absl::SimpleAtod(value, &share) || !(share > 0 && share <= 1))
        return bad(key, value, "a share of each resource, in (0, 1]");
      result.plan.maxUtilization = share;
    } else if (name == "project") {
      if (!isIdentifier(value))
        return bad(key, value, "the project names the top function: letters, "
                               "digits and _, not starting with a digit, at "
                               "most 64");
      result.project = value;
    } else if (name == "test_vectors") {
      if (!absl::SimpleAtoi(value, &result.testVectors) ||
          result.testVectors < 1 || result.testVectors > 100000)
        return bad(key, value, "the testbench's samples, 1 to 100000");
    } else {
      return bad(key, value,
                 "unknown setting; the FPGA target takes precision, "
                 "precision:NODE, reuse_factor, reuse_factor:NODE, strategy, "
                 "strategy:NODE, "
                 "clock_period, max_utilization, project, test_vectors and "
                 "calibration");
    }
  }
  return result;
}

} // namespace cuvil::fpga
