//===- HttpServer.cpp - the REST front end --------------------------------===//

#include "cuvil/serving/HttpServer.h"

#include "cuvil/serving/HttpCodec.h"
#include "cuvil/serving/StatusCodes.h"
#include "cuvil/support/Version.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"

#include <microhttpd.h>

#include <cstring>

namespace cuvil::serving {

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

json tensorsJson(const std::vector<TensorSpec> &specs) {
  json list = json::array();
  for (const TensorSpec &spec : specs)
    list.push_back({{"name", spec.name},
                    {"datatype", std::string(v2Name(spec.datatype))},
                    {"shape", spec.shape}});
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

struct Connection {
  std::string body;
  bool tooLarge = false;
};

MHD_Result queueReply(MHD_Connection *connection, const Reply &reply) {
  MHD_Response *response = MHD_create_response_from_buffer(
      reply.body.size(), const_cast<char *>(reply.body.data()), MHD_RESPMEM_MUST_COPY);
  if (!response)
    return MHD_NO;
  MHD_add_response_header(response, "Content-Type", reply.contentType.c_str());
  if (reply.jsonLength)
    MHD_add_response_header(response, "Inference-Header-Content-Length",
                            absl::StrCat(*reply.jsonLength).c_str());
  MHD_Result result = MHD_queue_response(connection, reply.status, response);
  MHD_destroy_response(response);
  return result;
}

MHD_Result onRequest(void *self, MHD_Connection *connection, const char *url, const char *method,
                     const char * /*version*/, const char *uploadData, size_t *uploadSize,
                     void **state) {
  auto *server = static_cast<HttpServer *>(self);
  size_t limit = server->options().maxBodyBytes;
  if (!*state) {
    *state = new Connection();
    server->active.fetch_add(1);
    if (const char *length =
            MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Content-Length")) {
      uint64_t bytes;
      if (absl::SimpleAtoi(length, &bytes) && bytes > limit)
        return queueReply(connection,
                          errorReply(413, absl::StrCat("the request body has ", bytes,
                                                       " bytes, above the server's limit of ",
                                                       limit, " (--http-max-body-bytes)")));
    }
    return MHD_YES;
  }
  auto *request = static_cast<Connection *>(*state);
  if (*uploadSize > 0) {
    if (request->body.size() + *uploadSize > limit)
      request->tooLarge = true;
    else
      request->body.append(uploadData, *uploadSize);
    *uploadSize = 0;
    return MHD_YES;
  }
  if (request->tooLarge)
    return queueReply(connection,
                      errorReply(413, absl::StrCat("the request body is above the server's "
                                                   "limit of ", limit,
                                                   " bytes (--http-max-body-bytes)")));
  Reply reply = server->handle(method, url, request->body,
                               MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
                                                           "Inference-Header-Content-Length"));
  return queueReply(connection, reply);
}

/// Called once a response is fully sent (or the connection dropped).
void onCompleted(void *self, MHD_Connection * /*connection*/, void **state,
                 MHD_RequestTerminationCode /*code*/) {
  if (!*state)
    return;
  delete static_cast<Connection *>(*state);
  *state = nullptr;
  static_cast<HttpServer *>(self)->active.fetch_sub(1);
}

} // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::start(InferenceServer &server,
                                                              const HttpOptions &options) {
  if (options.port < 0 || options.port > 65535)
    return absl::InvalidArgumentError(absl::StrCat("HTTP port ", options.port, " is not a port"));
  std::unique_ptr<HttpServer> http(new HttpServer(server, options));
  http->daemon_ = MHD_start_daemon(
      MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG,
      static_cast<uint16_t>(options.port), nullptr, nullptr, &onRequest, http.get(),
      MHD_OPTION_NOTIFY_COMPLETED, &onCompleted, http.get(), MHD_OPTION_CONNECTION_TIMEOUT,
      options.timeoutSeconds, MHD_OPTION_CONNECTION_LIMIT, options.maxConnections,
      MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u, MHD_OPTION_END);
  if (!http->daemon_)
    return absl::UnavailableError(absl::StrCat("cannot listen for HTTP on port ", options.port,
                                               " (in use?)"));
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
}

int HttpServer::port() const {
  const MHD_DaemonInfo *info = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
  return info ? info->port : options_.port;
}

HttpServer::Reply HttpServer::handle(const std::string &method, const std::string &url,
                                     const std::string &body, const char *headerLength) {
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
      std::optional<size_t> jsonLength;
      if (headerLength) {
        uint64_t length;
        if (!absl::SimpleAtoi(headerLength, &length))
          return errorReply(400, absl::StrCat("Inference-Header-Content-Length '", headerLength,
                                              "' is not a byte count"));
        jsonLength = length;
      }
      absl::StatusOr<InferRequest> request = decodeInferRequest(body, jsonLength);
      if (!request.ok())
        return errorReply(request.status());
      request->modelName = model;
      request->modelVersion = version;
      absl::StatusOr<InferResponse> response = server_.infer(*request);
      if (!response.ok())
        return errorReply(response.status());
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
