#pragma once
// IPv4/IPv6 addresses and CIDR blocks, parsed from and formatted to text.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "jobmon/common/expected.h"

namespace jobmon {

struct IpAddress {
  enum class Family { kV4, kV6 };
  Family family = Family::kV4;
  std::array<uint8_t, 16> bytes{};  // IPv4 uses the first 4

  static Expected<IpAddress> Parse(std::string_view text);
  std::string ToString() const;
  size_t size() const { return family == Family::kV4 ? 4 : 16; }
  // 0.0.0.0 or :: — a wildcard, never an acceptable bind address.
  bool IsUnspecified() const;
  bool IsLoopback() const;
  bool IsLinkLocal() const;
  auto operator<=>(const IpAddress&) const = default;
};

struct Cidr {
  IpAddress network;
  int prefix_length = 0;

  // "10.0.0.0/8", "fd00::/8"; host bits must be zero.
  static Expected<Cidr> Parse(std::string_view text);
  bool Contains(const IpAddress& address) const;
  std::string ToString() const;
  bool operator==(const Cidr&) const = default;
};

}  // namespace jobmon
