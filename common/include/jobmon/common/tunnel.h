#pragma once
// The ssh command that reaches a job's loopback-only Prometheus from a
// login machine. One function for the plugin (which writes it into the
// manifest and the job log) and the monitor (which shows it to admins in
// alerts and `jobmon status`, rebuilt from Slurm's node list and a
// validated port, never copied from the user-writable manifest).

#include <optional>
#include <string>
#include <string_view>

namespace jobmon {

// "ssh -N -L 9190:127.0.0.1:9190 node1"
std::string TunnelCommand(const std::string& head_node, int port);

// A port the plugin can have given Prometheus: 1024-65535.
bool IsTunnelPort(long long port);

// A Slurm node name safe to paste into a shell command: letters, digits,
// '-', '_', '.'; not starting with '-' (an ssh option); at most 255 chars.
bool IsPlainNodeName(std::string_view name);

}  // namespace jobmon
