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

}  // namespace attrib
