#include "peer_sync.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>

#include "jobmon/common/atomic_file.h"

namespace jobmon::fake_trainer {

PeerSync::PeerSync(std::string dir, int rank, int world_size)
    : dir_(std::move(dir)), rank_(rank), world_size_(world_size) {
  mkdir(dir_.c_str(), 0755);
  Beat();
  heartbeat_ = std::thread([this] {
    while (!done_.load()) {
      Beat();
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  });
}

PeerSync::~PeerSync() {
  done_.store(true);
  heartbeat_.join();
}

std::string PeerSync::PathOf(const char* kind, int rank) const {
  return dir_ + "/" + kind + "-" + std::to_string(rank);
}

void PeerSync::Beat() const {
  const std::string path = PathOf("alive", rank_);
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) close(fd);
  utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // now
}

void PeerSync::Publish(int64_t step) {
  (void)WriteFileAtomically(PathOf("step", rank_), std::to_string(step) + "\n");
}

bool PeerSync::AllReached(int64_t step) const {
  for (int rank = 0; rank < world_size_; ++rank) {
    std::ifstream in(PathOf("step", rank));
    int64_t published = -1;
    if (!(in >> published) || published < step) return false;
  }
  return true;
}

std::optional<int> PeerSync::SilentPeer(double timeout_seconds) const {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  for (int rank = 0; rank < world_size_; ++rank) {
    if (rank == rank_) continue;
    struct stat st {};
    if (stat(PathOf("alive", rank).c_str(), &st) != 0) continue;  // not started yet
    double age = static_cast<double>(now.tv_sec - st.st_mtim.tv_sec) +
                 1e-9 * static_cast<double>(now.tv_nsec - st.st_mtim.tv_nsec);
    if (age > timeout_seconds) return rank;
  }
  return std::nullopt;
}

}  // namespace jobmon::fake_trainer
