// Playbook 4 (docs/diagnose.md, "Hardware playbook"): error
// counters increased inside the job's window (never their boot-time
// totals), RDMA ports that went down, and the temperature before the end,
// compared across nodes: healthy nodes count zero.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "jobmon/common/metric_names.h"
#include "jobmon/diagnose/playbooks.h"
#include "jobmon/triage/step_series.h"
#include "playbooks/kit.h"

namespace jobmon::diagnose {
namespace {

using playbook::MakeFinding;

// Playbook 5's ">90C = concern"; a rise this far over the job's usual
// temperature (its 75th percentile: training, even in a job that spent
// a long time idle or hung) is an excursion on GPUs that never get that hot.
constexpr double kHotCelsius = 90;
constexpr double kRiseCelsius = 20;

struct Counter {
  const char* family;
  const char* selector;  // NVIDIA's ECC: the volatile count, not the lifetime one
  const char* code;
  Severity severity;
  const char* verdict;  // what a count > 0 means; "" for none
  const char* what;
};

// The reference's queries 1-8, with every RAS block the exporter has and
// NVIDIA's ECC and Xid counterparts.
const Counter kCounters[] = {
    {metric_names::kGpuRasUmcUeTotal, "", "ecc-uncorrectable", Severity::kCritical,
     "hardware-fault", "HBM uncorrectable ECC errors"},
    {metric_names::kGpuRasGfxUeTotal, "", "ecc-uncorrectable", Severity::kCritical,
     "hardware-fault", "compute engine uncorrectable errors"},
    {metric_names::kGpuRasMmhubUeTotal, "", "ecc-uncorrectable", Severity::kCritical,
     "hardware-fault", "memory hub uncorrectable errors"},
    {metric_names::kGpuRasSdmaUeTotal, "", "ecc-uncorrectable", Severity::kCritical,
     "hardware-fault", "SDMA uncorrectable errors"},
    {metric_names::kGpuRasXgmiUeTotal, "", "xgmi-errors", Severity::kCritical, "hardware-fault",
     "XGMI/WAFL link uncorrectable errors"},
    {metric_names::kGpuEccErrorsTotal, R"(error="uncorrected",counter="volatile")",
     "ecc-uncorrectable", Severity::kCritical, "hardware-fault", "uncorrected ECC errors"},
    {metric_names::kGpuPcieFatalTotal, "", "pcie-fatal", Severity::kCritical, "pcie-fatal",
     "PCIe fatal errors"},
    {metric_names::kDmesgGpuErrorsTotal, "", "dmesg-gpu-errors", Severity::kWarning,
     "driver-errors", "GPU/driver errors in the kernel log"},
    {metric_names::kGpuXidErrorsTotal, "", "xid-errors", Severity::kWarning, "driver-errors",
     "NVIDIA Xid errors"},
    {metric_names::kGpuRasUmcCeTotal, "", "ecc-correctable", Severity::kWarning,
     "degrading-hardware", "HBM correctable ECC errors"},
    {metric_names::kGpuRasGfxCeTotal, "", "ecc-correctable", Severity::kWarning,
     "degrading-hardware", "compute engine correctable errors"},
    {metric_names::kGpuRasMmhubCeTotal, "", "ecc-correctable", Severity::kWarning,
     "degrading-hardware", "memory hub correctable errors"},
    {metric_names::kGpuRasSdmaCeTotal, "", "ecc-correctable", Severity::kWarning,
     "degrading-hardware", "SDMA correctable errors"},
    {metric_names::kGpuRasXgmiCeTotal, "", "xgmi-errors", Severity::kWarning, "degrading-hardware",
     "XGMI/WAFL link correctable errors"},
    {metric_names::kGpuEccErrorsTotal, R"(error="corrected",counter="volatile")", "ecc-correctable",
     Severity::kWarning, "degrading-hardware", "corrected ECC errors"},
    {metric_names::kGpuPcieNonfatalTotal, "", "pcie-nonfatal", Severity::kWarning,
     "degrading-hardware", "PCIe non-fatal errors"},
    // Routine on some links: reported, but no verdict on its own.
    {metric_names::kGpuPcieCorrectableTotal, "", "pcie-correctable", Severity::kInfo, "",
     "PCIe correctable errors"},
};

// The verdicts by weight: the first one any finding earns wins.
const char* const kVerdictOrder[] = {"hardware-fault", "pcie-fatal",        "rdma-port-down",
                                     "driver-errors",  "thermal-excursion", "degrading-hardware"};

std::string Where(const Series& s) {
  std::string out = s.Label("host");
  if (!s.Label("gpu").empty()) out += " GPU " + s.Label("gpu");
  if (!s.Label("xid").empty()) out += " Xid " + s.Label("xid");
  return out;
}

}  // namespace

PlaybookResult RunHardwarePlaybook(PromSource& source, const DiagnoseContext& context) {
  PlaybookResult result;
  result.playbook = result.analysis_type = "hardware";
  playbook::Queries q(source, result);
  const TimeRange job = context.job_range;
  const double step = StepFor(job, context);
  const size_t n_hosts = playbook::JobHosts(context).size();
  std::vector<std::string> verdicts;  // earned, unordered

  EvidenceTable counters;
  counters.title = "Error counters: increase over the job";
  for (const auto& c : kCounters) {
    if (!playbook::Wanted(context, c.family)) continue;
    std::string query = IncreaseExpr(c.family, job, c.selector);
    counters.query += (counters.query.empty() ? "" : "; ") + query;
    std::vector<const Series*> nonzero;
    auto answer = q.Instant(query, job.end);
    for (const auto& s : answer) {
      if (!s.samples.empty() && s.samples.back().value >= 0.5) nonzero.push_back(&s);
    }
    if (nonzero.empty()) continue;
    // When it started: the first sample where the counter's rate turns positive.
    auto rates = q.Range(RateExpr(c.family, context, c.selector), job, step);
    std::set<std::string> error_hosts;
    for (const Series* s : nonzero) error_hosts.insert(s->Label("host"));
    for (const Series* s : nonzero) {
      double value = s->samples.back().value;
      std::optional<double> since;
      for (const auto& r : rates) {
        if (r.labels == s->labels) since = FirstTimeAbove(r, 0);
      }
      // Compare across nodes: one node counting while the others stay at 0.
      std::string others = n_hosts > error_hosts.size() ? fmt::format("; 0 on the other {} hosts",
                                                                      n_hosts - error_hosts.size())
                                                        : "";
      Finding f =
          MakeFinding(c.code, c.severity, c.family, s->Label("host"), value, "count", since,
                      fmt::format("{}: {:.0f} {} during the job{}{}", Where(*s), value, c.what,
                                  since ? " from " + playbook::FormatTime(*since) : "", others));
      f.gpu = s->Label("gpu");
      counters.rows.push_back({f.host, f.gpu, fmt::format("{} +{:.0f}", c.family, value), c.what});
      result.anomalies.push_back(std::move(f));
      if (*c.verdict) verdicts.emplace_back(c.verdict);
    }
  }
  if (counters.rows.empty()) {
    counters.rows.push_back({"all", "", "0", "no error counter increased during the job"});
  }
  result.evidence.push_back(std::move(counters));

  EvidenceTable ports;
  ports.title = "RDMA ports (lowest state in the job; 1 = ACTIVE)";
  ports.query = OverTimeExpr("min", metric_names::kRdmaPortState, step);
  if (playbook::Wanted(context, metric_names::kRdmaPortState)) {
    for (const auto& s : q.Range(ports.query, job, step)) {
      auto stats = StatsOf(s);
      if (!stats) continue;
      std::string device = s.Label("device") + "/" + s.Label("port");
      ports.rows.push_back({s.Label("host"), device, fmt::format("{:.0f}", stats->min),
                            stats->min < 1 ? "went down" : "up throughout"});
      auto down = playbook::PortDown(s);
      if (!down) continue;
      result.anomalies.push_back(std::move(*down));
      verdicts.emplace_back("rdma-port-down");
    }
  }
  result.evidence.push_back(std::move(ports));

  EvidenceTable thermal;
  thermal.title = "GPU temperature (usual = 75th percentile over the job, peak)";
  thermal.query = metric_names::kGpuTemperatureCelsius;
  for (const auto& s : q.Range(metric_names::kGpuTemperatureCelsius, job, step)) {
    auto stats = StatsOf(s);
    if (!stats) continue;
    std::vector<double> values;
    for (const auto& p : s.samples) values.push_back(p.value);
    double usual = triage::Percentile(values, 0.75);
    bool hot = stats->max >= kHotCelsius || stats->max >= usual + kRiseCelsius;
    thermal.rows.push_back({s.Label("host"), s.Label("gpu"),
                            fmt::format("usual {:.0f} C, peak {:.0f} C", usual, stats->max),
                            hot ? "excursion" : "normal"});
    if (!hot) continue;
    double threshold = std::min(kHotCelsius, usual + kRiseCelsius);
    Finding f =
        MakeFinding("thermal-high", Severity::kWarning, metric_names::kGpuTemperatureCelsius,
                    s.Label("host"), stats->max, "C", FirstTimeAbove(s, threshold, true),
                    fmt::format("{}: temperature reached {:.0f} C (usual {:.0f} C)", Where(s),
                                stats->max, usual));
    f.gpu = s.Label("gpu");
    result.anomalies.push_back(std::move(f));
    verdicts.emplace_back("thermal-excursion");
  }
  result.evidence.push_back(std::move(thermal));

  result.verdict = "clean";
  for (const char* v : kVerdictOrder) {
    if (std::find(verdicts.begin(), verdicts.end(), v) != verdicts.end()) {
      result.verdict = v;
      break;
    }
  }
  SetRootCauseAndChain(result);
  if (result.verdict == "clean") {
    result.summary = fmt::format(
        "No RAS, ECC, PCIe or kernel-log GPU errors during the job on {} hosts, RDMA ports up "
        "throughout, temperatures normal.",
        n_hosts);
    result.next_steps = {"Hardware is not the cause: check OOM (--playbook oom) and the log"};
  } else {
    const Finding& first = result.root_cause ? *result.root_cause : result.anomalies.front();
    result.summary = fmt::format("{}: {}. {} hardware finding(s) in all; the earliest is above.",
                                 result.verdict, first.text, result.anomalies.size());
    if (result.verdict == "hardware-fault" || result.verdict == "pcie-fatal") {
      result.next_steps = {"Drain " + first.host + " for maintenance (scontrol update nodename=" +
                               first.host + " state=drain reason=...)",
                           "Resubmit excluding it (sbatch --exclude=" + first.host + ")"};
    } else if (result.verdict == "rdma-port-down") {
      result.next_steps = {"Check the cable and switch port of " + first.host + " " + first.device};
    } else if (result.verdict == "driver-errors") {
      result.next_steps = {"Read dmesg --level=err,warn -T on " + first.host +
                           "; count D-state processes (a driver fault needs a reboot)"};
    } else if (result.verdict == "thermal-excursion") {
      result.next_steps = {"Check the cooling of " + first.host + " (--playbook gpu)"};
    } else {
      result.next_steps = {"Watch " + first.host +
                           ": correctable errors accumulating mean a failing part"};
    }
  }
  result.correlation = fmt::format("Triage class '{}'; the hardware playbook says {}.",
                                   context.triage.primary_class, result.verdict);
  return result;
}

}  // namespace jobmon::diagnose
