#include "access/cleanup_on_signal.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <thread>

namespace jobmon::diagnose {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<CleanupId, std::function<void()>> cleanups;
  CleanupId next = 1;
};

Registry& TheRegistry() {
  static Registry* registry = new Registry;  // never destroyed: the thread may outlive main
  return *registry;
}

sigset_t CleanupSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

[[noreturn]] void WaitAndClean() {
  sigset_t set = CleanupSignals();
  int signal = 0;
  while (sigwait(&set, &signal) != 0) {
  }
  Registry& r = TheRegistry();
  std::lock_guard lock(r.mutex);  // held until exit: nothing registers after
  for (auto& [id, cleanup] : r.cleanups) cleanup();
  r.cleanups.clear();
  _exit(128 + signal);
}

}  // namespace

void InstallCleanupOnSignal() {
  static std::once_flag once;
  std::call_once(once, [] {
    sigset_t set = CleanupSignals();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::thread(WaitAndClean).detach();
  });
}

CleanupId RegisterCleanup(std::function<void()> cleanup) {
  Registry& r = TheRegistry();
  std::lock_guard lock(r.mutex);
  CleanupId id = r.next++;
  r.cleanups.emplace(id, std::move(cleanup));
  return id;
}

void RunCleanup(CleanupId id) {
  Registry& r = TheRegistry();
  std::lock_guard lock(r.mutex);
  auto it = r.cleanups.find(id);
  if (it == r.cleanups.end()) return;
  it->second();
  r.cleanups.erase(it);
}

}  // namespace jobmon::diagnose
