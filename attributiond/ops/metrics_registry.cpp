#include "attributiond/ops/metrics_registry.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace attrib::ops {
namespace {

bool valid_name(const std::string& name, bool allow_colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (allow_colon && c == ':') ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

// `{a="x",b="y"}`, with an extra trailing label (histogram `le`) when given; "" when empty.
std::string label_block(const std::vector<std::string>& names, const LabelValues& values,
                        const std::string& extra_name = "", const std::string& extra_value = "") {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (out.empty() ? "" : ",") + names[i] + "=\"" + escape_label_value(values[i]) + "\"";
  if (!extra_name.empty()) out += (out.empty() ? "" : ",") + extra_name + "=\"" + extra_value + "\"";
  return out.empty() ? out : "{" + out + "}";
}

}  // namespace

void Counter::inc(double amount) {
  if (!(amount > 0)) return;  // also drops NaN
  value_.fetch_add(amount, std::memory_order_relaxed);
}

Histogram::Histogram(std::shared_ptr<const std::vector<double>> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_->size() + 1, 0) {}

void Histogram::observe(double value) {
  if (std::isnan(value)) return;
  size_t bucket = 0;
  while (bucket < bounds_->size() && value > (*bounds_)[bucket]) ++bucket;  // le: value <= bound
  std::lock_guard lock(mutex_);
  ++counts_[bucket];
  sum_ += value;
}

Histogram::Snapshot Histogram::snapshot() const {
  std::lock_guard lock(mutex_);
  Snapshot s;
  uint64_t running = 0;
  for (uint64_t c : counts_) s.cumulative.push_back(running += c);
  s.count = running;
  s.sum = sum_;
  return s;
}

template <typename Child>
Child& Family<Child>::labels(const LabelValues& values) {
  if (values.size() != label_names_.size())
    throw std::invalid_argument("metric family expects " + std::to_string(label_names_.size()) + " label values, got " +
                                std::to_string(values.size()));
  std::lock_guard lock(mutex_);
  auto& slot = children_[values];
  if (!slot) slot = make_child_();
  return *slot;
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

struct MetricsRegistry::Entry {
  std::string help;
  const char* type = "";
  std::unique_ptr<Family<Counter>> counters;
  std::unique_ptr<Family<Gauge>> gauges;
  std::unique_ptr<Family<Histogram>> histograms;
  std::shared_ptr<const std::vector<double>> bounds;
  std::function<std::optional<double>()> read;
};

MetricsRegistry::MetricsRegistry() = default;
MetricsRegistry::~MetricsRegistry() = default;

MetricsRegistry::Entry& MetricsRegistry::add(const std::string& name, const std::string& help, const char* type,
                                             const std::vector<std::string>& labels, bool histogram) {
  if (!valid_name(name, true)) throw std::invalid_argument("invalid metric name '" + name + "'");
  for (const auto& label : labels)
    if (!valid_name(label, false) || label.rfind("__", 0) == 0 || (histogram && label == "le"))
      throw std::invalid_argument("metric " + name + ": invalid label name '" + label + "'");
  std::lock_guard lock(mutex_);
  // A histogram's _bucket/_sum/_count series must not collide with another family either.
  std::vector<std::string> series{name};
  if (histogram)
    for (const char* suffix : {"_bucket", "_sum", "_count"}) series.push_back(name + suffix);
  for (const auto& n : series)
    if (families_.count(n) != 0 || series_names_.count(n) != 0)
      throw std::invalid_argument("metric " + name + " collides with a registered metric (" + n + ")");
  series_names_.insert(series.begin(), series.end());
  auto& entry = families_[name];
  entry = std::make_unique<Entry>();
  entry->help = help;
  entry->type = type;
  return *entry;
}

Family<Counter>& MetricsRegistry::counter(const std::string& name, const std::string& help,
                                          std::vector<std::string> labels) {
  Entry& entry = add(name, help, "counter", labels, false);
  bool unlabelled = labels.empty();
  entry.counters.reset(new Family<Counter>(std::move(labels), [] { return std::make_unique<Counter>(); }));
  if (unlabelled) entry.counters->get();  // shows 0 before the first event, not an absent series
  return *entry.counters;
}

Family<Gauge>& MetricsRegistry::gauge(const std::string& name, const std::string& help,
                                      std::vector<std::string> labels) {
  Entry& entry = add(name, help, "gauge", labels, false);
  bool unlabelled = labels.empty();
  entry.gauges.reset(new Family<Gauge>(std::move(labels), [] { return std::make_unique<Gauge>(); }));
  if (unlabelled) entry.gauges->get();
  return *entry.gauges;
}

Family<Histogram>& MetricsRegistry::histogram(const std::string& name, const std::string& help,
                                              std::vector<double> bounds, std::vector<std::string> labels) {
  for (size_t i = 0; i < bounds.size(); ++i)
    if (!std::isfinite(bounds[i]) || (i > 0 && bounds[i] <= bounds[i - 1]))
      throw std::invalid_argument("histogram " + name + ": bounds must be finite and strictly increasing");
  Entry& entry = add(name, help, "histogram", labels, true);
  entry.bounds = std::make_shared<const std::vector<double>>(std::move(bounds));
  bool unlabelled = labels.empty();
  auto shared_bounds = entry.bounds;
  entry.histograms.reset(
      new Family<Histogram>(std::move(labels), [shared_bounds] { return std::make_unique<Histogram>(shared_bounds); }));
  if (unlabelled) entry.histograms->get();
  return *entry.histograms;
}

void MetricsRegistry::gauge_callback(const std::string& name, const std::string& help,
                                     std::function<std::optional<double>()> read) {
  add(name, help, "gauge", {}, false).read = std::move(read);
}

std::string MetricsRegistry::render() const {
  std::lock_guard lock(mutex_);
  std::string out;
  for (const auto& [name, entry] : families_) {
    out += "# HELP " + name + " " + escape_help(entry->help) + "\n";
    out += "# TYPE " + name + " " + entry->type + "\n";
    if (entry->read) {
      if (auto value = entry->read()) out += name + " " + format_value(*value) + "\n";
      continue;
    }
    // A plain reference: clang before 16 cannot capture a structured binding (fuzz/ builds with clang).
    auto simple = [&, &name = name](const auto& family) {
      std::lock_guard family_lock(family.mutex_);
      for (const auto& [values, child] : family.children_)
        out += name + label_block(family.label_names_, values) + " " + format_value(child->value()) + "\n";
    };
    if (entry->counters) simple(*entry->counters);
    if (entry->gauges) simple(*entry->gauges);
    if (entry->histograms) {
      const auto& family = *entry->histograms;
      std::lock_guard family_lock(family.mutex_);
      for (const auto& [values, child] : family.children_) {
        Histogram::Snapshot s = child->snapshot();
        for (size_t i = 0; i < s.cumulative.size(); ++i) {
          std::string le = i < entry->bounds->size() ? format_value((*entry->bounds)[i]) : "+Inf";
          out += name + "_bucket" + label_block(family.label_names_, values, "le", le) + " " +
                 std::to_string(s.cumulative[i]) + "\n";
        }
        out += name + "_sum" + label_block(family.label_names_, values) + " " + format_value(s.sum) + "\n";
        out += name + "_count" + label_block(family.label_names_, values) + " " + std::to_string(s.count) + "\n";
      }
    }
  }
  return out;
}

std::vector<std::string> MetricsRegistry::names() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [name, entry] : families_) out.push_back(name);
  return out;
}

std::string escape_label_value(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string escape_help(const std::string& help) {
  std::string out;
  for (char c : help) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);  // shortest round-trip form
  if (ec != std::errc()) return "NaN";
  return std::string(buffer, end);
}

}  // namespace attrib::ops
