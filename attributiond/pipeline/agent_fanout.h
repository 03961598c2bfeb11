// The head's side of node agents: ask every allocated node's agent for its evidence,
// concurrently (bounded), each call with its own deadline. An agent that cannot be
// reached or does not answer in time becomes coverage (`failed` / `timeout`, with the
// reason), never a lost or stalled job.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "attrib/v1/attrib.grpc.pb.h"
#include "attributiond/pipeline/node_evidence.h"
#include "common/auth.h"
#include "common/config.h"

namespace attrib::pipeline {

class AgentFanout {
 public:
  // auth: under MUNGE each Collect carries a fresh credential, and an answer counts only
  // when it is signed by auth.agent_user (otherwise coverage `failed`, "unauthenticated").
  AgentFanout(common::AgentsConfig config, std::shared_ptr<const common::Authenticator> auth,
              std::string ruleset_hash);

  // One NodeEvidence per node that has an agent address; nodes without one are skipped
  // (the head's own collectors cover them).
  // raw_max_bytes: each agent also returns the lines it read, up to this much text.
  std::vector<NodeEvidence> collect(const JobFacts& job, TimeUs window_start, TimeUs window_end,
                                    uint64_t raw_max_bytes = 0);

 private:
  NodeEvidence collect_one(const JobFacts& job, const std::string& node, const std::string& address,
                           TimeUs window_start, TimeUs window_end, uint64_t raw_max_bytes);
  std::shared_ptr<grpc::Channel> channel(const std::string& address);

  common::AgentsConfig config_;
  std::shared_ptr<const common::Authenticator> auth_;
  std::string ruleset_hash_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<grpc::Channel>> channels_;  // reused across jobs
};

}  // namespace attrib::pipeline
