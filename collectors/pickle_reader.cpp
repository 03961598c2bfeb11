// The data opcodes of pickle protocols 2-5 (CPython's Lib/pickletools.py lists them all),
// interpreted over shared nodes: a memoized dict is filled after it was memoized
// (EMPTY_DICT, BINPUT, MARK ... SETITEMS), so the memo and the stack must share it. The
// nodes live in one arena owned by the reader: a dump may put a dict inside itself (DUP,
// SETITEM), which shared ownership would leak; copying out refuses such a cycle by depth.
#include "collectors/pickle_reader.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <variant>
#include <vector>

#include "core/json_text.h"

namespace attrib::collectors {
namespace {

using json = nlohmann::json;

struct Node;
using NodePtr = Node*;  // owned by the Machine's arena
struct Node {
  enum class Kind { Scalar, List, Dict } kind = Kind::Scalar;
  json scalar;                                     // Kind::Scalar
  std::vector<NodePtr> items;                      // Kind::List (a tuple too)
  std::vector<std::pair<NodePtr, NodePtr>> pairs;  // Kind::Dict, in insertion order
};

// What the opcodes that call code are called, for the error.
const std::map<uint8_t, const char*> kRefused = {
    {'c', "GLOBAL"}, {0x93, "STACK_GLOBAL"}, {'R', "REDUCE"}, {'b', "BUILD"},    {'i', "INST"},
    {'o', "OBJ"},    {0x81, "NEWOBJ"},       {0x92, "NEWOBJ_EX"}, {'P', "PERSID"}, {'Q', "BINPERSID"},
    {0x82, "EXT1"},  {0x83, "EXT2"},         {0x84, "EXT4"},  {0x90, "ADDITEMS"}, {0x91, "FROZENSET"},
    {0x8f, "EMPTY_SET"}, {0x97, "NEXT_BUFFER"}, {0x98, "READONLY_BUFFER"}, {0x96, "BYTEARRAY8"}};

class Machine {
 public:
  Machine(std::string_view bytes, const PickleLimits& limits) : in_(bytes), limits_(limits) {}

  Result<json> run() {
    while (true) {
      if (pos_ >= in_.size()) return fail("the dump ends before its STOP opcode");
      const size_t at = pos_;
      const uint8_t op = static_cast<uint8_t>(in_[pos_++]);
      if (op == '.') break;  // STOP
      if (!step(op)) return Error{kCollectDump, error_ + " (opcode 0x" + hex(op) + " at byte " +
                                                                 std::to_string(at) + ")"};
      if (++built_ > limits_.max_values) return fail("more than " + std::to_string(limits_.max_values) + " values");
    }
    if (stack_.size() != 1 || !marks_.empty()) return fail("the dump does not end with exactly one value");
    size_t values = 0;
    if (!copied_size(*stack_.back(), 0, values)) return fail(error_);
    json out;
    to_json(*stack_.back(), out);
    return out;
  }

 private:
  std::string_view in_;
  PickleLimits limits_;
  size_t pos_ = 0;
  size_t built_ = 0;
  std::vector<NodePtr> stack_;
  std::vector<size_t> marks_;
  std::map<uint64_t, NodePtr> memo_;
  std::map<const Node*, size_t> copied_sizes_;  // per shared node, once counted
  std::vector<std::unique_ptr<Node>> arena_;
  std::string error_;

  NodePtr scalar(json value) {
    arena_.push_back(std::make_unique<Node>());
    arena_.back()->scalar = std::move(value);
    return arena_.back().get();
  }

  NodePtr container(Node::Kind kind) {
    arena_.push_back(std::make_unique<Node>());
    arena_.back()->kind = kind;
    return arena_.back().get();
  }

  static std::string hex(uint8_t op) {
    const char* digits = "0123456789abcdef";
    return {digits[op >> 4], digits[op & 15]};
  }

  Error fail(const std::string& why) const { return Error{kCollectDump, why}; }

  bool refuse(const std::string& why) {
    error_ = why;
    return false;
  }

  bool take(size_t n, std::string_view& out) {
    if (in_.size() - pos_ < n) return refuse("truncated operand");
    out = in_.substr(pos_, n);
    pos_ += n;
    return true;
  }

  template <typename T>
  bool little_endian(size_t n, T& out) {
    std::string_view raw;
    if (!take(n, raw)) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(raw[i])) << (8 * i);
    out = static_cast<T>(v);
    return true;
  }

