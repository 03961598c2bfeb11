#include "common/auth.h"

#include <grp.h>
#include <pwd.h>
#include <sys/random.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <munge.h>
#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include "common/grpc_status.h"

namespace attrib::common {
namespace {

// One context per call: libmunge contexts are not safe to share between threads, and
// creating one is a malloc.
struct MungeCtxDeleter {
  void operator()(munge_ctx_t ctx) const { munge_ctx_destroy(ctx); }
};
using MungeCtx = std::unique_ptr<std::remove_pointer_t<munge_ctx_t>, MungeCtxDeleter>;

// libmunge returns malloc'd credentials and payloads.
struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// The context's detailed message (it names the socket and the cause), else the code's.
std::string munge_error(munge_ctx_t ctx, munge_err_t rc) {
  const char* detail = ctx != nullptr ? munge_ctx_strerror(ctx) : nullptr;
  return detail != nullptr ? detail : munge_strerror(rc);
}

Result<MungeCtx> make_context(const std::string& socket) {
  MungeCtx ctx(munge_ctx_create());
  if (!ctx) return Error{kAuthMunged, "cannot create a MUNGE context (out of memory)"};
  if (!socket.empty()) {
    munge_err_t rc = munge_ctx_set(ctx.get(), MUNGE_OPT_SOCKET, socket.c_str());
    if (rc != EMUNGE_SUCCESS)
      return Error{kAuthMunged, "cannot use MUNGE socket " + socket + ": " + munge_error(ctx.get(), rc)};
  }
  return ctx;
}

std::string socket_name(const std::string& socket) {
  return socket.empty() ? std::string("munged's default socket") : "munged at " + socket;
}

std::string sha256_hex(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 0xf];
  }
  return out;
}

// Deterministic: map fields (JobEnded.spank_options) are written in key order, so client
// and server hash the same bytes whatever order the map was built or parsed in. Fields
// are append-only (never renumbered), so a newer client's extra fields are kept by the
// server as unknown fields and re-serialized last, in the same order.
std::string deterministic_bytes(const google::protobuf::Message& message) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }  // the coded stream flushes into bytes when destroyed
  return bytes;
}

Result<uid_t> resolve_user(const std::string& name) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  int rc = getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (rc != 0 || found == nullptr)
    return Error{kAuthConfig, "user '" + name + "' not found" + (rc != 0 ? std::string(": ") + std::strerror(rc) : "")};
  return found->pw_uid;
}

Result<gid_t> resolve_group(const std::string& name) {
  std::vector<char> buffer(65536);
  group entry{};
  group* found = nullptr;
  int rc = getgrnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (rc != 0 || found == nullptr)
    return Error{kAuthConfig,
                 "group '" + name + "' not found" + (rc != 0 ? std::string(": ") + std::strerror(rc) : "")};
  return found->gr_gid;
}

// Primary and supplementary groups of uid, read now (membership changes take effect
// without a restart).
std::vector<gid_t> groups_of(uid_t uid) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) return {};
  int count = 64;
  std::vector<gid_t> groups(count);
  if (getgrouplist(found->pw_name, found->pw_gid, groups.data(), &count) < 0) {
    groups.resize(count);  // count now holds the number needed
    if (getgrouplist(found->pw_name, found->pw_gid, groups.data(), &count) < 0) return {found->pw_gid};
  }
  groups.resize(count);
  return groups;
}

std::string peer_of(const grpc::ServerContext* context) {
  if (context == nullptr) return "an in-process caller";
  // ServerContext::peer() is not const; the peer string is only for the log.
  return const_cast<grpc::ServerContext*>(context)->peer();
}

