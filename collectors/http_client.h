// A minimal blocking HTTP client over libcurl: GET for the collectors that read central
// stores (Prometheus, Loki), POST for the verdict webhook (attributiond/sinks/). One easy handle per request: collectors run per node,
// possibly on several threads, and a handle is not shareable between threads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/result.h"

namespace attrib::collectors {

// Error codes of http_get(). A reply with any HTTP status is not an error here:
// the caller decides what a 4xx/5xx means for its API.

struct HttpResponse {
  long status = 0;  // HTTP status code
  std::string body;
};

// GET `url` with `query` appended as ?k=v&... (percent-encoded). `timeout_ms` bounds
// the whole exchange, connect included. Bodies over 256 MiB are refused (a store
// answering with more than that is misconfigured, and the daemon must not run out
// of memory over it).
Result<HttpResponse> http_get(const std::string& url, const std::map<std::string, std::string>& query,
                              int64_t timeout_ms);

// POST `body` to `url` with `headers` ("Name: value" each), bounded like http_get.
Result<HttpResponse> http_post(const std::string& url, const std::string& body, const std::vector<std::string>& headers,
                               int64_t timeout_ms);

// RFC 3986 percent-encoding of everything but the unreserved characters.
std::string url_encode(const std::string& text);

// `base` without trailing slashes + `path` (which starts with '/').
std::string join_url(const std::string& base, const std::string& path);

// Replaces every "{node}" in `text` by `node` with '\' and '"' backslash-escaped, so a
// node name is always one literal inside a PromQL/LogQL double-quoted string.
std::string substitute_node(const std::string& text, const std::string& node);

// The first 300 bytes of an answer's body on one line, for error messages.
std::string body_excerpt(const std::string& body);

}  // namespace attrib::collectors
