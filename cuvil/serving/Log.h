//===- Log.h - server log lines ---------------------------------*- C++ -*-===//

#ifndef CUVIL_SERVING_LOG_H
#define CUVIL_SERVING_LOG_H

#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

#include <cstdio>
#include <string>

namespace cuvil::serving {

/// One line on stderr: "2026-11-30T02:00:00.123Z cuvil-serve: <message>".
inline void logLine(absl::string_view message) {
  std::string line = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone());
  line.append(" cuvil-serve: ");
  line.append(message.data(), message.size());
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), stderr);
}

} // namespace cuvil::serving

#endif // CUVIL_SERVING_LOG_H
