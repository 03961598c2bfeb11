// The gpu_map collector over information files in the layout and format the NVIDIA
// driver writes them (kernel-open/nvidia/nv-procfs.c: /proc/driver/nvidia/gpus/<bus
// id>/information, "Bus Location: \t %04x:%02x:%02x.%x", "Device Minor: \t %u").
#include "collectors/gpu_map_collector.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "collectors/registry.h"

namespace attrib::collectors {
namespace {

namespace fs = std::filesystem;

// The lines nv-procfs.c prints for one GPU, in its order (values of an A100 node).
std::string information(const std::string& bus, unsigned minor) {
  return "Model: \t\t NVIDIA A100-SXM4-80GB\nIRQ:   \t\t 137\nGPU UUID: \t GPU-4b1d6f6e-8a36-2b0c-5d39-1f0c7bd3e1a2\n"
         "Video BIOS: \t 92.00.45.00.06\nBus Type: \t PCIe\nDMA Size: \t 47 bits\nDMA Mask: \t 0x7fffffffffff\n"
         "Bus Location: \t " +
         bus + "\nDevice Minor: \t " + std::to_string(minor) + "\nGPU Excluded:\t No\n";
}

class GpuMap : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "attrib-gpu-map-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  void write(const std::string& node, const std::string& bus, const std::string& text) {
    fs::create_directories(root_ / node / bus);
    std::ofstream(root_ / node / bus / "information") << text;
  }
  std::vector<Coverage> collect(const std::string& node, std::vector<LogLine>& lines) {
    YAML::Node options;
    options["directory"] = (root_ / "{node}").string();
    auto created = create_collector("gpu_map", options);
    EXPECT_TRUE(created) << (created ? "" : created.error().message);
    CollectRequest request{"5100", node, 0, 4'000'000'000'000'000};
    return (*created)->collect(request, [&](const LogLine& line) { lines.push_back(line); });
  }
  fs::path root_;
};

TEST_F(GpuMap, OneLinePerGpuInBusOrder) {
  write("n1", "0000:0a:00.0", information("0000:0a:00.0", 1));
  write("n1", "0000:07:00.0", information("0000:07:00.0", 0));
  std::vector<LogLine> lines;
  const auto coverage = collect("n1", lines);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].text, "attrib-gpu-map: minor=0 pci=0000:07:00.0");
  EXPECT_EQ(lines[1].text, "attrib-gpu-map: minor=1 pci=0000:0a:00.0");
  EXPECT_EQ(lines[0].source, "gpus");
  EXPECT_EQ(lines[1].seq, 1u);
  EXPECT_EQ(lines[0].trusted, geteuid() == 0) << "root's copy, not writable by others";
  ASSERT_EQ(coverage.size(), 1u);
  EXPECT_EQ(coverage[0].status, CoverageStatus::Ok);
  EXPECT_EQ(coverage[0].lines, 2u);
}

TEST_F(GpuMap, NoDriverDirectoryIsUnavailable) {
  std::vector<LogLine> lines;
  const auto coverage = collect("n2", lines);
  EXPECT_TRUE(lines.empty());
  EXPECT_EQ(coverage[0].status, CoverageStatus::Unavailable);
  EXPECT_NE(coverage[0].detail.find("no NVIDIA driver"), std::string::npos) << coverage[0].detail;
}

TEST_F(GpuMap, AFileWithoutTheTwoLinesIsNamedAndTheRestRead) {
  write("n1", "0000:07:00.0", information("0000:07:00.0", 0));
  write("n1", "0000:0a:00.0", "Model: \t\t NVIDIA A100-SXM4-80GB\nBus Location: \t 0000:0a:00.0\n");
  std::vector<LogLine> lines;
  const auto coverage = collect("n1", lines);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(coverage[0].status, CoverageStatus::Partial);
  EXPECT_NE(coverage[0].detail.find("0000:0a:00.0/information"), std::string::npos) << coverage[0].detail;
}

TEST(GpuInformation, ParsesOnlyTheDriversShapes) {
  auto entry = parse_gpu_information(information("0000:b7:00.0", 7));
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->minor, 7u);
  EXPECT_EQ(entry->pci, "0000:b7:00.0");
  EXPECT_FALSE(parse_gpu_information(information("b7:00.0", 7)).has_value());
  EXPECT_FALSE(parse_gpu_information("Bus Location: \t 0000:b7:00.0\nDevice Minor: \t -1\n").has_value());
  EXPECT_FALSE(parse_gpu_information("").has_value());
}

}  // namespace
}  // namespace attrib::collectors
