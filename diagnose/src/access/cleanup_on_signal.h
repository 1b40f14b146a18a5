#pragma once
// Read-only Prometheus instances and their temp dirs must go on every path
// out of a diagnosis, a SIGINT (Ctrl-C) or SIGTERM included. SIGINT,
// SIGTERM and SIGHUP are blocked in the calling thread (and so in the
// threads it starts later) and a thread waits for them with sigwait: it
// stops every registered instance, removes its temp dir and exits 128 +
// the signal (130 for SIGINT, 143 for SIGTERM). Cleanup runs as ordinary
// code in that thread, not in a handler, and under the same lock a
// session's destructor holds, so a signal during a destructor waits for it.

#include <functional>

namespace jobmon::diagnose {

// Starts the waiting thread once (later calls do nothing). Call it before
// starting other threads: a thread started earlier keeps the signals
// unblocked and would take the default action (no cleanup). OpenTsdb calls
// it before starting a Prometheus.
void InstallCleanupOnSignal();

using CleanupId = unsigned long;
// `cleanup` runs once: on a signal (from the waiting thread) or through
// RunCleanup (the session's destructor).
CleanupId RegisterCleanup(std::function<void()> cleanup);
// Runs and forgets the cleanup, under the lock the signal thread takes.
void RunCleanup(CleanupId id);

}  // namespace jobmon::diagnose
