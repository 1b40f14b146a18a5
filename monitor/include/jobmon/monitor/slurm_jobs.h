#pragma once
// Jobs as Slurm reports them, from `scontrol -o show job` (one job per
// line, Key=Value fields), which every Slurm version prints the same way;
// `squeue --json` can sit behind the same interface later. Parsing is pure
// and tested against output recorded from the dev cluster.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jobmon::monitor {

struct SlurmJob {
  uint32_t job_id = 0;
  std::string name;
  std::string user;   // "alice" of "UserId=alice(1000)"
  std::string state;  // RUNNING, PENDING, COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, ...
  std::string node_list;
  int num_nodes = 0;
  std::string partition;
  std::string std_out, work_dir;
  std::string start_time, end_time;           // as Slurm prints them (local time, or "Unknown")
  std::string exit_code;                      // "0:0"
  std::map<std::string, std::string> fields;  // everything, for what is not named above
};

// One job per line. Values may contain spaces (Command=, Comment=): a token
// that does not start a new Key= field continues the previous value.
std::vector<SlurmJob> ParseScontrolJobs(std::string_view text);

bool IsTerminalState(std::string_view state);

}  // namespace jobmon::monitor
