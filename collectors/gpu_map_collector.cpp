#include "collectors/gpu_map_collector.h"

#include <algorithm>
#include <filesystem>

#include "collectors/coverage_report.h"
#include "collectors/source_files.h"

namespace attrib::collectors {

namespace {

namespace fs = std::filesystem;

constexpr uint64_t kMaxInformationBytes = 64 * 1024;  // the driver writes a dozen short lines

// The value after "<key>:" on one of the file's lines, blanks and tabs trimmed.
std::optional<std::string> value_of(const std::string& text, const std::string& key) {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind(key + ":", 0) != 0) continue;
    const size_t first = line.find_first_not_of(" \t", key.size() + 1);
    if (first == std::string::npos) return std::nullopt;
    const size_t last = line.find_last_not_of(" \t\r");
    return line.substr(first, last - first + 1);
  }
  return std::nullopt;
}

bool is_hex(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
}

// "%04x:%02x:%02x.%x" as nv-procfs.c writes it.
bool is_bus_location(const std::string& text) {
  return text.size() == 12 && text[4] == ':' && text[7] == ':' && text[10] == '.' && is_hex(text.substr(0, 4)) &&
         is_hex(text.substr(5, 2)) && is_hex(text.substr(8, 2)) && is_hex(text.substr(11, 1));
}

}  // namespace

std::string gpu_map_line(unsigned minor, const std::string& pci) {
  return "attrib-gpu-map: minor=" + std::to_string(minor) + " pci=" + pci;
}

std::optional<GpuMapEntry> parse_gpu_information(const std::string& text) {
  const auto bus = value_of(text, "Bus Location");
  const auto minor = value_of(text, "Device Minor");
  if (!bus || !minor || !is_bus_location(*bus)) return std::nullopt;
  if (minor->empty() || minor->size() > 6 || minor->find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return GpuMapEntry{static_cast<unsigned>(std::stoul(*minor)), *bus};
}

const OptionTable<GpuMapOptions>& GpuMapCollector::option_table() {
  static const OptionTable<GpuMapOptions> table = {
      option("directory", &GpuMapOptions::directory, "/proc/driver/nvidia/gpus",
             "The NVIDIA driver's per-GPU directory (one <bus id>/information file per GPU). May contain {node} "
             "(the Slurm node name), e.g. for a head reading copies of the nodes' files.",
             {}, [](const std::string& path) { return path_template_problem(path, {"node"}); }),
  };
  return table;
}

Result<std::unique_ptr<Collector>> GpuMapCollector::create(const YAML::Node& options) {
  auto parsed = read_collector_options(kName, option_table(), options);
  if (!parsed) return parsed.error();
  return std::unique_ptr<Collector>(std::make_unique<GpuMapCollector>(std::move(*parsed)));
}

GpuMapCollector::GpuMapCollector(GpuMapOptions options) : options_(std::move(options)) {}

std::vector<Coverage> GpuMapCollector::collect(const CollectRequest& request, const LineSink& sink) {
  CoverageReport report(request, {kSource});
  auto directory = expand_path_template(options_.directory, {{"node", request.node}});
  if (!directory) return report.finish(CoverageStatus::Failed, directory.error().message);
  std::error_code ec;
  if (!fs::is_directory(*directory, ec))
    return report.finish(CoverageStatus::Unavailable,
                         *directory + " does not exist (no NVIDIA driver loaded on this node?)");

  std::vector<fs::path> files;
  for (fs::directory_iterator it(*directory, ec), end; !ec && it != end; it.increment(ec))
    files.push_back(it->path() / "information");
  if (ec) return report.finish(CoverageStatus::Failed, "reading " + *directory + ": " + ec.message());
  std::sort(files.begin(), files.end());  // one order whatever the directory's

  std::vector<std::string> problems;
  for (const fs::path& file : files) {
    const FileContent content = read_source_file(file.string(), ReadLimits{kMaxInformationBytes});
    const auto entry = content.state == FileContent::State::Read ? parse_gpu_information(content.data) : std::nullopt;
    if (!entry) {
      problems.push_back(file.string() + ": no \"Bus Location\" and \"Device Minor\" lines");
      continue;
    }
    LogLine line;
    line.node = request.node;
    line.source = kSource;
    line.seq = report.next_seq(kSource);
    // procfs is the kernel's; a copy (tests, a head reading the nodes' files) is trusted
    // only when root owns it and nobody else may change it.
    line.trusted = root_owned_and_protected(file);
    line.text = gpu_map_line(entry->minor, entry->pci);
    sink(line);
  }
  if (!problems.empty()) return report.finish(CoverageStatus::Partial, join_notes(problems));
  return report.finish(std::nullopt);
}

}  // namespace attrib::collectors
