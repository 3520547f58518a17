//===- Interrupt.cpp - SIGTERM / SIGINT during a compile ------------------===//

#include "cuvil/support/Interrupt.h"

#include <atomic>
#include <csignal>

namespace cuvil {
namespace {

// Lock-free atomics: read and written from the signal handler.
std::atomic<int> pendingSignal{0};
std::atomic<int> scopeDepth{0};
std::atomic<pid_t> child{0};
constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};

void endBySignal(int signal) {
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

void onSignal(int signal) {
  pendingSignal.store(signal);
  if (pid_t pid = child.load(); pid > 0)
    ::kill(-pid, SIGTERM);
  if (scopeDepth.load() == 0)
    endBySignal(signal);
}

} // namespace

void installInterruptHandlers() {
  struct sigaction action = {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  for (int signal : kSignals)
    sigaction(signal, &action, nullptr);
}

int pendingInterrupt() { return pendingSignal.load(); }

CleanupScope::CleanupScope() { scopeDepth.fetch_add(1); }

CleanupScope::~CleanupScope() {
  if (scopeDepth.fetch_sub(1) == 1)
    if (int signal = pendingSignal.load())
      endBySignal(signal);
}

void setInterruptibleChild(pid_t pid) {
  child.store(pid);
  if (pid > 0 && pendingSignal.load())
    ::kill(-pid, SIGTERM);
}

} // namespace cuvil
