// attrib-rules mine's template miner (rules/template_miner.h) over lines that jobs and
// nodes wrote: every line is masked and clustered, and each template's rule skeleton,
// when one is proposed, matches its own examples and leaves the domain to the admin.
#include <re2/re2.h>

#include "fuzz/fuzz_support.h"
#include "rules/evidence/template_miner.h"

namespace attrib::fuzz {

int template_miner(const uint8_t* data, size_t size) {
  static const std::set<std::string> kHosts = {"gpu001", "n1"};
  std::string_view text = as_text(data, size);
  rules::TemplateMiner miner;
  size_t index = 0;
  while (true) {
    const size_t end = text.find('\n');
    const std::string line(text.substr(0, end));
    rules::MinedLine mined{line, index % 2 ? "gpu001" : "n1", index % 3 ? "kernel" : "app.rank1",
                           std::to_string(index % 5) + " run 0", index % 2 == 0};
    if (index % 7 == 6)
      miner.add_baseline(mined, kHosts);
    else
      miner.add(mined, kHosts);
    ++index;
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  for (const rules::LineTemplate& t : miner.ranked()) {
    require(!t.tokens.empty(), "an empty template");
    for (const auto& example : t.examples)
      require(rules::mask_tokens(example.line, kHosts).size() == t.tokens.size(),
              "an example of another length than its template");
    if (auto yaml = rules::rule_skeleton(t, "site.fuzz")) {
      require(yaml->find("domain: FILL_IN") != std::string::npos, "a skeleton that fills the domain itself");
      require(yaml->find("    regex: '") != std::string::npos, "a skeleton without a regex");
    }
  }
  return 0;
}

}  // namespace attrib::fuzz

ATTRIB_FUZZ_TARGET(template_miner)
