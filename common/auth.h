// Authentication and authorisation of attrib's RPCs with MUNGE, the key every Slurm
// cluster already shares (docs/operations.md, "Authentication").
//
// Every request carries a MUNGE credential in the gRPC metadata key x-attrib-munge. Its
// payload binds it to one call: "attrib.v1 <full method name> <sha256 hex of the request's
// deterministic serialization>", so a credential captured from one call cannot be reused
// for another method or another body, and munged's replay cache rejects it being sent
// twice. The uid munged vouches for decides what the caller may do:
//   SubmitJobEnded, Collect  root or the SlurmUser (the hooks and the head daemon);
//   GetVerdict               anyone; non-admins see only their own jobs' verdicts.
//   ListVerdicts             anyone; non-admins see (and count) only their own jobs.
//   GetNodeHistory           admins only: a node's history names every user's jobs.
//
// The other way round, a node agent's Collect answer is signed too: a user process that
// binds the agent port while the agent restarts must not answer with forged evidence. The
// agent puts a credential in the trailing metadata x-attrib-munge-answer whose payload
// binds the request (which carries a random nonce: this one call) and the exact answer;
// the head accepts the answer only when munged vouches for auth.agent_user's uid.
//
// Unix-socket peers are not trusted by their socket credentials: gRPC C++ does not expose
// SO_PEERCRED, so local callers present a MUNGE credential like remote ones.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <google/protobuf/message.h>
#include <grpcpp/grpcpp.h>

#include "common/config.h"
#include "core/result.h"

namespace attrib::common {

// The gRPC metadata key carrying the credential (lower case: gRPC requires it).
inline constexpr std::string_view kMetadataKey = "x-attrib-munge";
// The trailing metadata key carrying a node agent's signed answer.
inline constexpr std::string_view kAnswerMetadataKey = "x-attrib-munge-answer";

// Full gRPC method names, the ones bound into credentials.
inline constexpr std::string_view kSubmitJobEnded = "/attrib.v1.Attribution/SubmitJobEnded";
inline constexpr std::string_view kGetVerdict = "/attrib.v1.Attribution/GetVerdict";
inline constexpr std::string_view kGetNodeHistory = "/attrib.v1.Attribution/GetNodeHistory";    // admins only
inline constexpr std::string_view kListVerdicts = "/attrib.v1.Attribution/ListVerdicts";        // own jobs unless admin
inline constexpr std::string_view kListFailed = "/attrib.v1.Attribution/ListFailed";            // own jobs unless admin
inline constexpr std::string_view kBackfill = "/attrib.v1.Attribution/Backfill";                // admins only
inline constexpr std::string_view kGetArchiveStats = "/attrib.v1.Attribution/GetArchiveStats";  // admins only
inline constexpr std::string_view kAttribute = "/attrib.v1.Attribution/Attribute";            // anyone; trust: admins
inline constexpr std::string_view kCollect = "/attrib.v1.NodeCollector/Collect";

// Errors: the AUTH_E_* codes of core/error_codes.h (common/grpc_status.h maps them:
// UNAUTHENTICATED for a missing, invalid, expired, replayed or mismatched credential;
// PERMISSION_DENIED for a valid one of the wrong uid; UNAVAILABLE when munged itself fails,
// so clients retry or spool).

// What a credential's payload must say for this call.
std::string credential_payload(std::string_view method, const google::protobuf::Message& request);
// What a signed answer's payload must say: this call's request and this exact response.
std::string answer_payload(std::string_view method, const google::protobuf::Message& request,
                           const google::protobuf::Message& response);
// A credential over answer_payload, made by the calling process's uid (the agent's).
Result<std::string> encode_answer(const std::string& socket, std::string_view method,
                                  const google::protobuf::Message& request, const google::protobuf::Message& response);
// A random nonce for a request that must be unique (hex, 128 bits).
std::string random_nonce();

// ---- client side -------------------------------------------------------------------

// A fresh credential for one call. socket: "" for libmunge's default; ttl_s: 0 for
// munged's default time-to-live.
Result<std::string> encode_credential(const std::string& socket, std::string_view method,
                                      const google::protobuf::Message& request, int ttl_s = 0);

// The dashboard's login (docs/dashboard.md): `attrib-show --dashboard` mints a credential
// with this exact payload for the calling user; the dashboard's /login decodes it (uid,
// expiry, replay) and opens a browser session for that uid. A credential made for an RPC
// has another payload and cannot open a session, nor can this one sign an RPC.
inline constexpr std::string_view kDashboardLoginPayload = "attrib.v1 dashboard-login";
Result<std::string> encode_dashboard_login(const std::string& socket, int ttl_s = 0);

// The HTTP attribution API's MUNGE credential (Authorization: MUNGE <credential>, docs/
// api.md): its payload binds it to the one request body, "attrib.v1 POST /v1/attribute
// <sha256 hex of the body>", as an RPC's is bound to its request.
std::string http_attribute_payload(std::string_view body);
Result<std::string> encode_http_attribute(const std::string& socket, std::string_view body, int ttl_s = 0);

// Adds a fresh credential to context when auth.mode is munge; nothing otherwise. Call it
// once per call: munged rejects a credential decoded twice. With `by`, gives up at that
// time: libmunge retries a refused or missing socket for about 2.25 s (munged down or
// restarting), longer than a hook may take.
Status attach_credential(grpc::ClientContext& context, const common::AuthConfig& config, std::string_view method,
                         const google::protobuf::Message& request,
                         std::optional<std::chrono::steady_clock::time_point> by = std::nullopt);

// ---- server side -------------------------------------------------------------------

struct Caller {
  uid_t uid = 0;
  gid_t gid = 0;
  bool verified = false;  // false only with auth.mode none: nothing is known about the caller
};

class Authenticator {
 public:
  // Resolves auth.slurm_user and auth.admin_group now, so a misconfiguration stops the
  // daemon at start instead of rejecting every call. With mode none, warns loudly.
  static Result<std::shared_ptr<const Authenticator>> create(const common::AuthConfig& config);
  // auth.mode none, for tests that exercise something else: every call is let through.
  static std::shared_ptr<const Authenticator> none();

