//===- InferenceServer.cpp - models, versions and inference ---------------===//

#include "cuvil/serving/InferenceServer.h"

#include "cuvil/serving/Log.h"
#include "cuvil/support/StatusMacros.h"

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cuvil::serving {

using Clock = std::chrono::steady_clock;

struct InferenceServer::Version {
  int64_t number = 0;
  std::string label;
  std::string stamp;
  ModelConfig config;
  int64_t maxBatch = 1;
  std::shared_ptr<ModelMetrics> metrics;
  std::shared_ptr<ModelLibrary> library;
  /// Declared last: destroyed first, finishing its queue while the library
  /// is still mapped.
  std::unique_ptr<DynamicBatcher> batcher;
};

struct InferenceServer::Model {
  std::map<int64_t, std::shared_ptr<Version>> versions;
  std::string lastError;
  std::string stamp;
};

namespace {

bool isDirectory(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string fileStamp(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return "-";
  return absl::StrCat(st.st_dev, ":", st.st_ino, ":", st.st_size, ":", st.st_mtim.tv_sec, ".",
                      st.st_mtim.tv_nsec);
}

std::vector<std::string> listDirectory(const std::string &path) {
  std::vector<std::string> names;
  if (DIR *dir = ::opendir(path.c_str())) {
    while (dirent *entry = ::readdir(dir))
      if (entry->d_name[0] != '.')
        names.emplace_back(entry->d_name);
    ::closedir(dir);
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// Version directories holding a model.so, ascending. Only canonical names
/// count ("1", not "01"), so one version cannot be two directories.
std::vector<int64_t> availableVersions(const std::string &modelDir) {
  std::vector<int64_t> versions;
  for (const std::string &entry : listDirectory(modelDir)) {
    std::optional<int64_t> number = parseVersionNumber(entry);
    if (number && ::access((modelDir + "/" + entry + "/model.so").c_str(), F_OK) == 0)
      versions.push_back(*number);
  }
  std::sort(versions.begin(), versions.end());
  return versions;
}

/// A name that can only mean a folder directly in the repository.
absl::Status checkModelName(const std::string &name) {
  bool plain = !name.empty() && name.size() <= 255 && name[0] != '.' &&
               std::none_of(name.begin(), name.end(), [](char c) {
                 return c == '/' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
               });
  if (!plain)
    return absl::InvalidArgumentError(absl::StrCat(
        "'", absl::CHexEscape(name.substr(0, 255)),
        "' is not a model name (a folder name of at most 255 bytes, no '/', no control "
        "characters, not starting with '.')"));
  return absl::OkStatus();
}

bool isInside(const std::string &path, const std::string &root) {
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          (root == "/" || path[root.size()] == '/'));
}

/// Reads a small text file (config.json).
absl::StatusOr<std::string> readText(const std::string &path) {
  std::ifstream file(path);
  if (!file)
    return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string specString(const TensorSpec &spec) {
  return absl::StrCat("'", spec.name, "' (", v2Name(spec.datatype), " ", shapeString(spec.shape),
                      ")");
}

std::string names(const std::vector<TensorSpec> &specs) {
  return absl::StrJoin(specs, ", ", [](std::string *out, const TensorSpec &spec) {
    absl::StrAppend(out, specString(spec));
  });
}

} // namespace

absl::StatusOr<std::unique_ptr<InferenceServer>> InferenceServer::create(ServerOptions options) {
  if (!isDirectory(options.repository))
    return absl::NotFoundError(absl::StrCat("the model repository '", options.repository,
                                            "' is not a directory"));
  std::unique_ptr<InferenceServer> server(new InferenceServer(std::move(options)));
  char *real = ::realpath(server->options_.repository.c_str(), nullptr);
  if (!real)
    return absl::NotFoundError(absl::StrCat("cannot resolve the model repository '",
                                            server->options_.repository,
                                            "': ", std::strerror(errno)));
  server->repositoryRealPath_ = real;
  std::free(real);
  std::vector<std::string> startup;
  bool all = server->options_.controlMode != ControlMode::kExplicit ||
             std::count(server->options_.startupModels.begin(),
                        server->options_.startupModels.end(), "*");
  startup = all ? server->repositoryModels() : server->options_.startupModels;
  {
    absl::MutexLock loadLock(&server->loadMutex_);
    for (const std::string &name : startup) {
      {
        absl::MutexLock lock(&server->mutex_);
        server->configured_.insert(name);
      }
      absl::Status status = server->loadLocked(name, std::nullopt);
      if (!status.ok())
        logLine(absl::StrCat("model '", name, "' failed to load: ", status.message()));
    }
  }
  if (server->options_.controlMode == ControlMode::kPoll)
    server->poller_ = std::thread([s = server.get()] { s->pollLoop(); });
  return server;
}

InferenceServer::~InferenceServer() {
  stopPolling_ = true;
  if (poller_.joinable())
    poller_.join();
}

std::vector<std::string> InferenceServer::repositoryModels() const {
  std::vector<std::string> models;
  for (const std::string &entry : listDirectory(options_.repository))
    if (isDirectory(options_.repository + "/" + entry))
      models.push_back(entry);
  return models;
}

std::string InferenceServer::repositoryStamp(const std::string &name) const {
  std::string dir = options_.repository + "/" + name;
  std::string stamp = fileStamp(dir + "/config.json");
  for (int64_t version : availableVersions(dir)) {
    std::string base = absl::StrCat(dir, "/", version, "/model");
    absl::StrAppend(&stamp, ";", version, "=", fileStamp(base + ".so"), "+",
                    fileStamp(base + ".weights.bin"));
  }
  return stamp;
}

absl::StatusOr<std::string> InferenceServer::resolve(const std::string &path) const {
  char *real = ::realpath(path.c_str(), nullptr);
  if (!real)
    return absl::NotFoundError(absl::StrCat("cannot resolve ", path, ": ", std::strerror(errno)));
  std::string resolved = real;
  std::free(real);
  if (!isInside(resolved, repositoryRealPath_))
    return absl::InvalidArgumentError(absl::StrCat(
        path, " resolves to ", resolved, ", outside the repository ", repositoryRealPath_,
        ": the server follows no link out of its repository (copy the file in, or link to a "
        "path inside it)"));
  return resolved;
}

absl::Status InferenceServer::checkThreads(const std::string &name, const ModelConfig &config,
                                           size_t versions) const {
  if (config.instanceCount > options_.maxInstancesPerModel)
    return absl::InvalidArgumentError(absl::StrCat(
        "instance_count ", config.instanceCount, " is above the server's maximum of ",
        options_.maxInstancesPerModel, " (--max-instances-per-model)"));
  if (config.threads > options_.maxThreadsPerInstance)
    return absl::InvalidArgumentError(
        absl::StrCat("threads ", config.threads, " is above the server's maximum of ",
                     options_.maxThreadsPerInstance, " (--max-threads-per-instance)"));
  // Threads 0 (the model's compiled default) counts as one.
  int64_t wanted = static_cast<int64_t>(versions) * config.instanceCount *
                   std::max(1, config.threads);
  int64_t others = 0;
  {
    absl::MutexLock lock(&mutex_);
    for (const auto &[other, model] : models_)
      if (other != name)
        for (const auto &[number, version] : model->versions)
          others += version->config.instanceCount * int64_t{std::max(1, version->config.threads)};
  }
  if (others + wanted > options_.maxTotalThreads)
    return absl::InvalidArgumentError(absl::StrCat(
        "its ", versions, " version(s) x ", config.instanceCount, " instance(s) x ",
        std::max(1, config.threads), " thread(s) would bring the server to ", others + wanted,
        " model threads, above its maximum of ", options_.maxTotalThreads,
        " (--max-total-threads)"));
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<InferenceServer::Version>>
InferenceServer::loadVersion(const std::string &name, int64_t number, const ModelConfig &config,
                             const std::string &stamp) {
  std::string base = absl::StrCat(options_.repository, "/", name, "/", number);
  RETURN_IF_ERROR(resolve(base).status());
  ASSIGN_OR_RETURN(std::string so, resolve(base + "/model.so"));
  LoadOptions load;
  load.weightsPath = "";
  if (::access((base + "/model.weights.bin").c_str(), F_OK) == 0) {
    ASSIGN_OR_RETURN(load.weightsPath, resolve(base + "/model.weights.bin"));
  }
  load.sha256 = config.sha256For(number);

  auto version = std::make_shared<Version>();
  version->number = number;
  version->label = absl::StrCat(number);
  version->stamp = stamp;
  version->config = config;
  ASSIGN_OR_RETURN(version->library, ModelLibrary::load(so, load));
  const ModelSignature &signature = version->library->signature();
  version->maxBatch = 1;
  if (signature.dynamicBatch) {
    if (config.maxBatchSize > signature.maxBatch)
      return absl::InvalidArgumentError(absl::StrCat(
          "max_batch_size ", config.maxBatchSize, " is above the maximum batch ",
          signature.maxBatch, " the model was compiled for (cuvilc --max-batch)"));
    if (config.maxBatchSize > options_.maxBatchSize)
      return absl::InvalidArgumentError(absl::StrCat(
          "max_batch_size ", config.maxBatchSize, " is above the server's maximum of ",
          options_.maxBatchSize, " (--max-batch-size)"));
    version->maxBatch = config.maxBatchSize > 0
                            ? config.maxBatchSize
                            : std::min(signature.maxBatch, options_.maxBatchSize);
    if (version->maxBatch < signature.maxBatch && config.maxBatchSize == 0)
      logLine(absl::StrCat("model '", name, "' version ", number, " was compiled for batches up to ",
                           signature.maxBatch, "; it serves up to ", version->maxBatch,
                           " (--max-batch-size)"));
    // Whole batches of each tensor must be sizes (rows x row bytes) that
    // neither overflow nor exceed what any buffer could hold.
    for (const auto *rows : {&signature.inputRowBytes, &signature.outputRowBytes})
      for (size_t bytes : *rows)
        if (bytes != 0 && static_cast<uint64_t>(version->maxBatch) > kMaxTensorBytes / bytes)
          return absl::InvalidArgumentError(absl::StrCat(
              "a batch of ", version->maxBatch, " rows of ", bytes,
              " bytes is too large; set a smaller max_batch_size in its config.json"));
  }
  std::vector<std::unique_ptr<Executor>> executors;
  for (int i = 0; i < config.instanceCount; ++i) {
    ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor,
                     version->library->createExecutor(config.threads));
    executors.push_back(std::move(executor));
  }
  version->metrics = metrics_.get(name, version->label);
  BatchSettings settings;
  settings.maxBatch = config.dynamicBatching ? version->maxBatch : 1;
  settings.maxQueueDelay = std::chrono::microseconds(config.maxQueueDelayMicroseconds);
  version->batcher = std::make_unique<DynamicBatcher>(signature, std::move(executors), settings,
                                                      version->metrics);
  return version;
}

absl::Status InferenceServer::loadLocked(const std::string &name,
                                         const std::optional<std::string> &configOverride) {
  RETURN_IF_ERROR(checkModelName(name));
  std::string dir = options_.repository + "/" + name;
  std::shared_ptr<Model> model;
  {
    absl::MutexLock lock(&mutex_);
    auto it = models_.find(name);
    if (it == models_.end()) {
      // Only models that exist, or that the operator named, get an entry: a
      // request for a name nobody has adds no state.
      if (!isDirectory(dir) && !configured_.count(name))
        return absl::NotFoundError(
            absl::StrCat("no model '", name, "' in the repository ", options_.repository));
      it = models_.emplace(name, std::make_shared<Model>()).first;
    }
    model = it->second;
  }
  model->stamp = repositoryStamp(name);
  auto fail = [&](absl::Status status) {
    absl::MutexLock lock(&mutex_);
    model->lastError = std::string(status.message());
    return status;
  };
  if (!isDirectory(dir))
    return fail(absl::NotFoundError(
        absl::StrCat("no model '", name, "' in the repository ", options_.repository)));
  auto prefix = [&](const absl::Status &status) {
    return absl::Status(status.code(), absl::StrCat("model '", name, "': ", status.message()));
  };
  absl::StatusOr<std::string> folder = resolve(dir);
  if (!folder.ok())
    return fail(prefix(folder.status()));

  ModelConfig config;
  if (configOverride) {
    absl::StatusOr<ModelConfig> parsed =
        parseModelConfig(*configOverride, absl::StrCat("the config for '", name, "'"));
    if (!parsed.ok())
      return fail(parsed.status());
    config = *parsed;
  } else if (::access((dir + "/config.json").c_str(), F_OK) == 0) {
    absl::StatusOr<std::string> path = resolve(dir + "/config.json");
    absl::StatusOr<std::string> text = path.ok() ? readText(*path) : path.status();
    if (!text.ok())
      return fail(prefix(text.status()));
    absl::StatusOr<ModelConfig> parsed = parseModelConfig(*text, dir + "/config.json");
    if (!parsed.ok())
      return fail(parsed.status());
    config = *parsed;
  }

  std::vector<int64_t> available = availableVersions(dir);
  if (available.empty())
    return fail(absl::NotFoundError(absl::StrCat("model '", name, "' has no version: expected ",
                                                 dir, "/<version>/model.so")));
  std::vector<int64_t> selected = config.versionPolicy.select(available);
  if (selected.empty())
    return fail(absl::NotFoundError(
        absl::StrCat("the version policy of '", name, "' selects none of its versions (",
                     absl::StrJoin(available, ", "), ")")));
  absl::Status threads = checkThreads(name, config, selected.size());
  if (!threads.ok())
    return fail(prefix(threads));

  std::map<int64_t, std::shared_ptr<Version>> current;
  {
    absl::MutexLock lock(&mutex_);
    current = model->versions;
  }
  std::map<int64_t, std::shared_ptr<Version>> next;
  for (int64_t number : selected) {
    std::string base = absl::StrCat(dir, "/", number, "/model");
    std::string stamp = fileStamp(base + ".so") + "+" + fileStamp(base + ".weights.bin");
    auto reuse = current.find(number);
    if (reuse != current.end() && reuse->second->stamp == stamp &&
        reuse->second->config == config) {
      next[number] = reuse->second;
      continue;
    }
    absl::StatusOr<std::shared_ptr<Version>> version = loadVersion(name, number, config, stamp);
    if (!version.ok())
      return fail(absl::Status(version.status().code(),
                               absl::StrCat("model '", name, "' version ", number, ": ",
                                            version.status().message())));
    next[number] = *std::move(version);
  }

  std::map<int64_t, std::shared_ptr<Version>> previous;
  {
    absl::MutexLock lock(&mutex_);
    previous.swap(model->versions);
    model->versions = next;
    model->lastError.clear();
    configured_.insert(name);
  }
  logLine(absl::StrCat("loaded model '", name, "' version", selected.size() > 1 ? "s " : " ",
                       absl::StrJoin(selected, ", "), " (", config.toJson(), ")"));
  // `previous` goes out of scope here, outside the lock: a replaced version
  // is destroyed once its last in-flight request lets go of it.
  return absl::OkStatus();
}

absl::Status InferenceServer::checkControl(const char *action) const {
  if (options_.controlMode != ControlMode::kExplicit)
    return absl::FailedPreconditionError(absl::StrCat(
        action, " models through the API needs --model-control-mode=explicit and "
        "--allow-repository-control (this server runs ",
        options_.controlMode == ControlMode::kPoll ? "poll" : "none", ")"));
  if (!options_.allowRepositoryControl)
    return absl::PermissionDeniedError(absl::StrCat(
        action, " models through the API is not enabled on this server: its operator can "
        "start it with --allow-repository-control"));
  return absl::OkStatus();
}

absl::Status InferenceServer::load(const std::string &name,
                                   const std::optional<std::string> &config) {
  RETURN_IF_ERROR(checkControl("loading"));
  absl::MutexLock loadLock(&loadMutex_);
  return loadLocked(name, config);
}

absl::Status InferenceServer::unload(const std::string &name) {
  RETURN_IF_ERROR(checkControl("unloading"));
  RETURN_IF_ERROR(checkModelName(name));
  absl::MutexLock loadLock(&loadMutex_);
  std::map<int64_t, std::shared_ptr<Version>> previous;
  {
    absl::MutexLock lock(&mutex_);
    auto it = models_.find(name);
    if (it == models_.end() || it->second->versions.empty())
      return absl::NotFoundError(absl::StrCat("model '", name, "' is not loaded"));
    previous.swap(it->second->versions);
    it->second->lastError = "unloaded";
    configured_.erase(name);
  }
  logLine(absl::StrCat("unloaded model '", name, "'"));
  return absl::OkStatus();
}

void InferenceServer::pollLoop() {
  while (!stopPolling_) {
    for (absl::Duration slept; slept < options_.pollInterval && !stopPolling_;
         slept += absl::Milliseconds(50))
      absl::SleepFor(absl::Milliseconds(50));
    if (stopPolling_)
      return;
    absl::MutexLock loadLock(&loadMutex_);
    std::vector<std::string> present = repositoryModels();
    std::vector<std::pair<std::string, std::string>> known;
    {
      absl::MutexLock lock(&mutex_);
      configured_ = std::set<std::string>(present.begin(), present.end());
      for (const auto &[name, model] : models_)
        known.emplace_back(name, model->stamp);
    }
    std::map<std::string, std::string> scan;
    for (const std::string &name : present) {
      std::string stamp = repositoryStamp(name);
      scan[name] = stamp;
      auto it = std::find_if(known.begin(), known.end(),
                             [&](const auto &entry) { return entry.first == name; });
      if (it != known.end() && it->second == stamp)
        continue;
      // Changed since the last load: load once two scans agree, so that a
      // file being uploaded (size or mtime still moving) is left alone.
      auto previous = previousScan_.find(name);
      if (previous == previousScan_.end() || previous->second != stamp)
        continue;
      absl::Status status = loadLocked(name, std::nullopt);
      if (!status.ok())
        logLine(absl::StrCat("model '", name, "' failed to load (the serving versions stay): ",
                             status.message()));
    }
    previousScan_ = std::move(scan);
    // Models whose directory went away: unloaded, and destroyed (which
    // waits for their queues) outside the lock.
    std::vector<std::map<int64_t, std::shared_ptr<Version>>> removed;
    {
      absl::MutexLock lock(&mutex_);
      for (const auto &[name, stamp] : known) {
        auto it = models_.find(name);
        if (std::count(present.begin(), present.end(), name) || it->second->versions.empty())
          continue;
        removed.emplace_back().swap(it->second->versions);
        it->second->lastError = "removed from the repository";
        // If the folder comes back, even unchanged, it is loaded again.
        it->second->stamp.clear();
        logLine(absl::StrCat("unloaded model '", name, "' (removed from the repository)"));
      }
    }
  }
}

absl::Status InferenceServer::ready() const {
  absl::MutexLock lock(&mutex_);
  if (shuttingDown_)
    return absl::UnavailableError("the server is shutting down");
  if (configured_.empty())
    return absl::UnavailableError("no model is loaded");
  for (const std::string &name : configured_) {
    auto it = models_.find(name);
    if (it == models_.end() || it->second->versions.empty())
      return absl::UnavailableError(absl::StrCat(
          "model '", name, "' is not loaded",
          it != models_.end() && !it->second->lastError.empty() ? ": " + it->second->lastError
                                                                 : std::string()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<InferenceServer::Version>>
InferenceServer::findVersion(const std::string &name, const std::string &version) const {
  absl::MutexLock lock(&mutex_);
  auto it = models_.find(name);
  if (it == models_.end() || it->second->versions.empty())
    return absl::NotFoundError(absl::StrCat("unknown model '", name, "'",
                                            it == models_.end() ? "" : " (it is not loaded)"));
  const auto &versions = it->second->versions;
  if (version.empty())
    return versions.rbegin()->second;
  std::optional<int64_t> number = parseVersionNumber(version);
  if (!number)
    return absl::InvalidArgumentError(absl::StrCat(
        "model version '", absl::CHexEscape(version.substr(0, 64)),
        "' is not a version number (versions are written 1, 2, ...: digits only, no sign, "
        "space or leading zero)"));
  auto found = versions.find(*number);
  if (found == versions.end()) {
    std::vector<int64_t> loaded;
    for (const auto &entry : versions)
      loaded.push_back(entry.first);
    return absl::NotFoundError(absl::StrCat("model '", name, "' has no version ", version,
                                            " loaded (loaded: ", absl::StrJoin(loaded, ", "),
                                            ")"));
  }
  return found->second;
}

absl::Status InferenceServer::modelReady(const std::string &name,
                                         const std::string &version) const {
  {
    absl::MutexLock lock(&mutex_);
    if (shuttingDown_)
      return absl::UnavailableError("the server is shutting down");
  }
  return findVersion(name, version).status();
}

absl::StatusOr<ModelMetadata> InferenceServer::modelMetadata(const std::string &name,
                                                             const std::string &version) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Version> chosen, findVersion(name, version));
  ModelMetadata metadata;
  metadata.name = name;
  metadata.platform = kPlatform;
  {
    absl::MutexLock lock(&mutex_);
    auto it = models_.find(name);
    if (it != models_.end())
      for (const auto &entry : it->second->versions)
        metadata.versions.push_back(entry.second->label);
  }
  metadata.inputs = chosen->library->signature().inputs;
  metadata.outputs = chosen->library->signature().outputs;
  return metadata;
}

absl::StatusOr<std::string> InferenceServer::modelConfig(const std::string &name) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Version> chosen, findVersion(name, ""));
  ModelConfig effective = chosen->config;
  effective.maxBatchSize = chosen->maxBatch;
  return effective.toJson();
}

std::vector<IndexEntry> InferenceServer::index(bool readyOnly) const {
  std::vector<std::string> names = repositoryModels();
  absl::MutexLock lock(&mutex_);
  for (const auto &entry : models_)
    if (!std::count(names.begin(), names.end(), entry.first))
      names.push_back(entry.first);
  std::sort(names.begin(), names.end());
  std::vector<IndexEntry> entries;
  for (const std::string &name : names) {
    auto it = models_.find(name);
    if (it != models_.end() && !it->second->versions.empty()) {
      for (const auto &version : it->second->versions)
        entries.push_back({name, version.second->label, "READY", ""});
    } else if (!readyOnly) {
      entries.push_back({name, "", "UNAVAILABLE",
                         it == models_.end() ? "not loaded" : it->second->lastError});
    }
  }
  return entries;
}

absl::StatusOr<InferResponse> InferenceServer::infer(const InferRequest &request) {
  Clock::time_point start = Clock::now();
  {
    absl::MutexLock lock(&mutex_);
    if (shuttingDown_)
      return absl::UnavailableError("the server is shutting down");
    ++inFlight_;
  }
  struct Leave {
    InferenceServer *server;
    ~Leave() {
      absl::MutexLock lock(&server->mutex_);
      --server->inFlight_;
    }
  } leave{this};
  absl::StatusOr<std::shared_ptr<Version>> version =
      findVersion(request.modelName, request.modelVersion);
  if (!version.ok()) {
    metrics_.server.recordFailure(version.status().code());
    return version.status();
  }
  std::chrono::microseconds queue{0}, compute{0};
  absl::StatusOr<InferResponse> response = inferOn(**version, request, queue, compute);
  auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
  (*version)->metrics->recordRequest(response.ok(), elapsed.count(), queue.count(),
                                     compute.count());
  if (!response.ok())
    metrics_.server.recordFailure(response.status().code());
  return response;
}

void InferenceServer::recordRefused(const std::string &model, const std::string &version,
                                    const absl::Status &status) {
  metrics_.server.recordFailure(status.code());
  absl::StatusOr<std::shared_ptr<Version>> found = findVersion(model, version);
  if (found.ok())
    (*found)->metrics->recordRequest(false, 0, 0, 0);
}

std::string InferenceServer::metrics() const {
  std::string text = metrics_.render();
  absl::StrAppend(&text,
                  "# HELP cuvil_inflight_bytes Bytes requests in flight hold against "
                  "--max-inflight-bytes.\n# TYPE cuvil_inflight_bytes gauge\ncuvil_inflight_bytes ",
                  budget_.used(),
                  "\n# HELP cuvil_inflight_bytes_limit --max-inflight-bytes.\n"
                  "# TYPE cuvil_inflight_bytes_limit gauge\ncuvil_inflight_bytes_limit ",
                  budget_.limit(),
                  "\n# HELP cuvil_inflight_refused Requests refused (503) because the requests "
                  "in flight held --max-inflight-bytes.\n"
                  "# TYPE cuvil_inflight_refused counter\ncuvil_inflight_refused ",
                  budget_.refused(), "\n");
  return text;
}

absl::StatusOr<InferResponse> InferenceServer::inferOn(const Version &version,
                                                       const InferRequest &request,
                                                       std::chrono::microseconds &queue,
                                                       std::chrono::microseconds &compute) {
  const ModelSignature &signature = version.library->signature();
  const std::string &model = request.modelName;
  std::vector<const Tensor *> ordered(signature.inputs.size(), nullptr);
  for (const Tensor &tensor : request.inputs) {
    auto spec = std::find_if(signature.inputs.begin(), signature.inputs.end(),
                             [&](const TensorSpec &s) { return s.name == tensor.name; });
    if (spec == signature.inputs.end())
      return absl::InvalidArgumentError(absl::StrCat("model '", model, "' has no input '",
                                                     tensor.name, "'; its inputs are ",
                                                     names(signature.inputs)));
    const Tensor *&slot = ordered[spec - signature.inputs.begin()];
    if (slot)
      return absl::InvalidArgumentError(absl::StrCat("input '", tensor.name, "' is given twice"));
    slot = &tensor;
  }
  int64_t batch = 1;
  std::vector<const std::string *> inputs;
  for (size_t i = 0; i < ordered.size(); ++i) {
    const TensorSpec &spec = signature.inputs[i];
    const Tensor *tensor = ordered[i];
    if (!tensor)
      return absl::InvalidArgumentError(
          absl::StrCat("input ", specString(spec), " of model '", model, "' is missing"));
    if (tensor->datatype != spec.datatype)
      return absl::InvalidArgumentError(absl::StrCat("input '", spec.name, "' has datatype ",
                                                     v2Name(tensor->datatype), ", the model takes ",
                                                     v2Name(spec.datatype)));
    bool fits = tensor->shape.size() == spec.shape.size();
    for (size_t d = 0; fits && d < spec.shape.size(); ++d)
      fits = spec.shape[d] < 0 ? tensor->shape[d] >= 0 : tensor->shape[d] == spec.shape[d];
    if (!fits)
      return absl::InvalidArgumentError(
          absl::StrCat("input '", spec.name, "' has shape ", shapeString(tensor->shape),
                       ", the model takes ", shapeString(spec.shape),
                       signature.dynamicBatch ? " (-1: the batch)" : ""));
    if (signature.dynamicBatch) {
      if (i == 0)
        batch = tensor->shape[0];
      else if (tensor->shape[0] != batch)
        return absl::InvalidArgumentError(absl::StrCat(
            "inputs disagree on the batch: '", signature.inputs[0].name, "' has ", batch, ", '",
            spec.name, "' has ", tensor->shape[0]));
    }
    ASSIGN_OR_RETURN(int64_t count, elementCount(tensor->shape));
    uint64_t expected = static_cast<uint64_t>(count) * byteSize(spec.datatype);
    if (tensor->data.size() != expected)
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", spec.name, "' holds ", tensor->data.size(), " bytes, but shape ",
          shapeString(tensor->shape), " of ", v2Name(spec.datatype), " needs ", expected));
    inputs.push_back(&tensor->data);
  }
  if (signature.dynamicBatch && (batch < 1 || batch > version.maxBatch))
    return absl::InvalidArgumentError(absl::StrCat("batch ", batch, " is outside 1..",
                                                   version.maxBatch, ", the batch model '", model,
                                                   "' serves"));
  std::vector<size_t> selected;
  if (request.outputs.empty()) {
    for (size_t i = 0; i < signature.outputs.size(); ++i)
      selected.push_back(i);
  } else {
    for (const RequestedOutput &output : request.outputs) {
      auto spec = std::find_if(signature.outputs.begin(), signature.outputs.end(),
                               [&](const TensorSpec &s) { return s.name == output.name; });
      if (spec == signature.outputs.end())
        return absl::InvalidArgumentError(absl::StrCat("model '", model, "' has no output '",
                                                       output.name, "'; its outputs are ",
                                                       names(signature.outputs)));
      size_t index = spec - signature.outputs.begin();
      if (std::count(selected.begin(), selected.end(), index))
        return absl::InvalidArgumentError(
            absl::StrCat("output '", output.name, "' is requested twice"));
      selected.push_back(index);
    }
  }

  uint64_t outputBytes = 0;
  for (size_t bytes : signature.outputRowBytes)
    outputBytes += bytes * static_cast<uint64_t>(signature.dynamicBatch ? batch : 1);
  ASSIGN_OR_RETURN(Reservation answer, budget_.reserve(outputBytes, "the answer"));
  ASSIGN_OR_RETURN(BatchResult result, version.batcher->run(batch, inputs));
  queue = result.queueTime;
  compute = result.computeTime;
  InferResponse response;
  response.modelName = model;
  response.modelVersion = version.label;
  response.id = request.id;
  for (size_t index : selected) {
    const TensorSpec &spec = signature.outputs[index];
    Tensor tensor;
    tensor.name = spec.name;
    tensor.datatype = spec.datatype;
    tensor.shape = spec.shape;
    if (signature.dynamicBatch)
      tensor.shape[0] = batch;
    tensor.data = std::move(result.outputs[index]);
    response.outputs.push_back(std::move(tensor));
  }
  return response;
}

int64_t InferenceServer::shutdown(absl::Duration timeout) {
  stopPolling_ = true;
  absl::MutexLock lock(&mutex_);
  shuttingDown_ = true;
  auto drained = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) { return inFlight_ == 0; };
  mutex_.AwaitWithTimeout(absl::Condition(&drained), timeout);
  return inFlight_;
}

} // namespace cuvil::serving
