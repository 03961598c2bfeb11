// The one mapping from attrib's errors to gRPC statuses: the code's kind in the error
// table (core/error_codes.h) decides, so every service answers the same failure the same
// way (clients retry or spool on UNAVAILABLE, give up on the others).
#pragma once

#include <grpcpp/grpcpp.h>

#include "core/result.h"

namespace attrib::common {

// INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED, UNAUTHENTICATED, UNAVAILABLE,
// FAILED_PRECONDITION or INTERNAL, with the error's message.
grpc::Status to_grpc_status(const Error& error);

}  // namespace attrib::common
