// The node agent's Collect request handling: the request's bytes as gRPC delivers them,
// NodeCollectService::Collect (the node and window checks, the `sources` selection, the
// collectors over the requested window, extraction with the shipped pack, the response),
// and the head's side of the same RPC, the response's bytes through pipeline::from_proto,
// the agent-speaks-only-for-its-node filter and correlation into a verdict and a comment.
//
// Input: a serialized v1::CollectRequest (or v1::CollectResponse: the bytes are tried as
// both). The agent serves node gpu017; its one collector does not read files: it hands
// over three real kernel lines of tests/fixtures/xid79_nccl_timeouts/gpu017 spread over
// whatever window the request asks for.
#include "attrib/v1/attrib.pb.h"
#include "attributiond/node/node_collect_service.h"
#include "attributiond/pipeline/node_evidence.h"
#include "collectors/coverage_report.h"
#include "common/auth.h"
#include "core/comment.h"
#include "core/verdict.h"
#include "fuzz/fuzz_support.h"
#include "rules/evidence/bundle_export.h"

namespace attrib::fuzz {
namespace {

constexpr const char* kNode = "gpu017";

class FixtureCollector final : public collectors::Collector {
 public:
  std::string name() const override { return "kmsg"; }
  std::vector<Coverage> collect(const collectors::CollectRequest& request, const collectors::LineSink& sink) override {
    static const char* const kLines[] = {
        "NVRM: GPU at PCI:0000:3b:00: GPU-660d987e-5b28-3bf6-2a2d-1d5ecae7f6df",
        "NVRM: GPU Board Serial Number: 0322716036227",
        "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    };
    collectors::CoverageReport report(request, {"kernel"});
    // Start, middle and end of the window, without overflowing on any window.
    const uint64_t span = static_cast<uint64_t>(request.window_end) - static_cast<uint64_t>(request.window_start);
    const TimeUs times[] = {request.window_start, request.window_start + static_cast<TimeUs>(span / 2),
                            request.window_end};
    for (size_t i = 0; i < 3; ++i) {
      LogLine line{request.node, "kernel", times[i], report.next_seq("kernel"), true, kLines[i]};
      sink(line);
    }
    return report.finish(std::nullopt);
  }
};

}  // namespace

int collect_request(const uint8_t* data, size_t size) {
  static const bool quiet = (quiet_logs(), true);
  (void)quiet;
  static node::NodeCollectService* service = [] {
    std::vector<std::unique_ptr<collectors::Collector>> collectors;
    collectors.push_back(std::make_unique<FixtureCollector>());
    return new node::NodeCollectService(kNode, shipped_pack(), std::move(collectors), common::Authenticator::none());
  }();

  v1::CollectRequest request;
  if (request.ParseFromArray(data, static_cast<int>(size))) {
    v1::CollectResponse response;
    const grpc::Status status = service->Collect(nullptr, &request, &response);
    if (request.node() != kNode || request.window_end_us() < request.window_start_us())
      require(!status.ok(), "Collect served a request for another node or an inverted window");
    if (status.ok()) {
      std::string bytes;
      require(response.SerializeToString(&bytes), "a Collect response does not serialize");
      v1::CollectResponse back;
      require(back.ParseFromString(bytes), "a Collect response does not parse back (invalid UTF-8?)");
    }
  }

  v1::CollectResponse answer;
  if (answer.ParseFromArray(data, static_cast<int>(size))) {
    pipeline::NodeEvidence evidence = pipeline::from_proto(answer, kNode);
    // As AgentFanout::collect_one: an agent speaks only for its own node.
    std::erase_if(evidence.events, [](const Event& e) { return e.node != kNode; });
    std::erase_if(evidence.coverage, [](const Coverage& c) { return c.node != kNode; });
    JobFacts job;
    job.job_id = "4242";
    job.cluster = "lab";
    job.state = "FAILED";
    job.exit_code = 1;
    job.nodes = {"gpu001", "gpu002", kNode};
    // The agent's lines as the archive keeps them (compact records) and reads them back.
    rules::RawEvidence raw;
    raw.lines = std::move(evidence.raw_lines);
    raw.coverage = evidence.coverage;
    if (auto files = rules::raw_bundle_files(job, raw); files)
      for (const auto& file : *files)
        require(!file.first.ends_with(".attrib-lines"), "archived records left in a bundle");
    const Verdict verdict =
        rules::correlate(*shipped_pack(), job, std::move(evidence.events), std::move(evidence.coverage));
    (void)to_json(verdict).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    (void)merge_comment("exp 42", verdict.comment);
  }
  return 0;
}

}  // namespace attrib::fuzz

ATTRIB_FUZZ_TARGET(collect_request)
