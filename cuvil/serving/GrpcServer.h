//===- GrpcServer.h - the gRPC front end ------------------------*- C++ -*-===//
//
// inference.GRPCInferenceService (grpc_predict_v2.proto) over the same
// InferenceServer as REST. Inputs come as typed `contents` or
// `raw_input_contents`; outputs always go back as `raw_output_contents`
// (what Triton does), so REST and gRPC answers agree bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_SERVING_GRPCSERVER_H
#define CUVIL_SERVING_GRPCSERVER_H

#include "cuvil/serving/InferenceServer.h"

#include "absl/status/statusor.h"

#include <memory>

namespace grpc {
class Server;
} // namespace grpc

namespace cuvil::serving {

class GrpcService;

class GrpcServer {
public:
  static absl::StatusOr<std::unique_ptr<GrpcServer>> start(InferenceServer &server, int port,
                                                           size_t maxMessageBytes);
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
