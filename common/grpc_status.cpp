#include "common/grpc_status.h"

namespace attrib::common {

grpc::Status to_grpc_status(const Error& error) {
  grpc::StatusCode code = grpc::StatusCode::INTERNAL;
  switch (error_kind(error.code)) {
    case ErrorKind::InvalidArgument:
      code = grpc::StatusCode::INVALID_ARGUMENT;
      break;
    case ErrorKind::NotFound:
      code = grpc::StatusCode::NOT_FOUND;
      break;
    case ErrorKind::PermissionDenied:
      code = grpc::StatusCode::PERMISSION_DENIED;
      break;
    case ErrorKind::Unauthenticated:
      code = grpc::StatusCode::UNAUTHENTICATED;
      break;
    case ErrorKind::Unavailable:
      code = grpc::StatusCode::UNAVAILABLE;
      break;
    case ErrorKind::FailedPrecondition:
      code = grpc::StatusCode::FAILED_PRECONDITION;
      break;
    case ErrorKind::Internal:
      code = grpc::StatusCode::INTERNAL;
      break;
    case ErrorKind::ResourceExhausted:
      code = grpc::StatusCode::RESOURCE_EXHAUSTED;
      break;
  }
  return grpc::Status(code, error.message);
}

}  // namespace attrib::common
