#include "collectors/registry.h"

#include "collectors/app_output_collector.h"
#include "collectors/fabricmanager_collector.h"
#include "collectors/flight_recorder_collector.h"
#include "collectors/gpu_map_collector.h"
#include "collectors/journald_collector.h"
#include "collectors/kmsg_collector.h"
#include "collectors/log_file_collector.h"
#include "collectors/loki_collector.h"
#include "collectors/prometheus_collector.h"
#include "collectors/slurm_accounting_collector.h"
#include "collectors/spank_records_collector.h"

namespace attrib::collectors {

const std::vector<CollectorKind>& collector_kinds() {
  static const std::vector<CollectorKind> kinds = {
      {JournaldCollector::kName,
       "Kernel, Fabric Manager, syslog and application entries from a systemd journal (sd-journal).",
       option_docs(JournaldCollector::option_table()), &JournaldCollector::create},
      {SpankRecordsCollector::kName,
       "Task start/end records (rank, exit code or signal) written on each node by the spank_attrib.so SPANK plugin.",
       option_docs(SpankRecordsCollector::option_table()), &SpankRecordsCollector::create},
      {FlightRecorderCollector::kName,
       "The PyTorch flight-recorder dumps (pickle or JSON) the job's ranks wrote into its spool on a collective "
       "timeout (spank_attrib.so --attrib-evidence): each rank's last collective, to name the rank the others "
       "waited on. Read as data only, never executed.",
       option_docs(FlightRecorderCollector::option_table()), &FlightRecorderCollector::create},
      {GpuMapCollector::kName,
       "Which PCI bus id each GPU index on a node stands for, from the NVIDIA driver's "
       "/proc/driver/nvidia/gpus/*/information: what tells an Xid on the job's GPU from a neighbour's.",
       option_docs(GpuMapCollector::option_table()), &GpuMapCollector::create},
      {KmsgCollector::kName,
       "Kernel ring records in /dev/kmsg format from the device, a file or a FIFO, placed in wall-clock time.",
       option_docs(KmsgCollector::option_table()), &KmsgCollector::create},
      {FabricManagerCollector::kName,
       "NVIDIA Fabric Manager's log file and its rotated .1 (node-local time, multi-line entries).",
       option_docs(FabricManagerCollector::option_table()), &FabricManagerCollector::create},
      {LogFileCollector::kSyslogName,
       "rsyslog's files (/var/log/messages, syslog, kern.log) with their rotated and gzipped generations: kernel "
       "and syslog lines of the node, untrusted unless the file is vouched for (trust: file).",
       option_docs(LogFileCollector::syslog_option_table()), &LogFileCollector::create_syslog},
      {LogFileCollector::kSlurmName,
       "Slurm's own log on the node (slurmd.log with slurmstepd's lines, slurmctld.log) with its rotated "
       "generations: source slurm, trusted when only root or SlurmUser can write it.",
       option_docs(LogFileCollector::slurm_option_table()), &LogFileCollector::create_slurm},
      {AppOutputCollector::kName,
       "The job's stdout/stderr files, split into per-rank streams by [rankN]: and srun --label prefixes (untrusted).",
       option_docs(AppOutputCollector::option_table()), &AppOutputCollector::create},
      {PrometheusCollector::kName,
       "PromQL range queries per node (e.g. DCGM exporter Xid/ECC series) turned into trusted metric lines.",
       option_docs(PrometheusCollector::option_table()), &PrometheusCollector::create},
      {SlurmAccountingCollector::kName,
       "The job's and its steps' records from slurmdbd (state, exit code/signal, reason, nodes, requeues).",
       option_docs(SlurmAccountingCollector::option_table()), &SlurmAccountingCollector::create},
      {LokiCollector::kName, "A LogQL query per node read from Loki's query_range API in forward pages.",
       option_docs(LokiCollector::option_table()), &LokiCollector::create},
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
    return Error{kConfigUnknownCollector, "unknown collector '" + std::string(name) + "'; known collectors: " + known};
  }
  return kind->create(options);
}

std::string options_reference_markdown() {
  std::string out;
  for (const CollectorKind& kind : collector_kinds())
    out += "### " + kind.name + "\n\n" + kind.summary + "\n\n" + options_markdown(kind.options) + "\n";
  return out;
}

}  // namespace attrib::collectors
