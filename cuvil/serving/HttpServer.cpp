//===- HttpServer.cpp - the REST front end --------------------------------===//

#include "cuvil/serving/HttpServer.h"

#include "cuvil/serving/HttpCodec.h"
#include "cuvil/serving/StatusCodes.h"
#include "cuvil/support/StatusMacros.h"
#include "cuvil/support/Version.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"

#include <microhttpd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstring>

namespace cuvil::serving {

using Clock = std::chrono::steady_clock;

struct HttpServer::Watch {
  enum Phase { kReceiving, kHandling, kSending };
  MHD_socket fd = MHD_INVALID_SOCKET;
  int phase = kReceiving;
  /// When the request being received (or the answer being sent) must be
  /// complete.
  Clock::time_point deadline;
  bool shut = false;
};

/// One request on a connection: its body and the bytes it holds.
struct HttpServer::Request {
  std::string body;
  bool tooLarge = false;
  /// Why the body could not be held (the in-flight budget), if it could not.
  absl::Status refused;
  Reservation reservation;
};

struct HttpServer::Reply {
  Reply(int status, std::string body, std::string contentType = "application/json")
      : status(status), body(std::move(body)), contentType(std::move(contentType)) {}
  int status = 200;
  std::string body;
  std::string contentType;
  std::optional<size_t> jsonLength;
};

namespace {

using nlohmann::json;
using Reply = HttpServer::Reply;

Reply jsonReply(const json &value) {
  return {200, value.dump(-1, ' ', false, json::error_handler_t::replace)};
}

Reply errorReply(const absl::Status &status) {
  return {httpStatus(status), errorBody(status.message())};
}

Reply errorReply(int code, absl::string_view message) { return {code, errorBody(message)}; }

/// The tensors of a model's metadata; an integer-I/O tensor's scale and
/// zero point ride in its `parameters` (the protocol's extension point).
json tensorsJson(const std::vector<TensorSpec> &specs) {
  json list = json::array();
  for (const TensorSpec &spec : specs) {
    json tensor = {{"name", spec.name},
                   {"datatype", std::string(v2Name(spec.datatype))},
                   {"shape", spec.shape}};
    if (spec.quantization)
      tensor["parameters"] = {{"quantization_scale", spec.quantization->scale},
                              {"quantization_zero_point", spec.quantization->zeroPoint}};
    list.push_back(std::move(tensor));
  }
  return list;
}

/// A health answer: 200 when true, 400 with the reason when not (the
/// protocol says a 4xx means false).
Reply healthReply(const absl::Status &status) {
  if (status.ok())
    return {200, "", "text/plain"};
  return {400, errorBody(status.message())};
}

/// The model config a load request carries, if any (`parameters.config`, a
/// JSON string as Triton takes it, or an object).
absl::StatusOr<std::optional<std::string>> loadConfig(const std::string &body) {
  if (body.empty())
    return std::nullopt;
  RETURN_IF_ERROR(checkNoByteOrderMark(body, "the load request body"));
  json request = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded() || !request.is_object())
    return absl::InvalidArgumentError("the load request body must be a JSON object");
  auto parameters = request.find("parameters");
  if (parameters == request.end())
    return std::nullopt;
  if (!parameters->is_object())
    return absl::InvalidArgumentError("'parameters' must be an object");
  auto config = parameters->find("config");
  if (config == parameters->end())
    return std::nullopt;
  if (config->is_string())
    return std::optional<std::string>(config->get<std::string>());
  if (config->is_object())
    return std::optional<std::string>(config->dump());
  return absl::InvalidArgumentError("parameter 'config' must be a JSON string or object");
}

/// The model and version an inference URL names, if it is one.
std::optional<std::pair<std::string, std::string>> inferTarget(absl::string_view url) {
  std::vector<std::string> path = absl::StrSplit(url, '/', absl::SkipEmpty());
  if (path.size() == 4 && path[0] == "v2" && path[1] == "models" && path[3] == "infer")
    return std::make_pair(path[2], std::string());
  if (path.size() == 6 && path[0] == "v2" && path[1] == "models" && path[3] == "versions" &&
      path[5] == "infer")
    return std::make_pair(path[2], path[4]);
  return std::nullopt;
}

MHD_Result queueReply(MHD_Connection *connection, Reply reply) {
  // The response owns the body: no copy of a large answer.
  auto *body = new std::string(std::move(reply.body));
  MHD_Response *response = MHD_create_response_from_buffer_with_free_callback_cls(
      body->size(), body->data(), [](void *owned) { delete static_cast<std::string *>(owned); },
      body);
  if (!response) {
    delete body;
    return MHD_NO;
  }
  MHD_add_response_header(response, "Content-Type", reply.contentType.c_str());
  if (reply.jsonLength)
    MHD_add_response_header(response, "Inference-Header-Content-Length",
                            absl::StrCat(*reply.jsonLength).c_str());
  MHD_Result result = MHD_queue_response(connection, reply.status, response);
  MHD_destroy_response(response);
  return result;
}

HttpServer::Watch *watchOf(MHD_Connection *connection) {
  const MHD_ConnectionInfo *info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return info ? static_cast<HttpServer::Watch *>(info->socket_context) : nullptr;
}

/// An answer given before the request was read whole (413, 503).
MHD_Result refuse(HttpServer &server, MHD_Connection *connection, const char *url,
                  const absl::Status &status, int httpCode) {
  if (auto target = inferTarget(url))
    server.server().recordRefused(target->first, target->second, status);
  server.setPhase(watchOf(connection), HttpServer::Watch::kSending);
  return queueReply(connection, errorReply(httpCode, status.message()));
}

MHD_Result onRequest(void *self, MHD_Connection *connection, const char *url, const char *method,
                     const char * /*version*/, const char *uploadData, size_t *uploadSize,
                     void **state) {
  auto *server = static_cast<HttpServer *>(self);
  size_t limit = server->options().maxBodyBytes;
  InflightBudget &budget = server->server().budget();
  if (!*state) {
    auto *request = new HttpServer::Request();
    *state = request;
    server->active.fetch_add(1);
    request->reservation = *budget.reserve(0, "");
    if (const char *length =
            MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Content-Length")) {
      uint64_t bytes;
      if (absl::SimpleAtoi(length, &bytes)) {
        if (bytes > limit)
          return refuse(*server, connection, url,
                        absl::ResourceExhaustedError(absl::StrCat(
                            "the request body has ", bytes, " bytes, above the server's limit of ",
                            limit, " (--http-max-body-bytes)")),
                        413);
        // Held before the body arrives, so that a refusal costs no memory.
        absl::Status held = request->reservation.grow(
            bytes, absl::StrCat("a request body of ", bytes, " bytes"));
        if (!held.ok()) {
          // A client waiting for "100 Continue" has sent no body: answer now.
          // Any other is sending it: it is discarded as it arrives and the
          // answer follows, which the client then reliably reads (an answer
          // before the body is read ends in a reset the client may see
          // first).
          const char *expect =
              MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Expect");
          if (expect && absl::EqualsIgnoreCase(expect, "100-continue"))
            return refuse(*server, connection, url, held, httpStatus(held));
          request->refused = held;
          return MHD_YES;
        }
        request->body.reserve(bytes);
      }
    }
    return MHD_YES;
  }
  auto *request = static_cast<HttpServer::Request *>(*state);
  if (*uploadSize > 0) {
    if (!request->tooLarge && request->refused.ok()) {
      size_t size = request->body.size() + *uploadSize;
      if (size > limit) {
        request->tooLarge = true;
      } else if (size > request->reservation.bytes()) {
        // No Content-Length (chunked): held as it arrives.
        request->refused = request->reservation.grow(size - request->reservation.bytes(),
                                                     "the request body");
      }
      if (request->tooLarge || !request->refused.ok()) {
        std::string().swap(request->body); // the rest is discarded as it arrives
        request->reservation.reset();
      } else {
        request->body.append(uploadData, *uploadSize);
      }
    }
    *uploadSize = 0;
    return MHD_YES;
  }
  HttpServer::Watch *watch = watchOf(connection);
  server->setPhase(watch, HttpServer::Watch::kHandling);
  if (request->tooLarge)
    return refuse(*server, connection, url,
                  absl::ResourceExhaustedError(absl::StrCat(
                      "the request body is above the server's limit of ", limit,
                      " bytes (--http-max-body-bytes)")),
                  413);
  if (!request->refused.ok())
    return refuse(*server, connection, url, request->refused, httpStatus(request->refused));
  Reply reply = server->handle(method, url, *request,
                               MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
                                                           "Inference-Header-Content-Length"));
  server->setPhase(watch, HttpServer::Watch::kSending);
  return queueReply(connection, std::move(reply));
}

