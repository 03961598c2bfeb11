#include "attributiond/ops/allocator.h"

#include <malloc.h>

namespace attrib::ops {

void keep_freed_memory_for_reuse() {
  constexpr int kMiB = 1024 * 1024;
  // A failure leaves glibc's defaults: slower, not wrong, so it is not an error.
  (void)mallopt(M_MMAP_THRESHOLD, 16 * kMiB);
  (void)mallopt(M_TRIM_THRESHOLD, 32 * kMiB);
}

}  // namespace attrib::ops
