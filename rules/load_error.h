// Load errors inside the rules library. Parsing and compiling a pack is deep, nested
// code; it throws LoadFailure internally and load_rule_pack() turns it into an
// attrib::Error value at the library boundary (no exception leaves the library).
#pragma once

#include <stdexcept>
#include <string>

#include "core/result.h"

namespace attrib::rules::detail {

// Stable error codes (documented in docs/rules.md).
inline constexpr const char* kErrIo = "RULE_E_IO";              // file missing or unreadable
inline constexpr const char* kErrYaml = "RULE_E_YAML";          // not YAML, or wrong node shape
inline constexpr const char* kErrField = "RULE_E_FIELD";        // missing, unknown or invalid key/value
inline constexpr const char* kErrRegex = "RULE_E_REGEX";        // regex does not compile or captures disagree
inline constexpr const char* kErrExample = "RULE_E_EXAMPLE";    // an inline example fails
inline constexpr const char* kErrRef = "RULE_E_REF";            // reference to an unknown kind/catalog
inline constexpr const char* kErrDuplicate = "RULE_E_DUPLICATE";// two rules with one id
inline constexpr const char* kErrOverride = "RULE_E_OVERRIDE";  // site rule shadows a rule implicitly
inline constexpr const char* kErrTrust = "RULE_E_TRUST";        // hardware root without trusted evidence
inline constexpr const char* kErrTemplate = "RULE_E_TEMPLATE";  // summary names an unknown placeholder
inline constexpr const char* kErrCatalog = "RULE_E_CATALOG";    // data table malformed or unmappable

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
