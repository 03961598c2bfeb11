#pragma once
// Every attrib program parses its command line here, so that a command line can be
// checked against the program's real parser without running it: with ATTRIB_PARSE_ONLY=1
// in the environment the program prints "parsed" and stops right after parsing. The docs
// test (tests/docs/docs_drift.py) checks every command line the docs show this way.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#include <CLI/CLI.hpp>

namespace attrib::common {

// Empty: parsed, go on and run. A value: stop now and exit with it (CLI11's code after
// --help or a refused option, already reported; 0 after a parse-only check).
inline std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (const char* only = std::getenv("ATTRIB_PARSE_ONLY"); only && std::string_view(only) == "1") {
    std::puts("parsed");
    return 0;
  }
  return std::nullopt;
}

}  // namespace attrib::common
