//===- ModelLibrary.h - a compiled model .so, loaded ------------*- C++ -*-===//
//
// dlopen()s a `cuvilc` artifact through its C ABI (docs/abi.md), reads its
// metadata, and creates executors (one cuvil_context each). Loading a model
// runs its code (constructors, then the ABI functions), so what is loaded is
// checked first, from one read of the file: the bytes are validated
// (cuvil/abi: ELF structure, machine, ABI functions, ABI note, metadata),
// optionally hashed against the SHA-256 the config records, and only then
// written to a private file that is dlopen()ed. What was checked is what
// runs (nothing rereads the repository's file), every load of a path gets
// fresh code (dlopen caches by name), and a model truncated or overwritten in
// the repository cannot fault the process that has the old one mapped.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_SERVING_MODELLIBRARY_H
#define CUVIL_SERVING_MODELLIBRARY_H

#include "cuvil/abi/ArtifactCheck.h"
#include "cuvil/serving/Tensor.h"

#include "absl/status/statusor.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cuvil::serving {

/// The ABI version of docs/abi.md this server speaks.
constexpr int kAbiVersion = static_cast<int>(abi::kCAbiVersion);

/// Largest bytes of one batch row of a tensor (and of a whole batch): far
/// beyond memory, and products of it with a batch stay clear of overflow.
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 56;

/// An integer-I/O tensor's meaning: real = scale * (q - zeroPoint).
struct TensorQuantization {
  double scale = 1;
  int64_t zeroPoint = 0;
};

struct TensorSpec {
  std::string name;
  DataType datatype = DataType::kFP32;
  /// -1 marks the dynamic batch dimension.
  std::vector<int64_t> shape;
  /// Set when the model passes the tensor quantized (integer I/O).
  std::optional<TensorQuantization> quantization;
};

struct ModelSignature {
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  /// Dimension 0 of every input and output is a batch of 1..maxBatch.
  bool dynamicBatch = false;
  int64_t maxBatch = 1;
  /// Bytes of one batch row of each tensor (its whole size if static).
  std::vector<size_t> inputRowBytes, outputRowBytes;
  std::string metadataJson;
};

/// Runs the model on one cuvil_context; one caller at a time.
class Executor {
public:
  virtual ~Executor() = default;
  virtual absl::Status run(int64_t batch, const std::vector<const void *> &inputs,
                           const std::vector<void *> &outputs) = 0;
};

struct LoadOptions {
  /// The weights file (`--external-weights`) to load with the .so; unset:
  /// `<stem>.weights.bin` beside it if there is one; empty: none.
  std::optional<std::string> weightsPath;
  /// When set, the .so's bytes must have this SHA-256 (lowercase hex).
  std::optional<std::string> sha256;
};

class ModelLibrary : public std::enable_shared_from_this<ModelLibrary> {
public:
  /// Loads `soPath`. Errors explain what is wrong: unreadable, truncated,
  /// for another machine, not a Cuvil model, another ABI version, another
  /// hash than recorded, unreadable metadata, failing to load.
  static absl::StatusOr<std::shared_ptr<ModelLibrary>> load(const std::string &soPath,
                                                            const LoadOptions &options = {});
  ~ModelLibrary();

  const ModelSignature &signature() const { return signature_; }

  /// A context with `threads` threads (0: the model's compiled default).
  absl::StatusOr<std::unique_ptr<Executor>> createExecutor(int threads);

  struct Api;

private:
  ModelLibrary() = default;
  void *handle_ = nullptr;
  std::unique_ptr<Api> api_;
  ModelSignature signature_;
};

/// Parses a model's metadata JSON (exposed for tests).
absl::StatusOr<ModelSignature> parseSignature(const std::string &metadataJson);

} // namespace cuvil::serving

#endif // CUVIL_SERVING_MODELLIBRARY_H
