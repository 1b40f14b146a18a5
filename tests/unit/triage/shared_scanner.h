#pragma once
// The process's default LogScanner (LogScanner::Default): building one
// compiles every signature's pattern database, which under ASan costs more
// than most tests do.

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

#include "jobmon/triage/log_scan.h"

namespace jobmon::triage {

inline const LogScanner& SharedScanner() {
  auto scanner = LogScanner::Default();
  if (!scanner) {
    ADD_FAILURE() << "the default scanner: " << scanner.error().message;
    std::abort();
  }
  return **scanner;
}

}  // namespace jobmon::triage
