// Plain log files on the nodes, read with their rotated generations (docs/collectors.md):
//
//   syslog_file  rsyslog's files (/var/log/messages, /var/log/syslog, kern.log): the
//                traditional "Apr  5 21:29:39 host tag[pid]: msg" lines and the RFC 3339
//                ones of RSYSLOG_FileFormat, rsyslog's "#ooo" escapes of control
//                characters undone. The tag `kernel` makes a line source kernel, every
//                other tag source syslog; with match_hostname, only the node's own lines
//                of a file many hosts log into.
//   slurm_log    Slurm's own LogFile (slurmd.log with slurmstepd's "[job.step]" lines,
//                slurmctld.log): "[2024-04-05T21:29:39.123] msg" lines, source slurm, so
//                the pack's slurm rules fire in production as on replay.
//
// Rotation: <path>.1, <path>.N.gz and dateext <path>-YYYYMMDD[.gz] generations are read
// oldest first before <path>, skipping those last written before the window.
//
// Trust (docs/security.md): a line is trusted only when its file proves who wrote it. A
// syslog file mixes every local user's `logger` lines with the kernel's, so its lines
// are untrusted unless the admin vouches for the file (trust: file, e.g. a kern.log that
// only imklog writes). Slurm's log is written by slurmd/slurmctld alone: trusted (auto)
// when root or a system account owns it and no one else may write it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "collectors/collector.h"
#include "core/result.h"

namespace attrib::collectors {

struct LogFileOptions {
  std::string path;                 // may contain {node}
  int timezone_offset_minutes = 0;  // stamps without a zone are node-local time = UTC + offset
  int rotations = 4;                // rotated generations read at most
  bool match_hostname = true;       // syslog_file: only lines whose host field is the node
  std::string trust = "auto";       // auto | file | none
};

class LogFileCollector final : public Collector {
 public:
  enum class Format { Syslog, Slurm };
  static constexpr const char* kSyslogName = "syslog_file";
  static constexpr const char* kSlurmName = "slurm_log";

  static const OptionTable<LogFileOptions>& syslog_option_table();
  static const OptionTable<LogFileOptions>& slurm_option_table();
  static Result<std::unique_ptr<Collector>> create_syslog(const YAML::Node& options);
  static Result<std::unique_ptr<Collector>> create_slurm(const YAML::Node& options);

  LogFileCollector(Format format, LogFileOptions options);

  std::string name() const override { return format_ == Format::Syslog ? kSyslogName : kSlurmName; }
  std::vector<Coverage> collect(const CollectRequest& request, const LineSink& sink) override;

 private:
  Format format_;
  LogFileOptions options_;
};

// rsyslog's escapes of control characters ("#011" a tab, "#012" a newline: three octal
// digits of a byte below 32, or 127) back to the bytes; any other '#' stays.
std::string unescape_rsyslog(std::string_view text);

}  // namespace attrib::collectors
