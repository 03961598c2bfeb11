// Fleet history and remediation (docs/fleet.md): the repeat-offender policy (threshold,
// window, domains, trust, systemic guard), the history rows JobStore::archive writes, and
// the remediator's decisions against a fake slurmctld (dry-run, rate limit, never twice).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include <gtest/gtest.h>

#include "attributiond/fleet/fleet_report.h"
#include "attributiond/fleet/offender_policy.h"
#include "attributiond/fleet/remediation.h"
#include "attributiond/store/job_store.h"
#include "common/time_spec.h"

namespace fs = std::filesystem;
using namespace attrib;

namespace {

constexpr TimeUs kSecond = 1000000;
constexpr TimeUs kDay = 86400 * kSecond;
constexpr TimeUs kNow = 1796000000LL * kSecond;

store::BlameRow Blame(const std::string& job, const std::string& node, TimeUs time,
                      const std::string& domain = "GPU_HARDWARE", bool trusted = true, const std::string& gpu = "") {
  store::BlameRow row;
  row.cluster = "lab";
  row.job_id = job;
  row.node = node;
  row.gpu = gpu;
  row.domain = domain;
  row.rule = "gpu.fallen_off_bus";
  row.trusted = trusted;
  row.time_us = time;
  return row;
}

std::vector<std::string> OffenderKeys(const fleet::OffenderReport& report) {
  std::vector<std::string> keys;
  for (const fleet::Offender& o : report.offenders) keys.push_back(o.gpu.empty() ? o.node : o.node + "/" + o.gpu);
  return keys;
}

}  // namespace

// ---- the policy ------------------------------------------------------------------------

