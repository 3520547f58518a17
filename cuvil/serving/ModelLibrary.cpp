//===- ModelLibrary.cpp - a compiled model .so, loaded --------------------===//

#include "cuvil/serving/ModelLibrary.h"

#include "cuvil/abi/ArtifactCheck.h"
#include "cuvil/abi/Sha256.h"
#include "cuvil/support/StatusMacros.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cuvil::serving {

struct cuvil_context;

/// The entry points of docs/abi.md.
struct ModelLibrary::Api {
  const char *(*metadata)(void);
  const char *(*statusMessage)(int);
  int (*contextCreate)(int, cuvil_context **);
  int (*contextRun)(cuvil_context *, int64_t, const void *const *, void *const *);
  const char *(*contextError)(const cuvil_context *);
  void (*contextDestroy)(cuvil_context *);
};

namespace {

absl::Status writeFile(const std::string &path, absl::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return absl::InternalError(absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  while (!bytes.empty()) {
    ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0) {
      std::string reason = std::strerror(errno);
      ::close(fd);
      return absl::InternalError(absl::StrCat("cannot write ", path, ": ", reason));
    }
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  if (::close(fd) != 0)
    return absl::InternalError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  return absl::OkStatus();
}

/// A private directory holding the bytes to load, removed when it goes
/// away (a loaded library stays mapped).
class PrivateCopy {
public:
  ~PrivateCopy() {
    for (const std::string &file : files_)
      std::remove(file.c_str());
    if (!dir_.empty())
      ::rmdir(dir_.c_str());
  }

  /// Writes `bytes` as `name` in the directory (made on first use).
  absl::StatusOr<std::string> add(const std::string &name, absl::string_view bytes) {
    if (dir_.empty()) {
      const char *tmp = std::getenv("TMPDIR");
      std::string pattern = absl::StrCat(tmp && *tmp ? tmp : "/tmp", "/cuvil-serve-XXXXXX");
      if (!::mkdtemp(pattern.data()))
        return absl::InternalError(absl::StrCat("cannot create a directory under ", pattern,
                                                ": ", std::strerror(errno)));
      dir_ = pattern;
    }
    std::string path = dir_ + "/" + name;
    RETURN_IF_ERROR(writeFile(path, bytes));
    files_.push_back(path);
    return path;
  }

private:
  std::string dir_;
  std::vector<std::string> files_;
};

class ContextExecutor : public Executor {
public:
  ContextExecutor(std::shared_ptr<ModelLibrary> library, const ModelLibrary::Api &api,
                  cuvil_context *context)
      : library_(std::move(library)), api_(api), context_(context) {}
  ~ContextExecutor() override { api_.contextDestroy(context_); }

  absl::Status run(int64_t batch, const std::vector<const void *> &inputs,
                   const std::vector<void *> &outputs) override {
    int status = api_.contextRun(context_, batch, inputs.data(), outputs.data());
    if (status == 0)
      return absl::OkStatus();
    const char *detail = api_.contextError(context_);
    return absl::InternalError(absl::StrCat(
        "the model failed: ", detail && *detail ? detail : api_.statusMessage(status)));
  }

private:
  std::shared_ptr<ModelLibrary> library_; // outlives the context
  const ModelLibrary::Api &api_;
  cuvil_context *context_;
};

/// A non-negative integer field read as 64 bits (a JSON number above
/// INT64_MAX or below 0 is an error, not a wrapped value).
absl::StatusOr<int64_t> nonNegative(const nlohmann::json &value, absl::string_view what) {
  if (value.is_number_unsigned() && value.get<uint64_t>() <= uint64_t{INT64_MAX})
    return static_cast<int64_t>(value.get<uint64_t>());
  if (value.is_number_integer() && value.get<int64_t>() >= 0)
    return value.get<int64_t>();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " is ", value.dump(), ", not an integer in 0..2^63-1"));
}