  bool push_text(size_t length_bytes) {
    uint64_t n = 0;
    std::string_view text;
    if (!little_endian(length_bytes, n) || !take(n, text)) return false;
    stack_.push_back(scalar(std::string(text)));
    return true;
  }

  bool pop(NodePtr& out) {
    const size_t floor = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() <= floor) return refuse("stack underflow");
    out = stack_.back();
    stack_.pop_back();
    return true;
  }

  // The values above the topmost mark, which is removed.
  bool pop_mark(std::vector<NodePtr>& out) {
    if (marks_.empty()) return refuse("no mark");
    const size_t mark = marks_.back();
    marks_.pop_back();
    out.assign(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
    stack_.resize(mark);
    return true;
  }

  bool top(Node::Kind kind, Node*& out) {
    const size_t floor = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() <= floor || stack_.back()->kind != kind) return refuse("no container to add to");
    out = stack_.back();
    return true;
  }

  bool tuple_of(size_t n) {
    const size_t floor = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() < floor + n) return refuse("stack underflow");
    NodePtr t = container(Node::Kind::List);
    t->items.assign(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
    stack_.resize(stack_.size() - n);
    stack_.push_back(t);
    return true;
  }

  bool memo_put(uint64_t key) {
    if (stack_.empty()) return refuse("nothing to memoize");
    memo_[key] = stack_.back();
    return true;
  }

  bool memo_get(uint64_t key) {
    auto it = memo_.find(key);
    if (it == memo_.end()) return refuse("unknown memo key " + std::to_string(key));
    stack_.push_back(it->second);
    return true;
  }

  bool add_items(Node::Kind kind, std::vector<NodePtr> values) {
    Node* target = nullptr;
    if (!top(kind, target)) return false;
    if (kind == Node::Kind::List) {
      for (NodePtr v : values) target->items.push_back(v);
      return true;
    }
    if (values.size() % 2 != 0) return refuse("a dict item without its value");
    for (size_t i = 0; i < values.size(); i += 2) target->pairs.emplace_back(values[i], values[i + 1]);
    return true;
  }

  bool step(uint8_t op) {
    if (auto refused = kRefused.find(op); refused != kRefused.end())
      return refuse(std::string("refused: ") + refused->second + " names or calls code, and a dump is data only");
    std::vector<NodePtr> values;
    NodePtr a = nullptr, b = nullptr;
    switch (op) {
      case 0x80: {  // PROTO
        uint8_t version = 0;
        return little_endian(1, version) && (version <= 5 || refuse("pickle protocol above 5"));
      }
      case 0x95: {  // FRAME: a length prefix only
        uint64_t n = 0;
        return little_endian(8, n);
      }
      case 'N': stack_.push_back(scalar(nullptr)); return true;
      case 0x88: stack_.push_back(scalar(true)); return true;
      case 0x89: stack_.push_back(scalar(false)); return true;
      case 'K': { uint8_t v = 0; if (!little_endian(1, v)) return false; stack_.push_back(scalar(v)); return true; }
      case 'M': { uint16_t v = 0; if (!little_endian(2, v)) return false; stack_.push_back(scalar(v)); return true; }
      case 'J': { uint32_t v = 0; if (!little_endian(4, v)) return false; stack_.push_back(scalar(static_cast<int32_t>(v))); return true; }
      case 0x8a: return long1();
      case 'G': return binfloat();
      case 'X': return push_text(4);     // BINUNICODE
      case 0x8c: return push_text(1);    // SHORT_BINUNICODE
      case 0x8d: return push_text(8);    // BINUNICODE8
      case 'T': return push_text(4);     // BINSTRING
      case 'U': return push_text(1);     // SHORT_BINSTRING
      case 'B': return push_text(4);     // BINBYTES
      case 'C': return push_text(1);     // SHORT_BINBYTES
      case 0x8e: return push_text(8);    // BINBYTES8
      case '}': stack_.push_back(container(Node::Kind::Dict)); return true;
      case ']': stack_.push_back(container(Node::Kind::List)); return true;
      case ')': stack_.push_back(container(Node::Kind::List)); return true;  // EMPTY_TUPLE
      case '(': marks_.push_back(stack_.size()); return true;               // MARK
      case 't': return pop_mark(values) && push_list(std::move(values));    // TUPLE
      case 'l': return pop_mark(values) && push_list(std::move(values));    // LIST
      case 0x85: return tuple_of(1);
      case 0x86: return tuple_of(2);
      case 0x87: return tuple_of(3);
      case 'a': return pop(a) && add_items(Node::Kind::List, {a});                // APPEND
      case 'e': return pop_mark(values) && add_items(Node::Kind::List, std::move(values));  // APPENDS
      case 's': return pop(b) && pop(a) && add_items(Node::Kind::Dict, {a, b});   // SETITEM
      case 'u': return pop_mark(values) && add_items(Node::Kind::Dict, std::move(values));  // SETITEMS
      case 'q': { uint8_t k = 0; return little_endian(1, k) && memo_put(k); }     // BINPUT
      case 'r': { uint32_t k = 0; return little_endian(4, k) && memo_put(k); }    // LONG_BINPUT
      case 0x94: return memo_put(memo_.size());                                   // MEMOIZE
      case 'h': { uint8_t k = 0; return little_endian(1, k) && memo_get(k); }     // BINGET
      case 'j': { uint32_t k = 0; return little_endian(4, k) && memo_get(k); }    // LONG_BINGET
      case '0': return pop(a);                                                    // POP
      case '1': return pop_mark(values);                                          // POP_MARK
      case '2':                                                                   // DUP
        if (stack_.empty()) return refuse("stack underflow");
        stack_.push_back(stack_.back());
        return true;
      default: return refuse("not a data opcode this reader knows");
    }
  }

