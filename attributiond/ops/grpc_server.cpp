#include "attributiond/ops/grpc_server.h"

#include <filesystem>

namespace attrib::ops {
namespace {

constexpr std::string_view kUnix = "unix://";

Status prepare_listen_address(const std::string& address) {
  if (address.rfind(kUnix, 0) != 0) return ok_status();
  std::filesystem::path path = address.substr(kUnix.size());
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) return Error{kListenDir, "cannot create " + path.parent_path().string() + ": " + ec.message()};
  std::filesystem::remove(path, ec);
  return ok_status();
}

}  // namespace

Result<std::unique_ptr<grpc::Server>> start_grpc_server(const std::vector<std::string>& listen, grpc::Service& service,
                                                        int max_message_bytes) {
  grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(max_message_bytes);
  builder.SetMaxSendMessageSize(max_message_bytes);
  std::vector<int> ports(listen.size(), 0);
  for (size_t i = 0; i < listen.size(); ++i) {
    if (auto s = prepare_listen_address(listen[i]); !s) return s.error();
    builder.AddListeningPort(listen[i], grpc::InsecureServerCredentials(), &ports[i]);
  }
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  for (size_t i = 0; i < ports.size(); ++i)
    if (!server || ports[i] == 0) return Error{kListenBind, "cannot listen on " + listen[i]};
  return server;
}

}  // namespace attrib::ops