absl::StatusOr<TensorSpec> parseTensor(const nlohmann::json &json, bool &hasBatch) {
  TensorSpec spec;
  if (!json.is_object() || !json.contains("name") || !json.contains("dtype") ||
      !json.contains("shape"))
    return absl::InvalidArgumentError("a tensor entry lacks name, dtype or shape");
  spec.name = json["name"].get<std::string>();
  std::optional<DataType> type = parseAbiName(json["dtype"].get<std::string>());
  if (!type)
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor '", spec.name, "' has dtype ", json["dtype"].dump(), ", which this server cannot serve"));
  spec.datatype = *type;
  if (!json["shape"].is_array())
    return absl::InvalidArgumentError(absl::StrCat("tensor '", spec.name, "' has no shape list"));
  for (const nlohmann::json &dim : json["shape"]) {
    if (dim.is_number_integer() && dim.get<int64_t>() == -1) {
      if (!spec.shape.empty())
        return absl::InvalidArgumentError(absl::StrCat(
            "tensor '", spec.name, "' has a dynamic dimension other than the batch"));
      hasBatch = true;
      spec.shape.push_back(-1);
      continue;
    }
    ASSIGN_OR_RETURN(int64_t size, nonNegative(dim, absl::StrCat("a dimension of '", spec.name, "'")));
    spec.shape.push_back(size);
  }
  if (json.contains("quantization")) {
    const nlohmann::json &q = json["quantization"];
    if (!q.is_object() || !q.contains("scale") || !q["scale"].is_number() ||
        !(q["scale"].get<double>() > 0) || !q.contains("zero_point") ||
        !q["zero_point"].is_number_integer())
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", spec.name, "' has a bad quantization (a positive scale "
          "and an integer zero point)"));
    spec.quantization =
        TensorQuantization{q["scale"].get<double>(), q["zero_point"].get<int64_t>()};
  }
  return spec;
}

/// Bytes of one batch row of `spec` (its whole size if static).
absl::StatusOr<size_t> rowBytes(const TensorSpec &spec) {
  uint64_t bytes = byteSize(spec.datatype);
  for (int64_t dim : spec.shape) {
    if (dim < 0)
      continue;
    if (dim != 0 && bytes > kMaxTensorBytes / static_cast<uint64_t>(dim))
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", spec.name, "' of shape ", shapeString(spec.shape), " is too large"));
    bytes *= static_cast<uint64_t>(dim);
  }
  return static_cast<size_t>(bytes);
}

} // namespace

absl::StatusOr<ModelSignature> parseSignature(const std::string &metadataJson) {
  nlohmann::json json = nlohmann::json::parse(metadataJson, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object())
    return absl::InvalidArgumentError("its metadata is not JSON");
  try {
    int64_t abi = json.contains("abi_version") && json["abi_version"].is_number_integer()
                      ? json["abi_version"].get<int64_t>()
                      : 0;
    if (abi != kAbiVersion)
      return absl::InvalidArgumentError(absl::StrCat(
          "it was built for C ABI version ", abi, ", this server speaks version ", kAbiVersion,
          ": rebuild it with a matching cuvilc"));
    ModelSignature signature;
    signature.metadataJson = metadataJson;
    bool inputBatch = false, outputBatch = false;
    for (const nlohmann::json &entry : json.at("inputs")) {
      ASSIGN_OR_RETURN(TensorSpec spec, parseTensor(entry, inputBatch));
      ASSIGN_OR_RETURN(size_t bytes, rowBytes(spec));
      signature.inputRowBytes.push_back(bytes);
      signature.inputs.push_back(std::move(spec));
    }
    for (const nlohmann::json &entry : json.at("outputs")) {
      ASSIGN_OR_RETURN(TensorSpec spec, parseTensor(entry, outputBatch));
      ASSIGN_OR_RETURN(size_t bytes, rowBytes(spec));
      signature.outputRowBytes.push_back(bytes);
      signature.outputs.push_back(std::move(spec));
    }
    signature.dynamicBatch = inputBatch;
    signature.maxBatch = 1;
    if (inputBatch && json.contains("max_batch")) {
      // 64 bits: a model compiled with --max-batch=2147483648 or more.
      ASSIGN_OR_RETURN(int64_t maxBatch, nonNegative(json["max_batch"], "max_batch"));
      signature.maxBatch = std::max<int64_t>(1, maxBatch);
    }
    if (inputBatch)
      for (const TensorSpec &spec : signature.inputs)
        if (spec.shape.empty() || spec.shape[0] != -1)
          return absl::InvalidArgumentError(
              absl::StrCat("input '", spec.name, "' has no batch dimension while others do"));
    return signature;
  } catch (const nlohmann::json::exception &e) {
    return absl::InvalidArgumentError(absl::StrCat("its metadata is malformed: ", e.what()));
  }
}