TEST(FleetPolicy, TwoTrustedHardwareVerdictsMakeARepeatOffenderOneDoesNot) {
  fleet::FleetPolicy policy;  // 2 in 14 days
  std::vector<store::BlameRow> rows = {Blame("1", "n1", kNow - 3 * kDay), Blame("2", "n1", kNow - 1 * kDay),
                                       Blame("3", "n2", kNow - 1 * kDay)};
  auto report = fleet::evaluate_offenders(rows, policy, kNow);
  ASSERT_EQ(OffenderKeys(report), std::vector<std::string>{"n1"});
  EXPECT_EQ(report.offenders[0].verdicts, 2);
  EXPECT_EQ(report.offenders[0].job_ids, (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(report.offenders[0].first_us, kNow - 3 * kDay);
  EXPECT_EQ(report.offenders[0].last_us, kNow - 1 * kDay);
  EXPECT_TRUE(report.systemic.empty());

  policy.offender_threshold = 3;
  EXPECT_TRUE(fleet::evaluate_offenders(rows, policy, kNow).offenders.empty());
}

TEST(FleetPolicy, WindowEdgeIsInclusiveAndOlderVerdictsAreForgotten) {
  fleet::FleetPolicy policy;
  TimeUs edge = kNow - policy.offender_window_s * kSecond;
  EXPECT_EQ(OffenderKeys(fleet::evaluate_offenders({Blame("1", "n1", edge), Blame("2", "n1", kNow)}, policy, kNow)),
            std::vector<std::string>{"n1"});
  EXPECT_TRUE(
      fleet::evaluate_offenders({Blame("1", "n1", edge - 1), Blame("2", "n1", kNow)}, policy, kNow).offenders.empty());
  // Later verdicts than `now` are not yet history.
  EXPECT_TRUE(
      fleet::evaluate_offenders({Blame("1", "n1", kNow), Blame("2", "n1", kNow + 1)}, policy, kNow).offenders.empty());
}

TEST(FleetPolicy, OnlyTrustedVerdictsInOffenderDomainsCount) {
  fleet::FleetPolicy policy;
  std::vector<store::BlameRow> rows = {
      Blame("1", "app", kNow - kDay, "APPLICATION"), Blame("2", "app", kNow, "APPLICATION"),
      Blame("3", "os", kNow - kDay, "HOST_OS"), Blame("4", "os", kNow, "HOST_OS"),
      Blame("5", "weak", kNow - kDay, "GPU_HARDWARE", false), Blame("6", "weak", kNow, "GPU_HARDWARE", false),
      Blame("7", "mixed", kNow - kDay, "GPU_HARDWARE", true), Blame("8", "mixed", kNow, "GPU_HARDWARE", false),
      Blame("9", "fabric", kNow - kDay, "NVLINK_FABRIC"), Blame("10", "fabric", kNow, "HOST_HARDWARE"),
      // AMBIGUOUS and UNATTRIBUTED verdicts name no root cause node.
      Blame("11", "", kNow - kDay, "AMBIGUOUS"), Blame("12", "", kNow, "AMBIGUOUS")};
  EXPECT_EQ(OffenderKeys(fleet::evaluate_offenders(rows, policy, kNow)), std::vector<std::string>{"fabric"});
  EXPECT_FALSE(fleet::counts_for_reputation("GPU_HARDWARE", false, policy));
  EXPECT_TRUE(fleet::counts_for_reputation("GPU_HARDWARE", true, policy));
  EXPECT_FALSE(fleet::counts_for_reputation("AMBIGUOUS", true, policy));

  policy.offender_domains = {"HOST_OS"};
  EXPECT_EQ(OffenderKeys(fleet::evaluate_offenders(rows, policy, kNow)), std::vector<std::string>{"os"});
}

TEST(FleetPolicy, AGpuIsAnOffenderOnlyWhenTheSameGpuIsBlamedAgain) {
  fleet::FleetPolicy policy;
  std::vector<store::BlameRow> rows = {Blame("1", "n1", kNow - 2 * kDay, "GPU_HARDWARE", true, "0000:3b:00.0"),
                                       Blame("2", "n1", kNow - 1 * kDay, "GPU_HARDWARE", true, "0000:86:00.0"),
                                       Blame("3", "n2", kNow - 2 * kDay, "GPU_HARDWARE", true, "0000:3b:00.0"),
                                       Blame("4", "n2", kNow - 1 * kDay, "GPU_HARDWARE", true, "0000:3b:00.0")};
  EXPECT_EQ(OffenderKeys(fleet::evaluate_offenders(rows, policy, kNow)),
            (std::vector<std::string>{"n1", "n2", "n2/0000:3b:00.0"}));
}

// Xid 13/31/43/45 are the application's fault job by job (APPLICATION, rule
// gpu.xid_job_fatal); the same GPU failing that way in several users' jobs is the GPU's.
TEST(FleetPolicy, AppClassXidsOnOneGpuAcrossUsersJobsMakeTheGpuAnOffender) {
  fleet::FleetPolicy policy;
  auto app_xid = [](const std::string& job, const std::string& user, TimeUs time, const std::string& gpu,
                    bool trusted = true) {
    store::BlameRow row = Blame(job, "n1", time, "APPLICATION", trusted, gpu);
    row.rule = "gpu.xid_job_fatal";
    row.user = user;
    return row;
  };
  const std::string gpu = "0000:3b:00.0";
  // One user's bug resubmitted onto the same GPU: not the GPU.
  EXPECT_TRUE(fleet::evaluate_offenders({app_xid("1", "alice", kNow - kDay, gpu), app_xid("2", "alice", kNow, gpu)},
                                        policy, kNow)
                  .offenders.empty());
  // Two users' jobs on the same GPU: the GPU, and never the node as a whole.
  auto report = fleet::evaluate_offenders({app_xid("1", "alice", kNow - kDay, gpu), app_xid("2", "bob", kNow, gpu)},
                                          policy, kNow);
  ASSERT_EQ(OffenderKeys(report), std::vector<std::string>{"n1/" + gpu});
  EXPECT_EQ(report.offenders[0].basis, "app_class_xid");
  EXPECT_EQ(report.offenders[0].job_ids, (std::vector<std::string>{"1", "2"}));
  // Two users' programs alone prove nothing about the GPU: advisory, never acted on.
  EXPECT_TRUE(report.offenders[0].advisory);
  // A trusted hardware verdict that named the same GPU in the window: the fault follows it.
  report = fleet::evaluate_offenders({app_xid("1", "alice", kNow - kDay, gpu), app_xid("2", "bob", kNow, gpu),
                                      Blame("3", "n1", kNow - 2 * kDay, "GPU_HARDWARE", true, gpu)},
                                     policy, kNow);
  ASSERT_EQ(OffenderKeys(report), (std::vector<std::string>{"n1/" + gpu}));
  EXPECT_FALSE(report.offenders[0].advisory);
  // ... on another GPU of the node, it does not.
  report = fleet::evaluate_offenders({app_xid("1", "alice", kNow - kDay, gpu), app_xid("2", "bob", kNow, gpu),
                                      Blame("3", "n1", kNow - 2 * kDay, "GPU_HARDWARE", true, "0000:86:00.0")},
                                     policy, kNow);
  ASSERT_EQ(OffenderKeys(report), (std::vector<std::string>{"n1/" + gpu}));
  EXPECT_TRUE(report.offenders[0].advisory);
  // Different GPUs, an untrusted report, or outside the window: nothing.
  EXPECT_TRUE(fleet::evaluate_offenders(
                  {app_xid("1", "alice", kNow - kDay, gpu), app_xid("2", "bob", kNow, "0000:86:00.0")}, policy, kNow)
                  .offenders.empty());
  EXPECT_TRUE(fleet::evaluate_offenders(
                  {app_xid("1", "alice", kNow - kDay, gpu), app_xid("2", "bob", kNow, gpu, false)}, policy, kNow)
                  .offenders.empty());
  EXPECT_TRUE(fleet::evaluate_offenders({app_xid("1", "alice", kNow - 15 * kDay, gpu), app_xid("2", "bob", kNow, gpu)},
                                        policy, kNow)
                  .offenders.empty());
}

TEST(FleetPolicy, SeventeenNodesInAnHourAreOneSystemicEventAndMarkNone) {
  fleet::FleetPolicy policy;  // more than 16 nodes within 3600 s
  std::vector<store::BlameRow> rows;
  // A fabric event: 17 nodes blamed within 20 minutes; n1 also had an earlier verdict.
  for (int i = 1; i <= 17; ++i)
    rows.push_back(
        Blame("b" + std::to_string(i), "n" + std::to_string(i), kNow - kDay + i * 60 * kSecond, "NVLINK_FABRIC"));
  rows.push_back(Blame("early", "n1", kNow - 5 * kDay));
  // An hour after the burst's second verdict: outside every window holding the burst.
  rows.push_back(Blame("late", "n2", kNow - kDay + 78 * 60 * kSecond));
  auto report = fleet::evaluate_offenders(rows, policy, kNow);
  EXPECT_TRUE(report.offenders.empty()) << "a fleet-wide event condemns no node";
  ASSERT_EQ(report.systemic.size(), 1u);
  EXPECT_EQ(report.systemic[0].nodes, 17);
  EXPECT_EQ(report.systemic[0].from_us, kNow - kDay + 60 * kSecond);
  EXPECT_EQ(report.systemic[0].to_us, kNow - kDay + 17 * 60 * kSecond);
  EXPECT_EQ(report.systemic[0].domain, "NVLINK_FABRIC");

  // 16 nodes are not a systemic event: n1 (early + burst) is a repeat offender then.
  rows.erase(std::remove_if(rows.begin(), rows.end(), [](const store::BlameRow& r) { return r.job_id == "b17"; }),
             rows.end());
  report = fleet::evaluate_offenders(rows, policy, kNow);
  EXPECT_TRUE(report.systemic.empty());
  EXPECT_EQ(OffenderKeys(report), (std::vector<std::string>{"n1", "n2"}));

  // The same 17 nodes spread over more than the systemic window are no burst.
  std::vector<store::BlameRow> spread;
  for (int i = 1; i <= 17; ++i)
    spread.push_back(Blame("s" + std::to_string(i), "n" + std::to_string(i), kNow - kDay + i * 4 * 60 * kSecond));
  EXPECT_TRUE(fleet::evaluate_offenders(spread, policy, kNow).systemic.empty());
}

TEST(FleetPolicy, TimeSpecsAreAgesOrIsoTimes) {
  auto at = [](const std::string& text) {
    auto t = common::parse_time_spec(text, kNow);
    EXPECT_TRUE(t) << text << ": " << (t ? "" : t.error().message);
    return t ? *t : 0;
  };
  EXPECT_EQ(at("7d"), kNow - 7 * kDay);
  EXPECT_EQ(at("24h"), kNow - kDay);
  EXPECT_EQ(at("30m"), kNow - 1800 * kSecond);
  EXPECT_EQ(at("90s"), kNow - 90 * kSecond);
  EXPECT_EQ(at("2w"), kNow - 14 * kDay);
  EXPECT_EQ(at("2026-11-30"), *parse_iso_time("2026-11-30T00:00:00Z"));
  EXPECT_EQ(at("2026-11-30T10:00"), *parse_iso_time("2026-11-30T10:00:00Z"));
  EXPECT_EQ(at("2026-11-30 10:00:05"), *parse_iso_time("2026-11-30T10:00:05Z"));
  EXPECT_EQ(at("2026-11-30T10:00:00+01:00"), *parse_iso_time("2026-11-30T09:00:00Z"));
  for (const char* bad : {"", "7", "d7", "yesterday", "2026-13-01", "7x", "-7d"})
    EXPECT_FALSE(common::parse_time_spec(bad, kNow)) << bad;
}

// ---- history rows in the archive and the remediator ------------------------------------

class FakeDrainer : public slurm::NodeDrainer {
 public:
  struct State {
    std::map<std::string, slurm::NodeDrainState> nodes;
    std::vector<std::pair<std::string, std::string>> drains;  // (node, reason)
    int state_calls = 0;
    bool fail_drain = false;
  };
  explicit FakeDrainer(std::shared_ptr<State> state) : state_(std::move(state)) {}
  Result<slurm::NodeDrainState> state(const std::string& node) override {
    ++state_->state_calls;
    return state_->nodes[node];
  }
  Status drain(const std::string& node, const std::string& reason) override {
    if (state_->fail_drain) return Error{"DRAIN_E_SLURMCTLD", "Invalid user id"};
    state_->drains.emplace_back(node, reason);
    state_->nodes[node] = {true, reason};  // slurmctld now shows it drained
    return ok_status();
  }

 private:
  std::shared_ptr<State> state_;
};

class FleetStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("attrib-fleet-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    Cleanup();
    auto store = store::JobStore::open(path_.string());
    ASSERT_TRUE(store) << store.error().message;
    store_ = std::move(*store);
    slurm_ = std::make_shared<FakeDrainer::State>();
  }
  void TearDown() override {
    store_.reset();
    Cleanup();
  }
  void Cleanup() {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path_.string() + suffix);
  }

  // Archives a verdict whose root cause (when domain is not AMBIGUOUS/UNATTRIBUTED/NONE)
  // is a trusted or untrusted event on node.
  void Archive(const std::string& job, const std::string& node, TimeUs end, const std::string& domain = "GPU_HARDWARE",
               const std::string& action = "DRAIN_NODE", bool trusted = true, const std::string& user = "alice",
               uint32_t uid = 1000, const std::string& rule = "gpu.fallen_off_bus") {
    v1::JobEnded request;
    request.set_job_id(job);
    request.set_user(user);
    request.set_uid(uid);
    request.set_end_time_us(end);
    ASSERT_TRUE(store_->enqueue(request, "lab", end));
    Verdict verdict;
    verdict.job_id = job;
    verdict.cluster = "lab";
    verdict.domain = domain;
    verdict.terminal_state = domain == "NONE" ? "COMPLETED" : "FAILED";
    verdict.recommended_action = action;
    if (domain != "AMBIGUOUS" && domain != "UNATTRIBUTED" && domain != "NONE") {
      RootCause root;
      root.rule = rule;
      root.event.node = node;
      root.event.trusted = trusted;
      root.event.fields = {{"pci", "0000:3b:00"}, {"xid", 79}};
      verdict.root_cause = root;
      verdict.affected_gpus = {{node, "0000:3b:00.0"}};
    }
    if (!node.empty()) verdict.affected_nodes = {node};
    ASSERT_TRUE(store_->archive({"lab", job}, verdict, {}, end + kSecond));
  }

  fleet::Remediator MakeRemediator(const std::string& mode, int per_hour = 4) {
    common::RemediationConfig config;
    config.mode = mode;
    config.max_drains_per_hour = per_hour;
    return fleet::Remediator(config, fleet::FleetPolicy{}, std::make_unique<FakeDrainer>(slurm_));
  }

  std::optional<store::RemediationRecord> Act(fleet::Remediator& remediator, const std::string& job, TimeUs now) {
    auto acted = remediator.after_verdict(*store_, {"lab", job}, now);
    EXPECT_TRUE(acted) << acted.error().message;
    return acted ? *acted : std::nullopt;
  }

  std::vector<store::RemediationRecord> Records() {
    auto records = store_->with_db([](store::Database& db) { return store::remediation_history(db, "", 0); });
    EXPECT_TRUE(records);
    return records ? *records : std::vector<store::RemediationRecord>{};
  }

  fs::path path_;
  std::unique_ptr<store::JobStore> store_;
  std::shared_ptr<FakeDrainer::State> slurm_;
};

