#include "playbooks/gpu_error_counters.h"

#include <fmt/format.h>

#include "jobmon/common/metric_names.h"
#include "playbooks/kit.h"

namespace jobmon::diagnose::playbook {
namespace {

enum class Tally { kRasCe, kRasUe, kPcieCe, kPcieNonfatal, kPcieFatal, kNone };

struct Counter {
  const char* family;
  const char* selector;
  const char* code;
  Severity severity;
  Tally tally;
  const char* meaning;
};

// docs/diagnose.md Playbook 5 rows 5-8 and Playbook 4: any uncorrectable
// or fatal error means a bad GPU; correctable ones an accumulating issue.
// ECC "volatile": since driver load; "aggregate" would count it twice.
constexpr Counter kCounters[] = {
    {metric_names::kGpuRasUmcUeTotal, "", "ecc-uncorrectable", Severity::kCritical, Tally::kRasUe,
     "HBM uncorrectable errors: bad GPU, drain the node"},
    {metric_names::kGpuRasUmcCeTotal, "", "ecc-correctable", Severity::kWarning, Tally::kRasCe,
     "HBM correctable errors: accumulating hardware issue"},
    {metric_names::kGpuRasXgmiUeTotal, "", "xgmi-errors", Severity::kCritical, Tally::kRasUe,
     "XGMI uncorrectable errors: inter-GPU link failing"},
    {metric_names::kGpuRasXgmiCeTotal, "", "xgmi-errors", Severity::kWarning, Tally::kRasCe,
     "XGMI correctable errors: inter-GPU link degrading"},
    {metric_names::kGpuRasGfxUeTotal, "", "ecc-uncorrectable", Severity::kCritical, Tally::kRasUe,
     "GFX uncorrectable errors"},
    {metric_names::kGpuRasGfxCeTotal, "", "ecc-correctable", Severity::kWarning, Tally::kRasCe,
     "GFX correctable errors"},
    {metric_names::kGpuRasMmhubUeTotal, "", "ecc-uncorrectable", Severity::kCritical, Tally::kRasUe,
     "MMHUB uncorrectable errors"},
    {metric_names::kGpuRasMmhubCeTotal, "", "ecc-correctable", Severity::kWarning, Tally::kRasCe,
     "MMHUB correctable errors"},
    {metric_names::kGpuRasSdmaUeTotal, "", "ecc-uncorrectable", Severity::kCritical, Tally::kRasUe,
     "SDMA uncorrectable errors"},
    {metric_names::kGpuRasSdmaCeTotal, "", "ecc-correctable", Severity::kWarning, Tally::kRasCe,
     "SDMA correctable errors"},
    {metric_names::kGpuEccErrorsTotal, R"(error="uncorrected",counter="volatile")",
     "ecc-uncorrectable", Severity::kCritical, Tally::kRasUe,
     "ECC uncorrectable errors: bad GPU, drain the node"},
    {metric_names::kGpuEccErrorsTotal, R"(error="corrected",counter="volatile")", "ecc-correctable",
     Severity::kWarning, Tally::kRasCe, "ECC correctable errors: accumulating hardware issue"},
    {metric_names::kGpuPcieFatalTotal, "", "pcie-fatal", Severity::kCritical, Tally::kPcieFatal,
     "PCIe fatal errors"},
    {metric_names::kGpuPcieNonfatalTotal, "", "pcie-nonfatal", Severity::kWarning,
     Tally::kPcieNonfatal, "PCIe non-fatal errors"},
    {metric_names::kGpuPcieCorrectableTotal, "", "pcie-correctable", Severity::kWarning,
     Tally::kPcieCe, "PCIe correctable errors: a steady increase is a link issue"},
    {metric_names::kGpuXidErrorsTotal, "", "xid-errors", Severity::kWarning, Tally::kNone,
     "NVIDIA Xid errors in the kernel log"},
    {metric_names::kDmesgGpuErrorsTotal, "", "dmesg-gpu-errors", Severity::kWarning, Tally::kNone,
     "GPU error lines in the kernel log"},
};

void Add(GpuErrorTotals& totals, Tally tally, double count) {
  switch (tally) {
    case Tally::kRasCe:
      totals.ras_correctable += count;
      break;
    case Tally::kRasUe:
      totals.ras_uncorrectable += count;
      break;
    case Tally::kPcieCe:
      totals.pcie_correctable += count;
      break;
    case Tally::kPcieNonfatal:
      totals.pcie_nonfatal += count;
      break;
    case Tally::kPcieFatal:
      totals.pcie_fatal += count;
      break;
    case Tally::kNone:
      break;
  }
}

bool SameSeries(const Labels& a, const Labels& b) {
  for (const char* name : {"host", "gpu", "code", "block"}) {
    auto x = a.find(name), y = b.find(name);
    if ((x == a.end()) != (y == b.end())) return false;
    if (x != a.end() && x->second != y->second) return false;
  }
  return true;
}

}  // namespace

GpuErrorTotals GpuErrorsOver(PromSource& source, PlaybookResult& result,
                             const DiagnoseContext& context, const TimeRange& range) {
  GpuErrorTotals totals;
  for (const Counter& c : kCounters) {
    if (!Wanted(context, c.family)) continue;
    std::optional<std::vector<Series>> windows;
    for (const Series& s : IncreaseOver(source, result, c.family, range, c.selector)) {
      if (s.samples.empty()) continue;
      const double added = s.samples.back().value;
      if (added <= 0) continue;
      Add(totals, c.tally, added);
      // When it started: the first rate window in which the counter rose.
      // Asked once per counter, only when some series of it rose.
      if (!windows) {
        windows = Range(source, result,
                        IncreaseExpr(c.family, {0, context.rate_window_seconds}, c.selector), range,
                        context);
      }
      std::optional<double> first;
      for (const Series& r : *windows) {
        if (SameSeries(r.labels, s.labels)) first = FirstTimeAbove(r, 0);
      }
      totals.findings.push_back(
          MakeFinding(c.code, c.severity, c.family, s.labels, added, "count", first,
                      fmt::format("{}: {} +{:.0f} during the job{} ({})", Where(s.labels), c.family,
                                  added, first ? " from " + At(*first) : "", c.meaning)));
    }
  }
  return totals;
}

}  // namespace jobmon::diagnose::playbook
