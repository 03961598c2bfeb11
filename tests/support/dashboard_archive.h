// A verdict archive with known contents for the dashboard's tests (unit and browser):
// real verdicts, made by the real rules engine from golden fixtures (tests/fixtures/),
// stored by the real JobStore exactly as the head daemon stores them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "attributiond/store/job_store.h"
#include "rules/engine.h"
#include "rules/evidence/golden.h"

namespace attrib::test {

struct ArchivedJob {
  std::string job_id;
  std::string fixture;  // directory under tests/fixtures
  std::string user;
  uint32_t uid = 0;
  TimeUs ended_us = 0;  // when the head received the job's end (the dashboard's time)
};

struct ArchiveUsers {
  std::string first = "alice";
  uint32_t first_uid = 2001;
  std::string second = "bob";
  uint32_t second_uid = 2002;
};

// The known set (cluster "lab"), newest last in this list's comments:
//   5001 GPU_HARDWARE gpu017 (first user, 2 h ago)   5002 GPU_HARDWARE gpu017 (second, 26 h)
//   5003 APPLICATION (first, 3 h)    5004 NETWORK gpu002 (second, 5 h)   5005 SCHEDULER (first, 30 h)
//   5006 NONE (second, 1 h)          5007 AMBIGUOUS (first, 50 h)        5008 GPU_HARDWARE gpu007 (second, 4 d)
//   5009 STORAGE (first, 40 d: outside a 30-day window)
// gpu017 is blamed twice within two weeks: a repeat offender under the default policy.
inline std::vector<ArchivedJob> known_jobs(TimeUs now_us, const ArchiveUsers& users = {}) {
  constexpr TimeUs kHour = 3600LL * 1000000;
  const auto& a = users.first;
  const auto& b = users.second;
  return {
      {"5001", "xid79_nccl_timeouts", a, users.first_uid, now_us - 2 * kHour},
      {"5002", "xid79_nccl_timeouts", b, users.second_uid, now_us - 26 * kHour},
      {"5003", "cuda_oom_rank2_watchdogs", a, users.first_uid, now_us - 3 * kHour},
      {"5004", "ib_port_down_nccl_status12", b, users.second_uid, now_us - 5 * kHour},
      {"5005", "timeout_plain", a, users.first_uid, now_us - 30 * kHour},
      {"5006", "clean_success_noise", b, users.second_uid, now_us - 1 * kHour},
      {"5007", "ambiguous_aer_fatal_xid79", a, users.first_uid, now_us - 50 * kHour},
      {"5008", "xid48_ecc_cuda_symptom", b, users.second_uid, now_us - 96 * kHour},
      {"5009", "lustre_evicted_hung_task", a, users.first_uid, now_us - 40 * 24 * kHour},
  };
}

// Writes jobs into the SQLite file at database (created if needed): enqueue as a hook
// would, then archive the fixture's verdict with every event it weighed, then done.
inline Status write_archive(const std::string& database, const std::filesystem::path& fixtures_dir,
                            const std::filesystem::path& pack_dir, const std::vector<ArchivedJob>& jobs) {
  auto pack = rules::load_rule_pack({pack_dir, {}});
  if (!pack) return pack.error();
  auto store = store::JobStore::open(database);
  if (!store) return store.error();
  for (const auto& job : jobs) {
    auto golden = rules::check_golden_fixture(fixtures_dir / job.fixture, *pack);
    if (!golden) return golden.error();
    Verdict verdict = golden->verdict;
    verdict.job_id = job.job_id;
    verdict.cluster = "lab";
    v1::JobEnded request;
    request.set_job_id(job.job_id);
    request.set_cluster("lab");
    std::string node_list;
    for (const auto& node : verdict.nodes) node_list += (node_list.empty() ? "" : ",") + node;
    request.set_node_list(node_list);
    request.set_state(verdict.terminal_state);
    request.set_exit_code(verdict.exit_code);
    request.set_user(job.user);
    request.set_uid(job.uid);
    request.set_end_time_us(job.ended_us);
    request.set_hook_time_us(job.ended_us);
    std::vector<Event> events;  // each once, by id (the events table's key)
    auto add = [&events](const Event& event) {
      for (const auto& known : events)
        if (known.id == event.id) return;
      events.push_back(event);
    };
    if (verdict.root_cause) add(verdict.root_cause->event);
    for (const auto& symptom : verdict.symptoms) add(symptom.event);
    for (const auto& event : verdict.unexplained) add(event);
    const store::JobKey key{"lab", job.job_id};
    if (auto queued = (*store)->enqueue(request, "lab", job.ended_us); !queued) return queued.error();
    if (auto s = (*store)->archive(key, verdict, events, job.ended_us + 1000000); !s) return s;
    if (auto s = (*store)->mark_done(key, job.ended_us + 2000000); !s) return s;
  }
  return ok_status();
}

}  // namespace attrib::test
