// The one gRPC message limit of attrib, set explicitly on every server and channel:
// gRPC's default (4 MiB received, unlimited sent) would lose a node whose Collect answer
// is larger, and leave a verdict attrib-show cannot fetch. Answers are bounded before
// this (the extractor's event caps), so the limit is a backstop with a clear error.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

namespace attrib::common {

inline constexpr int kMaxGrpcMessageBytes = 64 << 20;

// An insecure channel (MUNGE authenticates each call) with the limit in both directions.
std::shared_ptr<grpc::Channel> make_channel(const std::string& address);

// "the answer exceeds attrib's 64 MiB gRPC message limit" for RESOURCE_EXHAUSTED, else
// the status's message.
std::string describe_grpc_failure(const grpc::Status& status);

}  // namespace attrib::common
