#include "tools/attrib-doctor/head_checks.h"

#include <chrono>
#include <filesystem>

#include "attrib/v1/attrib.grpc.pb.h"
#include "common/auth.h"
#include "common/grpc_limits.h"
#include "common/time_spec.h"
#include "tools/attrib-doctor/spool_checks.h"

namespace attrib::doctor {
namespace {

constexpr TimeUs kSecond = 1000 * 1000;

void check_database_disk(const common::Config& config, Findings& out) {
  const std::string dir = std::filesystem::path(config.head.database).parent_path().string();
  std::error_code error;
  const std::filesystem::space_info space = std::filesystem::space(dir, error);
  if (error || space.capacity == 0) return;
  const uint64_t free_bytes = space.available;
  const std::string saw = std::to_string(free_bytes / (1024 * 1024)) + " MiB free on the filesystem of " + dir;
  if (free_bytes < 256ULL * 1024 * 1024)
    out.fail("archive", "disk", saw + ": SQLite fails its writes when the disk is full",
             "free space there, or set archive.max_bytes in " + config.path);
  else
    out.ok("archive", "disk", saw);
}

}  // namespace

void check_munge(const common::Config& config, Findings& out) {
  if (!config.auth.enabled()) {
    out.warn("munge", "auth", "auth.mode is none: anyone who reaches the daemon may call it",
             "auth.mode: munge in " + config.path + " (none is for tests)");
    return;
  }
  const std::string socket = config.auth.munge_socket.empty() ? "the default socket" : config.auth.munge_socket;
  auto credential = common::encode_dashboard_login(config.auth.munge_socket);
  if (!credential) {
    out.fail("munge", "encode", credential.error().message,
             "start munged (systemctl start munge) or fix auth.munge_socket in " + config.path);
    return;
  }
  auto authenticator = common::Authenticator::create(config.auth);
  if (!authenticator) {
    out.fail("munge", "auth", authenticator.error().message, "fix the auth section of " + config.path);
    return;
  }
  if (auto caller = (*authenticator)->verify_dashboard_login(*credential); !caller) {
    out.fail("munge", "decode", caller.error().message,
             "check /etc/munge/munge.key (the same on every host) and the clocks");
    return;
  }
  out.ok("munge", "encode and decode", "munged at " + socket + " made and read back a credential");
}

void judge_archive(const common::Config& config, const nlohmann::json& stats, TimeUs now, Findings& out) {
  const auto number = [&](const char* key) { return stats.value(key, static_cast<int64_t>(0)); };
  out.ok("archive", "schema",
         "version " + std::to_string(number("schema_version")) + ", " + std::to_string(number("runs")) + " runs, " +
             std::to_string(number("queued")) + " queued");
  const int64_t used = number("used_bytes");
  const int64_t cap = config.archive.max_bytes;
  if (cap > 0 && used >= cap)
    out.fail("archive", "size",
             std::to_string(used) + " bytes in use, at archive.max_bytes " + std::to_string(cap) +
                 ": retention can drop nothing more (runs still inside head.sweep_lookback_s are kept)",
             "raise archive.max_bytes or lower archive.retention_days in " + config.path);
  else if (cap > 0 && used > cap / 10 * 9)
    out.warn("archive", "size", std::to_string(used) + " of archive.max_bytes " + std::to_string(cap) + " in use",
             "raise archive.max_bytes or lower archive.retention_days in " + config.path);
  else
    out.ok("archive", "size",
           std::to_string(used) + " bytes in use" + (cap > 0 ? " of " + std::to_string(cap) : ", no cap"));
  const std::string last_prune =
      stats.value("last_prune", nlohmann::json(nullptr)).is_string() ? stats["last_prune"].get<std::string>() : "";
  // Whole seconds are enough here ("2026-12-07T20:11:17.123456Z" -> "2026-12-07T20:11:17", UTC).
  auto pruned_at = last_prune.empty() ? Result<TimeUs>(Error{kConfigValue, "none"})
                                      : common::parse_time_spec(last_prune.substr(0, 19), now);
  const TimeUs interval = static_cast<TimeUs>(config.archive.prune_interval_s) * kSecond;
  if (!pruned_at)
    out.warn("archive", "retention", "no retention pass recorded yet",
             "attributiond prunes at start and every archive.prune_interval_s: restart it if it runs already");
  else if (now - *pruned_at > 2 * interval + 60 * kSecond)
    out.warn("archive", "retention", "the last retention pass was " + age_text(now, *pruned_at) + " ago",
             "read attributiond's log for 'archive retention failed'");
  else
    out.ok("archive", "retention", "last pass " + age_text(now, *pruned_at) + " ago");
  if (number("dead_lettered") > 0)
    out.warn("archive", "given up", std::to_string(number("dead_lettered")) + " jobs given up after repeated failures",
             "`attrib-show --failed` lists them and why");
}

void check_head_and_archive(const common::Config& config, TimeUs now, Findings& out) {
  auto stub = v1::Attribution::NewStub(common::make_channel(config.epilog.server));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::ArchiveStatsRequest request;
  v1::FleetReport response;
  if (auto signed_ = common::attach_credential(context, config.auth, common::kGetArchiveStats, request); !signed_) {
    out.fail("head", "attributiond", "cannot sign the call: " + signed_.error().message,
             "start munged (systemctl start munge)");
    return;
  }
  const grpc::Status status = stub->GetArchiveStats(&context, request, &response);
  if (!status.ok()) {
    out.fail("head", "attributiond",
             "no answer at " + config.epilog.server + ": " + common::describe_grpc_failure(status),
             status.error_code() == grpc::StatusCode::UNAVAILABLE
                 ? "start attributiond (systemctl start attributiond-head) and check head.listen against epilog.server"
                 : "run attrib-doctor as root or SlurmUser");
    return;
  }
  out.ok("head", "attributiond", "answers at " + config.epilog.server);
  const nlohmann::json stats = nlohmann::json::parse(response.json(), nullptr, false);
  if (stats.is_discarded()) {
    out.fail("head", "archive figures", "not JSON: " + response.json().substr(0, 80), "report this as a bug");
    return;
  }
  judge_archive(config, stats, now, out);
  check_database_disk(config, out);
}

}  // namespace attrib::doctor
