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
// Against hostile clients: it listens on one address (loopback unless told
// otherwise), optionally over TLS (libmicrohttpd's GnuTLS); a client has
// --http-request-timeout-secs to send each whole request (headers and body,
// counted from the connection's start or its previous answer) and as long
// to read each answer, however it trickles, or a watchdog shuts the socket;
// bodies are held against the server's in-flight budget (503 beyond it).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_SERVING_HTTPSERVER_H
#define CUVIL_SERVING_HTTPSERVER_H

#include "cuvil/serving/InferenceServer.h"

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <thread>

struct MHD_Daemon;

namespace cuvil::serving {

struct HttpOptions {
  /// A numeric IPv4 or IPv6 address, or "localhost".
  std::string address = "127.0.0.1";
  int port = 8000;
  /// Larger bodies get 413.
  size_t maxBodyBytes = 64 << 20;
  /// A connection idle this long is closed.
  unsigned timeoutSeconds = 60;
  /// The whole of each request (and of each answer) must pass within this.
  unsigned requestTimeoutSeconds = 30;
  unsigned maxConnections = 1000;
  /// PEM certificate chain and private key: both set serves HTTPS only.
  std::string tlsCertificatePem, tlsKeyPem;
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
  struct Request;
  Reply handle(const std::string &method, const std::string &url, Request &request,
               const char *headerLength);

  /// One connection's progress, watched for its deadline.
  struct Watch;
  void setPhase(Watch *watch, int phase);
  void watchStarted(Watch *watch);
  void watchClosed(Watch *watch);

  const HttpOptions &options() const { return options_; }
  InferenceServer &server() { return server_; }

private:
  HttpServer(InferenceServer &server, const HttpOptions &options)
      : server_(server), options_(options) {}
  void watchdog();

  InferenceServer &server_;
  const HttpOptions options_;
  MHD_Daemon *daemon_ = nullptr;

  absl::Mutex watchMutex_;
  std::set<Watch *> watches_ ABSL_GUARDED_BY(watchMutex_);
  bool stopping_ ABSL_GUARDED_BY(watchMutex_) = false;
  std::thread watchdog_;
};

} // namespace cuvil::serving

#endif // CUVIL_SERVING_HTTPSERVER_H
