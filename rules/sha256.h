// SHA-256 (FIPS 180-4), used only to fingerprint the loaded rule pack. Implemented here
// so the rules library needs no crypto dependency.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace attrib::rules::detail {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view data);
  std::array<uint8_t, 32> finish();
  std::string finish_hex();

 private:
  void compress(const uint8_t* block);
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

}  // namespace attrib::rules::detail
