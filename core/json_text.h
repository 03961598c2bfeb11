// JSON text of a value that may carry log bytes. Text is made valid UTF-8 at ingestion
// (core/utf8.h); should anything slip past, a dump replaces the bad bytes instead of
// throwing, so one line can never fail an archive write, a page or an answer.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace attrib {

inline std::string json_text(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// object[key] when it is a string, else fallback. nlohmann's value(key, "") throws when
// the member is there with another type ({"status": 80002} from a server: fuzz/).
inline std::string json_string_or(const nlohmann::json& object, const char* key, std::string fallback = "") {
  if (!object.is_object()) return fallback;
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}

}  // namespace attrib
