// The verdict v1 reader: core/verdict.h verdict_from_json, which reads archived verdicts
// back (the archive's history backfill, attrib-show on a GetVerdict answer, the dashboard),
// then core/verdict_text.h render_verdict_text as attrib-show prints it. The input is a
// verdict JSON document. Property: a verdict that reads writes back the same JSON.
#include <nlohmann/json.hpp>

#include "core/verdict.h"
#include "core/verdict_text.h"
#include "fuzz/fuzz_support.h"

namespace attrib::fuzz {

int verdict_json(const uint8_t* data, size_t size) {
  const std::string_view text = as_text(data, size);
  const nlohmann::json json = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (json.is_discarded()) return 0;
  auto verdict = verdict_from_json(json);
  if (!verdict) return 0;
  (void)render_verdict_text(*verdict);
  const nlohmann::json written = to_json(*verdict);
  auto reread = verdict_from_json(written);
  require(reread.ok(), "a verdict written by to_json does not read back");
  require(to_json(*reread) == written, "a verdict does not survive to_json -> verdict_from_json");
  return 0;
}

}  // namespace attrib::fuzz

ATTRIB_FUZZ_TARGET(verdict_json)
