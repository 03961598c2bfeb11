#include "attributiond/ops/stop_signals.h"

#include <pthread.h>

#include <spdlog/spdlog.h>

namespace attrib::ops {

sigset_t block_stop_signals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return stop_signals;
}

void wait_for_stop(const sigset_t& stop_signals) {
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  spdlog::info("signal {}: stopping", signal_number);
}

}  // namespace attrib::ops
