// The Loki collector's parser of a /loki/api/v1/query_range answer (the HTTP body a Loki
// server sends): collectors/loki_collector.h parse_loki_streams. The input is the body.
// Property: entries come out in time order.
#include "collectors/loki_collector.h"
#include "fuzz/fuzz_support.h"

namespace attrib::fuzz {

int loki_answer(const uint8_t* data, size_t size) {
  auto entries = collectors::parse_loki_streams(std::string(as_text(data, size)));
  if (!entries) {
    require(!entries.error().code.empty(), "an error without a code");
    return 0;
  }
  for (size_t i = 1; i < entries->size(); ++i)
    require((*entries)[i - 1].time_ns <= (*entries)[i].time_ns, "Loki entries out of time order");
  return 0;
}

}  // namespace attrib::fuzz

ATTRIB_FUZZ_TARGET(loki_answer)
