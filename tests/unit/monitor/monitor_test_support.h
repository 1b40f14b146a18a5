#pragma once
// What the monitor's unit tests share: a scratch dir, appending to a log
// as a trainer does, and a stall policy with short figures.

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "jobmon/monitor/progress_tracker.h"

namespace jobmon::monitor::test_support {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir()
      : path(fs::temp_directory_path() /
             ("jobmon-progress-" + std::to_string(getpid()) + "-" +
              std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()))) {
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

inline void Append(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::app | std::ios::binary) << text;
}

inline triage::StallRule Policy() {
  triage::StallRule p;
  p.k = 5;
  p.min_stall_seconds = 10;
  p.startup_grace_seconds = 120;
  p.checkpoint_grace_factor = 1.5;
  p.first_checkpoint_grace_seconds = 60;
  return p;
}

}  // namespace jobmon::monitor::test_support
