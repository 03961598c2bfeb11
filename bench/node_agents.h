// Node journals and node agents for the benchmarks that fan out (fanout_bench.cpp,
// archive_bench.cpp): journal files written by the real systemd-journal-remote, each
// served by a real node agent (NodeCollectService behind its own gRPC server on
// 127.0.0.1, as `attributiond --role node` serves it) with the real journald collector.
#pragma once

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "attributiond/node/node_collect_service.h"
#include "collectors/registry.h"
#include "common/config.h"
#include "core/types.h"
#include "rules/rule_pack.h"

namespace attrib::bench {

inline std::string node_name(int i) {
  char name[16];
  std::snprintf(name, sizeof name, "n%03d", i + 1);
  return name;
}

// journalctl's export format for `entries` background entries between start and end
// (µs), piped into systemd-journal-remote, then `extra_message` (a kernel line, or with
// !extra_kernel a line of the python3 job's output) `copies` times spread over the window.
// Returns false when it fails.
inline bool write_journal(const std::filesystem::path& file, int entries, TimeUs start, TimeUs end,
                          const std::string& extra_message, int copies = 1, bool extra_kernel = true) {
  const std::string cmd = std::string(ATTRIB_BENCH_JOURNAL_REMOTE) + " --output=" + file.string() + " - 2>/dev/null";
  FILE* pipe = ::popen(cmd.c_str(), "w");
  if (!pipe) return false;
  const std::string boot = "0123456789abcdef0123456789abcdef";
  const TimeUs step = std::max<TimeUs>(1, (end - start) / std::max(1, entries + 1));
  auto entry = [&](TimeUs t, bool kernel, const std::string& message) {
    std::fprintf(pipe,
                 "__REALTIME_TIMESTAMP=%" PRId64 "\n__MONOTONIC_TIMESTAMP=%" PRId64
                 "\n_BOOT_ID=%s\n_HOSTNAME=node\n_TRANSPORT=%s\nSYSLOG_IDENTIFIER=%s\n_UID=%s\nPRIORITY=6\n"
                 "MESSAGE=%s\n\n",
                 t, static_cast<int64_t>(t - start + 86400000000ll), boot.c_str(), kernel ? "kernel" : "stdout",
                 kernel ? "kernel" : "python3", kernel ? "0" : "1000", message.c_str());
  };
  for (int i = 0; i < entries; ++i) {
    const TimeUs t = start + step * (i + 1);
    if (i % 5 == 4) {
      entry(t, false,
            "{'loss': 2." + std::to_string(i) + ", 'grad_norm': 0.91, 'learning_rate': 1e-04, 'epoch': 0." +
                std::to_string(i % 100) + "}");
    } else if (i % 5 == 0) {
      entry(t, true,
            "audit: type=1400 audit(1796025601." + std::to_string(i % 1000) + ":" + std::to_string(i) +
                "): apparmor=\"ALLOWED\" operation=\"open\" profile=\"snap.lxd.daemon\" name=\"/proc/" +
                std::to_string(1000 + i) + "/stat\" pid=" + std::to_string(1000 + i) + " comm=\"lxd\"");
    } else if (i % 5 == 1) {
      entry(t, true, "IPv4: martian source 10.1." + std::to_string(i % 250) + ".7 from 10.2.3.4, on dev ib0");
    } else if (i % 5 == 2) {
      entry(t, true, "device veth" + std::to_string(1000000 + i) + " entered promiscuous mode");
    } else {
      entry(t, true,
            "perf: interrupt took too long (" + std::to_string(2500 + i % 100) +
                " > 2495), lowering kernel.perf_event_max_sample_rate to 79750");
    }
  }
  if (!extra_message.empty()) {
    const TimeUs extra_step = std::max<TimeUs>(1, (end - start) / 2 / std::max(1, copies));
    for (int c = 0; c < copies; ++c)
      entry(start + (end - start) / 2 + extra_step * c, extra_kernel, extra_message);
  }
  return ::pclose(pipe) == 0;
}

struct Agent {
  std::unique_ptr<node::NodeCollectService> service;
  std::unique_ptr<grpc::Server> server;
};

// One agent per node, node i reading journal_root/<node_name(i)>; their addresses go
// into config.head.agents. Empty on failure (the reason printed).
inline std::vector<Agent> start_agents(const std::filesystem::path& journal_root, int nodes,
                                       const std::shared_ptr<const rules::RulePack>& pack, common::Config& config) {
  std::vector<Agent> agents;
  for (int i = 0; i < nodes; ++i) {
    YAML::Node options;
    options["directory"] = (journal_root / node_name(i)).string();
    options["match_hostname"] = false;  // a node's own journal
    options["app_identifiers"].push_back("python3");
    auto journald = collectors::create_collector("journald", options);
    if (!journald) {
      std::fprintf(stderr, "journald: %s\n", journald.error().message.c_str());
      return {};
    }
    std::vector<std::unique_ptr<collectors::Collector>> list;
    list.push_back(std::move(*journald));
    Agent agent;
    agent.service =
        std::make_unique<node::NodeCollectService>(node_name(i), pack, std::move(list), common::Authenticator::none());
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(agent.service.get());
    builder.SetMaxSendMessageSize(-1);
    agent.server = builder.BuildAndStart();
    if (!agent.server || port == 0) {
      std::fprintf(stderr, "agent %d did not start\n", i);
      return {};
    }
    config.head.agents.addresses[node_name(i)] = "127.0.0.1:" + std::to_string(port);
    agents.push_back(std::move(agent));
  }
  return agents;
}

}  // namespace attrib::bench
