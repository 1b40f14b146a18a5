#include "jobmon/exporter/proc_parsers.h"

#include <charconv>
#include <sstream>

#include "jobmon/common/text_lines.h"
#include "jobmon/common/whole_number.h"

namespace jobmon::exporter {
namespace {

// For the parsers that index lines.
std::vector<std::string_view> Lines(std::string_view text) {
  const TextLines lines(text);
  return std::vector<std::string_view>(lines.begin(), lines.end());
}

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

}  // namespace

Expected<SystemStat> ParseSystemStat(std::string_view text) {
  SystemStat stat;
  int found = 0;
  for (std::string_view line : TextLines(text)) {
    auto fields = Fields(line);
    if (fields.size() != 2) continue;
    auto value = WholeNumber<uint64_t>(fields[1]);
    if (!value) continue;
    if (fields[0] == "procs_running") stat.procs_running = *value, ++found;
    if (fields[0] == "procs_blocked") stat.procs_blocked = *value, ++found;
    if (fields[0] == "ctxt") stat.context_switches = *value, ++found;
  }
  if (found != 3) return Error{"/proc/stat lacks procs_running, procs_blocked or ctxt"};
  return stat;
}

std::map<std::string, uint64_t> ParseKeyValues(std::string_view text) {
  std::map<std::string, uint64_t> out;
  for (std::string_view line : TextLines(text)) {
    auto fields = Fields(line);
    if (fields.size() < 2) continue;
    std::string_view key = fields[0];
    if (!key.empty() && key.back() == ':') key.remove_suffix(1);
    auto value = WholeNumber<uint64_t>(fields[1]);
    if (!value) continue;
    bool kilobytes = fields.size() >= 3 && fields[2] == "kB";
    out[std::string(key)] = kilobytes ? *value * 1024 : *value;
  }
  return out;
}

Expected<Pressure> ParsePressure(std::string_view text) {
  Pressure pressure;
  for (std::string_view line : TextLines(text)) {
    auto fields = Fields(line);
    if (fields.size() != 5 || (fields[0] != "some" && fields[0] != "full")) continue;
    PressureLine parsed;
    bool ok = true;
    for (size_t i = 1; i < fields.size() && ok; ++i) {
      size_t eq = fields[i].find('=');
      if (eq == fields[i].npos) {
        ok = false;
        break;
      }
      std::string_view key = fields[i].substr(0, eq), value = fields[i].substr(eq + 1);
      if (key == "total") {
        auto v = WholeNumber<uint64_t>(value);
        ok = v.has_value();
        if (v) parsed.total_us = *v;
      } else {
        auto v = WholeNumber<double>(value);
        ok = v.has_value();
        if (v) (key == "avg10" ? parsed.avg10 : key == "avg60" ? parsed.avg60 : parsed.avg300) = *v;
      }
    }
    if (!ok) return Error{"malformed pressure line: '" + std::string(line) + "'"};
    (fields[0] == "some" ? pressure.some : pressure.full) = parsed;
  }
  if (!pressure.some) return Error{"pressure file without a 'some' line"};
  return pressure;
}

Expected<std::vector<NetDevice>> ParseNetDev(std::string_view text) {
  std::vector<NetDevice> devices;
  auto lines = Lines(text);
  for (size_t i = 2; i < lines.size(); ++i) {  // two header lines
    std::string_view line = lines[i];
    size_t colon = line.find(':');
    if (colon == line.npos) continue;
    auto name_fields = Fields(line.substr(0, colon));
    auto fields = Fields(line.substr(colon + 1));
    if (name_fields.size() != 1 || fields.size() < 16) {
      return Error{"malformed /proc/net/dev line " + std::to_string(i + 1)};
    }
    uint64_t v[16];
    for (size_t k = 0; k < 16; ++k) {
      auto n = WholeNumber<uint64_t>(fields[k]);
      if (!n) return Error{"bad number in /proc/net/dev line " + std::to_string(i + 1)};
      v[k] = *n;
    }
    devices.push_back(
        {std::string(name_fields[0]), v[0], v[1], v[2], v[3], v[8], v[9], v[10], v[11]});
  }
  return devices;
}

Expected<std::map<std::string, int64_t>> ParseSnmpTables(std::string_view text) {
  std::map<std::string, int64_t> out;
  auto lines = Lines(text);
  for (size_t i = 0; i + 1 < lines.size(); i += 2) {
    auto names = Fields(lines[i]);
    auto values = Fields(lines[i + 1]);
    if (names.empty() || values.empty() || names[0] != values[0] || names.size() != values.size()) {
      return Error{"mismatched snmp header/value lines at line " + std::to_string(i + 1)};
    }
    std::string proto(names[0]);  // "Tcp:"
    for (size_t k = 1; k < names.size(); ++k) {
      auto value = WholeNumber<int64_t>(values[k]);
      if (!value) return Error{"bad value for " + proto + std::string(names[k])};
      out[proto + std::string(names[k])] = *value;
    }
  }
  return out;
}

}  // namespace jobmon::exporter
