#include "jobmon/common/ip_address.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>

namespace jobmon {

Expected<IpAddress> IpAddress::Parse(std::string_view text) {
  std::string s(text);
  IpAddress address;
  if (inet_pton(AF_INET, s.c_str(), address.bytes.data()) == 1) {
    address.family = Family::kV4;
    return address;
  }
  if (inet_pton(AF_INET6, s.c_str(), address.bytes.data()) == 1) {
    address.family = Family::kV6;
    return address;
  }
  return Error{"not an IP address: '" + s + "'"};
}

std::string IpAddress::ToString() const {
  char buffer[INET6_ADDRSTRLEN] = {};
  inet_ntop(family == Family::kV4 ? AF_INET : AF_INET6, bytes.data(), buffer, sizeof buffer);
  return buffer;
}

bool IpAddress::IsV4Mapped() const {
  if (family != Family::kV6) return false;
  for (size_t i = 0; i < 10; ++i) {
    if (bytes[i] != 0) return false;
  }
  return bytes[10] == 0xff && bytes[11] == 0xff;
}

IpAddress IpAddress::Unmapped() const {
  if (!IsV4Mapped()) return *this;
  IpAddress v4;
  v4.family = Family::kV4;
  std::memcpy(v4.bytes.data(), bytes.data() + 12, 4);
  return v4;
}

bool IpAddress::IsUnspecified() const {
  if (IsV4Mapped()) return Unmapped().IsUnspecified();
  for (size_t i = 0; i < size(); ++i) {
    if (bytes[i] != 0) return false;
  }
  return true;
}

bool IpAddress::IsLoopback() const {
  if (IsV4Mapped()) return Unmapped().IsLoopback();
  if (family == Family::kV4) return bytes[0] == 127;
  for (size_t i = 0; i < 15; ++i) {
    if (bytes[i] != 0) return false;
  }
  return bytes[15] == 1;
}

bool IpAddress::IsLinkLocal() const {
  if (IsV4Mapped()) return Unmapped().IsLinkLocal();
  if (family == Family::kV4) return bytes[0] == 169 && bytes[1] == 254;
  return bytes[0] == 0xfe && (bytes[1] & 0xc0) == 0x80;
}

Expected<Cidr> Cidr::Parse(std::string_view text) {
  size_t slash = text.find('/');
  if (slash == text.npos) return Error{"CIDR without '/prefix': '" + std::string(text) + "'"};
  auto network = IpAddress::Parse(text.substr(0, slash));
  if (!network) return Error{"bad CIDR '" + std::string(text) + "': " + network.error().message};
  std::string_view length_text = text.substr(slash + 1);
  int length = -1;
  auto [end, ec] =
      std::from_chars(length_text.data(), length_text.data() + length_text.size(), length);
  int max_length = static_cast<int>(network->size() * 8);
  if (ec != std::errc() || end != length_text.data() + length_text.size() || length < 0 ||
      length > max_length) {
    return Error{"bad prefix length in CIDR '" + std::string(text) + "'"};
  }
  Cidr cidr{*network, length};
  IpAddress masked = *network;
  for (size_t bit = static_cast<size_t>(length); bit < network->size() * 8; ++bit) {
    masked.bytes[bit / 8] &= static_cast<uint8_t>(~(0x80u >> (bit % 8)));
  }
  if (masked != *network) {
    return Error{"CIDR '" + std::string(text) + "' has host bits set (network is " +
                 masked.ToString() + "/" + std::to_string(length) + ")"};
  }
  return cidr;
}

bool Cidr::Contains(const IpAddress& address_in) const {
  // ::ffff:10.0.0.5 is in 10.0.0.0/8; an IPv6 block compares it as written.
  const IpAddress address =
      network.family == IpAddress::Family::kV4 ? address_in.Unmapped() : address_in;
  if (address.family != network.family) return false;
  int full_bytes = prefix_length / 8;
  if (std::memcmp(address.bytes.data(), network.bytes.data(), full_bytes) != 0) return false;
  int rest = prefix_length % 8;
  if (rest == 0) return true;
  uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (address.bytes[full_bytes] & mask) == (network.bytes[full_bytes] & mask);
}

std::string Cidr::ToString() const {
  return network.ToString() + "/" + std::to_string(prefix_length);
}

}  // namespace jobmon