  // Verifies the call's credential: decoded by munged (which also rejects expired and
  // replayed ones) and bound to this method and request. context may be null (a service
  // called directly, not through gRPC): then there is no credential.
  Result<Caller> authenticate(const grpc::ServerContext* context, std::string_view method,
                              const google::protobuf::Message& request) const;

  // A dashboard login credential (kDashboardLoginPayload): decoded by munged, which
  // rejects expired and replayed ones. With mode none: an unverified Caller (an admin).
  Result<Caller> verify_dashboard_login(const std::string& credential) const;
  // An HTTP attribution request's credential, bound to its body. Mode none: unverified.
  Result<Caller> verify_http_attribute(const std::string& credential, std::string_view body) const;

  // authenticate, then require root or the SlurmUser (JobEnded, Collect): OK or the status
  // to return, already logged.
  grpc::Status require_cluster_daemon(const grpc::ServerContext* context, std::string_view method,
                                      const google::protobuf::Message& request) const;

  // May this uid hand in jobs (root or the SlurmUser)? With mode none: anyone. The head
  // asks it of a spool file's owner, whom the kernel vouches for (docs/security.md).
  bool is_cluster_daemon(uid_t uid) const { return !enabled() || uid == 0 || uid == slurm_uid_; }

  // Admins (root, the SlurmUser, auth.admin_group) read every job; others only jobs that
  // ran as their own uid.
  bool is_admin(const Caller& caller) const;

  bool enabled() const { return config_.enabled(); }

  // ---- node agents' answers (mode none: nothing signed, nothing checked) ----
  // The head: a fresh credential for the call, as attach_credential.
  Status sign_request(grpc::ClientContext& context, std::string_view method,
                      const google::protobuf::Message& request) const;
  // The agent: signs its answer into context's trailing metadata.
  Status sign_answer(grpc::ServerContext& context, std::string_view method, const google::protobuf::Message& request,
                     const google::protobuf::Message& response) const;
  // The head, after the call: the answer's credential is present, valid, bound to this
  // request and response, and made by auth.agent_user. AUTH_E_* errors otherwise.
  Status verify_answer(const grpc::ClientContext& context, std::string_view method,
                       const google::protobuf::Message& request, const google::protobuf::Message& response) const;

 private:
  Authenticator(common::AuthConfig config, uid_t slurm_uid, std::optional<gid_t> admin_gid, uid_t agent_uid)
      : config_(std::move(config)), slurm_uid_(slurm_uid), admin_gid_(admin_gid), agent_uid_(agent_uid) {}
  common::AuthConfig config_;
  uid_t slurm_uid_;
  std::optional<gid_t> admin_gid_;
  uid_t agent_uid_;
};

// The uid a stored JobEnded ran as: its uid, or its user name resolved when the hook sent
// only the name. nullopt when neither is known (then only admins may read it).
std::optional<uid_t> job_owner_uid(uint32_t uid, const std::string& user);

}  // namespace attrib::common
