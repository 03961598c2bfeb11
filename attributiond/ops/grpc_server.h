// Starting a gRPC server on the configured listen addresses: the one place both roles
// (the head's Attribution service, a node agent's Collect) bind and report failure.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "core/result.h"

namespace attrib::ops {

// Serves `service` on every address ("unix:///path" or "host:port"). For a Unix socket the
// directory is created and a stale socket left by a crash removed first (gRPC does
// neither). Error LISTEN_E_DIR or LISTEN_E_BIND naming the address.
// max_message_bytes bounds what is received and sent, both ways (common/grpc_limits.h).
Result<std::unique_ptr<grpc::Server>> start_grpc_server(const std::vector<std::string>& listen, grpc::Service& service,
                                                        int max_message_bytes);

}  // namespace attrib::ops
