#include "attributiond/pipeline/agent_fanout.h"

#include <atomic>
#include <chrono>
#include <thread>

#include <spdlog/spdlog.h>

#include "attributiond/ops/log_context.h"
#include "common/auth.h"
#include "common/grpc_limits.h"

namespace attrib::pipeline {
namespace {

NodeEvidence missing(const std::string& node, CoverageStatus status, TimeUs start, TimeUs end,
                     const std::string& detail) {
  NodeEvidence evidence;
  evidence.coverage.push_back({node, "agent", status, 0, 0, start, end, detail});
  return evidence;
}

}  // namespace

AgentFanout::AgentFanout(common::AgentsConfig config, std::shared_ptr<const common::Authenticator> auth,
                         std::string ruleset_hash)
    : config_(std::move(config)), auth_(std::move(auth)), ruleset_hash_(std::move(ruleset_hash)) {}

std::shared_ptr<grpc::Channel> AgentFanout::channel(const std::string& address) {
  std::lock_guard lock(mutex_);
  auto& slot = channels_[address];
  if (!slot) slot = common::make_channel(address);
  return slot;
}

NodeEvidence AgentFanout::collect_one(const JobFacts& job, const std::string& node, const std::string& address,
                                      TimeUs window_start, TimeUs window_end, uint64_t raw_max_bytes) {
  const std::string& job_id = job.job_id;
  ops::LogScope log_scope(job_id, node);  // runs on a fan-out thread
  auto stub = v1::NodeCollector::NewStub(channel(address));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(config_.deadline_ms));
  v1::CollectRequest request;
  request.set_job_id(job_id);
  request.set_cluster(job.cluster);
  request.set_node(node);
  request.set_window_start_us(window_start);
  request.set_window_end_us(window_end);
  request.set_raw_max_bytes(raw_max_bytes);
  if (job.uid) request.set_owner_uid(*job.uid);
  request.set_nonce(common::random_nonce());  // the signed answer is bound to this call alone
  if (auto signed_ = auth_->sign_request(context, common::kCollect, request); !signed_)
    return missing(node, CoverageStatus::Failed, window_start, window_end,
                   "agent at " + address + " not asked: " + signed_.error().message);
  v1::CollectResponse response;
  grpc::Status status = stub->Collect(&context, request, &response);
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED)
    return missing(node, CoverageStatus::Timeout, window_start, window_end,
                   "agent at " + address + " did not answer within " + std::to_string(config_.deadline_ms) + " ms");
  if (!status.ok())
    return missing(node, CoverageStatus::Failed, window_start, window_end,
                   "agent at " + address + ": " + common::describe_grpc_failure(status));
  // Whoever holds the port answered: only an answer signed by the agent's uid is evidence.
  if (auto genuine = auth_->verify_answer(context, common::kCollect, request, response); !genuine) {
    spdlog::warn("job {}: answer from {} for node {} discarded: {}", job_id, address, node, genuine.error().message);
    return missing(node, CoverageStatus::Failed, window_start, window_end,
                   "unauthenticated: the answer from " + address + " was discarded: " + genuine.error().message);
  }
  if (response.ruleset_hash() != ruleset_hash_)
    spdlog::warn("job {}: agent {} runs rule pack {} (head: {})", job_id, node, response.ruleset_hash(), ruleset_hash_);
  NodeEvidence evidence = from_proto(response, node);
  // An agent speaks only for its own node.
  std::erase_if(evidence.events, [&](const Event& e) { return e.node != node; });
  std::erase_if(evidence.coverage, [&](const Coverage& c) { return c.node != node; });
  return evidence;
}

std::vector<NodeEvidence> AgentFanout::collect(const JobFacts& job, TimeUs window_start, TimeUs window_end,
                                               uint64_t raw_max_bytes) {
  std::vector<std::pair<std::string, std::string>> targets;  // (node, address)
  for (const auto& node : job.nodes)
    if (auto address = config_.address_for(node); !address.empty()) targets.emplace_back(node, address);

  std::vector<NodeEvidence> results(targets.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < targets.size(); i = next++)
      results[i] = collect_one(job, targets[i].first, targets[i].second, window_start, window_end, raw_max_bytes);
  };
  size_t thread_count = std::min<size_t>(static_cast<size_t>(config_.concurrency), targets.size());
  std::vector<std::jthread> threads;
  for (size_t t = 1; t < thread_count; ++t) threads.emplace_back(work);
  work();           // this thread takes a share too
  threads.clear();  // joins
  return results;
}

}  // namespace attrib::pipeline
