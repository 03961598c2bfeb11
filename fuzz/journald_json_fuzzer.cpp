// journald's fields as attrib reads them from `journalctl -o json` export lines (bundle
// .jsonl streams, attrib's own bundle export): rules/line_time.h parse_journal_json,
// MESSAGE as a string or a byte array, the numeric timestamps, _TRANSPORT, _UID,
// SYSLOG_IDENTIFIER, ATTRIB_SEQ/ATTRIB_COUNT. The input is a .jsonl file: every line is
// parsed, as the bundle reader does.
#include "fuzz/fuzz_support.h"
#include "rules/line_time.h"

namespace attrib::fuzz {

int journald_json(const uint8_t* data, size_t size) {
  std::string_view text = as_text(data, size);
  while (true) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    if (!line.empty()) {
      auto entry = rules::parse_journal_json(line);
      if (entry) {
        require(entry->count >= 1, "ATTRIB_COUNT below 1 accepted");
        require(entry->has_message || entry->message.empty(), "a message without MESSAGE");
      } else {
        require(!entry.error().code.empty(), "an error without a code");
      }
    }
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return 0;
}

}  // namespace attrib::fuzz

ATTRIB_FUZZ_TARGET(journald_json)
