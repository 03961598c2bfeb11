// Reads the data subset of Python's pickle format into JSON, and nothing else: what
// PyTorch's flight recorder writes (torch::jit::Pickler, protocol 2: dicts, lists, tuples,
// strings, numbers, booleans, None) and what Python's pickle writes for the same data
// (protocols 2-5). A pickle is a program for a stack machine that can import and call
// anything; this reader is no such machine. It knows only the opcodes that build plain
// values and refuses every one that names or calls code (GLOBAL, STACK_GLOBAL, REDUCE,
// BUILD, INST, OBJ, NEWOBJ, PERSID, EXT*): such a dump is an error, never run.
#pragma once

#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace attrib::collectors {

struct PickleLimits {
  size_t max_depth = 64;          // nesting of containers
  size_t max_values = 4'000'000;  // values built, in all
};

// The value the pickle builds, as JSON: a tuple is an array, a dict key that is not a
// string is its JSON text, bytes are read as text. Errors (COLLECT_E_DUMP) name the
// opcode and its byte offset.
Result<nlohmann::json> read_pickle(std::string_view bytes, const PickleLimits& limits = {});

}  // namespace attrib::collectors
