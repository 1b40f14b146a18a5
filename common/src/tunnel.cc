#include "jobmon/common/tunnel.h"

#include <cctype>

namespace jobmon {

std::string TunnelCommand(const std::string& head_node, int port) {
  std::string p = std::to_string(port);
  return "ssh -N -L " + p + ":127.0.0.1:" + p + " " + head_node;
}

bool IsTunnelPort(long long port) { return port >= 1024 && port <= 65535; }

bool IsPlainNodeName(std::string_view name) {
  if (name.empty() || name.size() > 255 || name.front() == '-' || name.front() == '.') {
    return false;
  }
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return true;
}

}  // namespace jobmon
