// The evidence bundle reader behind attrib-replay: rules/bundle.h open_bundle (job.json,
// the host directories, the <source>.log|.jsonl names) and replay_bundle (every line's
// stamp, .jsonl fields, the window, extraction with the shipped pack, correlation), then
// the verdict as attrib-replay prints it (JSON and text).
//
// Input: job.json, then one section per file, each introduced by a line
//   #%<host>/<file>
// (e.g. "#%gpu017/kernel.log"); names outside [A-Za-z0-9._-] are skipped. A fixture under
// tests/fixtures/ written this way is a seed (fuzz/corpus/bundle/).
//
// Property: the order of the files never changes the verdict (bundle.h).
#include <algorithm>

#include "core/verdict.h"
#include "core/verdict_text.h"
#include "fuzz/fuzz_support.h"
#include "rules/evidence/bundle.h"

namespace attrib::fuzz {

int bundle(const uint8_t* data, size_t size) {
  static ScratchDir dir("bundle");  // removed at exit, not left in /tmp
  static const auto pack = shipped_pack();
  dir.clear();
  const std::vector<Section> sections = split_sections(as_text(data, size), "#%");
  dir.write("job.json", sections[0].text);
  size_t files = 0;
  for (size_t i = 1; i < sections.size() && files < 16; ++i) {
    const std::string& name = sections[i].name;
    const size_t slash = name.find('/');
    if (slash == std::string::npos || !safe_name(name.substr(0, slash)) || !safe_name(name.substr(slash + 1)) ||
        name.substr(0, slash) == "job.json")
      continue;
    dir.write(name, sections[i].text);
    ++files;
  }

  auto opened = rules::open_bundle(dir.path());
  if (!opened) return 0;
  auto verdict = rules::replay_bundle(*opened, pack);
  if (!verdict) return 0;
  const std::string json = to_json(*verdict).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  (void)render_verdict_text(*verdict);

  rules::Bundle reversed = *opened;
  std::reverse(reversed.files.begin(), reversed.files.end());
  auto again = rules::replay_bundle(reversed, pack);
  require(again.ok(), "the bundle replays in one order of its files but not in another");
  require(to_json(*again).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) == json,
          "the order of the bundle's files changed the verdict");
  return 0;
}

}  // namespace attrib::fuzz

ATTRIB_FUZZ_TARGET(bundle)