TEST_F(FleetStoreTest, ArchiveWritesOneHistoryRowPerVerdictAndOnlyRootCausesBlameANode) {
  Archive("1", "n2", kNow - 2 * kDay);
  Archive("2", "n2", kNow - 1 * kDay, "AMBIGUOUS");
  Archive("3", "", kNow - 1 * kDay, "NONE", "NONE");
  Archive("4", "n3", kNow - 1 * kDay, "APPLICATION", "FIX_APPLICATION", false, "bob", 1001);

  auto history = store_->with_read_db([](store::Database& db) { return store::node_history(db, "n2", 0, "", 100); });
  ASSERT_TRUE(history) << history.error().message;
  ASSERT_EQ(history->size(), 1u) << "the AMBIGUOUS verdict blames no node";
  const store::BlameRow& row = history->front();
  EXPECT_EQ(row.job_id, "1");
  EXPECT_EQ(row.gpu, "0000:3b:00.0");
  EXPECT_EQ(row.domain, "GPU_HARDWARE");
  EXPECT_EQ(row.rule, "gpu.fallen_off_bus");
  EXPECT_EQ(row.state, "FAILED");
  EXPECT_EQ(row.user, "alice");
  EXPECT_EQ(row.uid, 1000u);
  EXPECT_EQ(row.time_us, kNow - 2 * kDay) << "the job's end";
  EXPECT_TRUE(row.trusted);
  EXPECT_TRUE(fleet::counts_for_reputation(row.domain, row.trusted, fleet::FleetPolicy{}));
  EXPECT_EQ(row.action, "DRAIN_NODE");

  auto page = [&](TimeUs since, const std::string& domain) {
    store::VerdictQuery query;
    query.since_us = since;
    query.domain = domain;
    return store_->with_read_db([&](store::Database& db) { return store::verdict_page(db, query); });
  };
  auto listed = page(0, "");
  ASSERT_TRUE(listed);
  std::vector<std::string> ids;
  for (const store::VerdictRow& v : listed->rows) ids.push_back(v.job_id);
  EXPECT_EQ(ids, (std::vector<std::string>{"1", "2", "4"})) << "NONE (successes) only when asked for";
  EXPECT_EQ(page(0, "NONE")->rows.size(), 1u);
  auto since = page(kNow - kDay, "APPLICATION");
  ASSERT_EQ(since->rows.size(), 1u);
  EXPECT_EQ(since->rows[0].user, "bob");
  auto counts = store_->with_read_db([](store::Database& db) { return store::domain_counts(db, {}); });
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->size(), 4u);

  // Non-admins' listings hold their own jobs only, counts included.
  store::VerdictQuery own;
  own.owner = 1001;
  own.cluster = "lab";
  auto bobs = store_->with_read_db([&](store::Database& db) { return fleet::verdict_list_report(db, own, nullptr); });
  ASSERT_TRUE(bobs);
  EXPECT_EQ((*bobs)["verdicts"].size(), 1u);
  EXPECT_EQ((*bobs)["counts"], nlohmann::json::parse(R"([{"domain":"APPLICATION","jobs":1}])"));
}

