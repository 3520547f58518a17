//===- ModelLibrary.cpp - a compiled model .so, loaded --------------------===//

#include "cuvil/serving/ModelLibrary.h"

#include "cuvil/support/StatusMacros.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

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

absl::Status copyFile(const std::string &from, const std::string &to) {
  std::ifstream in(from, std::ios::binary);
  if (!in)
    return absl::NotFoundError(absl::StrCat("cannot read ", from, ": ", std::strerror(errno)));
  std::ofstream out(to, std::ios::binary | std::ios::trunc);
  out << in.rdbuf();
  out.close();
  if (!out)
    return absl::InternalError(absl::StrCat("cannot write ", to));
  return absl::OkStatus();
}

/// A private copy of the .so (and its weights) removed when it goes away.
class PrivateCopy {
public:
  ~PrivateCopy() {
    for (const std::string &file : files_)
      std::remove(file.c_str());
    if (!dir_.empty())
      ::rmdir(dir_.c_str());
  }

  absl::StatusOr<std::string> make(const std::string &soPath) {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern = absl::StrCat(tmp && *tmp ? tmp : "/tmp", "/cuvil-serve-XXXXXX");
    if (!::mkdtemp(pattern.data()))
      return absl::InternalError(
          absl::StrCat("cannot create a directory under ", pattern, ": ", std::strerror(errno)));
    dir_ = pattern;
    std::string so = dir_ + "/model.so";
    files_.push_back(so);
    RETURN_IF_ERROR(copyFile(soPath, so));
    std::string stem = soPath.size() > 3 && soPath.compare(soPath.size() - 3, 3, ".so") == 0
                           ? soPath.substr(0, soPath.size() - 3)
                           : soPath;
    std::string weights = stem + ".weights.bin";
    if (::access(weights.c_str(), F_OK) == 0) {
      files_.push_back(dir_ + "/model.weights.bin");
      RETURN_IF_ERROR(copyFile(weights, files_.back()));
    }
    return so;
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
  spec.shape = json["shape"].get<std::vector<int64_t>>();
  for (size_t i = 0; i < spec.shape.size(); ++i)
    if (spec.shape[i] < 0) {
      if (i != 0)
        return absl::InvalidArgumentError(absl::StrCat(
            "tensor '", spec.name, "' has a dynamic dimension other than the batch"));
      hasBatch = true;
    }
  return spec;
}

size_t rowBytes(const TensorSpec &spec) {
  size_t bytes = byteSize(spec.datatype);
  for (size_t i = 0; i < spec.shape.size(); ++i)
    if (spec.shape[i] >= 0)
      bytes *= static_cast<size_t>(spec.shape[i]);
  return bytes;
}

} // namespace

absl::StatusOr<ModelSignature> parseSignature(const std::string &metadataJson) {
  nlohmann::json json = nlohmann::json::parse(metadataJson, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object())
    return absl::InvalidArgumentError("its metadata is not JSON");
  try {
    int abi = json.value("abi_version", 0);
    if (abi != kAbiVersion)
      return absl::InvalidArgumentError(absl::StrCat(
          "it was built for C ABI version ", abi, ", this server speaks version ", kAbiVersion,
          ": rebuild it with a matching cuvilc"));
    ModelSignature signature;
    signature.metadataJson = metadataJson;
    bool inputBatch = false, outputBatch = false;
    for (const nlohmann::json &entry : json.at("inputs")) {
      ASSIGN_OR_RETURN(TensorSpec spec, parseTensor(entry, inputBatch));
      signature.inputRowBytes.push_back(rowBytes(spec));
      signature.inputs.push_back(std::move(spec));
    }
    for (const nlohmann::json &entry : json.at("outputs")) {
      ASSIGN_OR_RETURN(TensorSpec spec, parseTensor(entry, outputBatch));
      signature.outputRowBytes.push_back(rowBytes(spec));
      signature.outputs.push_back(std::move(spec));
    }
    signature.dynamicBatch = inputBatch;
    signature.maxBatch = inputBatch ? std::max<int64_t>(1, json.value("max_batch", 1)) : 1;
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

absl::StatusOr<std::shared_ptr<ModelLibrary>> ModelLibrary::load(const std::string &soPath) {
  struct stat st;
  if (::stat(soPath.c_str(), &st) != 0)
    return absl::NotFoundError(absl::StrCat(soPath, ": ", std::strerror(errno)));
  PrivateCopy copy;
  ASSIGN_OR_RETURN(std::string privatePath, copy.make(soPath));

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
  absl::StatusOr<ModelSignature> signature = parseSignature(metadata ? metadata : "");
  if (!signature.ok())
    return absl::InvalidArgumentError(
        absl::StrCat("cannot serve ", soPath, ": ", signature.status().message()));
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
