#include "jobmon/exporter/collector.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace jobmon::exporter {

prometheus::MetricFamily& FamilyBuilder::FamilyFor(const std::string& name, const std::string& help,
                                                   prometheus::MetricType type) {
  for (auto& family : families_) {
    if (family.name == name) return family;
  }
  families_.push_back({name, help, type, {}});
  return families_.back();
}

void FamilyBuilder::Gauge(const std::string& name, const std::string& help, const Labels& labels,
                          double value) {
  prometheus::ClientMetric metric;
  for (const auto& [k, v] : labels) metric.label.push_back({k, v});
  metric.gauge.value = value;
  FamilyFor(name, help, prometheus::MetricType::Gauge).metric.push_back(std::move(metric));
}

void FamilyBuilder::Counter(const std::string& name, const std::string& help, const Labels& labels,
                            double value) {
  prometheus::ClientMetric metric;
  for (const auto& [k, v] : labels) metric.label.push_back({k, v});
  metric.counter.value = value;
  FamilyFor(name, help, prometheus::MetricType::Counter).metric.push_back(std::move(metric));
}

Families FamilyBuilder::Take() { return std::move(families_); }

namespace {

// ReadSmallFile, with the errno of a failure in `err`.
Expected<std::string> ReadBounded(const std::string& path, size_t limit, int& err) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    err = errno;
    return Error{path + ": " + std::strerror(err)};
  }
  std::string out;
  char buffer[16384];
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      close(fd);
      return Error{path + ": " + std::strerror(err)};
    }
    if (n == 0) break;
    out.append(buffer, static_cast<size_t>(n));
    if (out.size() > limit) {
      close(fd);
      return Error{path + ": larger than " + std::to_string(limit) + " bytes"};
    }
  }
  close(fd);
  return out;
}

}  // namespace

Expected<std::string> ReadSmallFile(const std::string& path, size_t limit) {
  int err = 0;
  return ReadBounded(path, limit, err);
}

Expected<std::optional<std::string>> ReadProcessFile(const std::string& path, size_t limit) {
  int err = 0;
  auto text = ReadBounded(path, limit, err);
  if (text) return std::optional<std::string>(std::move(text).value());
  if (err == ENOENT || err == ESRCH) return std::optional<std::string>();
  return text.error();
}

Expected<std::optional<std::string>> ReadAttribute(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  // A driver without the value: absent, not broken.
  auto absent = [](int err) { return err == ENOENT || err == ENODATA || err == EOPNOTSUPP; };
  if (fd < 0) {
    if (absent(errno)) return std::optional<std::string>();
    return Error{path + ": " + std::strerror(errno)};
  }
  char buffer[256];
  ssize_t n;
  do {
    n = read(fd, buffer, sizeof buffer);
  } while (n < 0 && errno == EINTR);
  int saved = errno;
  close(fd);
  if (n < 0) {
    if (absent(saved)) return std::optional<std::string>();
    return Error{path + ": " + std::strerror(saved)};
  }
  if (n == static_cast<ssize_t>(sizeof buffer)) return Error{path + ": not a single value"};
  return std::optional<std::string>(std::string(buffer, static_cast<size_t>(n)));
}

namespace {

// Digits only (from_chars alone would take "-5" as a signed value and
// "nan"/"inf" as doubles), then one optional trailing newline.
template <typename T>
std::optional<T> ParseDecimal(std::string_view text, bool allow_minus) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  std::string_view digits = text;
  if (allow_minus && !digits.empty() && digits.front() == '-') digits.remove_prefix(1);
  if (digits.empty() || digits.find_first_not_of("0123456789") != digits.npos) return std::nullopt;
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

template <typename T>
Expected<std::optional<T>> ReadParsed(const std::string& path,
                                      std::optional<T> (*parse)(std::string_view)) {
  auto text = ReadAttribute(path);
  if (!text) return text.error();
  if (!*text) return std::optional<T>();
  auto value = parse(**text);
  if (!value) {
    std::string shown = **text;
    if (!shown.empty() && shown.back() == '\n') shown.pop_back();
    return Error{path + ": not a number the kernel prints: '" + shown + "'"};
  }
  return value;
}

}  // namespace

std::optional<uint64_t> ParseCounter(std::string_view text) {
  return ParseDecimal<uint64_t>(text, false);
}

std::optional<int64_t> ParseInteger(std::string_view text) {
  return ParseDecimal<int64_t>(text, true);
}

Expected<std::optional<uint64_t>> ReadCounterFile(const std::string& path) {
  return ReadParsed<uint64_t>(path, ParseCounter);
}

Expected<std::optional<int64_t>> ReadIntegerFile(const std::string& path) {
  return ReadParsed<int64_t>(path, ParseInteger);
}

}  // namespace jobmon::exporter
