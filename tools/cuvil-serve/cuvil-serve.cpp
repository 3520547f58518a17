//===- cuvil-serve.cpp - the Cuvil inference server -----------------------===//
//
//   cuvil-serve --model-repository=models --http-port=8000 --grpc-port=8001
//
// Serves compiled models over the Open Inference Protocol (KServe v2), REST
// and gRPC. SIGTERM or SIGINT: readiness drops, in-flight requests finish
// (up to --exit-timeout-secs), then the process exits.
//
//===----------------------------------------------------------------------===//

#include "cuvil/serving/GrpcServer.h"
#include "cuvil/serving/HttpServer.h"
#include "cuvil/serving/InferenceServer.h"
#include "cuvil/serving/Log.h"
#include "cuvil/support/Version.h"
#include "tools/common/FlagUtil.h"

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <iostream>
#include <string>
#include <tuple>
#include <vector>

#include <pthread.h>

ABSL_FLAG(std::string, model_repository, "",
          "The model repository: <dir>/<model>/<version>/model.so, with an optional "
          "<dir>/<model>/config.json (batching, instances, threads, version policy; see "
          "docs/serving.md).");
ABSL_FLAG(int32_t, http_port, 8000, "Port of the REST (HTTP/1.1) endpoint; -1 disables it.");
ABSL_FLAG(int32_t, grpc_port, 8001, "Port of the gRPC endpoint; -1 disables it.");
ABSL_FLAG(std::string, http_address, "127.0.0.1",
          "Address the REST endpoint listens on: loopback unless told otherwise; 0.0.0.0 (or ::) "
          "for every interface, as a container needs.");
ABSL_FLAG(std::string, grpc_address, "127.0.0.1",
          "Address the gRPC endpoint listens on (as --http-address).");
ABSL_FLAG(std::string, http_tls_cert, "",
          "PEM certificate (chain) file: with --http-tls-key, REST is served over HTTPS only.");
ABSL_FLAG(std::string, http_tls_key, "", "PEM private key file of --http-tls-cert.");
ABSL_FLAG(std::string, grpc_tls_cert, "",
          "PEM certificate (chain) file: with --grpc-tls-key, gRPC is served over TLS only.");
ABSL_FLAG(std::string, grpc_tls_key, "", "PEM private key file of --grpc-tls-cert.");
ABSL_FLAG(std::string, model_control_mode, "none",
          "none: load every model at start, no load/unload API; explicit: load the "
          "--load-model models at start, and what the repository API asks for when "
          "--allow-repository-control is given; poll: follow the repository directory (new, "
          "changed and removed models; a changed file is loaded once two scans find it "
          "unchanged).");
ABSL_FLAG(bool, allow_repository_control, false,
          "With --model-control-mode=explicit, let clients load and unload models and pass "
          "configs through the repository API (POST /v2/repository/models/NAME/load|unload, "
          "gRPC RepositoryModelLoad/Unload). Loading runs model code: enable it only where "
          "clients are trusted as operators.");
ABSL_FLAG(std::vector<std::string>, load_model, {},
          "With --model-control-mode=explicit, a model to load at start (repeatable or "
          "comma-separated; * loads all).");
ABSL_FLAG(int32_t, repository_poll_secs, 15,
          "With --model-control-mode=poll, seconds between scans of the repository.");
ABSL_FLAG(int64_t, http_max_body_bytes, 64 << 20,
          "Largest request body (REST) or message (gRPC) accepted; larger gets 413 / "
          "RESOURCE_EXHAUSTED.");
ABSL_FLAG(int32_t, http_timeout_secs, 60, "An HTTP connection idle this long is closed.");
ABSL_FLAG(int32_t, http_request_timeout_secs, 30,
          "A client has this long to send each whole request (headers and body, counted from "
          "the connection's start or its previous answer) and to read each answer; however "
          "it trickles, the connection is closed then.");
