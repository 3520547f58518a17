//===- GrpcServer.h - the gRPC front end ------------------------*- C++ -*-===//
//
// inference.GRPCInferenceService (grpc_predict_v2.proto) over the same
// InferenceServer as REST. Inputs come as typed `contents` or
// `raw_input_contents`; outputs always go back as `raw_output_contents`
// (what Triton does), so REST and gRPC answers agree bit for bit.
//
// Every method takes its request as raw bytes and parses it itself, so that
// a message that does not parse is INVALID_ARGUMENT with a reason (gRPC's
// own parsing answers INTERNAL with an empty message). Requests are held
// against the server's in-flight budget. It listens on one address
// (loopback unless told otherwise), optionally over TLS.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_SERVING_GRPCSERVER_H
#define CUVIL_SERVING_GRPCSERVER_H

#include "cuvil/serving/InferenceServer.h"

#include "absl/status/statusor.h"

#include <memory>
#include <string>

namespace grpc {
class Server;
} // namespace grpc

namespace cuvil::serving {

class GrpcService;

struct GrpcOptions {
  /// A numeric IPv4 or IPv6 address, or "localhost".
  std::string address = "127.0.0.1";
  int port = 8001;
  /// Larger messages get RESOURCE_EXHAUSTED.
  size_t maxMessageBytes = 64 << 20;
  /// PEM certificate chain and private key: both set serves TLS only.
  std::string tlsCertificatePem, tlsKeyPem;
};

class GrpcServer {
public:
  static absl::StatusOr<std::unique_ptr<GrpcServer>> start(InferenceServer &server,
                                                           const GrpcOptions &options);
  ~GrpcServer();
  int port() const { return port_; }
  void stop();

private:
  GrpcServer() = default;
  std::unique_ptr<GrpcService> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

} // namespace cuvil::serving

#endif // CUVIL_SERVING_GRPCSERVER_H
