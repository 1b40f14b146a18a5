#include "jobmon/monitor/api_protocol.h"

#include <cstdlib>
#include <limits>

#include "jobmon/common/base64.h"

namespace jobmon::monitor::api {
namespace {

using nlohmann::json;

json Optional(const auto& value) { return value ? json(*value) : json(nullptr); }

// Reads members of one JSON object into typed fields, remembering the first
// member of the wrong type (a peer of another version, or garbage).
class Reader {
 public:
  explicit Reader(const json& j) : j_(j) {}
  template <class T>
  void Get(const char* key, T& out) {
    auto found = j_.find(key);
    if (found == j_.end() || found->is_null()) return;
    try {
      out = found->get<T>();
    } catch (const json::exception&) {
      if (!error_) error_ = std::string("member ") + key + " has the wrong type";
    }
  }
  template <class T>
  void Get(const char* key, std::optional<T>& out) {
    auto found = j_.find(key);
    if (found == j_.end() || found->is_null()) return;
    T value{};
    Get(key, value);
    if (!error_) out = value;
  }
  const std::optional<std::string>& error() const { return error_; }

 private:
  const json& j_;
  std::optional<std::string> error_;
};

}  // namespace

Expected<Request> ParseRequest(std::string_view line) {
  if (line.size() > kMaxRequestBytes) return Error{"request longer than 4096 bytes"};
  json j = json::parse(line, nullptr, false);
  if (!j.is_object()) return Error{"a request is one JSON object on one line"};
  Request r;
  auto op = j.find("op");
  if (op == j.end() || !op->is_string()) return Error{"the request has no \"op\""};
  r.op = op->get<std::string>();
  if (r.op != "status" && r.op != "list" && r.op != "watch" && r.op != "hold") {
    return Error{"unknown op \"" + r.op + "\" (status, list, watch, hold)"};
  }
  if (auto id = j.find("job_id"); id != j.end()) {
    if (!id->is_number_unsigned() || id->get<uint64_t>() == 0 ||
        id->get<uint64_t>() > std::numeric_limits<uint32_t>::max()) {
      return Error{"job_id must be a Slurm job id (1 to 4294967295)"};
    }
    r.job_id = static_cast<uint32_t>(id->get<uint64_t>());
  }
  if (auto all = j.find("all"); all != j.end()) {
    if (!all->is_boolean()) return Error{"all must be true or false"};
    r.all = all->get<bool>();
  }
  if (auto chart = j.find("chart"); chart != j.end()) {
    if (!chart->is_boolean()) return Error{"chart must be true or false"};
    r.chart = chart->get<bool>();
  }
  if ((r.op == "status" || r.op == "watch" || r.op == "hold") && !r.job_id) {
    return Error{r.op + " needs a job_id"};
  }
  return r;
}

json RequestJson(const Request& request) {
  json j = {{"op", request.op}};
  if (request.job_id) j["job_id"] = *request.job_id;
  if (request.all) j["all"] = true;
  if (request.chart) j["chart"] = true;
  return j;
}

json RecoveryStepsJson(const std::vector<RecoveryStep>& steps) {
  json out = json::array();
  for (const RecoveryStep& s : steps)
    out.push_back({{"step", s.step}, {"at", s.at}, {"detail", s.detail}});
  return out;
}

std::vector<RecoveryStep> RecoveryStepsFromJson(const json& j) {
  std::vector<RecoveryStep> out;
  if (!j.is_array()) return out;
  for (const json& step : j) {
    if (step.is_object())
      out.push_back({step.value("step", ""), step.value("at", 0.0), step.value("detail", "")});
  }
  return out;
}

bool MaySee(const Caller& caller, const JobRecord& job) {
  return caller.privileged || (job.uid && *job.uid == caller.uid);
}

json JobJson(const JobRecord& j) {
  return {{"job_id", j.job_id},
          {"name", j.name},
          {"user", j.user},
          {"uid", Optional(j.uid)},
          {"log_path", j.log_path},
          {"diag_dir", j.diag_dir},
          {"source", j.source},
          {"slurm_state", j.slurm_state},
          {"first_seen", j.first_seen},
          {"last_seen", j.last_seen},
          {"ended_at", Optional(j.ended_at)},
          {"partition", j.partition},
          {"node_list", j.node_list},
          {"start_time", Optional(j.start_time)},
          {"final_class", j.final_class},
          {"final_status", j.final_status},
          {"diagnosis", j.diagnosis},
          {"diagnosed_at", Optional(j.diagnosed_at)}};
}

Expected<JobRecord> JobFromJson(const json& j) {
  if (!j.is_object()) return Error{"job: not an object"};
  JobRecord r;
  Reader in(j);
  in.Get("job_id", r.job_id);
  in.Get("name", r.name);
  in.Get("user", r.user);
  in.Get("uid", r.uid);
  in.Get("log_path", r.log_path);
  in.Get("diag_dir", r.diag_dir);
  in.Get("source", r.source);
  in.Get("slurm_state", r.slurm_state);
  in.Get("first_seen", r.first_seen);
  in.Get("last_seen", r.last_seen);
  in.Get("ended_at", r.ended_at);
  in.Get("partition", r.partition);
  in.Get("node_list", r.node_list);
  in.Get("start_time", r.start_time);
  in.Get("final_class", r.final_class);
  in.Get("final_status", r.final_status);
  in.Get("diagnosis", r.diagnosis);  // absent from an older daemon's answer
  in.Get("diagnosed_at", r.diagnosed_at);
  if (in.error()) return Error{"job: " + *in.error()};
  return r;
}

json ProgressJson(const ProgressRecord& p) {
  return {{"job_id", p.job_id},
          {"last_step", Optional(p.last_step)},
          {"last_step_time", Optional(p.last_step_time)},
          {"phase", p.phase},
          {"median_interval", Optional(p.median_interval)},
          {"p99_interval", Optional(p.p99_interval)},
          {"checkpoint_period", Optional(p.checkpoint_period)},
          {"longest_checkpoint_pause", Optional(p.longest_checkpoint_pause)},
          {"baseline_interval", Optional(p.baseline_interval)},
          {"recent_interval", Optional(p.recent_interval)},
          {"profile", p.profile},
          {"threshold_seconds", Optional(p.threshold_seconds)},
          {"threshold_reason", p.threshold_reason},
          {"updated_at", p.updated_at}};
}

Expected<ProgressRecord> ProgressFromJson(const json& j) {
  if (!j.is_object()) return Error{"progress: not an object"};
  ProgressRecord r;
  Reader in(j);
  in.Get("job_id", r.job_id);
  in.Get("last_step", r.last_step);
  in.Get("last_step_time", r.last_step_time);
  in.Get("phase", r.phase);
  in.Get("median_interval", r.median_interval);
  in.Get("p99_interval", r.p99_interval);
  in.Get("checkpoint_period", r.checkpoint_period);
  in.Get("longest_checkpoint_pause", r.longest_checkpoint_pause);
  in.Get("baseline_interval", r.baseline_interval);
  in.Get("recent_interval", r.recent_interval);
  in.Get("profile", r.profile);
  in.Get("threshold_seconds", r.threshold_seconds);
  in.Get("threshold_reason", r.threshold_reason);
  in.Get("updated_at", r.updated_at);
  if (in.error()) return Error{"progress: " + *in.error()};
  return r;
}

json IncidentJson(const IncidentRecord& i) {
  return {{"id", i.id},
          {"job_id", i.job_id},
          {"class", i.klass},
          {"state", i.state},
          {"opened_at", i.opened_at},
          {"closed_at", Optional(i.closed_at)},
          {"summary", i.summary},
          {"evidence", i.evidence},
          {"hosts", i.hosts},
          {"close_reason", i.close_reason}};
}

Expected<IncidentRecord> IncidentFromJson(const json& j) {
  if (!j.is_object()) return Error{"incident: not an object"};
  IncidentRecord r;
  Reader in(j);
  in.Get("id", r.id);
  in.Get("job_id", r.job_id);
  in.Get("class", r.klass);
  in.Get("state", r.state);
  in.Get("opened_at", r.opened_at);
  in.Get("closed_at", r.closed_at);
  in.Get("summary", r.summary);
  in.Get("evidence", r.evidence);
  in.Get("hosts", r.hosts);
  in.Get("close_reason", r.close_reason);
  if (in.error()) return Error{"incident: " + *in.error()};
  return r;
}

json ListRow(const JobRecord& j, const std::optional<ProgressRecord>& p,
             const std::optional<IncidentRecord>& open) {
  return {{"job_id", j.job_id},
          {"name", j.name},
          {"user", j.user},
          {"source", j.source},
          {"slurm_state", j.slurm_state},
          {"ended", j.ended_at.has_value()},
          {"final_class", j.final_class},
          {"phase", p ? json(p->phase) : json(nullptr)},
          {"last_step", p && p->last_step ? json(*p->last_step) : json(nullptr)},
          {"open_incident", open ? json(open->klass) : json(nullptr)}};
}

json Refusal(std::string_view code, const std::string& message) {
  return {{"schema", kSchema}, {"ok", false}, {"code", code}, {"error", message}};
}

namespace {

json NotYours(uint32_t job_id, const Caller& caller) {
  return Refusal("forbidden", "job " + std::to_string(job_id) + " is not yours (uid " +
                                  std::to_string(caller.uid) +
                                  "): you see only your own jobs; root and the monitor's "
                                  "admin_group see all");
}

json Status(StateStore& store, const Caller& caller, uint32_t job_id, bool with_chart) {
  auto job = store.GetJob(job_id);
  if (!job) return Refusal("unavailable", job.error().message);
  if (!*job) {
    return Refusal("not_found",
                   "job " + std::to_string(job_id) + " is not followed by the monitor");
  }
  if (!MaySee(caller, **job)) return NotYours(job_id, caller);
  json out = {{"schema", kSchema}, {"ok", true}, {"job", JobJson(**job)}};
  auto progress = store.GetProgress(job_id);
  out["progress"] = progress && *progress ? ProgressJson(**progress) : json(nullptr);
  json incidents = json::array();
  if (auto list = store.Incidents(job_id)) {
    for (const IncidentRecord& i : *list) {
      json one = IncidentJson(i);
      auto taken = store.RecoverySteps(i.id);
      one["recovery"] = RecoveryStepsJson(taken ? *taken : std::vector<RecoveryStep>{});
      incidents.push_back(one);
    }
  }
  out["incidents"] = incidents;
  auto held = store.RecoveryHeld(job_id);
  out["recovery_held"] = held && *held;
  if (with_chart) {
    auto chart = store.LatestIncidentChart(job_id);
    out["chart"] = chart && *chart ? json{{"incident_id", (*chart)->first},
                                          {"png_base64", Base64Encode((*chart)->second)}}
                                   : json(nullptr);
  }
  // The daemon's view of Slurm: since when it has not answered (null: it does).
  auto since = store.GetDaemonState("slurm_unreachable_since");
  out["slurm_unreachable_since"] =
      since && *since ? json(std::strtod((*since)->c_str(), nullptr)) : json(nullptr);
  return out;
}

json List(StateStore& store, const Caller& caller, bool all) {
  auto jobs = store.ListJobs();
  if (!jobs) return Refusal("unavailable", jobs.error().message);
  json rows = json::array();
  for (const JobRecord& j : *jobs) {
    if ((j.ended_at && !all) || !MaySee(caller, j)) continue;
    auto p = store.GetProgress(j.job_id);
    auto open = store.OpenIncidentOf(j.job_id);
    rows.push_back(ListRow(j, p && *p ? **p : std::optional<ProgressRecord>{},
                           open && *open ? **open : std::optional<IncidentRecord>{}));
  }
  return {{"schema", kSchema}, {"ok", true}, {"jobs", rows}, {"all_users", caller.privileged}};
}

json Watch(StateStore& store, const Caller& caller, uint32_t job_id, const WatchSink& watch) {
  // A job the monitor already knows is judged now; any other when Slurm
  // names its owner (the daemon drops a user's request for another's job).
  if (auto job = store.GetJob(job_id); job && *job && !MaySee(caller, **job)) {
    return NotYours(job_id, caller);
  }
  WatchRequest request{.job_id = job_id, .uid = std::nullopt};
  if (!caller.privileged) request.uid = caller.uid;
  if (!watch(request)) {
    return Refusal("too_many_watches",
                   "too many of your watch requests are pending; ask again after the "
                   "monitor's next Slurm poll has taken them");
  }
  return {{"schema", kSchema},
          {"ok", true},
          {"job_id", job_id},
          {"watch", "requested"},
          {"note", caller.privileged ? "followed from the monitor's next Slurm poll"
                                     : "followed from the monitor's next Slurm poll if the "
                                       "job is yours"}};
}

// `jobmon hold`: a job the monitor follows, held by its owner or an admin.
json Hold(StateStore& store, const Caller& caller, uint32_t job_id, const WatchSink& queue) {
  auto job = store.GetJob(job_id);
  if (!job || !*job) {
    return Refusal("not_found",
                   "job " + std::to_string(job_id) + " is not followed by the monitor");
  }
  if (!MaySee(caller, **job)) return NotYours(job_id, caller);
  if (!queue(WatchRequest{.job_id = job_id, .uid = caller.uid, .hold = true})) {
    return Refusal("too_many_watches", "too many of your requests are pending; ask again shortly");
  }
  return {{"schema", kSchema},
          {"ok", true},
          {"job_id", job_id},
          {"hold", "requested"},
          {"note", "no recovery step is taken for this job from the monitor's next cycle"}};
}

}  // namespace

json Answer(StateStore& store, const Caller& caller, const Request& request,
            const WatchSink& watch) {
  if (request.op == "status") return Status(store, caller, *request.job_id, request.chart);
  if (request.op == "list") return List(store, caller, request.all);
  if (request.op == "watch") return Watch(store, caller, *request.job_id, watch);
  if (request.op == "hold") return Hold(store, caller, *request.job_id, watch);
  return Refusal("bad_request", "unknown op");
}

}  // namespace jobmon::monitor::api
