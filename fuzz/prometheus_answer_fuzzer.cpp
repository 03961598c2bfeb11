// The Prometheus collector's parser of an /api/v1/query_range answer (the HTTP body a
// Prometheus server sends): collectors/prometheus_collector.h parse_prometheus_range, then
// prometheus_line for every sample, the text the rules read. The input is the body.
#include "collectors/prometheus_collector.h"
#include "fuzz/fuzz_support.h"

namespace attrib::fuzz {

int prometheus_answer(const uint8_t* data, size_t size) {
  auto answer = collectors::parse_prometheus_range(std::string(as_text(data, size)));
  if (!answer) {
    require(!answer.error().code.empty(), "an error without a code");
    return 0;
  }
  for (const auto& series : answer->series)
    for (const auto& [time, value] : series.samples) (void)collectors::prometheus_line(series, "fallback", value);
  return 0;
}

}  // namespace attrib::fuzz

ATTRIB_FUZZ_TARGET(prometheus_answer)
