//===- GrpcServer.cpp - the gRPC front end --------------------------------===//

#include "cuvil/serving/GrpcServer.h"

#include "cuvil/serving/grpc_predict_v2.pb.h"
#include "cuvil/support/StatusMacros.h"
#include "cuvil/support/Version.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include <grpcpp/grpcpp.h>

#include <grpcpp/impl/codegen/method_handler.h>
#include <grpcpp/impl/codegen/proto_utils.h>
#include <grpcpp/impl/codegen/rpc_service_method.h>

#include <arpa/inet.h>

#include <chrono>
#include <cstring>
#include <limits>
#include <type_traits>

namespace cuvil::serving {
namespace {

grpc::Status toGrpc(const absl::Status &status) {
  // absl and gRPC share the canonical code numbering.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

template <typename T, typename Repeated>
absl::Status appendContents(const Repeated &values, std::string &out, const std::string &name) {
  for (auto value : values) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && sizeof(T) < 8) {
      int64_t wide = static_cast<int64_t>(value);
      if (wide < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          wide > static_cast<int64_t>(std::numeric_limits<T>::max()))
        return absl::InvalidArgumentError(absl::StrCat(
            "input '", name, "': ", value, " in contents is out of range for the datatype"));
    }
    T element = static_cast<T>(value);
    char bytes[sizeof(T)];
    std::memcpy(bytes, &element, sizeof(T));
    out.append(bytes, sizeof(T));
  }
  return absl::OkStatus();
}

/// The typed `contents` of `input` as dense bytes of `type`.
absl::Status decodeContents(const inference::ModelInferRequest::InferInputTensor &input,
                            DataType type, std::string &out) {
  const inference::InferTensorContents &c = input.contents();
  const std::string &name = input.name();
  switch (type) {
  case DataType::kBOOL: return appendContents<bool>(c.bool_contents(), out, name);
  case DataType::kUINT8: return appendContents<uint8_t>(c.uint_contents(), out, name);
  case DataType::kINT8: return appendContents<int8_t>(c.int_contents(), out, name);
  case DataType::kUINT16: return appendContents<uint16_t>(c.uint_contents(), out, name);
  case DataType::kUINT32: return appendContents<uint32_t>(c.uint_contents(), out, name);
  case DataType::kUINT64: return appendContents<uint64_t>(c.uint64_contents(), out, name);
  case DataType::kINT16: return appendContents<int16_t>(c.int_contents(), out, name);
  case DataType::kINT32: return appendContents<int32_t>(c.int_contents(), out, name);
  case DataType::kINT64: return appendContents<int64_t>(c.int64_contents(), out, name);
  case DataType::kFP32: return appendContents<float>(c.fp32_contents(), out, name);
  case DataType::kFP64: return appendContents<double>(c.fp64_contents(), out, name);
  case DataType::kFP16: // not served: parseV2Name refuses them
  case DataType::kBF16:
    break;
  }
  return absl::InternalError("unhandled datatype");
}

absl::StatusOr<InferRequest> decodeRequest(const inference::ModelInferRequest &request) {
  InferRequest result;
  result.modelName = request.model_name();
  result.modelVersion = request.model_version();
  result.id = request.id();
  bool raw = request.raw_input_contents_size() > 0;
  if (raw && request.raw_input_contents_size() != request.inputs_size())
    return absl::InvalidArgumentError(
        absl::StrCat("raw_input_contents has ", request.raw_input_contents_size(),
                     " entries for ", request.inputs_size(), " inputs"));
  for (int i = 0; i < request.inputs_size(); ++i) {
    const auto &input = request.inputs(i);
    Tensor tensor;
    tensor.name = input.name();
    absl::StatusOr<DataType> type = parseV2Name(input.datatype());
    if (!type.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("input '", input.name(), "': ", type.status().message()));
    tensor.datatype = *type;
    for (int64_t dim : input.shape()) {
      if (dim < 0)
        return absl::InvalidArgumentError(
            absl::StrCat("input '", input.name(), "' has a negative dimension"));
      tensor.shape.push_back(dim);
    }
    if (raw) {
      if (input.has_contents())
        return absl::InvalidArgumentError(absl::StrCat(
            "input '", input.name(), "' has contents while the request uses raw_input_contents"));
      tensor.data = request.raw_input_contents(i);
    } else {
      RETURN_IF_ERROR(decodeContents(input, tensor.datatype, tensor.data));
    }
    result.inputs.push_back(std::move(tensor));
  }
  for (const auto &output : request.outputs())
    result.outputs.push_back({output.name(), true});
  return result;
}

void setTensorMetadata(const TensorSpec &spec,
                       inference::ModelMetadataResponse::TensorMetadata *out) {
  out->set_name(spec.name);
  out->set_datatype(std::string(v2Name(spec.datatype)));
  for (int64_t dim : spec.shape)
    out->add_shape(dim);
}

} // namespace

