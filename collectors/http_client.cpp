#include "collectors/http_client.h"

#include <memory>
#include <mutex>

#include <curl/curl.h>

namespace attrib::collectors {
namespace {

constexpr size_t kMaxBody = size_t{256} << 20;

struct EasyCleanup {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};
using EasyHandle = std::unique_ptr<CURL, EasyCleanup>;

// curl_global_init must run once before any handle exists; it is not thread-safe
// with respect to handle creation on every libcurl build, hence the once-flag.
void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Body {
  std::string text;
  bool too_large = false;
};

size_t append_body(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<Body*>(user);
  const size_t bytes = size * count;
  if (body->text.size() + bytes > kMaxBody) {
    body->too_large = true;
    return 0;  // makes curl stop with CURLE_WRITE_ERROR
  }
  body->text.append(data, bytes);
  return bytes;
}

}  // namespace

std::string url_encode(const std::string& text) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                            c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

std::string join_url(const std::string& base, const std::string& path) {
  std::string out = base;
  while (!out.empty() && out.back() == '/') out.pop_back();
  return out + path;
}

std::string substitute_node(const std::string& text, const std::string& node) {
  std::string escaped;
  for (char c : node) {
    if (c == '\\' || c == '"') escaped += '\\';
    escaped += c;
  }
  static const std::string kToken = "{node}";
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t hit = text.find(kToken, pos);
    if (hit == std::string::npos) break;
    out += text.substr(pos, hit - pos) + escaped;
    pos = hit + kToken.size();
  }
  return out + text.substr(pos);
}

namespace {

// Runs the request set up on `h` (URL, method, body) with the settings every request
// shares; `what` names it in errors ("GET <url>").
Result<HttpResponse> perform(CURL* h, int64_t timeout_ms, const std::string& what) {
  Body body;
  char error_buffer[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  // No signals: timeouts must work in any thread (the daemon fans out per node).
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeout_ms));
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // any encoding curl can decode
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &append_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);

  const CURLcode code = curl_easy_perform(h);
  if (code != CURLE_OK) {
    std::string message = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code);
    if (body.too_large) message = "response larger than 256 MiB";
    const char* kind = code == CURLE_OPERATION_TIMEDOUT ? kHttpTimeout : kHttpTransport;
    return Error{kind, what + ": " + message};
  }
  HttpResponse response;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &response.status);
  response.body = std::move(body.text);
  return response;
}

struct SlistFree {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

}  // namespace

Result<HttpResponse> http_get(const std::string& url, const std::map<std::string, std::string>& query,
                              int64_t timeout_ms) {
  global_init();
  EasyHandle handle(curl_easy_init());
  if (!handle) return Error{kHttpTransport, "curl_easy_init failed"};

  std::string full = url;
  char separator = url.find('?') == std::string::npos ? '?' : '&';
  for (const auto& [key, value] : query) {
    full += separator + url_encode(key) + "=" + url_encode(value);
    separator = '&';
  }
  curl_easy_setopt(handle.get(), CURLOPT_URL, full.c_str());
  curl_easy_setopt(handle.get(), CURLOPT_HTTPGET, 1L);
  return perform(handle.get(), timeout_ms, "GET " + url);
}

Result<HttpResponse> http_post(const std::string& url, const std::string& body, const std::vector<std::string>& headers,
                               int64_t timeout_ms) {
  global_init();
  EasyHandle handle(curl_easy_init());
  if (!handle) return Error{kHttpTransport, "curl_easy_init failed"};
  std::unique_ptr<curl_slist, SlistFree> list;
  for (const std::string& header : headers) {
    // curl_slist_append returns the list's head (the same one after the first), or
    // nullptr leaving the list as it was.
    curl_slist* head = curl_slist_append(list.get(), header.c_str());
    if (head == nullptr) return Error{kHttpTransport, "curl_slist_append failed"};
    if (head != list.get()) list.reset(head);
  }
  curl_easy_setopt(handle.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(handle.get(), CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(handle.get(), CURLOPT_POSTFIELDS, body.data());  // borrowed: body outlives the request
  curl_easy_setopt(handle.get(), CURLOPT_HTTPHEADER, list.get());
  return perform(handle.get(), timeout_ms, "POST " + url);
}

std::string body_excerpt(const std::string& body) {
  std::string out = body.substr(0, 300);
  for (char& c : out)
    if (c == '\n' || c == '\r') c = ' ';
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out + (body.size() > 300 ? "..." : "");
}

}  // namespace attrib::collectors
