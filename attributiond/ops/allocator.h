// How the daemon asks glibc's allocator to keep the memory a job frees for the next job.
#pragma once

namespace attrib::ops {

// Every job's collect allocates the same few large buffers (its window's lines, the raw
// evidence's bundle text, its zstd input), a few MiB each, and frees them when it ends.
// glibc by default serves such sizes with mmap, or trims them off the heap's top at free,
// and the next job faults every page in again: with raw evidence kept the kernel's page
// faults were most of a burst's time (docs/benchmarks.md, burst). Fixed thresholds instead
// of glibc's moving ones: up to 16 MiB comes from the heap, and up to 32 MiB free at a
// heap's top stays there. Call once, before the daemon's threads start.
void keep_freed_memory_for_reuse();

}  // namespace attrib::ops
