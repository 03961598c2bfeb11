#include "attrib/collectors/registry.h"

#include "attrib/collectors/option_reader.h"
#include "journald_collector.h"

namespace attrib::collectors {
namespace {

// Markdown table cells must not contain raw pipes or line breaks.
std::string table_cell(const std::string& text) {
  std::string cell;
  for (char c : text) {
    if (c == '|') {
      cell += "\\|";
    } else if (c == '\n') {
      cell += ' ';
    } else {
      cell += c;
    }
  }
  return cell;
}

}  // namespace

const std::vector<CollectorKind>& collector_kinds() {
  static const std::vector<CollectorKind> kinds = {
      {JournaldCollector::kName,
       "Kernel, Fabric Manager, syslog and application entries from a systemd journal (sd-journal).",
       JournaldCollector::option_specs(), &JournaldCollector::create},
  };
  return kinds;
}

const CollectorKind* find_collector_kind(std::string_view name) {
  for (const CollectorKind& kind : collector_kinds()) {
    if (kind.name == name) return &kind;
  }
  return nullptr;
}

Result<std::unique_ptr<Collector>> create_collector(std::string_view name, const YAML::Node& options) {
  const CollectorKind* kind = find_collector_kind(name);
  if (kind == nullptr) {
    std::string known;
    for (const CollectorKind& k : collector_kinds()) known += (known.empty() ? "" : ", ") + k.name;
    return Error{"CONFIG_E_UNKNOWN_COLLECTOR",
                 "unknown collector '" + std::string(name) + "'; known collectors: " + known};
  }
  return kind->create(options);
}

std::string options_reference_markdown() {
  std::string out;
  for (const CollectorKind& kind : collector_kinds()) {
    out += "### " + kind.name + "\n\n" + kind.summary + "\n\n";
    out += "| key | default | description |\n|---|---|---|\n";
    for (const OptionSpec& spec : kind.options) {
      out += "| `" + spec.key + "` | " +
             (spec.default_value.empty() ? std::string("(required)") : "`" + table_cell(spec.default_value) + "`") +
             " | " + table_cell(spec.help) + " |\n";
    }
    out += "\n";
  }
  return out;
}

}  // namespace attrib::collectors