TEST_F(FleetStoreTest, HistoryIsBackfilledFromArchivedVerdicts) {
  Archive("1", "n2", kNow - 2 * kDay);
  Archive("2", "n2", kNow - 1 * kDay);
  ASSERT_TRUE(store_->with_db([](store::Database& db) { return db.exec("DELETE FROM history"); }));
  store_.reset();
  auto reopened = store::JobStore::open(path_.string());
  ASSERT_TRUE(reopened) << reopened.error().message;
  store_ = std::move(*reopened);
  auto report =
      store_->with_db([](store::Database& db) { return fleet::repeat_offenders(db, fleet::FleetPolicy{}, kNow); });
  ASSERT_TRUE(report);
  EXPECT_EQ(OffenderKeys(*report), (std::vector<std::string>{"n2", "n2/0000:3b:00.0"}));
  auto json = store_->with_db(
      [](store::Database& db) { return fleet::node_history_report(db, "n2", 0, fleet::FleetPolicy{}, kNow, "lab"); });
  ASSERT_TRUE(json);
  EXPECT_EQ((*json)["offender"], true);
  EXPECT_EQ((*json)["counted"], 2);
  EXPECT_EQ((*json)["verdicts"].size(), 2u);
}

TEST_F(FleetStoreTest, RemediationIsOffByDefault) {
  Archive("1", "n2", kNow - kSecond);
  common::RemediationConfig defaults;
  EXPECT_EQ(defaults.mode, "off");
  fleet::Remediator remediator(defaults, fleet::FleetPolicy{}, std::make_unique<FakeDrainer>(slurm_));
  EXPECT_FALSE(remediator.enabled());
  EXPECT_FALSE(Act(remediator, "1", kNow));
  EXPECT_EQ(slurm_->state_calls, 0);
  EXPECT_TRUE(slurm_->drains.empty());
  EXPECT_TRUE(Records().empty());
}

