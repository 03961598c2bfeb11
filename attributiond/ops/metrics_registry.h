// A small Prometheus metrics registry: counters, gauges and histograms with labels,
// rendered in the text exposition format 0.0.4. Our own instead of prometheus-cpp: the
// daemon needs a dozen families, and a few hundred lines are cheaper to audit than a
// dependency that Debian does not ship.
//
// Thread-safe: children are created under the family's lock and updated with atomics
// (counters, gauges) or a per-child lock (histograms). Output is deterministic: families
// sorted by name, children by their label values, so scrapes and tests diff cleanly.
//
// Registering an invalid or duplicate name, or asking for the wrong number of label
// values, is a programming error in a fixed table, not a runtime condition: it throws
// std::invalid_argument (the tests that build every table catch it before a release).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace attrib::ops {

class Counter {
 public:
  // Negative amounts are ignored: a counter only goes up (Prometheus treats a decrease
  // as a restart of the process).
  void inc(double amount = 1);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Gauge {
 public:
  void set(double value) { value_.store(value, std::memory_order_relaxed); }
  void add(double amount) { value_.fetch_add(amount, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Histogram {
 public:
  explicit Histogram(std::shared_ptr<const std::vector<double>> bounds);
  void observe(double value);

  struct Snapshot {
    std::vector<uint64_t> cumulative;  // per bound, then +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot snapshot() const;

 private:
  std::shared_ptr<const std::vector<double>> bounds_;  // shared by the family's children
  mutable std::mutex mutex_;
  std::vector<uint64_t> counts_;  // per bucket (not cumulative), last one is +Inf
  double sum_ = 0;
};

using LabelValues = std::vector<std::string>;

// One metric family: a name, help text, label names and one child per label-value set.
template <typename Child>
class Family {
 public:
  // The child for these label values (in the order of the family's label names),
  // created on first use. The reference stays valid for the registry's lifetime, so hot
  // paths may keep it.
  Child& labels(const LabelValues& values);
  // The unlabelled child of a family declared without labels.
  Child& get() { return labels({}); }

 private:
  friend class MetricsRegistry;
  Family(std::vector<std::string> label_names, std::function<std::unique_ptr<Child>()> make_child)
      : label_names_(std::move(label_names)), make_child_(std::move(make_child)) {}

  std::vector<std::string> label_names_;
  std::function<std::unique_ptr<Child>()> make_child_;
  mutable std::mutex mutex_;
  std::map<LabelValues, std::unique_ptr<Child>> children_;
};

class MetricsRegistry {
 public:
  MetricsRegistry();
  ~MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  Family<Counter>& counter(const std::string& name, const std::string& help, std::vector<std::string> labels = {});
  Family<Gauge>& gauge(const std::string& name, const std::string& help, std::vector<std::string> labels = {});
  // `bounds`: upper bucket bounds, strictly increasing; +Inf is implied.
  Family<Histogram>& histogram(const std::string& name, const std::string& help, std::vector<double> bounds,
                               std::vector<std::string> labels = {});
  // A gauge read when scraped (e.g. the queue depth from the job store), so it can never
  // disagree with its source. nullopt (the source failed) leaves the sample out.
  void gauge_callback(const std::string& name, const std::string& help, std::function<std::optional<double>()> read);

  // The text exposition format, version 0.0.4.
  std::string render() const;
  // Every family's name, sorted: what the documentation must list.
  std::vector<std::string> names() const;

 private:
  struct Entry;
  Entry& add(const std::string& name, const std::string& help, const char* type, const std::vector<std::string>& labels,
             bool histogram);

  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Entry>> families_;
  std::set<std::string> series_names_;  // every family's sample names (a histogram has three)
};

// The exposition format's escaping and number rendering, exposed for tests.
std::string escape_label_value(const std::string& value);
std::string escape_help(const std::string& help);
std::string format_value(double value);

inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace attrib::ops
