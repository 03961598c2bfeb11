// The JobEnded request handling of the head: the message's bytes as gRPC or a spool file
// delivers them, AttributionService::SubmitJobEnded (UTF-8 repair, the durable queue, a
// second report of the same job filling the gaps of the first), common/spool.h
// read_spool_file, the queue handing the job to a worker (JobStore::next_due decodes it),
// and the worker's attempt, pipeline::attribute_once: scoping (slurmdbd lag, then the
// hook's own facts), the node list through Slurm's hostlist parser, the output-path
// patterns, correlation, the archive, and the comment merged into the user's --comment.
//
// Input: a serialized v1::JobEnded. The SQLite store is in memory; Slurm's accounting is
// a stand-in whose record never becomes final (the worker waits, then attributes from the
// hook's facts), and whose Comment starts as the message's job_name (user bytes, as a
// user's --comment is).
#include "attrib/v1/attrib.pb.h"
#include "attributiond/head/attribution_service.h"
#include "attributiond/pipeline/attribution.h"
#include "common/auth.h"
#include "common/config.h"
#include "common/spool.h"
#include "core/clock.h"
#include "core/error_codes.h"
#include "fuzz/fuzz_support.h"
#include "slurm/slurmdbd_client.h"

namespace attrib::fuzz {
namespace {

// slurmdbd whose record of the job never becomes final, keeping the Comment written to it.
class NonFinalAccounting final : public slurm::Accounting {
 public:
  explicit NonFinalAccounting(std::string comment) : comment_(std::move(comment)) {}
  Result<slurm::JobRecordFacts> read_job(const std::string&, const std::string&) override {
    slurm::JobRecordFacts record;
    record.comment = comment_;
    return record;
  }
  Status write_comment(const std::string&, const std::string&, const std::string& comment) override {
    comment_ = comment;
    return ok_status();
  }

 private:
  std::string comment_;
};

}  // namespace

int job_ended(const uint8_t* data, size_t size) {
  static const bool quiet = (quiet_logs(), true);
  (void)quiet;
  static const auto auth = common::Authenticator::none();
  static const auto pack = shipped_pack();
  static MemFile* spool = new MemFile("spool");

  v1::JobEnded request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  auto store = store::JobStore::open(":memory:");
  require(store.ok(), "an in-memory job store does not open");

  // EpilogSlurmctld's report first (no state, no times), then jobcomp/script's.
  head::AttributionService service(
      **store, "lab", [] {}, auth);
  v1::JobEnded first = request;
  first.clear_state();
  first.clear_start_time_us();
  first.clear_end_time_us();
  first.clear_spank_options();
  v1::SubmitResponse response;
  const grpc::Status a = service.SubmitJobEnded(nullptr, &first, &response);
  const grpc::Status b = service.SubmitJobEnded(nullptr, &request, &response);
  const bool valid = !request.job_id().empty() && slurm::is_hostlist(request.node_list()) &&
                     request.hook() != v1::HOOK_KIND_SWEEP;
  require(a.ok() == valid && b.ok() == a.ok(),
          "SubmitJobEnded accepts a job without an id or a hostlist, or a report of the sweep's kind");
  if (b.ok()) require(response.duplicate(), "the second report of a job is not a duplicate");

  // The same bytes as a spool file the hook left behind.
  spool->write(as_text(data, size));
  if (auto spooled = common::read_spool_file(spool->path()))
    (void)head::accept_hook_report(**store, *spooled, "lab", wall_clock_us());

  // A worker's attempts: the record is not final yet (rescheduled), then too long (the
  // hook's facts).
  const common::HeadConfig config;
  const std::string cluster = "lab";
  const std::vector<std::unique_ptr<collectors::Collector>> no_collectors;
  pipeline::AttributionContext context{config, cluster, pack, no_collectors, nullptr, **store};
  NonFinalAccounting accounting(request.job_name());
  TimeUs now = wall_clock_us() + 1000000;
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto due = (*store)->next_due(now, {});
    require(due.ok(), "next_due fails on the in-memory store");
    if (!due->has_value()) break;
    (void)pipeline::attribute_once(context, accounting, **due, now);
    const store::JobKey& key = (*due)->key;
    if (auto record = (*store)->lookup(key.cluster, key.job_id, key.run); record.ok() && record->has_value())
      (void)common::job_owner_uid((*record)->uid, (*record)->user);
    now += (config.scope_max_wait_s + 60) * 1000000LL;
  }
  return 0;
}

}  // namespace attrib::fuzz

ATTRIB_FUZZ_TARGET(job_ended)
