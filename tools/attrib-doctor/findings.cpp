#include "tools/attrib-doctor/findings.h"

#include <algorithm>

namespace attrib::doctor {

const char* to_string(Level level) {
  switch (level) {
    case Level::Ok:
      return "OK";
    case Level::Warn:
      return "WARN";
    case Level::Fail:
      return "FAIL";
  }
  return "FAIL";
}

void Findings::ok(std::string area, std::string check, std::string saw) {
  findings_.push_back({Level::Ok, std::move(area), std::move(check), std::move(saw), ""});
}

void Findings::warn(std::string area, std::string check, std::string saw, std::string fix) {
  findings_.push_back({Level::Warn, std::move(area), std::move(check), std::move(saw), std::move(fix)});
}

void Findings::fail(std::string area, std::string check, std::string saw, std::string fix) {
  findings_.push_back({Level::Fail, std::move(area), std::move(check), std::move(saw), std::move(fix)});
}

bool Findings::failed() const {
  return std::any_of(findings_.begin(), findings_.end(), [](const Finding& f) { return f.level == Level::Fail; });
}

std::string Findings::text() const {
  std::string out;
  size_t warnings = 0, failures = 0;
  for (const Finding& f : findings_) {
    std::string level = to_string(f.level);
    level.resize(4, ' ');
    out += level + "  " + f.area + ": " + f.check + " -- " + f.saw;
    if (!f.fix.empty()) out += "; fix: " + f.fix;
    out += "\n";
    warnings += f.level == Level::Warn;
    failures += f.level == Level::Fail;
  }
  out += std::to_string(findings_.size()) + " checks: " + std::to_string(failures) + " failed, " +
         std::to_string(warnings) + " warnings\n";
  return out;
}

nlohmann::json Findings::json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const Finding& f : findings_)
    list.push_back(
        {{"level", to_string(f.level)}, {"area", f.area}, {"check", f.check}, {"saw", f.saw}, {"fix", f.fix}});
  return {{"ok", !failed()}, {"findings", list}};
}

}  // namespace attrib::doctor
