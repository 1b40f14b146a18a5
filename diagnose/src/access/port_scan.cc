#include "access/port_scan.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>

namespace jobmon::diagnose {

std::set<int> ParseListeningPorts(std::string_view text) {
  std::set<int> out;
  std::istringstream in{std::string(text)};
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    // "  sl  local_address rem_address   st ...": "0: 0100007F:2387 00000000:0000 0A ..."
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    if (!(fields >> slot >> local >> remote >> state)) continue;
    if (state != "0A") continue;
    size_t colon = local.rfind(':');
    if (colon == std::string::npos) continue;
    int port = 0;
    const char* begin = local.data() + colon + 1;
    const char* end = local.data() + local.size();
    auto [ptr, ec] = std::from_chars(begin, end, port, 16);
    if (ec == std::errc() && ptr == end && port > 0 && port < 65536) out.insert(port);
  }
  return out;
}

bool CanBindLoopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return ok;
}

Expected<int> FindFreeLoopbackPort(int first, int tries, const std::set<int>& also_skip,
                                   const std::string& procfs) {
  std::set<int> listening = also_skip;
  for (const char* name : {"/net/tcp", "/net/tcp6"}) {
    std::ifstream in(procfs + name);
    std::stringstream text;
    text << in.rdbuf();
    listening.merge(ParseListeningPorts(text.str()));
  }
  for (int port = first; port < first + tries && port < 65536; ++port) {
    if (port <= 0 || listening.count(port)) continue;
    if (CanBindLoopback(port)) return port;
  }
  return Error{fmt::format("no free loopback port in {}-{} (all listened on or not bindable)",
                           first, first + tries - 1)};
}

}  // namespace jobmon::diagnose
