// A message from outside (the hook's environment: job name, user, output paths; a spool
// file) can carry any bytes in its string fields, but proto3 strings must be UTF-8: an
// invalid one makes the whole message unparseable on the other side, so a job could opt
// itself out of attribution by its name. Every string of such a message is made valid
// UTF-8 (core/utf8.h) before it is sent or stored.
#pragma once

#include <google/protobuf/message.h>

namespace attrib::common {

// Repairs every string field, repeated and map ones and those of nested messages included;
// returns whether anything was replaced.
bool make_text_valid_utf8(google::protobuf::Message& message);

}  // namespace attrib::common
