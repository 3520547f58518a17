//===- Interrupt.h - SIGTERM / SIGINT during a compile -----------*- C++ -*-===//
//
// A compile killed by a signal must not leave its build folder or an
// orphaned clang behind. A program that wants this (cuvilc) installs the
// handlers; code that owns something to clean up (the toolchain's build
// folder and child processes) marks it with a CleanupScope. A signal outside
// every scope ends the process at once, as by default; inside one, it kills
// the registered child's process group and the process ends, by the same
// signal, when the outermost scope closes, after the destructors in it ran.
// Without the handlers (a library user such as the Python extension),
// nothing changes.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_SUPPORT_INTERRUPT_H
#define CUVIL_SUPPORT_INTERRUPT_H

#include <sys/types.h>

namespace cuvil {

/// Installs handlers for SIGTERM, SIGINT and SIGHUP (process-wide).
void installInterruptHandlers();

/// The signal that asked the process to stop, or 0.
int pendingInterrupt();

/// Cleanup pending while alive; scopes nest.
class CleanupScope {
public:
  CleanupScope();
  ~CleanupScope();
  CleanupScope(const CleanupScope &) = delete;
  CleanupScope &operator=(const CleanupScope &) = delete;
};

/// Registers a child process (the leader of its own process group) that an
/// interrupt kills; 0 unregisters. If an interrupt already came, the child
/// is killed at once.
void setInterruptibleChild(pid_t pid);

} // namespace cuvil

#endif // CUVIL_SUPPORT_INTERRUPT_H
