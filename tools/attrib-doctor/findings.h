// What attrib-doctor found: one line per check, OK / WARN / FAIL, with what it saw and,
// unless OK, the exact fix. The run fails (exit 1) when any check FAILs.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attrib::doctor {

enum class Level { Ok, Warn, Fail };
const char* to_string(Level level);

struct Finding {
  Level level = Level::Ok;
  std::string area;   // slurm, spool, munge, head, archive, agent <node>, source, job <id>
  std::string check;  // what was checked, e.g. "EpilogSlurmctld"
  std::string saw;    // what it saw
  std::string fix;    // empty when OK
};

class Findings {
 public:
  void ok(std::string area, std::string check, std::string saw);
  void warn(std::string area, std::string check, std::string saw, std::string fix);
  void fail(std::string area, std::string check, std::string saw, std::string fix);

  const std::vector<Finding>& all() const { return findings_; }
  bool failed() const;
  // "FAIL  slurm: EpilogSlurmctld -- <saw>; fix: <fix>", one line each, then a summary.
  std::string text() const;
  // {"ok": bool, "findings": [{"level", "area", "check", "saw", "fix"}...]}
  nlohmann::json json() const;

 private:
  std::vector<Finding> findings_;
};

}  // namespace attrib::doctor
