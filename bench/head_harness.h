// The head daemon in-process for the benchmarks, as tests/unit/attributiond/head/head_daemon_test.cpp
// runs it: real gRPC server, real SQLite queue and archive, the shipped rule pack, real
// collectors and node agents. Only slurmdbd is replaced, through the daemon's own
// Accounting seam, by records served from a recorded bundle's job.json (the facts a
// real job left), so thousands of jobs can end without a Slurm cluster running them.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include "attrib/v1/attrib.grpc.pb.h"
#include "attributiond/head/head_daemon.h"
#include "attributiond/ops/allocator.h"
#include "bench/bench_util.h"
#include "collectors/registry.h"
#include "common/grpc_limits.h"
#include "rules/evidence/bundle.h"

namespace attrib::bench {

// Accounting records: the template job's facts under each job id asked for, final at the
// first read (slurmdbd's lag is benchmark 6's subject, not the daemon's). Comments are
// kept in memory, with the time each job's was written (the end of its attribution).
struct RecordedAccounting {
  JobFacts facts;  // from the bundle's job.json
  std::mutex mutex;
  std::map<std::string, std::string> comments;
  std::map<std::string, double> comment_time;
  std::atomic<uint64_t> reads{0}, writes{0}, comment_batches{0};
};

class BundleAccounting : public slurm::Accounting {
 public:
  explicit BundleAccounting(std::shared_ptr<RecordedAccounting> state) : state_(std::move(state)) {}
  Result<slurm::JobRecordFacts> read_job(const std::string& cluster, const std::string& job_id) override {
    ++state_->reads;
    slurm::JobRecordFacts record;
    record.facts = state_->facts;
    record.facts.job_id = job_id;
    record.facts.cluster = cluster;
    record.final = true;
    record.sole_row = true;
    std::lock_guard lock(state_->mutex);  // the daemon reads its comment back to verify it
    if (auto it = state_->comments.find(job_id); it != state_->comments.end()) record.comment = it->second;
    return record;
  }
  Status write_comment(const std::string&, const std::string& job_id, const std::string& comment) override {
    const double t = now_s();
    std::lock_guard lock(state_->mutex);
    state_->comments[job_id] = comment;
    state_->comment_time[job_id] = t;
    ++state_->writes;
    return ok_status();
  }
  // As slurmdbd's accounting serves a batch: every write, then one read-back of them all.
  std::vector<Status> write_comments(const std::vector<slurm::CommentWrite>& writes) override {
    std::vector<Status> out;
    for (const slurm::CommentWrite& write : writes)
      out.push_back(write_comment(write.cluster, write.job_id, write.comment));
    ++state_->reads;
    ++state_->comment_batches;
    std::lock_guard lock(state_->mutex);
    for (size_t i = 0; i < writes.size(); ++i)
      if (out[i] && state_->comments[writes[i].job_id] != writes[i].comment)
        out[i] = slurm::comment_not_kept(state_->comments[writes[i].job_id]);
    return out;
  }

 private:
  std::shared_ptr<RecordedAccounting> state_;
};

// A fresh work directory (removed first).
inline std::filesystem::path work_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("attrib-bench-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "spool");
  return dir;
}

// Throughput configuration: auth.mode none (no MUNGE credential per RPC), a unix socket.
inline common::Config head_config(const std::filesystem::path& dir, const std::string& pack_dir) {
  common::Config config;
  config.cluster = "lab";
  config.auth.mode = "none";
  config.head.listen = {"unix://" + (dir / "attributiond.sock").string()};
  config.head.database = (dir / "attrib.db").string();
  config.head.spool_dir = (dir / "spool").string();
  config.head.scope_poll_interval_ms = 20;
  config.head.retry_backoff_s = 1;
  config.rules_pack_dir = pack_dir;
  return config;
}

inline std::unique_ptr<head::HeadDaemon> start_head(const common::Config& config,
                                                    std::vector<std::unique_ptr<collectors::Collector>> list,
                                                    std::shared_ptr<RecordedAccounting> accounting) {
  spdlog::set_level(spdlog::level::warn);  // one info line per job would be timed too
  ops::keep_freed_memory_for_reuse();      // as attributiond's main does
  auto store = store::JobStore::open(config.head.database);
  if (!store) throw std::runtime_error("job store: " + store.error().message);
  auto pack = rules::load_rule_pack({config.rules_pack_dir, {}});
  if (!pack) throw std::runtime_error("rule pack: " + pack.error().message);
  auto daemon = std::make_unique<head::HeadDaemon>(config, std::move(*store), *pack, std::move(list), [accounting] {
    return std::make_unique<BundleAccounting>(accounting);
  });
  if (auto started = daemon->start(); !started) throw std::runtime_error("head daemon: " + started.error().message);
  return daemon;
}

// The queue depth the daemon itself exports (attrib_queue_depth on /metrics).
inline double queue_depth(const head::HeadDaemon& daemon) {
  const std::string text = daemon.metrics_registry().render();
  const std::string key = "\nattrib_queue_depth ";
  auto at = text.find(key);
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + key.size()));
}

// With attrib's own message limit, as attrib-show has it: a wide job's verdict passes
// gRPC's default 4 MiB.
inline std::unique_ptr<v1::Attribution::Stub> client(const std::string& address) {
  return v1::Attribution::NewStub(common::make_channel(address));
}

// GetVerdict status of one job ("done", "pending", ...; "" when unknown/failed).
inline std::string verdict_status(v1::Attribution::Stub& stub, const std::string& job_id, std::string* json = nullptr) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::GetVerdictRequest request;
  request.set_job_id(job_id);
  v1::GetVerdictResponse response;
  grpc::Status status = stub.GetVerdict(&context, request, &response);
  if (!status.ok()) {
    if (json) *json = status.error_message();
    return "";
  }
  if (json) *json = response.verdict_json();
  return response.status();
}

// Submits the job and waits (GetVerdict every 2 ms) until its verdict is archived (status
// archived or done: the comment write may still be pending). Returns the seconds from the
// submit; the verdict JSON in *json. Throws when not accepted or not archived in time.
inline double submit_until_archived(v1::Attribution::Stub& stub, const v1::JobEnded& job, std::string* json,
                                    double timeout_s = 600) {
  const double t0 = now_s();
  {
    grpc::ClientContext context;
    v1::SubmitResponse response;
    if (!stub.SubmitJobEnded(&context, job, &response).ok() || !response.accepted())
      throw std::runtime_error("JobEnded of job " + job.job_id() + " not accepted");
  }
  std::string status;
  auto archived = [](const std::string& st) { return st == "archived" || st == "done"; };
  while (!archived(status = verdict_status(stub, job.job_id(), json)) && now_s() - t0 < timeout_s)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  if (!archived(status)) throw std::runtime_error("job " + job.job_id() + " not archived in time");
  return now_s() - t0;
}

// Reads a recorded bundle's job.json (the real bundle reader) for the accounting template.
inline JobFacts bundle_facts(const std::filesystem::path& bundle_dir) {
  auto bundle = rules::open_bundle(bundle_dir);
  if (!bundle) throw std::runtime_error("bundle " + bundle_dir.string() + ": " + bundle.error().message);
  return bundle->job;
}

}  // namespace attrib::bench
