// PyTorch flight-recorder dumps as the flight_recorder collector reads them
// (collectors/flight_recorder_dump.h over collectors/pickle_reader.h): the job's own bytes.
// Properties: a dump is read or refused, never run, never a crash; a line made from what
// was read carries only the collector's own fields (the dump's names are cut to PyTorch's
// characters, so no value can add a field).
#include "collectors/flight_recorder_dump.h"
#include "fuzz/fuzz_support.h"

namespace attrib::fuzz {

int flight_recorder_dump(const uint8_t* data, size_t size) {
  auto groups = collectors::read_flight_recorder_dump(as_text(data, size));
  if (!groups) return 0;
  for (const auto& group : *groups) {
    const std::string line = collectors::flight_recorder_line(3, group);
    require(line.find('\n') == std::string::npos, "a line break in a flight-recorder line");
    size_t fields = 0;
    for (char c : line) fields += c == '=';
    require(fields == 6 || fields == 7, "a flight-recorder line with a field of the dump's making");
  }
  return 0;
}

}  // namespace attrib::fuzz

ATTRIB_FUZZ_TARGET(flight_recorder_dump)
