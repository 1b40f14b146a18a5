#include "jobmon/slurm/nodes.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <memory>

#include "json_fields.h"

namespace jobmon::slurm {
Expected<NodesAnswer> ParseNodesJson(std::string_view text) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return Error{"Slurm's node JSON: not a JSON object"};
  NodesAnswer answer;
  answer.errors = Errors(doc);
  auto nodes = doc.find("nodes");
  if (nodes == doc.end() || !nodes->is_array()) {
    if (!answer.errors.empty()) return answer;
    return Error{
        "Slurm's node JSON: no top-level \"nodes\" list (sinfo --json of 23.11+ has "
        "none: scontrol show nodes --json does)"};
  }
  answer.nodes.reserve(nodes->size());
  for (const auto& node : *nodes) {
    if (!node.is_object()) continue;
    SlurmNode n{Text(node, "name"), Text(node, "address"), Text(node, "hostname")};
    if (n.name.empty() || n.address.empty()) continue;
    answer.nodes.push_back(std::move(n));
  }
  return answer;
}

NodeAddresses ResolveNodeAddresses(const std::vector<SlurmNode>& nodes,
                                   const HostResolver& resolve) {
  NodeAddresses out;
  for (const SlurmNode& node : nodes) {
    std::vector<IpAddress> ips;
    if (auto literal = IpAddress::Parse(node.address)) {
      ips.push_back(literal->Unmapped());
    } else {
      for (const IpAddress& ip : resolve(node.address)) ips.push_back(ip.Unmapped());
    }
    std::sort(ips.begin(), ips.end());
    ips.erase(std::unique(ips.begin(), ips.end()), ips.end());
    if (!ips.empty()) out[node.name] = std::move(ips);
  }
  return out;
}

std::vector<IpAddress> ResolveHost(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(name.c_str(), nullptr, &hints, &found) != 0) return {};
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> owned(found, freeaddrinfo);
  std::vector<IpAddress> out;
  for (const addrinfo* a = found; a; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw = nullptr;
    if (a->ai_family == AF_INET) {
      raw = &reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr;
    } else if (a->ai_family == AF_INET6) {
      raw = &reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr;
    } else {
      continue;
    }
    if (!inet_ntop(a->ai_family, raw, text, sizeof text)) continue;
    if (auto ip = IpAddress::Parse(text)) out.push_back(*ip);
  }
  return out;
}

}  // namespace jobmon::slurm
