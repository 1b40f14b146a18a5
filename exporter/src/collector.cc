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

Expected<std::string> ReadSmallFile(const std::string& path, size_t limit) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{path + ": " + std::strerror(errno)};
  std::string out;
  char buffer[16384];
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int saved = errno;
      close(fd);
      return Error{path + ": " + std::strerror(saved)};
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

std::optional<double> ReadNumberFile(const std::string& path) {
  // One read: a sysfs attribute comes whole in the first read(), and a
  // number never fills the buffer.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buffer[128];
  ssize_t n;
  do {
    n = read(fd, buffer, sizeof buffer);
  } while (n < 0 && errno == EINTR);
  close(fd);
  if (n <= 0 || n == static_cast<ssize_t>(sizeof buffer)) return std::nullopt;
  std::string_view s(buffer, static_cast<size_t>(n));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

}  // namespace jobmon::exporter
