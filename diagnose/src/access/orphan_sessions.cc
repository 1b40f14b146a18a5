#include "access/orphan_sessions.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "jobmon/common/atomic_file.h"
#include "jobmon/common/user_file.h"
#include "jobmon/diagnose/tsdb_access.h"

namespace jobmon::diagnose {
namespace fs = std::filesystem;

namespace {

constexpr const char* kRecord = "session";
constexpr const char* kPrefix = "jobmon-diagnose-";

// Two lines of pids and start times; more is not a record of ours.
constexpr size_t kRecordMaxBytes = 4096;

// /proc/<pid>/cmdline: procfs, the kernel's, never a FIFO.
std::string ReadSmall(const std::string& path) {
  std::ifstream in(path);
  std::string text(4096, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

// argv joined by NULs, as /proc/<pid>/cmdline.
std::string Cmdline(pid_t pid, const std::string& procfs) {
  return ReadSmall(procfs + "/" + std::to_string(pid) + "/cmdline");
}

}  // namespace

Expected<void> RecordSession(const std::string& temp_dir, const ProcessIdentity& prometheus) {
  auto owner = ReadProcessIdentity(getpid());
  if (!owner) return owner.error();
  const std::string text = "owner " + std::to_string(owner->pid) + " " +
                           std::to_string(owner->start_time) + "\nprometheus " +
                           std::to_string(prometheus.pid) + " " +
                           std::to_string(prometheus.start_time) + "\n";
  return WriteFileAtomically(temp_dir + "/" + kRecord, text, 0600);
}

Expected<SessionRecord> ParseSessionRecord(const std::string& text) {
  SessionRecord record;
  bool owner = false, prometheus = false;
  std::istringstream in(text);
  std::string what;
  long long pid = 0;
  unsigned long long start = 0;
  while (in >> what >> pid >> start) {
    if (pid <= 0 || pid > 4194304) return Error{"session record: bad pid"};
    ProcessIdentity id{static_cast<pid_t>(pid), start, ""};
    if (what == "owner") {
      record.owner = id;
      owner = true;
    } else if (what == "prometheus") {
      record.prometheus = id;
      prometheus = true;
    }
  }
  if (!owner || !prometheus) return Error{"session record: owner or prometheus missing"};
  return record;
}

std::vector<std::string> StopOrphanedSessionsIn(const std::string& parent,
                                                const std::string& procfs) {
  std::vector<std::string> done;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(kPrefix) || entry.is_symlink(ec) || !entry.is_directory(ec)) continue;
    const std::string dir = entry.path().string();
    struct stat dir_st {};
    if (lstat(dir.c_str(), &dir_st) != 0 || !S_ISDIR(dir_st.st_mode)) continue;
    // The dir's owner may swap the record for a FIFO or a symlink at any
    // time, and we may be root: opened as a user file (never a FIFO or a
    // device, no symlink followed), then checked on the descriptor itself.
    auto file = OpenUserFile(dir + "/" + kRecord);
    if (!file || file->st.st_uid != dir_st.st_uid) continue;
    auto text = ReadFdRange(file->fd.get(), 0, kRecordMaxBytes);
    if (!text) continue;
    auto record = ParseSessionRecord(*text);
    if (!record || IsSameProcessRunning(record->owner, procfs)) continue;  // owner alive
    ProcessIdentity prometheus = record->prometheus;
    std::string outcome = "no Prometheus left";
    if (IsSameProcessRunning(prometheus, procfs)) {
      // Only the dir owner's own process, still serving that very dir.
      struct stat proc_st {};
      const std::string cmdline = Cmdline(prometheus.pid, procfs);
      const std::string marker = "--storage.tsdb.path=" + dir + "/";
      if (stat((procfs + "/" + std::to_string(prometheus.pid)).c_str(), &proc_st) != 0 ||
          proc_st.st_uid != dir_st.st_uid || cmdline.find(marker) == std::string::npos) {
        continue;
      }
      prometheus.cmdline = cmdline;
      auto stopped = StopDaemon(prometheus, std::chrono::seconds(10), procfs);
      outcome = stopped ? std::string("Prometheus pid ") + std::to_string(prometheus.pid) + " " +
                              ToString(*stopped)
                        : stopped.error().message;
    }
    if (dir_st.st_uid == geteuid()) {
      fs::remove_all(dir, ec);
      outcome += ec ? ", dir kept: " + ec.message() : ", dir removed";
    }
    done.push_back(dir + ": owner pid " + std::to_string(record->owner.pid) + " gone; " + outcome);
  }
  return done;
}

std::vector<std::string> StopOrphanedSessions(const std::string& temp_parent) {
  std::string parent = temp_parent;
  if (parent.empty()) {
    const char* tmp = getenv("TMPDIR");
    parent = tmp && *tmp ? tmp : "/tmp";
  }
  return StopOrphanedSessionsIn(parent);
}

}  // namespace jobmon::diagnose
