// net: /proc/net/dev; tcp: /proc/net/snmp, /proc/net/netstat.
#include "jobmon/exporter/net_collector.h"

#include "jobmon/common/metric_names.h"
#include "jobmon/exporter/proc_parsers.h"

namespace jobmon::exporter {

Expected<Families> NetCollector::Collect() {
  auto text = ReadSmallFile(procfs_ + "/net/dev");
  if (!text) return text.error();
  auto devices = ParseNetDev(*text);
  if (!devices) return devices.error();
  FamilyBuilder b;
  for (const NetDevice& d : *devices) {
    Labels l{{"device", d.name}};
    b.Counter("hw_net_rx_bytes_total", "Network bytes received", l,
              static_cast<double>(d.rx_bytes));
    b.Counter("hw_net_tx_bytes_total", "Network bytes sent", l, static_cast<double>(d.tx_bytes));
    b.Counter(metric_names::kNetRxErrorsTotal, "NIC receive errors", l,
              static_cast<double>(d.rx_errors));
    b.Counter(metric_names::kNetTxErrorsTotal, "NIC transmit errors", l,
              static_cast<double>(d.tx_errors));
    b.Counter("hw_net_rx_drop_total", "NIC receive drops", l, static_cast<double>(d.rx_drop));
    b.Counter("hw_net_tx_drop_total", "NIC transmit drops", l, static_cast<double>(d.tx_drop));
  }
  return b.Take();
}

Expected<Families> TcpCollector::Collect() {
  // Each file's series stand alone: a broken one drops its own and is a
  // problem (collector.h).
  std::map<std::string, int64_t> values;
  for (const char* file : {"/net/snmp", "/net/netstat"}) {
    auto text = ReadSmallFile(procfs_ + file);
    if (!text) {
      Problem(text.error().message);
      continue;
    }
    auto tables = ParseSnmpTables(*text);
    if (!tables) {
      Problem(procfs_ + file + ": " + tables.error().message);
      continue;
    }
    values.insert(tables->begin(), tables->end());
  }
  const struct {
    const char* key;
    const char* name;
    const char* help;
  } counters[] = {
      {"Tcp:RetransSegs", metric_names::kTcpRetransmitsTotal, "TCP segments retransmitted"},
      {"TcpExt:ListenOverflows", "hw_tcp_listen_overflows_total", "Listen queue overflows"},
      {"TcpExt:ListenDrops", metric_names::kTcpListenDropsTotal, "Listen queue drops"},
      {"Tcp:EstabResets", "hw_tcp_estab_resets_total", "Established connections reset"},
      {"TcpExt:TCPAbortOnTimeout", metric_names::kTcpAbortOnTimeoutTotal,
       "Connections aborted after a timeout"},
  };
  FamilyBuilder b;
  for (const auto& c : counters) {
    auto it = values.find(c.key);
    if (it == values.end()) continue;
    // Signed in the table only for Tcp:MaxConn (-1, net/ipv4/proc.c); a
    // negative counter is a broken file, not a value.
    if (it->second < 0) {
      Problem(procfs_ + "/net: " + c.key + " is negative");
      continue;
    }
    b.Counter(c.name, c.help, {}, static_cast<double>(it->second));
  }
  return b.Take();
}

}  // namespace jobmon::exporter
