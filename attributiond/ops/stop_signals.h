// How both roles stop: SIGTERM/SIGINT are blocked in every thread and taken by one
// sigwait in the main thread, so no worker is ever interrupted mid-job by a signal.
#pragma once

#include <csignal>

namespace attrib::ops {

// Blocks SIGTERM and SIGINT in this thread and every thread started after it. Call before
// starting any thread.
sigset_t block_stop_signals();

// Waits for one of them and logs it.
void wait_for_stop(const sigset_t& stop_signals);

}  // namespace attrib::ops
