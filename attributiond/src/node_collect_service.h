// The node agent's gRPC service (attributiond --role node): Collect runs this node's
// configured collectors over the requested window and returns extracted events and
// coverage, never raw logs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attrib/v1/attrib.grpc.pb.h"
#include "node_evidence.h"

namespace attrib::head {

class NodeCollectService final : public v1::NodeCollector::Service {
 public:
  NodeCollectService(std::string node_name, std::shared_ptr<const rules::RulePack> pack,
                     std::vector<std::unique_ptr<collectors::Collector>> collectors);

  grpc::Status Collect(grpc::ServerContext* context, const v1::CollectRequest* request,
                       v1::CollectResponse* response) override;

 private:
  std::string node_name_;
  std::shared_ptr<const rules::RulePack> pack_;
  std::vector<std::unique_ptr<collectors::Collector>> collectors_;
};

}  // namespace attrib::head
