#include "attributiond/ops/log_context.h"

namespace attrib::ops {
namespace {

thread_local LogFields current;

}  // namespace

const LogFields& current_fields() { return current; }

LogScope::LogScope(std::string job_id, std::string node, std::string collector) : saved_(current) {
  if (!job_id.empty()) current.job_id = std::move(job_id);
  if (!node.empty()) current.node = std::move(node);
  if (!collector.empty()) current.collector = std::move(collector);
}

LogScope::~LogScope() { current = std::move(saved_); }

}  // namespace attrib::ops
