#pragma once
// Ranks that really wait for each other, through files in a shared dir:
// each rank publishes its last finished step (the "all-reduce" a step ends
// with) and a heartbeat from a thread of its own, as JAX's coordination
// client does. A rank that dies stops both, so its peers block in the
// barrier and rank 0, the coordinator, notices the silent heartbeat.

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>

namespace jobmon::fake_trainer {

class PeerSync {
 public:
  PeerSync(std::string dir, int rank, int world_size);
  ~PeerSync();
  PeerSync(const PeerSync&) = delete;
  PeerSync& operator=(const PeerSync&) = delete;

  void Publish(int64_t step);
  // True once every rank has published `step` or later.
  bool AllReached(int64_t step) const;
  // The first peer whose heartbeat is older than `timeout_seconds`.
  std::optional<int> SilentPeer(double timeout_seconds) const;

 private:
  std::string PathOf(const char* kind, int rank) const;
  void Beat() const;

  std::string dir_;
  int rank_, world_size_;
  std::atomic<bool> done_{false};
  std::thread heartbeat_;
};

}  // namespace jobmon::fake_trainer