  bool push_list(std::vector<NodePtr> values) {
    NodePtr l = container(Node::Kind::List);
    l->items = std::move(values);
    stack_.push_back(l);
    return true;
  }

  // LONG1: a little-endian two's-complement integer of n bytes; beyond 64 bits, refused.
  bool long1() {
    uint8_t n = 0;
    std::string_view raw;
    if (!little_endian(1, n) || !take(n, raw)) return false;
    if (n > 8) return refuse("an integer wider than 64 bits");
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(raw[i])) << (8 * i);
    if (n > 0 && n < 8 && (static_cast<uint8_t>(raw[n - 1]) & 0x80)) v |= ~uint64_t{0} << (8 * n);
    stack_.push_back(scalar(static_cast<int64_t>(v)));
    return true;
  }

  // BINFLOAT: an 8-byte big-endian IEEE 754 double.
  bool binfloat() {
    std::string_view raw;
    if (!take(8, raw)) return false;
    uint64_t bits = 0;
    for (char c : raw) bits = (bits << 8) | static_cast<uint8_t>(c);
    double d = 0;
    std::memcpy(&d, &bits, sizeof d);
    stack_.push_back(scalar(d));
    return true;
  }

  // Shared nodes (memo, DUP) are copied out where each is used, so each use counts: a dump
  // that refers to one list a million times is refused, not expanded. Counted before
  // anything is copied, each node's size once (a list of four references to the level
  // below, twenty levels deep, is 4^20 values found in 80 steps); a node inside itself is
  // refused by depth, as its size is not known until its count ends.
  bool copied_size(const Node& n, size_t depth, size_t& size) {
    if (depth > limits_.max_depth) return refuse("nested deeper than " + std::to_string(limits_.max_depth));
    if (auto known = copied_sizes_.find(&n); known != copied_sizes_.end()) {
      size = known->second;
      return true;
    }
    size = 1;
    auto add = [&](const Node& child) {
      size_t child_size = 0;
      if (!copied_size(child, depth + 1, child_size)) return false;
      size += child_size;
      return size <= limits_.max_values || refuse("more than " + std::to_string(limits_.max_values) + " values");
    };
    for (const auto& item : n.items)
      if (!add(*item)) return false;
    for (const auto& [key, value] : n.pairs)
      if (!add(*key) || !add(*value)) return false;
    copied_sizes_.emplace(&n, size);
    return true;
  }

  // Copies a value out whose size and depth copied_size has checked.
  void to_json(const Node& n, json& out) {
    switch (n.kind) {
      case Node::Kind::Scalar:
        out = n.scalar;
        return;
      case Node::Kind::List:
        out = json::array();
        for (const auto& item : n.items) to_json(*item, out.emplace_back());
        return;
      case Node::Kind::Dict:
        out = json::object();
        for (const auto& [key, value] : n.pairs) {
          json k;
          to_json(*key, k);
          to_json(*value, out[value_text(k)]);
        }
        return;
    }
  }
};

}  // namespace

Result<json> read_pickle(std::string_view bytes, const PickleLimits& limits) {
  return Machine(bytes, limits).run();
}

}  // namespace attrib::collectors
