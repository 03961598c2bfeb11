// The head's fan-out against a real gRPC agent with large answers: one over gRPC's
// default 4 MiB arrives whole, one over attrib's own limit does not lose the node
// silently, its coverage says why.
#include "attributiond/pipeline/agent_fanout.h"

#include <filesystem>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "attrib/v1/attrib.grpc.pb.h"
#include "common/auth.h"
#include "common/grpc_limits.h"

namespace fs = std::filesystem;

namespace attrib::pipeline {
namespace {

// Answers every Collect with one event whose line is line_bytes long. Served with gRPC's
// default (unlimited) send size, so the limit that bites is the head's.
class LargeAnswerAgent : public v1::NodeCollector::Service {
 public:
  size_t line_bytes = 0;
  grpc::Status Collect(grpc::ServerContext*, const v1::CollectRequest* request,
                       v1::CollectResponse* response) override {
    v1::Event* event = response->add_events();
    event->set_node(request->node());
    event->set_source("app");
    event->set_line(std::string(line_bytes, 'x'));
    return grpc::Status::OK;
  }
};

TEST(AgentFanout, LargeAnswersArriveAndOneOverTheLimitIsAFailedSourceWithTheReason) {
  const fs::path dir = fs::temp_directory_path() / ("attrib-fanout-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string address = "unix://" + (dir / "agent.sock").string();
  LargeAnswerAgent agent;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials());
  builder.RegisterService(&agent);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_TRUE(server);

  common::AuthConfig auth;
  auth.mode = "none";
  auto authenticator = common::Authenticator::create(auth);
  ASSERT_TRUE(authenticator) << authenticator.error().message;
  common::AgentsConfig agents;
  agents.addresses["n1"] = address;
  agents.deadline_ms = 60000;  // the size, not the clock, must be what fails
  JobFacts job;
  job.job_id = "100";
  job.cluster = "lab";
  job.nodes = {"n1"};
  AgentFanout fanout(agents, *authenticator, "pack-hash");

  agent.line_bytes = 8 << 20;  // twice gRPC's default receive limit
  std::vector<NodeEvidence> large = fanout.collect(job, 0, 1);
  agent.line_bytes = common::kMaxGrpcMessageBytes + 1024;
  std::vector<NodeEvidence> oversized = fanout.collect(job, 0, 1);
  server->Shutdown();
  fs::remove_all(dir);

  ASSERT_EQ(large.size(), 1u);
  ASSERT_EQ(large[0].events.size(), 1u);
  EXPECT_EQ(large[0].events[0].line.size(), size_t{8} << 20);
  ASSERT_EQ(oversized.size(), 1u);
  EXPECT_TRUE(oversized[0].events.empty());
  ASSERT_EQ(oversized[0].coverage.size(), 1u);
  const Coverage& c = oversized[0].coverage[0];
  EXPECT_EQ(c.node, "n1");
  EXPECT_EQ(c.source, "agent");
  EXPECT_EQ(c.status, CoverageStatus::Failed);
  EXPECT_NE(c.detail.find("exceeds attrib's gRPC limit of 64 MiB"), std::string::npos) << c.detail;
}

}  // namespace
}  // namespace attrib::pipeline