TEST_F(FleetStoreTest, DryRunRecordsWhatItWouldDoAndNeverDrains) {
  Archive("1", "n2", kNow - kSecond);
  auto remediator = MakeRemediator("dry-run");
  auto record = Act(remediator, "1", kNow);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->action, "would_drain");
  EXPECT_EQ(record->node, "n2");
  EXPECT_EQ(record->reason, "attrib: job 1 rule gpu.fallen_off_bus GPU_HARDWARE");
  EXPECT_TRUE(slurm_->drains.empty()) << "dry-run never changes slurmctld";
  EXPECT_FALSE(Act(remediator, "1", kNow)) << "decided once per job";
  ASSERT_EQ(Records().size(), 1u);
  EXPECT_EQ(Records()[0].action, "would_drain");
}

TEST_F(FleetStoreTest, DrainHappensOnceAndAnAlreadyDrainedNodeIsLeftAlone) {
  Archive("1", "n2", kNow - 2 * kSecond);
  Archive("2", "n2", kNow - kSecond);
  auto remediator = MakeRemediator("drain");
  auto first = Act(remediator, "1", kNow);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->action, "drained");
  ASSERT_EQ(slurm_->drains.size(), 1u);
  EXPECT_EQ(slurm_->drains[0].first, "n2");
  EXPECT_EQ(slurm_->drains[0].second.rfind("attrib: job 1 rule gpu.fallen_off_bus", 0), 0u) << slurm_->drains[0].second;
  EXPECT_FALSE(Act(remediator, "1", kNow)) << "a retried attempt does not act again";

  // A second verdict on the drained node (here also a repeat offender) keeps the first reason.
  auto second = Act(remediator, "2", kNow);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->action, "skipped_already_drained");
  EXPECT_NE(second->detail.find("attrib: job 1"), std::string::npos) << second->detail;
  EXPECT_EQ(slurm_->drains.size(), 1u) << "never twice";

  // An admin's own drain is never overwritten either.
  Archive("3", "n3", kNow - kSecond);
  slurm_->nodes["n3"] = {true, "bad DIMM, ticket 42"};
  auto third = Act(remediator, "3", kNow);
  ASSERT_TRUE(third);
  EXPECT_EQ(third->action, "skipped_already_drained");
  EXPECT_EQ(slurm_->drains.size(), 1u);
  EXPECT_EQ(Records().size(), 3u) << "every decision is recorded";
}

