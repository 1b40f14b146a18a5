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
  // ::ffff:a.b.c.d, which the kernel treats as the IPv4 address a.b.c.d.
  bool IsV4Mapped() const;
  // The IPv4 address of an IPv4-mapped one; any other address unchanged.
  // The predicates below judge a mapped address by its IPv4 meaning.
  IpAddress Unmapped() const;
  // 0.0.0.0 or :: (or ::ffff:0.0.0.0) — a wildcard, never an acceptable bind
  // address.
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
