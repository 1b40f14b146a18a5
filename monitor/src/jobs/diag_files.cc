#include "jobmon/monitor/diag_files.h"

#include <fcntl.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "jobmon/common/diag_dir.h"
#include "jobmon/common/hostlist.h"
#include "jobmon/common/private_ip.h"
#include "jobmon/common/tunnel.h"

namespace jobmon::monitor {
namespace {

bool PlainWord(const std::string& text) {
  if (text.empty() || text.size() > 32) return false;
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || c == '_' || c == '-'; });
}

// A path printed for an admin to copy: inside the diag dir, no "..", no
// control characters or shell quoting trouble.
bool PlainPathIn(const std::string& path, const std::string& dir) {
  if (dir.empty() || path.size() > 4096 || !path.starts_with(dir + "/")) return false;
  if (path.find("/../") != std::string::npos || path.ends_with("/..")) return false;
  return std::all_of(path.begin(), path.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '.' || c == '-' ||
           c == '_' || c == '+' || c == '%' || c == '@' || c == ',' || c == '=';
  });
}

std::string FirstNode(const std::string& node_list) {
  auto nodes = ExpandHostlist(node_list);
  if (!nodes || nodes->empty()) return "";
  return nodes->front();
}

}  // namespace

ManifestView CheckManifest(const Manifest& fields, const std::string& node_list,
                           const std::string& diag_dir) {
  ManifestView view;
  // The head node is where the plugin started Prometheus: the first node of
  // the job's allocation, as Slurm (not the file) says.
  const std::string head = FirstNode(node_list);
  if (IsPlainNodeName(head)) view.head_node = head;
  if (IsTunnelPort(fields.prometheus_port)) {
    view.prometheus_port = fields.prometheus_port;
    view.url = "http://127.0.0.1:" + std::to_string(*view.prometheus_port);
    if (!view.head_node.empty()) {
      view.tunnel_command = TunnelCommand(view.head_node, *view.prometheus_port);
    }
  }
  if (PlainWord(fields.state)) view.state = fields.state;
  // On the head node's disk, so anywhere absolute: the same plain-path rule.
  if (fields.tsdb_dir.size() > 1 && fields.tsdb_dir.front() == '/' &&
      PlainPathIn(fields.tsdb_dir, fields.tsdb_dir.substr(0, fields.tsdb_dir.find('/', 1)))) {
    view.tsdb_dir = fields.tsdb_dir;
  }
  if (fields.archive && PlainPathIn(fields.archive->path, diag_dir)) {
    view.archive_path = fields.archive->path;
  }
  if (auto choice = ParseOnHang(fields.on_hang)) view.on_hang = *choice;
  return view;
}

ManifestView ManifestFromJson(std::string_view text, const std::string& node_list,
                              const std::string& diag_dir) {
  // A manifest without the schema or with some fields of the wrong type
  // still gives what can be checked (ParseManifestFields leaves out the rest).
  auto fields = ParseManifestFields(text);
  return CheckManifest(fields ? fields->manifest : Manifest{}, node_list, diag_dir);
}

Expected<ManifestView> ReadDiagManifest(const std::string& diag_dir,
                                        const std::optional<JobUser>& user,
                                        const std::string& node_list) {
  auto text = ReadUserFile(DiagLayout{diag_dir}.manifest(), kMaxManifestBytes, {.user = user});
  if (!text) return text.error();
  return ManifestFromJson(*text, node_list, diag_dir);
}

bool HasReadableManifest(const std::string& diag_dir, const JobUser& user) {
  return OpenUserFile(DiagLayout{diag_dir}.manifest(), {.user = user}).ok();
}

TargetPolicy MakeTargetPolicy(const std::vector<Cidr>& cluster_cidrs, const std::string& node_list,
                              const slurm::NodeAddresses& known, std::vector<IpAddress> own) {
  TargetPolicy policy;
  policy.allowed = cluster_cidrs.empty() ? Rfc1918Cidrs() : cluster_cidrs;
  policy.excluded = DefaultExcludedCidrs();
  if (auto nodes = ExpandHostlist(node_list)) policy.nodes = std::move(*nodes);
  for (const std::string& node : policy.nodes) {
    if (auto found = known.find(node); found != known.end()) {
      policy.node_addresses.emplace(node, found->second);
    }
  }
  for (IpAddress& ip : own) ip = ip.Unmapped();
  policy.own = std::move(own);
  // The plugin publishes one exporter per node.
  policy.max_targets = std::min(kMaxTargetsPerJob, std::max<size_t>(policy.nodes.size(), 1));
  return policy;
}

CheckedTargets CheckTargets(const std::vector<ScrapeTarget>& targets, const TargetPolicy& policy) {
  CheckedTargets out;
  const std::set<std::string> nodes(policy.nodes.begin(), policy.nodes.end());
  std::set<std::string> hosts_taken, addresses_taken;
  auto drop = [&](const ScrapeTarget& t, const std::string& why) {
    // Bounded: the reasons go into one warning.
    if (out.dropped.size() < 16) {
      out.dropped.push_back(t.host.substr(0, 64) + " " + t.address.substr(0, 64) + ": " + why);
    } else if (out.dropped.size() == 16) {
      out.dropped.push_back("...");
    }
  };
  for (const ScrapeTarget& t : targets) {
    auto address = ParseTargetAddress(t.address);
    if (!address) {
      drop(t, "not a literal IP:port");
      continue;
    }
    const IpAddress ip = address->ip.Unmapped();
    auto in = [&](const std::vector<Cidr>& cidrs) {
      return std::any_of(cidrs.begin(), cidrs.end(), [&](const Cidr& c) { return c.Contains(ip); });
    };
    // Whatever cluster_cidrs says: these never name a node's exporter.
    if (ip.IsLoopback() || ip.IsUnspecified() || ip.IsLinkLocal()) {
      drop(t, "a loopback, link-local or unspecified address");
      continue;
    }
    if (in(policy.excluded) || !in(policy.allowed)) {
      drop(t, "outside the cluster CIDRs");
      continue;
    }
    if (!nodes.count(t.host)) {
      drop(t, "host label is not one of the job's nodes");
      continue;
    }
    // Its services may trust local connections: a job never gets them scraped.
    if (std::find(policy.own.begin(), policy.own.end(), ip) != policy.own.end()) {
      drop(t, "an address of the monitor's own host");
      continue;
    }
    // The label is the user's word; the address must be the one Slurm has
    // for that node, so a target cannot reach another machine of the cluster.
    auto slurm = policy.node_addresses.find(t.host);
    if (slurm == policy.node_addresses.end()) {
      drop(t, "Slurm's address (NodeAddr) of " + t.host.substr(0, 64) + " is not known");
      continue;
    }
    if (std::find(slurm->second.begin(), slurm->second.end(), ip) == slurm->second.end()) {
      std::string expected;
      for (const IpAddress& a : slurm->second)
        expected += (expected.empty() ? "" : ",") + a.ToString();
      drop(t, "not the address Slurm has for " + t.host.substr(0, 64) + " (NodeAddr " + expected +
                  ")");
      continue;
    }
    const std::string canonical = address->ToString();
    if (hosts_taken.count(t.host) || addresses_taken.count(canonical)) {
      drop(t, "a second target for the same node or address");
      continue;
    }
    if (out.kept.size() >= policy.max_targets) {
      drop(t, "over the per-job cap of " + std::to_string(policy.max_targets));
      continue;
    }
    hosts_taken.insert(t.host);
    addresses_taken.insert(canonical);
    out.kept.push_back({t.host, canonical});
  }
  return out;
}

}  // namespace jobmon::monitor