absl::StatusOr<std::shared_ptr<ModelLibrary>> ModelLibrary::load(const std::string &soPath,
                                                                 const LoadOptions &options) {
  // One read: the bytes checked, hashed and parsed are the bytes loaded.
  ASSIGN_OR_RETURN(std::string bytes, abi::readFileBytes(soPath));
  ASSIGN_OR_RETURN(abi::ArtifactInfo info, abi::checkArtifact(bytes, soPath));
  if (options.sha256) {
    std::string actual = abi::sha256Hex(bytes);
    if (actual != *options.sha256)
      return absl::InvalidArgumentError(absl::StrCat(
          soPath, " has SHA-256 ", actual, ", not the ", *options.sha256,
          " its config records: it is not the model the config names (a partial or wrong "
          "upload? fix the file or the config's \"sha256\")"));
  }
  absl::StatusOr<ModelSignature> signature = parseSignature(info.metadataJson);
  if (!signature.ok())
    return absl::InvalidArgumentError(
        absl::StrCat("cannot serve ", soPath, ": ", signature.status().message()));
  // parseSignature accepts only kAbiVersion, which checkArtifact required of
  // the note: metadata and note agree.

  std::optional<std::string> weightsPath = options.weightsPath;
  if (!weightsPath) {
    std::string stem = soPath.size() > 3 && soPath.compare(soPath.size() - 3, 3, ".so") == 0
                           ? soPath.substr(0, soPath.size() - 3)
                           : soPath;
    weightsPath = ::access((stem + ".weights.bin").c_str(), F_OK) == 0
                      ? stem + ".weights.bin"
                      : std::string();
  }
  PrivateCopy copy;
  ASSIGN_OR_RETURN(std::string privatePath, copy.add("model.so", bytes));
  bytes = std::string(); // the copy is on disk; do not hold the file twice
  if (!weightsPath->empty()) {
    // The model's constructor maps <stem>.weights.bin beside the .so.
    ASSIGN_OR_RETURN(std::string weights, abi::readFileBytes(*weightsPath));
    RETURN_IF_ERROR(copy.add("model.weights.bin", weights).status());
  }

  std::shared_ptr<ModelLibrary> library(new ModelLibrary());
  library->handle_ = ::dlopen(privatePath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library->handle_) {
    const char *error = ::dlerror();
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot load ", soPath, ": ", error ? error : "dlopen failed",
        " (is it a model .so built by cuvilc for this machine?)"));
  }
  auto api = std::make_unique<Api>();
  struct Symbol {
    const char *name;
    void **slot;
  } symbols[] = {
      {"cuvil_model_metadata", reinterpret_cast<void **>(&api->metadata)},
      {"cuvil_status_message", reinterpret_cast<void **>(&api->statusMessage)},
      {"cuvil_context_create", reinterpret_cast<void **>(&api->contextCreate)},
      {"cuvil_context_run", reinterpret_cast<void **>(&api->contextRun)},
      {"cuvil_context_error", reinterpret_cast<void **>(&api->contextError)},
      {"cuvil_context_destroy", reinterpret_cast<void **>(&api->contextDestroy)},
  };
  for (const Symbol &symbol : symbols) {
    *symbol.slot = ::dlsym(library->handle_, symbol.name);
    if (!*symbol.slot)
      return absl::InvalidArgumentError(
          absl::StrCat(soPath, " is not a Cuvil model of C ABI version ", kAbiVersion,
                       ": it lacks ", symbol.name));
  }
  const char *metadata = api->metadata();
  if (!metadata || info.metadataJson != metadata)
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot serve ", soPath, ": cuvil_model_metadata() does not return its ",
        abi::kMetadataSection, " section, so what was checked is not what runs; rebuild it "
        "with cuvilc"));
  library->signature_ = *std::move(signature);
  library->api_ = std::move(api);
  return library;
}

ModelLibrary::~ModelLibrary() {
  if (handle_)
    ::dlclose(handle_);
}

absl::StatusOr<std::unique_ptr<Executor>> ModelLibrary::createExecutor(int threads) {
  cuvil_context *context = nullptr;
  int status = api_->contextCreate(threads, &context);
  if (status != 0)
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot create a model context: ", api_->statusMessage(status)));
  return std::unique_ptr<Executor>(new ContextExecutor(shared_from_this(), *api_, context));
}

} // namespace cuvil::serving
