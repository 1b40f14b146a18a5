#pragma once
// The daemon's local API (`jobmon status|list|watch` through a Unix socket):
// one request line of JSON in, one JSON document out. Pure: parsing, who may
// see what, the records as JSON both ways, and the answer built from the
// store. The socket, peer credentials and timeouts are api_server.h's.
//
// Request:  {"op":"status","job_id":N[,"chart":true]} | {"op":"list","all":bool} |
//           {"op":"watch","job_id":N} | {"op":"hold","job_id":N}
// Response: {"ok":true, ...} or {"ok":false,"code":"forbidden|not_found|bad_request|
//           too_many_watches|busy|...",
//           "error":"<sentence>"}

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "jobmon/common/expected.h"
#include "jobmon/monitor/state_store.h"

namespace jobmon::monitor::api {

inline constexpr std::string_view kSchema = "jobmon.api/v1";
inline constexpr size_t kMaxRequestBytes = 4096;               // one short JSON line
inline constexpr size_t kMaxResponseBytes = size_t{16} << 20;  // a long list of jobs

// Who asked, from the kernel (SO_PEERCRED), never from the request.
struct Caller {
  uint32_t uid = 0;
  bool privileged = false;  // root or a member of [monitor] admin_group
};

struct Request {
  std::string op;  // status | list | watch | hold
  std::optional<uint32_t> job_id;
  bool all = false;  // list: ended jobs too
  // status: with the newest incident chart, "chart": {incident_id,
  // png_base64} or null (`jobmon status --html`).
  bool chart = false;
};

Expected<Request> ParseRequest(std::string_view line);
nlohmann::json RequestJson(const Request& request);

// A job is the caller's when Slurm's UserId for it is the caller's uid. A
// row without a uid (written before schema 4, not yet refreshed) is shown to
// privileged callers only.
bool MaySee(const Caller& caller, const JobRecord& job);

nlohmann::json JobJson(const JobRecord& job);
nlohmann::json ProgressJson(const ProgressRecord& progress);
nlohmann::json IncidentJson(const IncidentRecord& incident);
// The reverse, for the CLI; missing members keep their defaults, a value of
// the wrong type is an error.
Expected<JobRecord> JobFromJson(const nlohmann::json& j);
Expected<ProgressRecord> ProgressFromJson(const nlohmann::json& j);
Expected<IncidentRecord> IncidentFromJson(const nlohmann::json& j);
// An incident's recovery steps (recovery.h): [{"step", "at", "detail"}], and
// back (items of another shape are left out).
nlohmann::json RecoveryStepsJson(const std::vector<RecoveryStep>& steps);
std::vector<RecoveryStep> RecoveryStepsFromJson(const nlohmann::json& j);

// One row of `jobmon list` (the same whether read through the API or the database).
nlohmann::json ListRow(const JobRecord& job, const std::optional<ProgressRecord>& progress,
                       const std::optional<IncidentRecord>& open_incident);

// Where a watch request goes: the daemon's loop writes it into its store.
// False: not taken, the caller has too many requests pending (api_server.h).
using WatchSink = std::function<bool(const WatchRequest&)>;

// The answer to one request, from the store (read-only use).
nlohmann::json Answer(StateStore& store, const Caller& caller, const Request& request,
                      const WatchSink& watch);

// An error response.
nlohmann::json Refusal(std::string_view code, const std::string& message);

}  // namespace jobmon::monitor::api
