//===- InferenceServer.h - models, versions and inference -------*- C++ -*-===//
//
// The protocol-neutral server: a model repository
//
//   <repository>/<model>/config.json          (optional, see ModelConfig.h)
//   <repository>/<model>/<version>/model.so   (a cuvilc artifact)
//
// loaded under a control mode (none: everything at start; explicit: what
// --load-model and the repository API say; poll: follow the directory), and
// inference with validation, dynamic batching and metrics. REST and gRPC
// front ends translate to these calls; errors are absl::Status codes they
// map to HTTP and gRPC statuses.
//
// Reloading a model builds its new versions beside the serving ones and swaps
// them in one step; requests already holding the old version finish on it. A
// failed load leaves what was serving untouched.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_SERVING_INFERENCESERVER_H
#define CUVIL_SERVING_INFERENCESERVER_H

#include "cuvil/serving/DynamicBatcher.h"
#include "cuvil/serving/Metrics.h"
#include "cuvil/serving/ModelConfig.h"
#include "cuvil/serving/ModelLibrary.h"
#include "cuvil/serving/Tensor.h"

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace cuvil::serving {

enum class ControlMode { kNone, kExplicit, kPoll };

struct ServerOptions {
  std::string repository;
  ControlMode controlMode = ControlMode::kNone;
  /// explicit mode: models to load at start ("*": all).
  std::vector<std::string> startupModels;
  absl::Duration pollInterval = absl::Seconds(15);
};

struct ModelMetadata {
  std::string name;
  std::vector<std::string> versions;
  std::string platform;
  std::vector<TensorSpec> inputs, outputs;
};

struct IndexEntry {
  std::string name, version, state, reason;
};

class InferenceServer {
public:
  /// Loads the startup models. Load failures are logged and reported by the
  /// index and readiness; only an unusable repository is an error.
  static absl::StatusOr<std::unique_ptr<InferenceServer>> create(ServerOptions options);
  ~InferenceServer();

  static constexpr const char *kName = "cuvil-serve";
  static constexpr const char *kPlatform = "cuvil_x86_64";

  bool live() const { return true; }
  /// OK when serving: every configured model loaded, at least one model, not
  /// shutting down; otherwise Unavailable with the reason.
  absl::Status ready() const;
  absl::Status modelReady(const std::string &name, const std::string &version) const;
  absl::StatusOr<ModelMetadata> modelMetadata(const std::string &name,
                                              const std::string &version) const;
  absl::StatusOr<std::string> modelConfig(const std::string &name) const;
  absl::StatusOr<InferResponse> infer(const InferRequest &request);

  std::vector<IndexEntry> index(bool readyOnly) const;
  /// Loads (or reloads) a model; `config` replaces its config.json.
  absl::Status load(const std::string &name, const std::optional<std::string> &config);
  absl::Status unload(const std::string &name);

  std::string metrics() const { return metrics_.render(); }

  /// Readiness drops and new inference requests are refused; then waits up
  /// to `timeout` for the in-flight ones. Returns how many were left.
  int64_t shutdown(absl::Duration timeout);

private:
  struct Version;
  struct Model;

  explicit InferenceServer(ServerOptions options) : options_(std::move(options)) {}
  absl::Status loadLocked(const std::string &name, const std::optional<std::string> &config)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loadMutex_);
  absl::StatusOr<std::shared_ptr<Version>> findVersion(const std::string &name,
                                                       const std::string &version) const;
  absl::StatusOr<InferResponse> inferOn(const Version &version, const InferRequest &request,
                                        std::chrono::microseconds &queue,
                                        std::chrono::microseconds &compute);
  std::vector<std::string> repositoryModels() const;
  std::string repositoryStamp(const std::string &name) const;
  void pollLoop();

  const ServerOptions options_;
  MetricsRegistry metrics_;

  /// Serializes loads and unloads (they run outside `mutex_`).
  absl::Mutex loadMutex_;
  mutable absl::Mutex mutex_;
  std::map<std::string, std::shared_ptr<Model>> models_ ABSL_GUARDED_BY(mutex_);
  /// Models the server should be serving (readiness).
  std::set<std::string> configured_ ABSL_GUARDED_BY(mutex_);
  bool shuttingDown_ ABSL_GUARDED_BY(mutex_) = false;
  int64_t inFlight_ ABSL_GUARDED_BY(mutex_) = 0;

  std::atomic<bool> stopPolling_{false};
  std::thread poller_;
};

} // namespace cuvil::serving

#endif // CUVIL_SERVING_INFERENCESERVER_H
