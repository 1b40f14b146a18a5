#include "jobmon/monitor/event_log.h"

#include <fmt/format.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

namespace jobmon::monitor {
namespace {

spdlog::level::level_enum ToSpd(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarning:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
  }
  return spdlog::level::info;
}

const char* Name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

class SpdEventLog : public EventLog {
 public:
  explicit SpdEventLog(bool json) : json_(json) {
    logger_ = std::make_shared<spdlog::logger>("jobmon",
                                               std::make_shared<spdlog::sinks::stderr_sink_mt>());
    // The text pattern carries time and level; JSON lines carry their own.
    logger_->set_pattern(json ? "%v" : "%Y-%m-%dT%H:%M:%S.%e%z %l %v");
    logger_->set_level(spdlog::level::debug);
    logger_->flush_on(spdlog::level::debug);
  }
  void Write(LogLevel level, std::string_view event, const LogFields& fields) override {
    if (!json_) {
      logger_->log(ToSpd(level), "{}", RenderLogfmt(event, fields));
      return;
    }
    nlohmann::json line = {{"level", Name(level)}, {"event", event}};
    for (const auto& [key, value] : fields) line[key] = value;
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    tm utc{};
    gmtime_r(&now.tv_sec, &utc);
    line["ts"] = fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}.{:03d}Z",
                             utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour,
                             utc.tm_min, utc.tm_sec, static_cast<int>(now.tv_nsec / 1000000));
    logger_->log(ToSpd(level), "{}",
                 line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }

 private:
  bool json_;
  std::shared_ptr<spdlog::logger> logger_;
};

bool NeedsQuotes(std::string_view value) {
  if (value.empty()) return true;
  for (char c : value) {
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || static_cast<unsigned char>(c) < 0x20) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string RenderLogfmt(std::string_view event, const LogFields& fields) {
  std::string out(event);
  for (const auto& [key, value] : fields) {
    out += ' ';
    out += key;
    out += '=';
    if (!NeedsQuotes(value)) {
      out += value;
      continue;
    }
    out += '"';
    for (char c : value) {
      if (c == '"' || c == '\\') out += '\\';
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
    out += '"';
  }
  return out;
}

std::unique_ptr<EventLog> MakeStderrEventLog(const std::string& format) {
  return std::make_unique<SpdEventLog>(format == "json");
}

}  // namespace jobmon::monitor
