// Where a verdict goes besides the archive and the Slurm field (docs/sinks.md): each sink
// takes verdict v1 as JSON text when the job is done (and again when it is re-attributed).
// The registry, make_verdict_sinks, builds the ones the configuration enables.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attributiond/store/job_key.h"
#include "common/config.h"
#include "core/result.h"

namespace attrib::sinks {

class VerdictSink {
 public:
  virtual ~VerdictSink() = default;
  virtual const char* name() const = 0;
  // Takes one verdict of the job's run. Once it returns ok the verdict is the sink's to
  // deliver: an error makes the head try the job's last step again.
  virtual Status deliver(const store::JobKey& key, const std::string& verdict_json) = 0;
};

// Every sink sinks_config enables (none by default); an error names the one that could not
// start (e.g. an unwritable file).
Result<std::vector<std::unique_ptr<VerdictSink>>> make_verdict_sinks(const common::SinksConfig& sinks_config);

}  // namespace attrib::sinks
