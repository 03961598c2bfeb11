// The application output collector's line parser: collectors/app_output_collector.h
// parse_app_line, which reads srun --label rank labels ("12: "), PyTorch's "[rankN]:" and
// glog / ISO 8601 times from the job's own output (the user's bytes). The input is an
// output file; every line is parsed with and without a known step layout.
#include <map>

#include "collectors/app_output_collector.h"
#include "fuzz/fuzz_support.h"

namespace attrib::fuzz {

int app_line(const uint8_t* data, size_t size) {
  static const std::map<int, std::string> kNoLayout;
  static const std::map<int, std::string> kLayout = {{0, "gpu001"}, {1, "gpu001"}, {2, "gpu002"}, {3, "gpu002"}};
  constexpr TimeUs kReference = 1796032800LL * 1000000;  // 2026-11-30T10:00:00Z
  std::string_view text = as_text(data, size);
  while (true) {
    const size_t end = text.find('\n');
    const std::string line(text.substr(0, end));
    for (const auto* ranks : {&kNoLayout, &kLayout}) {
      for (int offset : {0, 60}) {
        const collectors::AppLinePrefix parsed = collectors::parse_app_line(line, *ranks, offset, kReference);
        require(!parsed.srun_label || parsed.rank, "an srun label without a rank");
        require(line.size() >= parsed.text.size() &&
                    line.compare(line.size() - parsed.text.size(), parsed.text.size(), parsed.text) == 0,
                "the text is not what follows the label");
        require(!parsed.srun_label || ranks->empty() || ranks->count(*parsed.rank) > 0,
                "an srun label that is no rank of the step");
      }
    }
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return 0;
}

}  // namespace attrib::fuzz

ATTRIB_FUZZ_TARGET(app_line)