/// The service, registered method by method on raw bytes (see the header).
class GrpcService final : public grpc::Service {
public:
  explicit GrpcService(InferenceServer &server) : server_(server) {
    add("/inference.GRPCInferenceService/ServerLive", &GrpcService::ServerLive);
    add("/inference.GRPCInferenceService/ServerReady", &GrpcService::ServerReady);
    add("/inference.GRPCInferenceService/ModelReady", &GrpcService::ModelReady);
    add("/inference.GRPCInferenceService/ServerMetadata", &GrpcService::ServerMetadata);
    add("/inference.GRPCInferenceService/ModelMetadata", &GrpcService::ModelMetadata);
    add("/inference.GRPCInferenceService/ModelInfer", &GrpcService::ModelInfer);
    add("/inference.GRPCInferenceService/RepositoryIndex", &GrpcService::RepositoryIndex);
    add("/inference.GRPCInferenceService/RepositoryModelLoad", &GrpcService::RepositoryModelLoad);
    add("/inference.GRPCInferenceService/RepositoryModelUnload",
        &GrpcService::RepositoryModelUnload);
  }

private:
  template <typename Request, typename Response>
  using Handler = grpc::Status (GrpcService::*)(const Request &, Response &, Reservation &);

  /// Registers `handler` for `path` (a literal: gRPC keeps the pointer):
  /// the message is held against the budget, parsed, handled, serialized.
  template <typename Request, typename Response>
  void add(const char *path, Handler<Request, Response> handler) {
    auto run = [handler](GrpcService *service, grpc::ServerContext *, const grpc::ByteBuffer *in,
                         grpc::ByteBuffer *out) -> grpc::Status {
      // The bytes and their parsed form.
      absl::StatusOr<Reservation> held =
          service->server_.budget().reserve(2 * uint64_t{in->Length()}, "the gRPC message");
      bool infer = std::is_same_v<Request, inference::ModelInferRequest>;
      if (!held.ok()) {
        if (infer)
          service->server_.recordRefused("", "", held.status());
        return toGrpc(held.status());
      }
      grpc::ByteBuffer bytes(*in); // parsing consumes its buffer; this shares the slices
      Request request;
      if (!grpc::SerializationTraits<Request>::Deserialize(&bytes, &request).ok()) {
        absl::Status status = absl::InvalidArgumentError(absl::StrCat(
            "the request is not a valid ", Request::descriptor()->full_name(),
            ": its protobuf encoding does not parse (truncated, a malformed field, or a "
            "string that is not UTF-8)"));
        if (infer)
          service->server_.recordRefused("", "", status);
        return toGrpc(status);
      }
      Response response;
      grpc::Status status = (service->*handler)(request, response, *held);
      if (!status.ok())
        return status;
      bool ownBuffer = false;
      return grpc::SerializationTraits<Response>::Serialize(response, out, &ownBuffer);
    };
    AddMethod(new grpc::internal::RpcServiceMethod(
        path, grpc::internal::RpcMethod::NORMAL_RPC,
        new grpc::internal::RpcMethodHandler<GrpcService, grpc::ByteBuffer, grpc::ByteBuffer>(
            run, this)));
  }

