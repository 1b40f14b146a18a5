#pragma once
// The nodes' addresses as Slurm knows them (NodeAddr): from
// `scontrol show nodes --json` (23.02+: {"nodes": [{name, address,
// hostname}]}) or, where scontrol has no --json (22.05), `sinfo --json`
// (openapi/v0.0.38 has the same top-level "nodes"; 23.11+'s sinfo --json
// groups nodes by partition without addresses). Node records are set by the
// admin and slurmd, never by a job's user, and the JSON keeps a Comment or
// Reason containing "NodeAddr=..." from standing in for the real field. The
// monitor scrapes a job's exporter target only at one of these addresses
// (monitor/include/jobmon/monitor/diag_files.h CheckTargets).

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/common/ip_address.h"

namespace jobmon::slurm {

struct SlurmNode {
  std::string name;      // NodeName
  std::string address;   // NodeAddr: a literal IP, or a host name the admin gave
  std::string hostname;  // NodeHostname
};

struct NodesAnswer {
  std::vector<SlurmNode> nodes;
  std::vector<std::string> errors;  // the answer's "errors": it says nothing about the nodes
};

// The top-level "nodes" of either document; a node without a name or
// address is skipped. An error when the text is not such a document.
Expected<NodesAnswer> ParseNodesJson(std::string_view text);

// Node name -> the IPs its NodeAddr stands for.
using NodeAddresses = std::map<std::string, std::vector<IpAddress>>;
// Turns a NodeAddr that is a host name into addresses (DNS or /etc/hosts,
// which the admin controls); an empty answer when it does not resolve.
using HostResolver = std::function<std::vector<IpAddress>(const std::string&)>;

// Pure given `resolve`: a literal NodeAddr is taken as it is (IPv4-mapped
// ones by their IPv4 meaning), any other is resolved; a node whose
// address does not resolve is left out (its targets are then refused).
NodeAddresses ResolveNodeAddresses(const std::vector<SlurmNode>& nodes,
                                   const HostResolver& resolve);

// getaddrinfo, TCP, IPv4 and IPv6.
std::vector<IpAddress> ResolveHost(const std::string& name);

}  // namespace jobmon::slurm
