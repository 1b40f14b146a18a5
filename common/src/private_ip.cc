#include "jobmon/common/private_ip.h"

#include <ifaddrs.h>
#include <net/if.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "jobmon/common/socket_address.h"

namespace jobmon {
namespace {

std::vector<Cidr> ParseAll(std::initializer_list<const char*> texts) {
  std::vector<Cidr> out;
  for (const char* text : texts) out.push_back(Cidr::Parse(text).value());
  return out;
}

std::optional<size_t> FirstMatch(const std::vector<Cidr>& cidrs, const IpAddress& address) {
  for (size_t i = 0; i < cidrs.size(); ++i) {
    if (cidrs[i].Contains(address)) return i;
  }
  return std::nullopt;
}

}  // namespace

std::vector<Cidr> Rfc1918Cidrs() {
  return ParseAll({"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"});
}

std::vector<Cidr> DefaultExcludedCidrs() {
  return ParseAll({"172.17.0.0/16", "10.42.0.0/16", "10.43.0.0/16"});
}

PrivateIpPolicy PrivateIpPolicy::Defaults() { return {{}, DefaultExcludedCidrs()}; }

Expected<PrivateIpChoice> SelectPrivateAddress(const std::vector<InterfaceAddress>& interfaces,
                                               const PrivateIpPolicy& policy) {
  const std::vector<Cidr> rfc1918 = Rfc1918Cidrs();
  struct Candidate {
    size_t rank;  // configured CIDRs first, RFC1918 after them
    const InterfaceAddress* entry;
    std::string reason;
  };
  std::vector<Candidate> candidates;
  std::vector<std::string> rejected;
  for (const InterfaceAddress& entry : interfaces) {
    const std::string label = entry.interface + " " + entry.address.ToString();
    if (!entry.up) {
      rejected.push_back(label + ": interface down");
    } else if (entry.loopback || entry.address.IsLoopback()) {
      rejected.push_back(label + ": loopback");
    } else if (entry.address.IsUnspecified()) {
      rejected.push_back(label + ": wildcard address");
    } else if (entry.address.IsLinkLocal()) {
      rejected.push_back(label + ": link-local");
    } else if (auto excluded = FirstMatch(policy.excluded_cidrs, entry.address)) {
      rejected.push_back(label + ": in excluded " + policy.excluded_cidrs[*excluded].ToString());
    } else if (auto configured = FirstMatch(policy.cluster_cidrs, entry.address)) {
      candidates.push_back({*configured, &entry,
                            "in configured CIDR " + policy.cluster_cidrs[*configured].ToString()});
    } else if (!policy.cluster_cidrs.empty()) {
      // Configured CIDRs are authoritative: RFC1918 is only the default.
      rejected.push_back(label + ": outside the configured CIDRs");
    } else if (auto private_range = FirstMatch(rfc1918, entry.address)) {
      candidates.push_back({policy.cluster_cidrs.size() + *private_range, &entry,
                            "in RFC1918 " + rfc1918[*private_range].ToString()});
    } else {
      rejected.push_back(label + ": not a private address");
    }
  }
  if (candidates.empty()) {
    std::string message = "no cluster-private address";
    if (rejected.empty()) message += ": no interfaces with addresses";
    for (size_t i = 0; i < rejected.size(); ++i) message += (i == 0 ? ": " : "; ") + rejected[i];
    return Error{message};
  }
  const Candidate& best = *std::min_element(candidates.begin(), candidates.end(),
                                            [](const Candidate& a, const Candidate& b) {
                                              if (a.rank != b.rank) return a.rank < b.rank;
                                              if (a.entry->interface != b.entry->interface)
                                                return a.entry->interface < b.entry->interface;
                                              return a.entry->address < b.entry->address;
                                            });
  return PrivateIpChoice{*best.entry, best.reason};
}

Expected<std::vector<InterfaceAddress>> ListInterfaceAddresses() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return Error{std::string("getifaddrs: ") + std::strerror(errno)};
  std::vector<InterfaceAddress> out;
  for (ifaddrs* it = list; it != nullptr; it = it->ifa_next) {
    if (it->ifa_addr == nullptr) continue;
    InterfaceAddress entry;
    entry.interface = it->ifa_name;
    entry.up = (it->ifa_flags & IFF_UP) != 0;
    entry.loopback = (it->ifa_flags & IFF_LOOPBACK) != 0;
    auto address = IpAddressOf(it->ifa_addr);
    if (!address) continue;
    entry.address = *address;
    out.push_back(std::move(entry));
  }
  freeifaddrs(list);
  return out;
}

}  // namespace jobmon
