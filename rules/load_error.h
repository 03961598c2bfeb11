// Load errors inside the rules library. Parsing and compiling a pack is deep, nested
// code; it throws LoadFailure internally and load_rule_pack() turns it into an
// attrib::Error value at the library boundary (no exception leaves the library).
#pragma once

#include <stdexcept>
#include <string>

#include "core/result.h"

namespace attrib::rules::detail {

// Stable error codes (documented in docs/rules.md).

struct LoadFailure : std::runtime_error {
  explicit LoadFailure(Error e) : std::runtime_error(e.message), error(std::move(e)) {}
  Error error;
};

// Where a definition came from, for "file:line: field: message".
struct SourceLocation {
  std::string file;
  int line = 0;  // 1-based; 0 when unknown
};

[[noreturn]] inline void fail(const char* code, const SourceLocation& where, const std::string& field,
                              const std::string& message) {
  std::string text = where.file;
  if (where.line > 0) text += ":" + std::to_string(where.line);
  if (!field.empty()) text += ": " + field;
  text += ": " + message;
  throw LoadFailure(Error{code, text});
}

}  // namespace attrib::rules::detail
