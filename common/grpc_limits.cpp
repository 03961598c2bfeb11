#include "common/grpc_limits.h"

namespace attrib::common {

std::shared_ptr<grpc::Channel> make_channel(const std::string& address) {
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(kMaxGrpcMessageBytes);
  arguments.SetMaxSendMessageSize(kMaxGrpcMessageBytes);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), arguments);
}

std::string describe_grpc_failure(const grpc::Status& status) {
  if (status.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) return status.error_message();
  return "the message exceeds attrib's gRPC limit of " + std::to_string(kMaxGrpcMessageBytes >> 20) +
         " MiB (common/grpc_limits.h): " + status.error_message();
}

}  // namespace attrib::common
