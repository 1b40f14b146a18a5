#pragma once
// Pure parsers for the procfs files the host, net and tcp collectors read,
// per the kernel's documented layouts (proc(5), Documentation/accounting/psi.rst,
// Documentation/filesystems/proc.rst). Reading is separate (collectors).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/expected.h"

namespace jobmon::exporter {

// /proc/stat: procs_running, procs_blocked, ctxt.
struct SystemStat {
  uint64_t procs_running = 0;
  uint64_t procs_blocked = 0;
  uint64_t context_switches = 0;
};
Expected<SystemStat> ParseSystemStat(std::string_view text);

// "key value" files (/proc/vmstat) and "Key: value kB" files (/proc/meminfo,
// values in bytes when the line says kB).
std::map<std::string, uint64_t> ParseKeyValues(std::string_view text);

// /proc/pressure/<resource>: "some avg10=0.00 avg60=0.00 avg300=0.00 total=0".
struct PressureLine {
  double avg10 = 0, avg60 = 0, avg300 = 0;
  uint64_t total_us = 0;
};
struct Pressure {
  std::optional<PressureLine> some, full;
};
Expected<Pressure> ParsePressure(std::string_view text);

// /proc/net/dev: per interface.
struct NetDevice {
  std::string name;
  uint64_t rx_bytes = 0, rx_packets = 0, rx_errors = 0, rx_drop = 0;
  uint64_t tx_bytes = 0, tx_packets = 0, tx_errors = 0, tx_drop = 0;
};
Expected<std::vector<NetDevice>> ParseNetDev(std::string_view text);

// /proc/net/snmp and /proc/net/netstat: pairs of "Proto: names" / "Proto: values"
// lines, flattened to "Proto:Name" -> value.
Expected<std::map<std::string, int64_t>> ParseSnmpTables(std::string_view text);

}  // namespace jobmon::exporter
