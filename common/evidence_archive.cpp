#include "common/evidence_archive.h"

#include <zstd.h>

#include <charconv>
#include <memory>
#include <string_view>
#include <vector>

namespace attrib::common {
namespace {

constexpr int kLevel = 1;

Error unpack_error(const std::string& why) { return Error{kEvidenceUnpack, "evidence blob: " + why}; }

}  // namespace

std::string pack_evidence(const PackedFiles& files) {
  // "<path>\n<size>\n<content>" per file, compressed as one stream: the pieces go to zstd
  // as they are, never copied into one buffer first (a job's raw evidence is megabytes).
  std::vector<std::string> headers;
  size_t total = 0;
  for (const auto& [path, content] : files) {
    headers.push_back(path + '\n' + std::to_string(content.size()) + '\n');
    total += headers.back().size() + content.size();
  }
  // With a checksum, so a damaged blob is an error on unpacking, never other evidence; and
  // the size pledged, so the frame says it (unpack_evidence needs it). One context per
  // thread, reset each time: its megabytes of tables are not allocated and zeroed per job.
  thread_local std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> context(ZSTD_createCCtx(), ZSTD_freeCCtx);
  if (!context || ZSTD_isError(ZSTD_CCtx_reset(context.get(), ZSTD_reset_session_and_parameters)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(context.get(), ZSTD_c_compressionLevel, kLevel)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(context.get(), ZSTD_c_checksumFlag, 1)) ||
      ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(context.get(), total)))
    return {};
  std::string blob;
  std::vector<char> chunk(ZSTD_CStreamOutSize());
  auto feed = [&](std::string_view piece, ZSTD_EndDirective mode) {
    ZSTD_inBuffer in{piece.data(), piece.size(), 0};
    for (;;) {
      ZSTD_outBuffer out{chunk.data(), chunk.size(), 0};
      const size_t left = ZSTD_compressStream2(context.get(), &out, &in, mode);
      if (ZSTD_isError(left)) return false;
      blob.append(chunk.data(), out.pos);
      if (mode == ZSTD_e_end ? left == 0 : in.pos == in.size) return true;
    }
  };
  size_t i = 0;
  for (const auto& [path, content] : files) {
    if (!feed(headers[i++], ZSTD_e_continue) || !feed(content, ZSTD_e_continue)) return {};
  }
  if (!feed({}, ZSTD_e_end)) return {};
  return blob;
}

Result<PackedFiles> unpack_evidence(std::string_view blob) {
  const unsigned long long size = ZSTD_getFrameContentSize(blob.data(), blob.size());
  if (size == ZSTD_CONTENTSIZE_ERROR) return unpack_error("not a zstd frame");
  if (size == ZSTD_CONTENTSIZE_UNKNOWN) return unpack_error("no content size in the zstd frame");
  // The archive writes at most head.raw_evidence_max_bytes plus the file headers.
  if (size > (1ULL << 32)) return unpack_error("claims " + std::to_string(size) + " bytes");
  std::string packed(static_cast<size_t>(size), '\0');
  const size_t got = ZSTD_decompress(packed.data(), packed.size(), blob.data(), blob.size());
  if (ZSTD_isError(got)) return unpack_error(ZSTD_getErrorName(got));
  if (got != packed.size()) return unpack_error("shorter than its header says");

  PackedFiles files;
  std::string_view rest = packed;
  while (!rest.empty()) {
    const size_t path_end = rest.find('\n');
    if (path_end == std::string_view::npos || path_end == 0) return unpack_error("an entry without a path");
    const std::string path(rest.substr(0, path_end));
    rest.remove_prefix(path_end + 1);
    const size_t size_end = rest.find('\n');
    size_t length = 0;
    if (size_end == std::string_view::npos ||
        std::from_chars(rest.data(), rest.data() + size_end, length).ptr != rest.data() + size_end)
      return unpack_error(path + ": no size");
    rest.remove_prefix(size_end + 1);
    if (length > rest.size()) return unpack_error(path + ": cut short");
    files[path] = std::string(rest.substr(0, length));
    rest.remove_prefix(length);
  }
  return files;
}

}  // namespace attrib::common