TEST_F(FleetStoreTest, WeakOrNonDrainVerdictsDrainNothing) {
  Archive("1", "n1", kNow - kSecond, "GPU_HARDWARE", "DRAIN_NODE", /*trusted=*/false);
  Archive("2", "n2", kNow - kSecond, "AMBIGUOUS", "DRAIN_NODE");
  Archive("3", "n3", kNow - kSecond, "APPLICATION", "FIX_APPLICATION");
  Archive("4", "n4", kNow - kSecond, "GPU_HARDWARE", "RESET_GPU");
  auto remediator = MakeRemediator("drain");
  for (const char* job : {"1", "2", "3", "4"}) EXPECT_FALSE(Act(remediator, job, kNow)) << job;
  EXPECT_TRUE(slurm_->drains.empty());
  EXPECT_TRUE(Records().empty());
}

TEST_F(FleetStoreTest, ARepeatOffenderIsDrainedWithoutADrainVerdict) {
  Archive("1", "n1", kNow - kDay, "GPU_HARDWARE", "RESET_GPU");
  Archive("2", "n1", kNow - kSecond, "GPU_HARDWARE", "RESET_GPU");
  auto remediator = MakeRemediator("drain");
  auto record = Act(remediator, "2", kNow);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->action, "drained");
  EXPECT_EQ(record->reason, "attrib: job 2 rule gpu.fallen_off_bus GPU_HARDWARE repeat offender (2 in 14d)");
  EXPECT_LE(record->reason.size(), 255u);
}