/// Called once a response is fully sent (or the connection dropped).
void onCompleted(void *self, MHD_Connection *connection, void **state,
                 MHD_RequestTerminationCode /*code*/) {
  auto *server = static_cast<HttpServer *>(self);
  // The next request on this connection has its own deadline from now.
  server->setPhase(watchOf(connection), HttpServer::Watch::kReceiving);
  if (!*state)
    return;
  delete static_cast<HttpServer::Request *>(*state);
  *state = nullptr;
  server->active.fetch_sub(1);
}

void onConnection(void *self, MHD_Connection *connection, void **socketContext,
                  MHD_ConnectionNotificationCode code) {
  auto *server = static_cast<HttpServer *>(self);
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    auto *watch = new HttpServer::Watch();
    const MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    watch->fd = info ? info->connect_fd : MHD_INVALID_SOCKET;
    *socketContext = watch;
    server->watchStarted(watch);
  } else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *socketContext) {
    // Before MHD closes the socket: the watchdog never shuts a reused fd.
    server->watchClosed(static_cast<HttpServer::Watch *>(*socketContext));
    *socketContext = nullptr;
  }
}

/// The address to listen on: numeric IPv4 or IPv6 (brackets allowed), or
/// "localhost".
absl::StatusOr<sockaddr_storage> listenAddress(const std::string &text, int port,
                                               bool &ipv6) {
  sockaddr_storage address{};
  std::string host = text == "localhost" ? "127.0.0.1" : text;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  auto *v4 = reinterpret_cast<sockaddr_in *>(&address);
  auto *v6 = reinterpret_cast<sockaddr_in6 *>(&address);
  if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    ipv6 = false;
  } else if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    ipv6 = true;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "HTTP address '", text, "' is not an IP address (e.g. 127.0.0.1, 0.0.0.0, ::1, ::)"));
  }
  return address;
}

} // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::start(InferenceServer &server,
                                                              const HttpOptions &options) {
  if (options.port < 0 || options.port > 65535)
    return absl::InvalidArgumentError(absl::StrCat("HTTP port ", options.port, " is not a port"));
  bool ipv6 = false;
  ASSIGN_OR_RETURN(sockaddr_storage address, listenAddress(options.address, options.port, ipv6));
  bool tls = !options.tlsCertificatePem.empty() || !options.tlsKeyPem.empty();
  if (tls && (options.tlsCertificatePem.empty() || options.tlsKeyPem.empty()))
    return absl::InvalidArgumentError(
        "HTTPS needs both a certificate and a key (--http-tls-cert and --http-tls-key)");
  if (tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
    return absl::FailedPreconditionError(
        "this libmicrohttpd was built without TLS support: serve HTTP behind a "
        "TLS-terminating proxy, or install a libmicrohttpd built with GnuTLS");

  std::unique_ptr<HttpServer> http(new HttpServer(server, options));
  std::vector<MHD_OptionItem> extra = {
      {MHD_OPTION_SOCK_ADDR, 0, &address},
  };
  // GnuTLS's NORMAL set still accepts TLS 1.0 and 1.1; gRPC starts at 1.2.
  static const char kTlsPriorities[] = "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2";
  if (tls) {
    // MHD reads these when it starts; the strings live in http->options_.
    extra.push_back({MHD_OPTION_HTTPS_MEM_CERT, 0,
                     const_cast<char *>(http->options_.tlsCertificatePem.c_str())});
    extra.push_back({MHD_OPTION_HTTPS_MEM_KEY, 0,
                     const_cast<char *>(http->options_.tlsKeyPem.c_str())});
    extra.push_back({MHD_OPTION_HTTPS_PRIORITIES, 0, const_cast<char *>(kTlsPriorities)});
  }
  extra.push_back({MHD_OPTION_END, 0, nullptr});
  unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                   MHD_USE_ERROR_LOG | (ipv6 ? MHD_USE_IPv6 : 0) | (tls ? MHD_USE_TLS : 0);
  http->daemon_ = MHD_start_daemon(
      flags, static_cast<uint16_t>(options.port), nullptr, nullptr, &onRequest, http.get(),
      MHD_OPTION_NOTIFY_COMPLETED, &onCompleted, http.get(), MHD_OPTION_NOTIFY_CONNECTION,
      &onConnection, http.get(), MHD_OPTION_CONNECTION_TIMEOUT, options.timeoutSeconds,
      MHD_OPTION_CONNECTION_LIMIT, options.maxConnections, MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
      MHD_OPTION_ARRAY, extra.data(), MHD_OPTION_END);
  if (!http->daemon_)
    return absl::UnavailableError(absl::StrCat(
        "cannot listen for HTTP", tls ? "S" : "", " on ", options.address, " port ", options.port,
        tls ? " (in use? or is the certificate or key not PEM, or not a pair?)" : " (in use?)"));
  http->watchdog_ = std::thread([raw = http.get()] { raw->watchdog(); });
  return http;
}

HttpServer::~HttpServer() { stop(); }

bool HttpServer::drain(absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (active.load() > 0) {
    if (absl::Now() >= deadline)
      return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return true;
}

void HttpServer::stop() {
  if (daemon_)
    MHD_stop_daemon(daemon_);
  daemon_ = nullptr;
  {
    absl::MutexLock lock(&watchMutex_);
    stopping_ = true;
  }
  if (watchdog_.joinable())
    watchdog_.join();
}

int HttpServer::port() const {
  const MHD_DaemonInfo *info = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
  return info ? info->port : options_.port;
}

void HttpServer::watchStarted(Watch *watch) {
  absl::MutexLock lock(&watchMutex_);
  watch->deadline = Clock::now() + std::chrono::seconds(options_.requestTimeoutSeconds);
  watches_.insert(watch);
}

void HttpServer::watchClosed(Watch *watch) {
  {
    absl::MutexLock lock(&watchMutex_);
    watches_.erase(watch);
  }
  delete watch;
}

void HttpServer::setPhase(Watch *watch, int phase) {
  if (!watch)
    return;
  absl::MutexLock lock(&watchMutex_);
  if (phase != watch->phase || phase != Watch::kReceiving)
    watch->deadline = Clock::now() + std::chrono::seconds(options_.requestTimeoutSeconds);
  watch->phase = phase;
}

/// Shuts the socket of every connection past its deadline while receiving
/// a request or sending an answer (not while the request is handled: a
/// request waiting for its batch is the server's time, not the client's).
/// The connection's own thread then sees the socket end and closes it.
void HttpServer::watchdog() {
  absl::MutexLock lock(&watchMutex_);
  while (!stopping_) {
    Clock::time_point now = Clock::now();
    for (Watch *watch : watches_)
      if (watch->phase != Watch::kHandling && !watch->shut && now >= watch->deadline &&
          watch->fd != MHD_INVALID_SOCKET) {
        ::shutdown(watch->fd, SHUT_RDWR);
        watch->shut = true;
        server_.serverMetrics().httpRequestTimeouts.fetch_add(1, std::memory_order_relaxed);
      }
    watchMutex_.AwaitWithTimeout(absl::Condition(&stopping_), absl::Milliseconds(200));
  }
}

HttpServer::Reply HttpServer::handle(const std::string &method, const std::string &url,
                                     Request &httpRequest, const char *headerLength) {
  const std::string &body = httpRequest.body;
  std::vector<std::string> path = absl::StrSplit(url, '/', absl::SkipEmpty());
  bool get = method == "GET", post = method == "POST";
  auto wrongMethod = [&](const char *allowed) {
    return errorReply(405, absl::StrCat(method, " is not allowed on ", url, "; use ", allowed));
  };

  if (path.size() == 1 && path[0] == "metrics") {
    if (!get)
      return wrongMethod("GET");
    return {200, server_.metrics(), "text/plain; version=0.0.4"};
  }
  if (path.empty() || path[0] != "v2")
    return errorReply(404, absl::StrCat("no endpoint ", url, " (the API is under /v2)"));

  if (path.size() == 1) {
    if (!get)
      return wrongMethod("GET");
    return jsonReply({{"name", InferenceServer::kName},
                      {"version", cuvil::getVersionString()},
                      {"extensions", {"binary_tensor_data", "model_repository", "metrics"}}});
  }
  if (path.size() == 3 && path[1] == "health") {
    if (!get)
      return wrongMethod("GET");
    if (path[2] == "live")
      return healthReply(absl::OkStatus());
    if (path[2] == "ready")
      return healthReply(server_.ready());
  }
  if (path[1] == "repository") {
    if (path.size() == 3 && path[2] == "index") {
      if (!post && !get)
        return wrongMethod("POST");
      bool readyOnly = false;
      if (!body.empty()) {
        absl::Status bom = checkNoByteOrderMark(body, "the index request body");
        if (!bom.ok())
          return errorReply(bom);
        json request = json::parse(body, nullptr, /*allow_exceptions=*/false);
        if (request.is_discarded() || !request.is_object())
          return errorReply(400, "the index request body must be a JSON object");
        if (request.contains("ready")) {
          if (!request["ready"].is_boolean())
            return errorReply(400, "'ready' must be true or false");
          readyOnly = request["ready"].get<bool>();
        }
      }
      json list = json::array();
      for (const IndexEntry &entry : server_.index(readyOnly)) {
        json item = {{"name", entry.name}, {"state", entry.state}};
        if (!entry.version.empty())
          item["version"] = entry.version;
        if (!entry.reason.empty())
          item["reason"] = entry.reason;
        list.push_back(std::move(item));
      }
      return jsonReply(list);
    }
    if (path.size() == 5 && path[2] == "models" && (path[4] == "load" || path[4] == "unload")) {
      if (!post)
        return wrongMethod("POST");
      absl::Status status;
      if (path[4] == "load") {
        absl::StatusOr<std::optional<std::string>> config = loadConfig(body);
        status = config.ok() ? server_.load(path[3], *config) : config.status();
      } else {
        status = server_.unload(path[3]);
      }
      if (!status.ok())
        return errorReply(status);
      return {200, "", "text/plain"};
    }
    return errorReply(404, absl::StrCat("no endpoint ", url));
  }
  if (path[1] == "models" && path.size() >= 3) {
    const std::string &model = path[2];
    std::string version;
    size_t rest = 3;
    if (path.size() >= 5 && path[3] == "versions") {
      version = path[4];
      rest = 5;
    }
    std::string action = path.size() == rest + 1 ? path[rest] : "";
    if (path.size() > rest + 1)
      return errorReply(404, absl::StrCat("no endpoint ", url));
    if (action.empty()) {
      if (!get)
        return wrongMethod("GET");
      absl::StatusOr<ModelMetadata> metadata = server_.modelMetadata(model, version);
      if (!metadata.ok())
        return errorReply(metadata.status());
      return jsonReply({{"name", metadata->name},
                        {"versions", metadata->versions},
                        {"platform", metadata->platform},
                        {"inputs", tensorsJson(metadata->inputs)},
                        {"outputs", tensorsJson(metadata->outputs)}});
    }
    if (action == "ready") {
      if (!get)
        return wrongMethod("GET");
      return healthReply(server_.modelReady(model, version));
    }
    if (action == "config" && version.empty()) {
      if (!get)
        return wrongMethod("GET");
      absl::StatusOr<std::string> config = server_.modelConfig(model);
      if (!config.ok())
        return errorReply(config.status());
      return {200, *config};
    }
    if (action == "infer") {
      if (!post)
        return wrongMethod("POST");
      auto refused = [&](const absl::Status &status) {
        server_.recordRefused(model, version, status);
        return errorReply(status);
      };
      std::optional<size_t> jsonLength;
      if (headerLength) {
        uint64_t length;
        if (!absl::SimpleAtoi(headerLength, &length))
          return refused(absl::InvalidArgumentError(absl::StrCat(
              "Inference-Header-Content-Length '", headerLength, "' is not a byte count")));
        jsonLength = length;
      }
      absl::Status held = httpRequest.reservation.grow(decodeMemoryBound(body, jsonLength),
                                                       "decoding the request");
      if (!held.ok())
        return refused(held);
      absl::StatusOr<InferRequest> request = decodeInferRequest(body, jsonLength);
      if (!request.ok())
        return refused(request.status());
      std::string().swap(httpRequest.body); // decoded: the tensors hold it now
      request->modelName = model;
      request->modelVersion = version;
      absl::StatusOr<InferResponse> response = server_.infer(*request);
      if (!response.ok())
        return errorReply(response.status());
      held = httpRequest.reservation.grow(encodeMemoryBound(*response, *request),
                                          "encoding the answer");
      if (!held.ok())
        return refused(held);
      EncodedResponse encoded = encodeInferResponse(*response, *request);
      Reply reply{200, std::move(encoded.body)};
      if (encoded.jsonLength) {
        reply.jsonLength = encoded.jsonLength;
        reply.contentType = "application/octet-stream";
      }
      return reply;
    }
  }
  return errorReply(404, absl::StrCat("no endpoint ", url));
}

} // namespace cuvil::serving
