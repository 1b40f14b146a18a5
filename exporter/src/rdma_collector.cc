// rdma: InfiniBand/RoCE port counters in sysfs.
#include "jobmon/exporter/rdma_collector.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "jobmon/common/metric_names.h"

namespace jobmon::exporter {
namespace fs = std::filesystem;

namespace {

struct Source {
  const char* file;  // relative to the port dir
  double scale;
};

struct Series {
  const char* name;
  const char* help;
  std::vector<Source> sources;  // first present wins
};

// Broadcom (bnxt_re) names first, then mlx5's, then the standard IB counters.
// A file appears under one series only (mlx5's local_ack_timeout_err is the
// ACK-timeout counter; it was once also its own series, counted twice).
const std::vector<Series>& Catalog() {
  static const std::vector<Series> catalog = {
      {"hw_rdma_rx_bytes_total",
       "RDMA bytes received",
       {{"hw_counters/rx_bytes", 1}, {"counters/port_rcv_data", 4}}},
      {"hw_rdma_tx_bytes_total",
       "RDMA bytes sent",
       {{"hw_counters/tx_bytes", 1}, {"counters/port_xmit_data", 4}}},
      {"hw_rdma_rx_pkts_total",
       "RDMA packets received",
       {{"hw_counters/rx_pkts", 1}, {"counters/port_rcv_packets", 1}}},
      {"hw_rdma_tx_pkts_total",
       "RDMA packets sent",
       {{"hw_counters/tx_pkts", 1}, {"counters/port_xmit_packets", 1}}},
      {"hw_rdma_tx_retx_bytes_total",
       "RDMA bytes retransmitted",
       {{"hw_counters/tx_retx_bytes", 1}}},
      {metric_names::kRdmaTxRetxPktsTotal,
       "RDMA packets retransmitted",
       {{"hw_counters/tx_retx_pkts", 1}}},
      {metric_names::kRdmaTxAckTimeoutTotal,
       "RDMA ACK timeouts",
       {{"hw_counters/tx_ack_timeout", 1}, {"hw_counters/local_ack_timeout_err", 1}}},
      {metric_names::kRdmaRxCnpPktsTotal,
       "Congestion notification packets received",
       {{"hw_counters/rx_cnp_pkts", 1}, {"hw_counters/rp_cnp_handled", 1}}},
      {"hw_rdma_tx_cnp_pkts_total",
       "Congestion notification packets sent",
       {{"hw_counters/tx_cnp_pkts", 1}, {"hw_counters/np_cnp_sent", 1}}},
      {"hw_rdma_rx_ecn_marked_pkts_total",
       "ECN-marked RoCE packets received",
       {{"hw_counters/rx_ecn_marked_pkts", 1}, {"hw_counters/np_ecn_marked_roce_packets", 1}}},
      {metric_names::kRdmaReqRxCqeErrTotal,
       "Requester CQE errors",
       {{"hw_counters/req_rx_cqe_err", 1}, {"hw_counters/req_cqe_error", 1}}},
      {metric_names::kRdmaReqTxRetryExcdErrTotal,
       "Requester retries exhausted",
       {{"hw_counters/req_tx_retry_excd_err", 1}, {"hw_counters/max_retry_exceeded", 1}}},
      {"hw_rdma_out_of_sequence_total",
       "Out-of-sequence packets",
       {{"hw_counters/out_of_sequence", 1}}},
      {"hw_rdma_packet_seq_err_total",
       "Packet sequence errors (NAKs)",
       {{"hw_counters/packet_seq_err", 1}}},
      {"hw_rdma_rnr_nak_retry_err_total",
       "RNR NAK retries exceeded",
       {{"hw_counters/rnr_nak_retry_err", 1}}},
      {"hw_rdma_port_rcv_errors_total", "Port receive errors", {{"counters/port_rcv_errors", 1}}},
      {"hw_rdma_symbol_errors_total", "Symbol errors", {{"counters/symbol_error", 1}}},
      {"hw_rdma_link_downed_total", "Link down events", {{"counters/link_downed", 1}}},
  };
  return catalog;
}

// The names in a directory: one getdents instead of an open() per catalog
// entry, most of which a given NIC does not have.
std::set<std::string> Names(const fs::path& dir) {
  std::error_code ec;
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    names.insert(entry.path().filename().string());
  }
  return names;
}

std::vector<fs::path> SortedDirs(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(dir, ec)) out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

// show_pma_counter (drivers/infiniband/core/sysfs.c) prints this when the
// device has no performance management agent: no value, not a broken one.
bool NoPma(const std::string& text) { return text.rfind("N/A", 0) == 0; }

}  // namespace

std::optional<int> ParsePortActive(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == text.npos) return std::nullopt;
  auto state = ParseCounter(text.substr(0, colon));
  if (!state) return std::nullopt;
  return *state == 4 ? 1 : 0;  // IB_PORT_ACTIVE
}

Expected<Families> RdmaCollector::Collect() {
  FamilyBuilder b;
  for (const fs::path& device : SortedDirs(fs::path(sysfs_) / "class" / "infiniband")) {
    for (const fs::path& port : SortedDirs(device / "ports")) {
      Labels labels{{"device", device.filename().string()}, {"port", port.filename().string()}};
      auto state = ReadAttribute((port / "state").string());
      if (!state) {
        Problem(state.error().message);
      } else if (*state) {
        if (auto active = ParsePortActive(**state)) {
          b.Gauge(metric_names::kRdmaPortState, "1 if the port is ACTIVE (4: ACTIVE)", labels,
                  *active);
        } else {
          Problem((port / "state").string() + ": not '<number>: <name>'");
        }
      }
      std::set<std::string> present;
      for (const char* group : {"counters", "hw_counters"}) {
        for (const std::string& name : Names(port / group)) present.insert(group + ("/" + name));
      }
      for (const Series& series : Catalog()) {
        for (const Source& source : series.sources) {
          if (!present.count(source.file)) continue;
          std::string path = (port / source.file).string();
          auto text = ReadAttribute(path);
          if (text && (!*text || NoPma(**text))) continue;  // no value: the next source
          // Present but broken: this series is dropped, not taken from
          // another file that might count something else.
          if (!text) {
            Problem(text.error().message);
          } else if (auto value = ParseCounter(**text)) {
            b.Counter(series.name, series.help, labels, static_cast<double>(*value) * source.scale);
          } else {
            Problem(path + ": not a counter");
          }
          break;
        }
      }
    }
  }
  return b.Take();
}

}  // namespace jobmon::exporter