// Two cooperating users (or one person with two accounts) fault the same GPU with their
// own programs: application-class Xids, APPLICATION per job. That GPU is listed as an
// advisory offender and never drained; hardware evidence on it makes it actionable.
TEST_F(FleetStoreTest, AppClassXidsOfTwoUsersNeverDrainWithoutHardwareEvidence) {
  auto app_xid = [&](const std::string& job, TimeUs end, const std::string& user, uint32_t uid) {
    Archive(job, "n1", end, "APPLICATION", "FIX_APPLICATION", true, user, uid, "gpu.xid_job_fatal");
  };
  app_xid("1", kNow - 2 * kSecond, "alice", 1000);
  app_xid("2", kNow - kSecond, "mallory", 1002);
  auto remediator = MakeRemediator("drain");
  EXPECT_FALSE(Act(remediator, "2", kNow)) << "an advisory offender is not acted on";
  EXPECT_TRUE(slurm_->drains.empty());
  auto report =
      store_->with_db([](store::Database& db) { return fleet::repeat_offenders(db, fleet::FleetPolicy{}, kNow); });
  ASSERT_TRUE(report);
  ASSERT_EQ(OffenderKeys(*report), (std::vector<std::string>{"n1/0000:3b:00.0"}));
  EXPECT_TRUE(report->offenders[0].advisory);
  auto json = store_->with_db(
      [](store::Database& db) { return fleet::node_history_report(db, "n1", 0, fleet::FleetPolicy{}, kNow, "lab"); });
  ASSERT_TRUE(json);
  EXPECT_EQ((*json)["offenders"][0]["advisory"], true);

  // A trusted hardware verdict on that GPU (one, below the threshold by itself), then a
  // third user's application-class Xid on it: the fault follows the GPU.
  Archive("3", "n1", kNow - kDay, "GPU_HARDWARE", "RESET_GPU");
  app_xid("4", kNow, "carol", 1003);
  auto record = Act(remediator, "4", kNow + kSecond);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->action, "drained");
  EXPECT_NE(record->reason.find("repeat offender gpu 0000:3b:00.0"), std::string::npos) << record->reason;
}

