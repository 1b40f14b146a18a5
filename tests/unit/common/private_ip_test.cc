#include "jobmon/common/private_ip.h"

#include <gtest/gtest.h>
#include <netinet/in.h>

#include <algorithm>
#include <random>

#include "jobmon/common/socket_address.h"

namespace jobmon {
namespace {

InterfaceAddress If(const std::string& name, const std::string& address, bool up = true) {
  return {name, IpAddress::Parse(address).value(), up, name == "lo"};
}

Cidr C(const std::string& text) { return Cidr::Parse(text).value(); }

std::vector<InterfaceAddress> TypicalNode() {
  return {If("lo", "127.0.0.1"),   If("eth0", "192.0.2.2"), If("docker0", "172.17.0.1"),
          If("cni0", "10.42.0.1"), If("ib0", "10.10.0.5"),  If("eth1", "192.168.1.5"),
          If("lo", "::1"),         If("eth0", "fe80::1")};
}

TEST(SelectPrivateAddress, PrefersRfc1918AndSkipsContainerBridges) {
  auto choice = SelectPrivateAddress(TypicalNode(), PrivateIpPolicy::Defaults());
  ASSERT_TRUE(choice.ok()) << choice.error().message;
  EXPECT_EQ(choice->chosen.address.ToString(), "10.10.0.5");
  EXPECT_EQ(choice->chosen.interface, "ib0");
  EXPECT_EQ(choice->reason, "in RFC1918 10.0.0.0/8");
}

TEST(SelectPrivateAddress, ConfiguredCidrsComeFirstInTheirOrder) {
  PrivateIpPolicy policy = PrivateIpPolicy::Defaults();
  policy.cluster_cidrs = {C("192.168.0.0/16"), C("10.10.0.0/16")};
  auto choice = SelectPrivateAddress(TypicalNode(), policy);
  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->chosen.address.ToString(), "192.168.1.5");
  EXPECT_EQ(choice->reason, "in configured CIDR 192.168.0.0/16");
}

TEST(SelectPrivateAddress, ConfiguredCidrsAreAuthoritative) {
  PrivateIpPolicy policy = PrivateIpPolicy::Defaults();
  policy.cluster_cidrs = {C("10.99.0.0/16")};
  auto choice = SelectPrivateAddress(TypicalNode(), policy);
  ASSERT_FALSE(choice.ok());
  EXPECT_NE(choice.error().message.find("ib0 10.10.0.5: outside the configured CIDRs"),
            std::string::npos)
      << choice.error().message;
}

TEST(SelectPrivateAddress, NoneIsAClearResultWithReasons) {
  auto choice = SelectPrivateAddress(
      {If("lo", "127.0.0.1"), If("docker0", "172.17.0.1"), If("eth0", "192.0.2.2"),
       If("eth1", "10.1.1.1", /*up=*/false), If("any", "0.0.0.0"), If("k3s", "10.43.0.9")},
      PrivateIpPolicy::Defaults());
  ASSERT_FALSE(choice.ok());
  const std::string& message = choice.error().message;
  EXPECT_EQ(message.rfind("no cluster-private address", 0), 0u) << message;
  for (const char* reason :
       {"lo 127.0.0.1: loopback", "docker0 172.17.0.1: in excluded 172.17.0.0/16",
        "eth0 192.0.2.2: not a private address", "eth1 10.1.1.1: interface down",
        "any 0.0.0.0: wildcard address", "k3s 10.43.0.9: in excluded 10.43.0.0/16"}) {
    EXPECT_NE(message.find(reason), std::string::npos) << reason << " missing in " << message;
  }
  EXPECT_FALSE(SelectPrivateAddress({}, PrivateIpPolicy::Defaults()).ok());
}

TEST(SelectPrivateAddress, DeterministicWhateverTheEnumerationOrder) {
  std::vector<InterfaceAddress> list = {If("eth2", "10.0.0.9"), If("eth1", "10.0.0.7"),
                                        If("eth1", "10.0.0.3"), If("bond0", "172.20.0.1")};
  std::mt19937 rng(42);
  for (int i = 0; i < 20; ++i) {
    std::shuffle(list.begin(), list.end(), rng);
    auto choice = SelectPrivateAddress(list, PrivateIpPolicy::Defaults());
    ASSERT_TRUE(choice.ok());
    EXPECT_EQ(choice->chosen.interface, "eth1");
    EXPECT_EQ(choice->chosen.address.ToString(), "10.0.0.3");
  }
}

TEST(SelectPrivateAddress, Ipv6ClusterCidr) {
  PrivateIpPolicy policy = PrivateIpPolicy::Defaults();
  policy.cluster_cidrs = {C("fd00::/8")};
  auto choice = SelectPrivateAddress({If("eth0", "fd12:3456::5"), If("eth0", "10.0.0.1")}, policy);
  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->chosen.address.ToString(), "fd12:3456::5");
}

TEST(Cidr, ParsesAndRejects) {
  EXPECT_TRUE(C("10.0.0.0/8").Contains(IpAddress::Parse("10.255.1.2").value()));
  EXPECT_FALSE(C("10.0.0.0/8").Contains(IpAddress::Parse("11.0.0.1").value()));
  EXPECT_TRUE(C("172.16.0.0/12").Contains(IpAddress::Parse("172.31.255.255").value()));
  EXPECT_FALSE(C("172.16.0.0/12").Contains(IpAddress::Parse("172.32.0.0").value()));
  EXPECT_TRUE(C("0.0.0.0/0").Contains(IpAddress::Parse("8.8.8.8").value()));
  EXPECT_FALSE(C("10.0.0.0/8").Contains(IpAddress::Parse("::1").value()));
  for (const char* bad :
       {"10.0.0.1/8", "10.0.0.0/33", "10.0.0.0", "abc/8", "10.0.0.0/x", "::/129"}) {
    EXPECT_FALSE(Cidr::Parse(bad).ok()) << bad;
  }
  EXPECT_NE(Cidr::Parse("10.0.0.1/8").error().message.find("host bits"), std::string::npos);
}