// munge_encode of payload with the socket and time-to-live asked for.
Result<std::string> encode_payload(const std::string& socket, const std::string& payload, int ttl_s) {
  auto ctx = make_context(socket);
  if (!ctx) return ctx.error();
  if (ttl_s > 0) {
    munge_err_t rc = munge_ctx_set(ctx->get(), MUNGE_OPT_TTL, ttl_s);
    if (rc != EMUNGE_SUCCESS)
      return Error{kAuthMunged, "cannot set the MUNGE time-to-live: " + munge_error(ctx->get(), rc)};
  }
  char* cred = nullptr;
  munge_err_t rc = munge_encode(&cred, ctx->get(), payload.data(), static_cast<int>(payload.size()));
  std::unique_ptr<char, FreeDeleter> owned(cred);
  if (rc != EMUNGE_SUCCESS)
    return Error{kAuthMunged,
                 "cannot create a MUNGE credential with " + socket_name(socket) + ": " + munge_error(ctx->get(), rc)};
  return std::string(cred);
}

// munge_decode of cred (munged rejects invalid, expired and replayed credentials), then
// the payload must be exactly `expected`: what binds the credential to one use.
Result<Caller> decode_payload(const std::string& socket, const std::string& cred, const std::string& expected) {
  auto ctx = make_context(socket);
  if (!ctx) return ctx.error();
  void* payload = nullptr;
  int length = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  munge_err_t rc = munge_decode(cred.c_str(), ctx->get(), &payload, &length, &uid, &gid);
  // Allocated even for some failures (expired, replayed): freed on every path.
  std::unique_ptr<void, FreeDeleter> owned_payload(payload);
  switch (rc) {
    case EMUNGE_SUCCESS:
      break;
    case EMUNGE_CRED_EXPIRED:
      return Error{kAuthExpired, "MUNGE credential expired (older than its time-to-live; check the clocks)"};
    case EMUNGE_CRED_REWOUND:
      return Error{kAuthExpired, "MUNGE credential from the future (the sender's clock is ahead)"};
    case EMUNGE_CRED_REPLAYED:
      return Error{kAuthReplayed, "MUNGE credential replayed (it was already used for another call)"};
    case EMUNGE_SNAFU:
    case EMUNGE_NO_MEMORY:
    case EMUNGE_SOCKET:
    case EMUNGE_TIMEOUT:
      return Error{kAuthMunged, "cannot verify the MUNGE credential with " + socket_name(socket) + ": " +
                                    munge_error(ctx->get(), rc)};
    default:
      return Error{kAuthInvalid, std::string("invalid MUNGE credential: ") + munge_strerror(rc)};
  }
  std::string received = payload != nullptr && length > 0
                             ? std::string(static_cast<const char*>(payload), static_cast<size_t>(length))
                             : std::string();
  if (received != expected)
    return Error{kAuthMismatch, "MUNGE credential was made for another request (method or body differ)"};
  return Caller{uid, gid, true};
}

}  // namespace

std::string credential_payload(std::string_view method, const google::protobuf::Message& request) {
  return "attrib.v1 " + std::string(method) + " " + sha256_hex(deterministic_bytes(request));
}

std::string answer_payload(std::string_view method, const google::protobuf::Message& request,
                           const google::protobuf::Message& response) {
  return "attrib.v1 " + std::string(method) + " answer " + sha256_hex(deterministic_bytes(request)) + " " +
         sha256_hex(deterministic_bytes(response));
}

Result<std::string> encode_answer(const std::string& socket, std::string_view method,
                                  const google::protobuf::Message& request, const google::protobuf::Message& response) {
  return encode_payload(socket, answer_payload(method, request, response), 0);
}

std::string random_nonce() {
  unsigned char bytes[16] = {};
  // getrandom(2) blocks only before the pool is first seeded at boot.
  for (size_t got = 0; got < sizeof bytes;) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
  }
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += hex[b >> 4];
    out += hex[b & 0xf];
  }
  return out;
}

Result<std::string> encode_credential(const std::string& socket, std::string_view method,
                                      const google::protobuf::Message& request, int ttl_s) {
  return encode_payload(socket, credential_payload(method, request), ttl_s);
}

Result<std::string> encode_dashboard_login(const std::string& socket, int ttl_s) {
  return encode_payload(socket, std::string(kDashboardLoginPayload), ttl_s);
}