TEST_F(FleetStoreTest, DrainsAreRateLimited) {
  Archive("1", "n1", kNow - 3 * kSecond);
  Archive("2", "n2", kNow - 2 * kSecond);
  Archive("3", "n3", kNow - kSecond);
  auto remediator = MakeRemediator("drain", /*per_hour=*/2);
  EXPECT_EQ(Act(remediator, "1", kNow)->action, "drained");
  EXPECT_EQ(Act(remediator, "2", kNow)->action, "drained");
  auto third = Act(remediator, "3", kNow);
  EXPECT_EQ(third->action, "skipped_rate_limited");
  EXPECT_EQ(slurm_->drains.size(), 2u);
  // An hour later the budget is back (for new verdicts; job 3 was decided).
  Archive("4", "n4", kNow + 3600 * kSecond);
  EXPECT_EQ(Act(remediator, "4", kNow + 3601 * kSecond)->action, "drained");
}

TEST_F(FleetStoreTest, VerdictsInsideASystemicEventDrainNothing) {
  auto remediator = MakeRemediator("drain", /*per_hour=*/100);
  for (int i = 1; i <= 17; ++i) Archive(std::to_string(i), "n" + std::to_string(i), kNow - (20 - i) * kSecond);
  auto record = Act(remediator, "17", kNow);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->action, "skipped_systemic");
  EXPECT_NE(record->detail.find("17 nodes"), std::string::npos) << record->detail;
  EXPECT_TRUE(slurm_->drains.empty());
}

TEST_F(FleetStoreTest, AFailedDrainIsRecordedAndMayBeRetried) {
  Archive("1", "n1", kNow - kSecond);
  slurm_->fail_drain = true;
  auto remediator = MakeRemediator("drain");
  auto failed = Act(remediator, "1", kNow);
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->action, "failed");
  EXPECT_NE(failed->detail.find("Invalid user id"), std::string::npos);
  slurm_->fail_drain = false;
  EXPECT_EQ(Act(remediator, "1", kNow)->action, "drained");
}

TEST(FleetReason, StartsWithAttribNamesJobAndRuleAndFitsSlurm) {
  EXPECT_EQ(fleet::drain_reason("4242_7", "gpu.fallen_off_bus", "GPU_HARDWARE"),
            "attrib: job 4242_7 rule gpu.fallen_off_bus GPU_HARDWARE");
  std::string long_rule(400, 'r');
  std::string reason = fleet::drain_reason("1", long_rule, "GPU_HARDWARE", "x\ny");
  EXPECT_EQ(reason.size(), 255u);
  EXPECT_EQ(reason.find('\n'), std::string::npos);
}
