// attrib-doctor's checks of the node agents (head.agents), each asked as the head asks it:
// a signed Collect over the last minute for a job id no job has, whose answer must be
// signed by auth.agent_user and tells the agent's pack, clock, sources and NVSwitches.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attrib/v1/attrib.pb.h"
#include "common/config.h"
#include "core/types.h"
#include "tools/attrib-doctor/findings.h"

namespace attrib::doctor {

struct HeadPack {
  std::string version;
  std::string hash;
};

// only_node: check that node alone (--node); otherwise every configured one (the
// addresses listed, or with address_template every node slurmctld knows).
void check_agents(const common::Config& config, const std::optional<std::string>& only_node, Findings& out);

// One agent's answer judged against the head: for its tests.
void judge_agent_answer(const std::string& node, const std::string& address, const v1::CollectResponse& answer,
                        const HeadPack& head, TimeUs answered_at, Findings& out);

}  // namespace attrib::doctor
