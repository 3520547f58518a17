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
// The repository is trusted (loading a model runs its code), clients are
// not: every path is resolved and refused if it leaves the repository, poll
// mode loads a file only once it has stopped changing, the repository API
// (load / unload / config overrides) is off unless the operator allows it,
// what a config may ask (batch, instances, threads) is capped by the
// server's maxima, a request for an unknown model adds no state, and the
// bytes requests hold are capped server-wide (InflightBudget).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_SERVING_INFERENCESERVER_H
#define CUVIL_SERVING_INFERENCESERVER_H

#include "cuvil/serving/DynamicBatcher.h"
#include "cuvil/serving/InflightBudget.h"
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
  /// explicit mode: whether clients may load and unload models (and pass
  /// configs) through the repository API. Off: only --load-model loads.
  bool allowRepositoryControl = false;
  absl::Duration pollInterval = absl::Seconds(15);

  /// Server-side maxima, whatever a config.json or a load request asks.
  /// Rows of a request or merged batch (a model compiled for more serves
  /// this many).
  int64_t maxBatchSize = 65536;
  int maxInstancesPerModel = 16;
  int maxThreadsPerInstance = 64;
  /// Model threads (instances x threads) of every loaded version together.
  int64_t maxTotalThreads = 512;
  /// Bytes all requests in flight may hold (bodies, decoded tensors, answers).
  uint64_t maxInflightBytes = uint64_t{2} << 30;
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
  /// Counts a request for `model` that a front end refused before infer()
  /// (undecodable, too large, over the budget) in the failure metrics.
  void recordRefused(const std::string &model, const std::string &version,
                     const absl::Status &status);

  std::vector<IndexEntry> index(bool readyOnly) const;
  /// Loads (or reloads) a model; `config` replaces its config.json.
  absl::Status load(const std::string &name, const std::optional<std::string> &config);
  absl::Status unload(const std::string &name);

  std::string metrics() const;
  ServerMetrics &serverMetrics() { return metrics_.server; }
  /// The server-wide budget of bytes requests may hold.
  InflightBudget &budget() { return budget_; }

  /// Readiness drops and new inference requests are refused; then waits up
  /// to `timeout` for the in-flight ones. Returns how many were left.
  int64_t shutdown(absl::Duration timeout);

private:
  struct Version;
  struct Model;

  explicit InferenceServer(ServerOptions options)
      : options_(std::move(options)), budget_(options_.maxInflightBytes) {}
  absl::Status checkControl(const char *action) const;
  absl::Status loadLocked(const std::string &name, const std::optional<std::string> &config)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(loadMutex_);
  absl::StatusOr<std::shared_ptr<Version>> loadVersion(const std::string &name, int64_t number,
                                                       const ModelConfig &config,
                                                       const std::string &stamp);
  absl::Status checkThreads(const std::string &name, const ModelConfig &config,
                            size_t versions) const;
  /// `path` with every link resolved, or an error if it leaves the repository.
  absl::StatusOr<std::string> resolve(const std::string &path) const;
  absl::StatusOr<std::shared_ptr<Version>> findVersion(const std::string &name,
                                                       const std::string &version) const;
  absl::StatusOr<InferResponse> inferOn(const Version &version, const InferRequest &request,
                                        std::chrono::microseconds &queue,
                                        std::chrono::microseconds &compute);
  std::vector<std::string> repositoryModels() const;
  std::string repositoryStamp(const std::string &name) const;
  void pollLoop();

  const ServerOptions options_;
  /// The repository with every link resolved: what paths must stay under.
  std::string repositoryRealPath_;
  MetricsRegistry metrics_;
  InflightBudget budget_;

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
  /// Poll mode: each model's files as the previous scan saw them; a change
  /// is loaded once two scans in a row see the same (an upload has ended).
  std::map<std::string, std::string> previousScan_;
};

} // namespace cuvil::serving

#endif // CUVIL_SERVING_INFERENCESERVER_H
