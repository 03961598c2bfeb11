#include "common/time_spec.h"

#include <cctype>
#include <charconv>

namespace attrib::common {

Result<TimeUs> parse_time_spec(const std::string& text, TimeUs now_us) {
  auto bad = [&] {
    return Error{kTimeSpec, "cannot read time '" + text +
                                "': use an age (7d, 24h, 30m, 90s, 2w) or an ISO 8601 date/time "
                                "(2026-11-30, 2026-11-30T10:00, 2026-11-30T10:00:00Z)"};
  };
  if (text.empty()) return bad();
  // An age: digits and one unit.
  if (std::isdigit(static_cast<unsigned char>(text.front())) && text.size() >= 2 &&
      std::string("smhdw").find(text.back()) != std::string::npos && text.find('-') == std::string::npos) {
    int64_t amount = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size() - 1, amount);
    if (ec != std::errc() || end != text.data() + text.size() - 1 || amount > 100 * 365 * 86400LL) return bad();
    int64_t unit = 1;
    switch (text.back()) {
      case 'm':
        unit = 60;
        break;
      case 'h':
        unit = 3600;
        break;
      case 'd':
        unit = 86400;
        break;
      case 'w':
        unit = 7 * 86400;
        break;
      default:
        break;
    }
    return now_us - amount * unit * 1000000;
  }
  std::string iso = text;
  if (iso.size() > 10 && iso[10] == ' ') iso[10] = 'T';
  if (iso.size() == 10)
    iso += "T00:00:00";  // a date: its midnight (UTC)
  else if (iso.size() == 16)
    iso += ":00";  // minutes without seconds
  bool zoned = iso.size() > 19 && (iso.back() == 'Z' || iso.find_first_of("+-", 19) != std::string::npos);
  if (!zoned) iso += "Z";
  auto parsed = parse_iso_time(iso);
  if (!parsed) return bad();
  return *parsed;
}

}  // namespace attrib::common
