#pragma once
// Structured log lines for the daemon: an event name plus key=value fields,
// rendered as logfmt (text) or one JSON object per line, through spdlog.
// Values are data, never format strings; secrets never reach here.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jobmon::monitor {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

using LogFields = std::vector<std::pair<std::string, std::string>>;

class EventLog {
 public:
  virtual ~EventLog() = default;
  virtual void Write(LogLevel level, std::string_view event, const LogFields& fields) = 0;
  void Info(std::string_view event, const LogFields& fields = {}) {
    Write(LogLevel::kInfo, event, fields);
  }
  void Warn(std::string_view event, const LogFields& fields = {}) {
    Write(LogLevel::kWarning, event, fields);
  }
  void Error(std::string_view event, const LogFields& fields = {}) {
    Write(LogLevel::kError, event, fields);
  }
};

// "text": `ts level event key=value ...` (values quoted when they need it);
// "json": {"ts":..., "level":..., "event":..., key: value, ...}. To stderr.
std::unique_ptr<EventLog> MakeStderrEventLog(const std::string& format);

// logfmt rendering of one event (pure; tests and the text log use it).
std::string RenderLogfmt(std::string_view event, const LogFields& fields);

}  // namespace jobmon::monitor
