// JSON text of a value that may carry log bytes. Text is made valid UTF-8 at ingestion
// (core/utf8.h); should anything slip past, a dump replaces the bad bytes instead of
// throwing, so one line can never fail an archive write, a page or an answer.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/types.h"

namespace attrib {

inline std::string json_text(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A value as text: a string as it is (unquoted), anything else as its JSON (an event's
// field compared with a rule's value, a catalog key, a job id).
inline std::string value_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : json_text(value);
}

// object[key] when it is a string, else fallback. nlohmann's value(key, "") throws when
// the member is there with another type ({"status": 80002} from a server: fuzz/).
inline std::string json_string_or(const nlohmann::json& object, const char* key, std::string fallback = "") {
  if (!object.is_object()) return fallback;
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}

// A time as every JSON attrib writes it: ISO 8601 UTC (format_time), or null when unknown.
inline nlohmann::json time_or_null(std::optional<TimeUs> t) {
  return t ? nlohmann::json(format_time(*t)) : nlohmann::json(nullptr);
}
// The same for a stored time where 0 means never set (the fleet and queue columns).
inline nlohmann::json time_or_null(TimeUs t) { return time_or_null(t > 0 ? std::optional<TimeUs>(t) : std::nullopt); }

// Appends `text` as json_text(text) writes it, without building a json value: the
// raw-evidence export writes one object per log line, and a json object per line (a map,
// a copy of the text, a serializer) cost more than the rest of the job. '"' and '\'
// escaped, control characters as \b \f \n \r \t or \u00xx, the rest (UTF-8 included) as
// is; text that is not valid UTF-8 goes through nlohmann's own replacement.
void append_json_string(std::string& out, std::string_view text);

}  // namespace attrib