TEST(IpAddress, Classification) {
  EXPECT_TRUE(IpAddress::Parse("0.0.0.0")->IsUnspecified());
  EXPECT_TRUE(IpAddress::Parse("::")->IsUnspecified());
  EXPECT_TRUE(IpAddress::Parse("127.0.0.2")->IsLoopback());
  EXPECT_TRUE(IpAddress::Parse("::1")->IsLoopback());
  EXPECT_TRUE(IpAddress::Parse("169.254.3.3")->IsLinkLocal());
  EXPECT_TRUE(IpAddress::Parse("fe80::2")->IsLinkLocal());
  EXPECT_FALSE(IpAddress::Parse("10.0.0.1")->IsLoopback());
  EXPECT_FALSE(IpAddress::Parse("10.0.0.256").ok());
}

// ::ffff:a.b.c.d is the IPv4 address a.b.c.d to the kernel.
TEST(IpAddress, V4MappedIsJudgedByItsIpv4Meaning) {
  auto mapped_wildcard = IpAddress::Parse("::ffff:0.0.0.0").value();
  EXPECT_TRUE(mapped_wildcard.IsV4Mapped());
  EXPECT_TRUE(mapped_wildcard.IsUnspecified());
  EXPECT_EQ(mapped_wildcard.Unmapped().ToString(), "0.0.0.0");
  EXPECT_TRUE(IpAddress::Parse("::ffff:127.0.0.1")->IsLoopback());
  EXPECT_TRUE(IpAddress::Parse("::ffff:169.254.1.1")->IsLinkLocal());
  EXPECT_FALSE(IpAddress::Parse("::ffff:10.0.0.1")->IsUnspecified());
  EXPECT_FALSE(IpAddress::Parse("::ffff:10.0.0.1")->IsLoopback());
  EXPECT_FALSE(IpAddress::Parse("::ffff:1:0:0:0")->IsV4Mapped()) << "not ::ffff:0:0/96";
  EXPECT_EQ(IpAddress::Parse("fd00::5")->Unmapped().ToString(), "fd00::5");
  EXPECT_TRUE(C("10.0.0.0/8").Contains(IpAddress::Parse("::ffff:10.1.2.3").value()));
  EXPECT_FALSE(C("10.0.0.0/8").Contains(IpAddress::Parse("::ffff:11.1.2.3").value()));
  EXPECT_TRUE(C("::ffff:0:0/96").Contains(IpAddress::Parse("::ffff:11.1.2.3").value()));
}

// civetweb reads "a:1,b:2", "1s", "1r", "+1" as more (or
// other) listeners; only one literal address:port gets through.
TEST(SocketAddress, ExactlyOneAddressAndPort) {
  EXPECT_EQ(ParseSocketAddress("127.0.0.1:9188")->ToBindString(), "127.0.0.1:9188");
  EXPECT_EQ(ParseSocketAddress("[::1]:9188")->ToBindString(), "[::1]:9188");
  EXPECT_EQ(ParseSocketAddress("[::ffff:127.0.0.1]:9188")->ToBindString(), "127.0.0.1:9188")
      << "a mapped address binds as the IPv4 address it means";
  for (const char* bad : {"127.0.0.1:1,0.0.0.0:2",
                          "127.0.0.1:1,2",
                          "127.0.0.1:9188s",
                          "127.0.0.1:9188r",
                          "127.0.0.1:+9188",
                          "+9188",
                          "9188",
                          "127.0.0.1:9188 ",
                          " 127.0.0.1:9188",
                          "127.0.0.1:-1",
                          "127.0.0.1:0",
                          "127.0.0.1:65536",
                          "127.0.0.1:",
                          "[::1]:1,[::2]:2",
                          "[::1]:9188s",
                          "[::1]",
                          "localhost:9188",
                          "127.0.0.1,0.0.0.0:2",
                          "[::1,::]:2",
                          "127.0.0.1:0x10"}) {
    EXPECT_FALSE(ParseSocketAddress(bad).ok()) << bad;
  }
}

TEST(ListInterfaceAddresses, FindsThisMachinesLoopback) {
  auto list = ListInterfaceAddresses();
  ASSERT_TRUE(list.ok()) << list.error().message;
  EXPECT_TRUE(std::any_of(list->begin(), list->end(), [](const InterfaceAddress& a) {
    return a.loopback && a.address.ToString() == "127.0.0.1";
  }));
}

// One conversion to and from the kernel's sockaddr (bind, the interface
// list, the /metrics server's peer): the address and port survive both ways.
TEST(SocketAddress, SockaddrRoundTrip) {
  for (const char* text : {"10.1.2.3", "fd00::5"}) {
    const IpAddress ip = IpAddress::Parse(text).value();
    const Sockaddr kernel = ToSockaddr(ip, 9400);
    EXPECT_EQ(kernel.length,
              ip.family == IpAddress::Family::kV4 ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    auto back = IpAddressOf(kernel.get());
    ASSERT_TRUE(back) << text;
    EXPECT_EQ(*back, ip);
  }
  sockaddr unix_family{};
  unix_family.sa_family = AF_UNIX;
  EXPECT_FALSE(IpAddressOf(&unix_family));
}

}  // namespace
}  // namespace jobmon
