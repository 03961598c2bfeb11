#include "spank/plugin_args.h"

#include <charconv>

namespace attrib::spank {
namespace {

Error arg_error(const std::string& arg, const std::string& why) {
  return Error{kSpankArg, "plugstack argument '" + arg + "': " + why +
                              " (known keys: spool_dir=PATH, allow_opt_out=yes|no, "
                              "nccl_trace_buffer_size=N)"};
}

}  // namespace

Result<PluginArgs> parse_plugin_args(const std::vector<std::string>& args) {
  PluginArgs parsed;
  bool seen_spool = false, seen_opt_out = false, seen_buffer = false;
  for (const std::string& arg : args) {
    const size_t equals = arg.find('=');
    if (equals == std::string::npos || equals == 0) return arg_error(arg, "expected key=value");
    const std::string key = arg.substr(0, equals);
    const std::string value = arg.substr(equals + 1);
    // A repeated key is almost always a copy-paste mistake; refuse rather than pick one.
    auto once = [&](bool& seen) -> bool {
      if (seen) return false;
      seen = true;
      return true;
    };
    if (key == "spool_dir") {
      if (!once(seen_spool)) return arg_error(arg, "key given twice");
      if (value.empty() || value.front() != '/') return arg_error(arg, "must be an absolute path");
      if (value.find('\n') != std::string::npos) return arg_error(arg, "must not contain a newline");
      parsed.spool_dir = value;
    } else if (key == "allow_opt_out") {
      if (!once(seen_opt_out)) return arg_error(arg, "key given twice");
      if (value == "yes") {
        parsed.allow_opt_out = true;
      } else if (value == "no") {
        parsed.allow_opt_out = false;
      } else {
        return arg_error(arg, "must be yes or no");
      }
    } else if (key == "nccl_trace_buffer_size") {
      if (!once(seen_buffer)) return arg_error(arg, "key given twice");
      int64_t number = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
      if (ec != std::errc() || end != value.data() + value.size() || number <= 0) {
        return arg_error(arg, "must be a positive integer");
      }
      parsed.nccl_trace_buffer_size = number;
    } else {
      return arg_error(arg, "unknown key '" + key + "'");
    }
  }
  return parsed;
}

std::string expand_spool_dir(const std::string& pattern, const std::string& node) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'n') {
      out += node;
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

}  // namespace attrib::spank
