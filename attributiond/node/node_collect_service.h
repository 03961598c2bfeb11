// The node agent's gRPC service (attributiond --role node): Collect runs this node's
// configured collectors over the requested window and returns extracted events and
// coverage, never raw logs.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "attrib/v1/attrib.grpc.pb.h"
#include "attributiond/ops/daemon_metrics.h"
#include "attributiond/pipeline/node_evidence.h"
#include "common/auth.h"

namespace attrib::node {

class NodeCollectService final : public v1::NodeCollector::Service {
 public:
  // auth: only root or the SlurmUser (the head daemon) may collect; required.
  // metrics: counted when given (the node agent's); may be null.
  NodeCollectService(std::string node_name, std::shared_ptr<const rules::RulePack> pack,
                     std::vector<std::unique_ptr<collectors::Collector>> collectors,
                     std::shared_ptr<const common::Authenticator> auth, ops::NodeMetrics* metrics = nullptr);

  grpc::Status Collect(grpc::ServerContext* context, const v1::CollectRequest* request,
                       v1::CollectResponse* response) override;

 private:
  grpc::Status serve(const v1::CollectRequest& request, v1::CollectResponse& response);

  std::string node_name_;
  std::shared_ptr<const rules::RulePack> pack_;
  std::vector<std::unique_ptr<collectors::Collector>> collectors_;
  std::shared_ptr<const common::Authenticator> auth_;
  ops::NodeMetrics* metrics_;
};

// NVSwitch devices under dev (nvidia-nvswitch0, 1, ...; not the control device): where
// there are some, Fabric Manager's log is a source the node must have.
uint32_t count_nvswitch_devices(const std::filesystem::path& dev);

}  // namespace attrib::node