std::string http_attribute_payload(std::string_view body) {
  return "attrib.v1 POST /v1/attribute " + sha256_hex(std::string(body));
}

Result<std::string> encode_http_attribute(const std::string& socket, std::string_view body, int ttl_s) {
  return encode_payload(socket, http_attribute_payload(body), ttl_s);
}

namespace {

// The encode runs on a thread of its own; past `by` the caller goes on without it (it
// ends when libmunge gives up, or with the process).
Result<std::string> encode_credential_by(const std::string& socket, std::string_view method,
                                         const google::protobuf::Message& request,
                                         std::chrono::steady_clock::time_point by) {
  auto promise = std::make_shared<std::promise<Result<std::string>>>();
  auto answer = promise->get_future();
  std::thread([promise, socket, payload = credential_payload(method, request)] {
    promise->set_value(encode_payload(socket, payload, 0));
  }).detach();
  if (answer.wait_until(by) != std::future_status::ready)
    return Error{kAuthMunged, "no MUNGE credential from " + socket_name(socket) + " in time (munged down or overloaded)"};
  return answer.get();
}

}  // namespace

Status attach_credential(grpc::ClientContext& context, const common::AuthConfig& config, std::string_view method,
                         const google::protobuf::Message& request,
                         std::optional<std::chrono::steady_clock::time_point> by) {
  if (!config.enabled()) return ok_status();
  auto cred = by ? encode_credential_by(config.munge_socket, method, request, *by)
                 : encode_credential(config.munge_socket, method, request);
  if (!cred) return cred.error();
  context.AddMetadata(std::string(kMetadataKey), *cred);
  return ok_status();
}

Result<std::shared_ptr<const Authenticator>> Authenticator::create(const common::AuthConfig& config) {
  if (!config.enabled()) {
    spdlog::warn(
        "auth.mode is none: RPCs are NOT authenticated. Anyone who can reach this daemon may submit "
        "jobs, read every verdict and collect node evidence. Use only for tests and development.");
    return std::shared_ptr<const Authenticator>(new Authenticator(config, 0, std::nullopt, 0));
  }
  auto slurm_uid = resolve_user(config.slurm_user);
  if (!slurm_uid) return Error{kAuthConfig, "auth.slurm_user: " + slurm_uid.error().message};
  std::optional<gid_t> admin_gid;
  if (!config.admin_group.empty()) {
    auto gid = resolve_group(config.admin_group);
    if (!gid) return Error{kAuthConfig, "auth.admin_group: " + gid.error().message};
    admin_gid = *gid;
  }
  auto agent_uid = resolve_user(config.agent_user);
  if (!agent_uid) return Error{kAuthConfig, "auth.agent_user: " + agent_uid.error().message};
  spdlog::info("RPCs authenticated with MUNGE ({}); SlurmUser {} (uid {}){}", socket_name(config.munge_socket),
               config.slurm_user, *slurm_uid,
               admin_gid ? "; admin group " + config.admin_group + " (gid " + std::to_string(*admin_gid) + ")" : "");
  return std::shared_ptr<const Authenticator>(new Authenticator(config, *slurm_uid, admin_gid, *agent_uid));
}

std::shared_ptr<const Authenticator> Authenticator::none() {
  common::AuthConfig config;
  config.mode = "none";
  return *create(config);
}

Result<Caller> Authenticator::authenticate(const grpc::ServerContext* context, std::string_view method,
                                           const google::protobuf::Message& request) const {
  if (!config_.enabled()) return Caller{};
  static const std::multimap<grpc::string_ref, grpc::string_ref> kNoMetadata;
  const auto& metadata = context != nullptr ? context->client_metadata() : kNoMetadata;
  auto range = metadata.equal_range(grpc::string_ref(kMetadataKey.data(), kMetadataKey.size()));
  if (range.first == range.second)
    return Error{kAuthMissing, "no MUNGE credential (metadata " + std::string(kMetadataKey) +
                                   "): attrib requires MUNGE authentication"};
  if (std::next(range.first) != range.second)
    return Error{kAuthInvalid, "more than one MUNGE credential in the request"};
  std::string cred(range.first->second.data(), range.first->second.size());

  return decode_payload(config_.munge_socket, cred, credential_payload(method, request));
}

