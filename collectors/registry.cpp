#include "collectors/registry.h"

#include "collectors/option_reader.h"
#include "collectors/app_output_collector.h"
#include "collectors/fabricmanager_collector.h"
#include "collectors/journald_collector.h"
#include "collectors/kmsg_collector.h"
#include "collectors/slurm_accounting_collector.h"
#include "collectors/loki_collector.h"
#include "collectors/prometheus_collector.h"
#include "collectors/spank_records_collector.h"

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
      {SpankRecordsCollector::kName,
       "Task start/end records (rank, exit code or signal) written on each node by the spank_attrib.so SPANK plugin.",
       SpankRecordsCollector::option_specs(), &SpankRecordsCollector::create},
      {KmsgCollector::kName,
       "Kernel ring records in /dev/kmsg format from the device, a file or a FIFO, placed in wall-clock time.",
       KmsgCollector::option_specs(), &KmsgCollector::create},
      {FabricManagerCollector::kName,
       "NVIDIA Fabric Manager's log file and its rotated .1 (node-local time, multi-line entries).",
       FabricManagerCollector::option_specs(), &FabricManagerCollector::create},
      {AppOutputCollector::kName,
       "The job's stdout/stderr files, split into per-rank streams by [rankN]: and srun --label prefixes (untrusted).",
       AppOutputCollector::option_specs(), &AppOutputCollector::create},
      {PrometheusCollector::kName,
       "PromQL range queries per node (e.g. DCGM exporter Xid/ECC series) turned into trusted metric lines.",
       PrometheusCollector::option_specs(), &PrometheusCollector::create},
      {SlurmAccountingCollector::kName,
       "The job's and its steps' records from slurmdbd (state, exit code/signal, reason, nodes, requeues).",
       SlurmAccountingCollector::option_specs(), &SlurmAccountingCollector::create},
      {LokiCollector::kName,
       "A LogQL query per node read from Loki's query_range API in forward pages.",
       LokiCollector::option_specs(), &LokiCollector::create},
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
    return Error{kConfigUnknownCollector,
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
