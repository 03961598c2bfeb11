// What one rank's PyTorch flight-recorder dump says about each of its process groups:
// the last collective the rank recorded (its sequence number, operation and state).
// The dump is what torch/csrc/distributed/c10d/FlightRecorderDetail.hpp writes, as a
// pickle (dump(): the on-timeout file of ProcessGroupNCCL's DebugInfoWriter) or as JSON
// (dump_json()): {"version", "pg_config", "pg_status", "entries": [{"pg_id",
// "collective_seq_id", "p2p_seq_id", "profiling_name", "state", "time_created_ns", ...}]}.
// The same recorder serves the NCCL and Gloo backends.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace attrib::collectors {

struct RankCollectives {
  int64_t pg_id = 0;
  int64_t last_seq = 0;        // the highest collective_seq_id the rank recorded
  std::string last_op;         // its profiling_name ("nccl:all_reduce"), reduced to [A-Za-z0-9:_.-]
  std::string last_state;      // scheduled | started | completed
  int64_t last_time_ns = 0;    // its time_created_ns
  std::string ranks;           // the group's ranks as pg_config has them, digits and commas only
  uint64_t entries = 0;        // collective entries of the group in the dump
};

// Reads one dump (pickle, or JSON when it starts with '{'); one summary per process group
// with collectives, by pg_id. Errors (COLLECT_E_DUMP) say what was wrong.
Result<std::vector<RankCollectives>> read_flight_recorder_dump(std::string_view bytes);

// The line handed to the rules (rule pytorch.flight_recorder_rank):
// "attrib-flight-recorder: rank=2 pg=0 last_seq=3 last_op=gloo:all_reduce
// last_state=scheduled entries=3 ranks=0,1,2,3".
std::string flight_recorder_line(int64_t rank, const RankCollectives& group);

}  // namespace attrib::collectors
