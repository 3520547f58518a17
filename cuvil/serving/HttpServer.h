//===- HttpServer.h - the REST front end ------------------------*- C++ -*-===//
//
// The Open Inference Protocol over HTTP/1.1 (keep-alive) on libmicrohttpd,
// one thread per connection, so a request waiting for its batch blocks only
// its own connection. Routes:
//
//   GET  /v2                                       server metadata
//   GET  /v2/health/live, /v2/health/ready
//   GET  /v2/models/M[/versions/V]                 model metadata
//   GET  /v2/models/M[/versions/V]/ready
//   POST /v2/models/M[/versions/V]/infer
//   GET  /v2/models/M/config                       effective serving config
//   POST /v2/repository/index
//   POST /v2/repository/models/M/load | unload
//   GET  /metrics                                  Prometheus text
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_SERVING_HTTPSERVER_H
#define CUVIL_SERVING_HTTPSERVER_H

#include "cuvil/serving/InferenceServer.h"

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include <atomic>
#include <cstdint>
#include <memory>

struct MHD_Daemon;

namespace cuvil::serving {

struct HttpOptions {
  int port = 8000;
  /// Larger bodies get 413.
  size_t maxBodyBytes = 64 << 20;
  /// A connection idle (or trickling) this long is closed.
  unsigned timeoutSeconds = 60;
  unsigned maxConnections = 1000;
};

class HttpServer {
public:
  static absl::StatusOr<std::unique_ptr<HttpServer>> start(InferenceServer &server,
                                                           const HttpOptions &options);
  ~HttpServer();
  /// The bound port (useful with port 0).
  int port() const;
  /// Waits up to `timeout` until no request is being handled or answered
  /// (idle keep-alive connections do not count). False on timeout.
  bool drain(absl::Duration timeout);
  /// Stops listening and closes connections.
  void stop();

  /// Requests received and not yet completely answered.
  std::atomic<int64_t> active{0};

  struct Reply;
  Reply handle(const std::string &method, const std::string &url, const std::string &body,
               const char *headerLength);

  const HttpOptions &options() const { return options_; }

private:
  HttpServer(InferenceServer &server, const HttpOptions &options)
      : server_(server), options_(options) {}
  InferenceServer &server_;
  const HttpOptions options_;
  MHD_Daemon *daemon_ = nullptr;
};

} // namespace cuvil::serving

#endif // CUVIL_SERVING_HTTPSERVER_H