Result<Caller> Authenticator::verify_dashboard_login(const std::string& credential) const {
  if (!config_.enabled()) return Caller{};
  return decode_payload(config_.munge_socket, credential, std::string(kDashboardLoginPayload));
}

Result<Caller> Authenticator::verify_http_attribute(const std::string& credential, std::string_view body) const {
  if (!config_.enabled()) return Caller{};
  return decode_payload(config_.munge_socket, credential, http_attribute_payload(body));
}

grpc::Status Authenticator::require_cluster_daemon(const grpc::ServerContext* context, std::string_view method,
                                                   const google::protobuf::Message& request) const {
  auto caller = authenticate(context, method, request);
  if (!caller) {
    spdlog::warn("{} from {} rejected: {}", method, peer_of(context), caller.error().message);
    return to_grpc_status(caller.error());
  }
  if (!caller->verified || is_cluster_daemon(caller->uid)) return grpc::Status::OK;
  spdlog::warn("{} from {} denied: uid {} is neither root nor the SlurmUser", method, peer_of(context), caller->uid);
  return to_grpc_status(Error{kAuthDenied, "uid " + std::to_string(caller->uid) + " may not call " +
                                               std::string(method) + ": only root and the SlurmUser (" +
                                               config_.slurm_user + ") may"});
}

Status Authenticator::sign_request(grpc::ClientContext& context, std::string_view method,
                                   const google::protobuf::Message& request) const {
  return attach_credential(context, config_, method, request);
}

Status Authenticator::sign_answer(grpc::ServerContext& context, std::string_view method,
                                  const google::protobuf::Message& request,
                                  const google::protobuf::Message& response) const {
  if (!config_.enabled()) return ok_status();
  auto cred = encode_answer(config_.munge_socket, method, request, response);
  if (!cred) return cred.error();
  context.AddTrailingMetadata(std::string(kAnswerMetadataKey), *cred);
  return ok_status();
}

Status Authenticator::verify_answer(const grpc::ClientContext& context, std::string_view method,
                                    const google::protobuf::Message& request,
                                    const google::protobuf::Message& response) const {
  if (!config_.enabled()) return ok_status();
  const auto& trailers = context.GetServerTrailingMetadata();
  auto range = trailers.equal_range(grpc::string_ref(kAnswerMetadataKey.data(), kAnswerMetadataKey.size()));
  if (range.first == range.second)
    return Error{kAuthMissing, "the answer is not signed (no " + std::string(kAnswerMetadataKey) + ")"};
  if (std::next(range.first) != range.second) return Error{kAuthInvalid, "the answer carries more than one signature"};
  std::string cred(range.first->second.data(), range.first->second.size());
  auto signer = decode_payload(config_.munge_socket, cred, answer_payload(method, request, response));
  if (!signer) return signer.error();
  if (signer->uid != agent_uid_)
    return Error{kAuthDenied, "the answer is signed by uid " + std::to_string(signer->uid) + ", not by auth.agent_user " +
                                  config_.agent_user + " (uid " + std::to_string(agent_uid_) + ")"};
  return ok_status();
}

bool Authenticator::is_admin(const Caller& caller) const {
  if (!caller.verified) return true;  // mode none: everything is open, as configured
  if (caller.uid == 0 || caller.uid == slurm_uid_) return true;
  if (!admin_gid_) return false;
  if (caller.gid == *admin_gid_) return true;
  for (gid_t gid : groups_of(caller.uid))
    if (gid == *admin_gid_) return true;
  return false;
}

std::optional<uid_t> job_owner_uid(uint32_t uid, const std::string& user) {
  if (uid != 0) return uid;
  if (user.empty()) return std::nullopt;  // proto3: 0 is also "not sent"
  auto resolved = resolve_user(user);
  if (!resolved) return std::nullopt;
  return *resolved;
}

}  // namespace attrib::common