ABSL_FLAG(int32_t, http_max_connections, 1000, "Concurrent HTTP connections accepted.");
ABSL_FLAG(int64_t, max_inflight_bytes, int64_t{2} << 30,
          "Bytes all requests in flight may hold together (bodies, decoded tensors, answers); "
          "beyond it requests get 503 / UNAVAILABLE (retry later).");
ABSL_FLAG(int64_t, max_batch_size, 65536,
          "Rows a request or merged batch may hold on any model, whatever it was compiled "
          "for; a config's max_batch_size may be lower, not higher.");
ABSL_FLAG(int32_t, max_instances_per_model, 16,
          "Largest instance_count a config (config.json or a load request) may set.");
ABSL_FLAG(int32_t, max_threads_per_instance, 64,
          "Largest threads a config may set.");
ABSL_FLAG(int32_t, max_total_threads, 512,
          "Model threads (instances x threads; threads 0 counts as 1) all loaded versions "
          "may use together; a load beyond it fails.");
ABSL_FLAG(int32_t, exit_timeout_secs, 30,
          "On SIGTERM, how long in-flight requests may take to finish before exit.");

namespace {

const char kUsage[] = R"(cuvil-serve: serves Cuvil-compiled models over the Open
Inference Protocol (KServe v2), REST and gRPC, with dynamic batching, hot
reload and Prometheus metrics.

Usage:
  cuvil-serve --model-repository=DIR [--http-port=8000] [--grpc-port=8001]
              [--http-address=127.0.0.1] [--grpc-address=127.0.0.1]
              [--model-control-mode=none|explicit|poll] [--load-model=NAME]...
              [--allow-repository-control]

Loading a model runs its code: the repository is trusted. Clients are not:
the server listens on loopback unless told otherwise, the load/unload API is
off unless --allow-repository-control, and requests are bounded (body size,
bytes in flight, time to send a request, batch, threads).

A repository holds one folder per model and one numbered folder per version:
  DIR/resnet18/config.json          optional, e.g. {"max_batch_size": 8,
                                    "dynamic_batching": {"max_queue_delay_microseconds": 500}}
  DIR/resnet18/1/model.so           built by: cuvilc resnet18.onnx --max-batch=8 -o model.so

Endpoints: /v2/health/{live,ready}, /v2/models/NAME[/versions/V]/{infer,ready},
/v2/repository/{index,models/NAME/load,models/NAME/unload}, /metrics; gRPC
inference.GRPCInferenceService. See docs/serving.md.)";

/// The contents of a PEM file named by `flag`, or "" when it names none.
absl::StatusOr<std::string> readPem(const std::string &path, const char *flag) {
  if (path.empty())
    return std::string();
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  if (!file || text.str().empty())
    return absl::InvalidArgumentError(absl::StrCat("cannot read ", flag, " ", path, ": ",
                                                   file ? "it is empty" : std::strerror(errno)));
  return text.str();
}

int usageError(const std::string &message) {
  std::cerr << "cuvil-serve: " << message << "\n";
  return 2;
}

