// Archived verdicts written straight into a store's tables, many in one transaction, for
// tests of the listings' pages: archiving thousands of jobs one by one (a transaction and
// an fsync each) would be the test's whole run time.
#pragma once

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "attributiond/store/job_store.h"

namespace attrib::test {

// One written row: what a listing returns, in its order (time, cluster, job).
struct HistoryRow {
  TimeUs time_us = 0;
  std::string cluster, job_id;
  uint32_t owner = 0;
  std::string domain;
  bool operator<(const HistoryRow& o) const {
    return std::tie(time_us, cluster, job_id) < std::tie(o.time_us, o.cluster, o.job_id);
  }
};

// rows verdicts: job 10000+i in cluster "lab" (every third in "other"), owned by uid
// 1000 + i % 3, at about rows / 7 distinct times so that many share a time and the cluster
// and job break the ties; every fourth is NONE (a success). Returns them sorted as a listing orders them.
inline std::vector<HistoryRow> write_history_rows(store::JobStore& store, int rows, TimeUs start_us) {
  std::vector<HistoryRow> written;
  auto status = store.with_db([&](store::Database& db) -> Status {
    store::Transaction tx(db);
    auto job = db.prepare(
        "INSERT INTO jobs (cluster, job_id, status, request, received_us, verdict_json, domain, owner_uid) "
        "VALUES (?1, ?2, 'done', x'', ?3, '{}', ?4, ?5)");
    auto history = db.prepare(
        "INSERT INTO history (cluster, job_id, time_us, user_name, uid, state, domain, rule, action, node, gpu, "
        "affected_nodes, trusted, owner_uid) VALUES (?1, ?2, ?3, 'u' || ?5, ?5, 'FAILED', ?4, '', 'NONE', '', '', "
        "'', 0, ?5)");
    for (int i = 0; i < rows; ++i) {
      // Times out of job order, so the tie-breaks are not the insertion order.
      const TimeUs time = start_us + static_cast<TimeUs>((i * 37L) % rows / 7) * 1000000;
      HistoryRow row{time, i % 3 == 2 ? "other" : "lab", std::to_string(10000 + i),
                     1000u + static_cast<uint32_t>(i % 3), i % 4 == 0 ? "NONE" : "APPLICATION"};
      for (auto* stmt : {&job, &history}) {
        stmt->reset().bind(1, row.cluster).bind(2, row.job_id).bind(3, row.time_us).bind(4, row.domain);
        stmt->bind(5, static_cast<int64_t>(row.owner));
        if (auto s = stmt->run(); !s) return s;
      }
      written.push_back(std::move(row));
    }
    return tx.commit();
  });
  if (!status) throw std::runtime_error(status.error().message);
  std::sort(written.begin(), written.end());
  return written;
}

}  // namespace attrib::test