  grpc::Status ServerLive(const inference::ServerLiveRequest &,
                          inference::ServerLiveResponse &response, Reservation &) {
    response.set_live(server_.live());
    return grpc::Status::OK;
  }
  grpc::Status ServerReady(const inference::ServerReadyRequest &,
                           inference::ServerReadyResponse &response, Reservation &) {
    response.set_ready(server_.ready().ok());
    return grpc::Status::OK;
  }
  grpc::Status ModelReady(const inference::ModelReadyRequest &request,
                          inference::ModelReadyResponse &response, Reservation &) {
    response.set_ready(server_.modelReady(request.name(), request.version()).ok());
    return grpc::Status::OK;
  }
  grpc::Status ServerMetadata(const inference::ServerMetadataRequest &,
                              inference::ServerMetadataResponse &response, Reservation &) {
    response.set_name(InferenceServer::kName);
    response.set_version(cuvil::getVersionString());
    for (const char *extension : {"binary_tensor_data", "model_repository", "metrics"})
      response.add_extensions(extension);
    return grpc::Status::OK;
  }
  grpc::Status ModelMetadata(const inference::ModelMetadataRequest &request,
                             inference::ModelMetadataResponse &response, Reservation &) {
    absl::StatusOr<cuvil::serving::ModelMetadata> metadata =
        server_.modelMetadata(request.name(), request.version());
    if (!metadata.ok())
      return toGrpc(metadata.status());
    response.set_name(metadata->name);
    response.set_platform(metadata->platform);
    for (const std::string &version : metadata->versions)
      response.add_versions(version);
    for (const TensorSpec &spec : metadata->inputs)
      setTensorMetadata(spec, response.add_inputs());
    for (const TensorSpec &spec : metadata->outputs)
      setTensorMetadata(spec, response.add_outputs());
    return grpc::Status::OK;
  }
  grpc::Status ModelInfer(const inference::ModelInferRequest &request,
                          inference::ModelInferResponse &response, Reservation &held) {
    auto refused = [&](const absl::Status &status) {
      server_.recordRefused(request.model_name(), request.model_version(), status);
      return toGrpc(status);
    };
    absl::StatusOr<InferRequest> decoded = decodeRequest(request);
    if (!decoded.ok())
      return refused(decoded.status());
    uint64_t inputBytes = 0;
    for (const Tensor &tensor : decoded->inputs)
      inputBytes += tensor.data.size();
    absl::Status status = held.grow(inputBytes, "the decoded inputs");
    if (!status.ok())
      return refused(status);
    absl::StatusOr<InferResponse> result = server_.infer(*decoded);
    if (!result.ok())
      return toGrpc(result.status());
    uint64_t outputBytes = 0;
    for (const Tensor &tensor : result->outputs)
      outputBytes += tensor.data.size();
    // The answer is serialized once more before it is sent.
    status = held.grow(outputBytes, "the answer");
    if (!status.ok())
      return refused(status);
    response.set_model_name(result->modelName);
    response.set_model_version(result->modelVersion);
    response.set_id(result->id);
    for (Tensor &tensor : result->outputs) {
      auto *output = response.add_outputs();
      output->set_name(tensor.name);
      output->set_datatype(std::string(v2Name(tensor.datatype)));
      for (int64_t dim : tensor.shape)
        output->add_shape(dim);
      *response.add_raw_output_contents() = std::move(tensor.data);
    }
    return grpc::Status::OK;
  }
  grpc::Status RepositoryIndex(const inference::RepositoryIndexRequest &request,
                               inference::RepositoryIndexResponse &response, Reservation &) {
    for (const IndexEntry &entry : server_.index(request.ready())) {
      auto *model = response.add_models();
      model->set_name(entry.name);
      model->set_version(entry.version);
      model->set_state(entry.state);
      model->set_reason(entry.reason);
    }
    return grpc::Status::OK;
  }
  grpc::Status RepositoryModelLoad(const inference::RepositoryModelLoadRequest &request,
                                   inference::RepositoryModelLoadResponse &, Reservation &) {
    std::optional<std::string> config;
    auto it = request.parameters().find("config");
    if (it != request.parameters().end()) {
      if (it->second.parameter_choice_case() !=
          inference::ModelRepositoryParameter::kStringParam)
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                            "parameter 'config' must be a string_param holding JSON");
      config = it->second.string_param();
    }
    return toGrpc(server_.load(request.model_name(), config));
  }
  grpc::Status RepositoryModelUnload(const inference::RepositoryModelUnloadRequest &request,
                                     inference::RepositoryModelUnloadResponse &, Reservation &) {
    return toGrpc(server_.unload(request.model_name()));
  }

  InferenceServer &server_;
};

namespace {

/// "host:port" for gRPC from a numeric address or "localhost".
absl::StatusOr<std::string> listenTarget(const std::string &address, int port) {
  std::string host = address;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  in_addr v4;
  in6_addr v6;
  if (host == "localhost" || ::inet_pton(AF_INET, host.c_str(), &v4) == 1)
    return absl::StrCat(host, ":", port);
  if (::inet_pton(AF_INET6, host.c_str(), &v6) == 1)
    return absl::StrCat("[", host, "]:", port);
  return absl::InvalidArgumentError(absl::StrCat(
      "gRPC address '", address, "' is not an IP address (e.g. 127.0.0.1, 0.0.0.0, ::1, ::)"));
}

} // namespace

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::start(InferenceServer &server,
                                                              const GrpcOptions &options) {
  if (options.port < 0 || options.port > 65535)
    return absl::InvalidArgumentError(absl::StrCat("gRPC port ", options.port, " is not a port"));
  ASSIGN_OR_RETURN(std::string target, listenTarget(options.address, options.port));
  bool tls = !options.tlsCertificatePem.empty() || !options.tlsKeyPem.empty();
  if (tls && (options.tlsCertificatePem.empty() || options.tlsKeyPem.empty()))
    return absl::InvalidArgumentError(
        "gRPC TLS needs both a certificate and a key (--grpc-tls-cert and --grpc-tls-key)");
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (tls) {
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({options.tlsKeyPem, options.tlsCertificatePem});
    credentials = grpc::SslServerCredentials(ssl);
  }
  std::unique_ptr<GrpcServer> result(new GrpcServer());
  result->service_ = std::make_unique<GrpcService>(server);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(target, credentials, &result->port_);
  builder.RegisterService(result->service_.get());
  builder.SetMaxReceiveMessageSize(static_cast<int>(
      std::min<size_t>(options.maxMessageBytes, std::numeric_limits<int>::max())));
  builder.SetMaxSendMessageSize(std::numeric_limits<int>::max());
  result->server_ = builder.BuildAndStart();
  if (!result->server_ || result->port_ == 0)
    return absl::UnavailableError(absl::StrCat(
        "cannot listen for gRPC on ", target,
        tls ? " (in use? or is the certificate or key not PEM, or not a pair?)" : " (in use?)"));
  return result;
}

GrpcServer::~GrpcServer() { stop(); }

void GrpcServer::stop() {
  // By now the inference requests have drained (InferenceServer::shutdown);
  // what is left is writing their answers. gRPC also waits for every client
  // to drop its connection, which an idle client never does: cut it then.
  if (server_)
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

} // namespace cuvil::serving
