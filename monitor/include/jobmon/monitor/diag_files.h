#pragma once
// What the daemon reads from a job's diag dir, which the job's user owns
// and can fill with anything (docs/operations.md, "Security and hardening"): manifest.json and
// targets/*.json. Every file is opened with OpenUserFile as the job's user
// (a FIFO, device or symlink is refused, never waited on), capped in size
// and count; from the manifest only what can be checked is taken, and the
// targets are validated before anything is fetched: a literal IP:port in the
// cluster CIDRs that is the address Slurm has for the node the target names
// (NodeAddr, from sinfo), that node one of the job's own, one per node,
// never this daemon's own host, path /metrics built here.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/diag_option.h"
#include "jobmon/common/expected.h"
#include "jobmon/common/ip_address.h"
#include "jobmon/common/manifest.h"
#include "jobmon/common/target_file.h"
#include "jobmon/common/user_file.h"
#include "jobmon/monitor/scrape.h"
#include "jobmon/slurm/nodes.h"

namespace jobmon::monitor {

inline constexpr size_t kMaxTargetsPerJob = 256;

// The parts of manifest.json the daemon uses, each checked or rebuilt.
struct ManifestView {
  std::string head_node;               // Slurm's first node of the job, not the file's
  std::optional<int> prometheus_port;  // 1024-65535, else none
  std::string url;                     // http://127.0.0.1:<port>, rebuilt
  std::string tunnel_command;          // TunnelCommand(head_node, port), rebuilt
  std::string state;                   // a plain word ("running", "archived", ...), else ""
  std::string archive_path;            // only a plain path inside the diag dir, else ""
  std::string tsdb_dir;                // the live TSDB on the head node: a plain absolute path
  OnHang on_hang = OnHang::kNotify;    // the owner's --diag-on-hang; notify when not a known word
};

// Pure: what the daemon takes from the manifest's fields (ParseManifestFields:
// the wrong-typed ones are already left out), `node_list` Slurm's NodeList
// of the job.
ManifestView CheckManifest(const Manifest& fields, const std::string& node_list,
                           const std::string& diag_dir);
// Pure: CheckManifest of the manifest's text (not JSON: nothing but the head node).
ManifestView ManifestFromJson(std::string_view text, const std::string& node_list,
                              const std::string& diag_dir);

// Reads diag_dir/manifest.json as `user` (nullopt: only the file type and
// size checks, for a caller without a job user, such as the CLI run by hand).
Expected<ManifestView> ReadDiagManifest(const std::string& diag_dir,
                                        const std::optional<JobUser>& user,
                                        const std::string& node_list);

// True when diag_dir/manifest.json is a regular file `user` may read.
bool HasReadableManifest(const std::string& diag_dir, const JobUser& user);

struct TargetPolicy {
  std::vector<Cidr> allowed;            // cluster CIDRs (RFC1918 when none configured)
  std::vector<Cidr> excluded;           // container bridges
  std::vector<std::string> nodes;       // the job's nodes (expanded NodeList)
  slurm::NodeAddresses node_addresses;  // Slurm's NodeAddr of each of the job's nodes
  std::vector<IpAddress> own;           // this daemon's host: never scraped for a job
  size_t max_targets = kMaxTargetsPerJob;
};
// `known`: every node's address from Slurm (ListNodeAddresses); `own`: the
// addresses of the host the daemon runs on.
TargetPolicy MakeTargetPolicy(const std::vector<Cidr>& cluster_cidrs, const std::string& node_list,
                              const slurm::NodeAddresses& known, std::vector<IpAddress> own);

struct CheckedTargets {
  std::vector<ScrapeTarget> kept;    // address normalised: "10.0.0.11:9400", "[fd00::1]:9400"
  std::vector<std::string> dropped;  // "<host> <address>: why"
};
CheckedTargets CheckTargets(const std::vector<ScrapeTarget>& targets, const TargetPolicy& policy);

}  // namespace jobmon::monitor
