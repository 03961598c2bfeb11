// attrib-doctor's checks of the optional parts: each configured Prometheus and Loki
// collector run as the daemon runs it over the last five minutes, from this host, and the
// verdict webhook sent one test POST (only when asked: --send-test).
#pragma once

#include <string>

#include "common/config.h"
#include "core/types.h"
#include "tools/attrib-doctor/findings.h"

namespace attrib::doctor {

// node: the node the queries are asked for ({node} in them).
void check_metric_sources(const common::Config& config, const std::string& node, TimeUs now, Findings& out);
void check_webhook(const common::Config& config, bool send_test, Findings& out);

}  // namespace attrib::doctor
