#pragma once
// Choosing the cluster-private address a node-local service binds to.
// The answer is one concrete address of this node, or "none" with the
// reasons; never a wildcard.

#include <string>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/common/ip_address.h"

namespace jobmon {

struct InterfaceAddress {
  std::string interface;
  IpAddress address;
  bool up = false;
  bool loopback = false;
};

struct PrivateIpPolicy {
  // Tried first, in order: the first CIDR with a match wins.
  std::vector<Cidr> cluster_cidrs;
  // Never chosen (container and Kubernetes bridges by default).
  std::vector<Cidr> excluded_cidrs;

  static PrivateIpPolicy Defaults();  // no cluster CIDRs, default exclusions
};

std::vector<Cidr> Rfc1918Cidrs();
std::vector<Cidr> DefaultExcludedCidrs();  // 172.17.0.0/16, 10.42.0.0/16, 10.43.0.0/16

struct PrivateIpChoice {
  InterfaceAddress chosen;
  std::string reason;  // e.g. "in configured CIDR 10.201.0.0/24"
};

// Pure: picks from an injected interface list. Down, loopback, link-local,
// unspecified and excluded addresses are skipped. Configured CIDRs first
// (in their order), else RFC1918. Ties break on interface name, then
// address, so the result never depends on enumeration order. The error
// lists every candidate and why it was rejected.
Expected<PrivateIpChoice> SelectPrivateAddress(const std::vector<InterfaceAddress>& interfaces,
                                               const PrivateIpPolicy& policy);

// This machine's addresses (getifaddrs), IPv4 and IPv6.
Expected<std::vector<InterfaceAddress>> ListInterfaceAddresses();

}  // namespace jobmon