int run(int argc, char **argv) {
  using namespace cuvil::serving;
  if (cuvil::wantsHelp(argc, argv)) {
    cuvil::printFlagsHelp(kUsage, "tools/cuvil-serve/");
    return 0;
  }
  std::vector<std::string> storage;
  std::vector<char *> args = cuvil::normalizeFlagSpelling(argc, argv, storage);
  absl::SetProgramUsageMessage(kUsage);
  absl::FlagsUsageConfig usageConfig;
  usageConfig.version_string = [] {
    return absl::StrCat("cuvil-serve ", cuvil::getVersionString(), "\n");
  };
  usageConfig.contains_help_flags = [](absl::string_view file) {
    return file.find("tools/cuvil-serve/") != absl::string_view::npos;
  };
  absl::SetFlagsUsageConfig(usageConfig);
  std::vector<char *> positional = absl::ParseCommandLine(static_cast<int>(args.size()),
                                                          args.data());
  if (positional.size() != 1) {
    std::cerr << "cuvil-serve: unexpected argument '" << positional[1]
              << "'\nRun 'cuvil-serve --help' for usage.\n";
    return 2;
  }

  ServerOptions options;
  options.repository = absl::GetFlag(FLAGS_model_repository);
  if (options.repository.empty()) {
    std::cerr << "cuvil-serve: --model-repository is required\nRun 'cuvil-serve --help' for "
                 "usage.\n";
    return 2;
  }
  std::string mode = absl::GetFlag(FLAGS_model_control_mode);
  if (mode == "none")
    options.controlMode = ControlMode::kNone;
  else if (mode == "explicit")
    options.controlMode = ControlMode::kExplicit;
  else if (mode == "poll")
    options.controlMode = ControlMode::kPoll;
  else {
    std::cerr << "cuvil-serve: --model-control-mode is none, explicit or poll, not '" << mode
              << "'\n";
    return 2;
  }
  options.startupModels = absl::GetFlag(FLAGS_load_model);
  if (!options.startupModels.empty() && options.controlMode != ControlMode::kExplicit) {
    std::cerr << "cuvil-serve: --load-model needs --model-control-mode=explicit (the other "
                 "modes load every model in the repository)\n";
    return 2;
  }
  options.allowRepositoryControl = absl::GetFlag(FLAGS_allow_repository_control);
  if (options.allowRepositoryControl && options.controlMode != ControlMode::kExplicit)
    return usageError("--allow-repository-control needs --model-control-mode=explicit (in the "
                      "other modes the repository decides what is loaded)");
  options.pollInterval = absl::Seconds(std::max(1, absl::GetFlag(FLAGS_repository_poll_secs)));
  int64_t maxBody = absl::GetFlag(FLAGS_http_max_body_bytes);
  if (maxBody < 1)
    return usageError("--http-max-body-bytes must be positive");
  int64_t maxInflight = absl::GetFlag(FLAGS_max_inflight_bytes);
  if (maxInflight < maxBody)
    return usageError(absl::StrCat("--max-inflight-bytes (", maxInflight,
                                   ") must be at least --http-max-body-bytes (", maxBody,
                                   "), or no request of the largest size could be served"));
  options.maxInflightBytes = static_cast<uint64_t>(maxInflight);
  options.maxBatchSize = absl::GetFlag(FLAGS_max_batch_size);
  options.maxInstancesPerModel = absl::GetFlag(FLAGS_max_instances_per_model);
  options.maxThreadsPerInstance = absl::GetFlag(FLAGS_max_threads_per_instance);
  options.maxTotalThreads = absl::GetFlag(FLAGS_max_total_threads);
  if (options.maxBatchSize < 1 || options.maxInstancesPerModel < 1 ||
      options.maxThreadsPerInstance < 1 || options.maxTotalThreads < 1)
    return usageError("--max-batch-size, --max-instances-per-model, --max-threads-per-instance "
                      "and --max-total-threads must be positive");
  if (absl::GetFlag(FLAGS_http_request_timeout_secs) < 1)
    return usageError("--http-request-timeout-secs must be positive");
  HttpOptions httpOptions;
  GrpcOptions grpcOptions;
  for (auto [path, flag, out] :
       {std::make_tuple(absl::GetFlag(FLAGS_http_tls_cert), "--http-tls-cert",
                        &httpOptions.tlsCertificatePem),
        std::make_tuple(absl::GetFlag(FLAGS_http_tls_key), "--http-tls-key", &httpOptions.tlsKeyPem),
        std::make_tuple(absl::GetFlag(FLAGS_grpc_tls_cert), "--grpc-tls-cert",
                        &grpcOptions.tlsCertificatePem),
        std::make_tuple(absl::GetFlag(FLAGS_grpc_tls_key), "--grpc-tls-key",
                        &grpcOptions.tlsKeyPem)}) {
    absl::StatusOr<std::string> pem = readPem(path, flag);
    if (!pem.ok())
      return usageError(std::string(pem.status().message()));
    *out = *std::move(pem);
  }
  if (httpOptions.tlsCertificatePem.empty() != httpOptions.tlsKeyPem.empty())
    return usageError("HTTPS needs both --http-tls-cert and --http-tls-key");
  if (grpcOptions.tlsCertificatePem.empty() != grpcOptions.tlsKeyPem.empty())
    return usageError("gRPC TLS needs both --grpc-tls-cert and --grpc-tls-key");

  // Signals go to the thread that waits for them, not to a server thread.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  absl::StatusOr<std::unique_ptr<InferenceServer>> server =
      InferenceServer::create(std::move(options));
  if (!server.ok()) {
    std::cerr << "cuvil-serve: " << server.status().message() << "\n";
    return 1;
  }
  std::unique_ptr<HttpServer> http;
  std::unique_ptr<GrpcServer> grpc;
  std::vector<std::string> endpoints;
  if (absl::GetFlag(FLAGS_http_port) >= 0) {
    httpOptions.address = absl::GetFlag(FLAGS_http_address);
    httpOptions.port = absl::GetFlag(FLAGS_http_port);
    httpOptions.maxBodyBytes = static_cast<size_t>(maxBody);
    httpOptions.timeoutSeconds = static_cast<unsigned>(std::max(1, absl::GetFlag(FLAGS_http_timeout_secs)));
    httpOptions.requestTimeoutSeconds =
        static_cast<unsigned>(absl::GetFlag(FLAGS_http_request_timeout_secs));
    httpOptions.maxConnections =
        static_cast<unsigned>(std::max(1, absl::GetFlag(FLAGS_http_max_connections)));
    absl::StatusOr<std::unique_ptr<HttpServer>> started = HttpServer::start(**server, httpOptions);
    if (!started.ok()) {
      std::cerr << "cuvil-serve: " << started.status().message() << "\n";
      return 1;
    }
    http = *std::move(started);
    endpoints.push_back(absl::StrCat(httpOptions.tlsCertificatePem.empty() ? "HTTP" : "HTTPS",
                                     " on ", httpOptions.address, " port ", http->port()));
  }
  if (absl::GetFlag(FLAGS_grpc_port) >= 0) {
    grpcOptions.address = absl::GetFlag(FLAGS_grpc_address);
    grpcOptions.port = absl::GetFlag(FLAGS_grpc_port);
    grpcOptions.maxMessageBytes = static_cast<size_t>(maxBody);
    absl::StatusOr<std::unique_ptr<GrpcServer>> started = GrpcServer::start(**server, grpcOptions);
    if (!started.ok()) {
      std::cerr << "cuvil-serve: " << started.status().message() << "\n";
      return 1;
    }
    grpc = *std::move(started);
    endpoints.push_back(absl::StrCat("gRPC", grpcOptions.tlsCertificatePem.empty() ? "" : " (TLS)",
                                     " on ", grpcOptions.address, " port ", grpc->port()));
  }
  absl::Status ready = (*server)->ready();
  logLine(absl::StrCat("serving ", absl::GetFlag(FLAGS_model_repository), ": ",
                       absl::StrJoin(endpoints, ", "), "; ",
                       ready.ok() ? std::string("ready") : absl::StrCat("not ready (", ready.message(), ")")));

  int signal = 0;
  sigwait(&signals, &signal);
  logLine(absl::StrCat(signal == SIGTERM ? "SIGTERM" : "SIGINT",
                       ": not ready; finishing in-flight requests"));
  absl::Duration timeout = absl::Seconds(absl::GetFlag(FLAGS_exit_timeout_secs));
  absl::Time deadline = absl::Now() + timeout;
  int64_t left = (*server)->shutdown(timeout);
  // Then the answers still being written (and the 503s sent meanwhile).
  if (http && !http->drain(std::max(deadline - absl::Now(), absl::Seconds(1))))
    left = std::max<int64_t>(left, http->active.load());
  if (left > 0) {
    // Their threads cannot be joined; leave without running destructors.
    logLine(absl::StrCat(left, " requests still running after --exit-timeout-secs; exiting"));
    std::_Exit(1);
  }
  if (http)
    http->stop();
  if (grpc)
    grpc->stop();
  logLine("stopped");
  return 0;
}

} // namespace

int main(int argc, char **argv) { return run(argc, argv); }
