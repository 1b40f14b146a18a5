#include "diagnose.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>

#include "discovery.h"
#include "jobmon/common/metric_names.h"
#include "jobmon/diagnose/picture.h"
#include "observability.h"
#include "playbooks/kit.h"
#include "ray_stand_ins.h"
#include "scrape_interval.h"
#include "window.h"

namespace jobmon::diagnose {

namespace {

void AddUnique(std::vector<const PlaybookSpec*>& out, const PlaybookSpec* spec) {
  if (std::find(out.begin(), out.end(), spec) == out.end()) out.push_back(spec);
}

// Step map, rate window and checkpoint windows into the context.
void BuildWindow(PromSource& source, const DiagnoseInputs& inputs, DiagnoseContext& context,
                 Diagnosis& diagnosis) {
  context.rate_window_seconds =
      RateWindowSeconds(context.job_range.seconds(), context.scrape_interval_seconds);
  if (context.HasFamily(metric_names::kTbStep)) {
    auto steps = QueryStepMap(source, context.job_range, StepFor(context.job_range, context, 2000));
    if (steps.ok()) {
      context.steps = std::move(steps.value());
    } else {
      diagnosis.warnings.push_back("step map from tb_step: " + steps.error().message);
    }
  }
  if (context.steps.empty()) context.steps = inputs.log_steps;
  if (context.steps.empty()) {
    diagnosis.warnings.push_back(
        "no step <-> time map: the TSDB has no tb_step and the log no stamped step lines");
  }
  if (context.triage.checkpoint_period) {
    context.checkpoints = CheckpointWindows(context.steps, *context.triage.checkpoint_period);
  }
}

PlaybookResult RunOne(const PlaybookSpec& spec, PromSource& source,
                      const DiagnoseContext& context) {
  PlaybookResult result;
  try {
    result = spec.run(source, context);
  } catch (const std::exception& e) {
    // A playbook's bug must not cost the others (or the report).
    result.errors.push_back(fmt::format("playbook {} stopped: {}", spec.name, e.what()));
  }
  if (result.playbook.empty()) result.playbook = spec.name;
  if (result.analysis_type.empty()) result.analysis_type = spec.analysis_type;
  if (result.verdict.empty()) result.verdict = "undetermined";
  return result;
}

// The chart's data (picture.h): each host's GPU utilisation and power over
// the job, asked as the hang playbook asks them (by name; the store's query
// layer confines them to the job), at a step that keeps every line within
// chart::kMaxPointsPerLine. A failed query costs its lines, not the chart.
void AddPicture(PromSource& source, Diagnosis& d) {
  const DiagnoseContext& context = d.context;
  const TimeRange span = PictureSpan(context);
  const double step = PictureStep(context);
  auto ask = [&](const char* family) -> std::vector<Series> {
    if (span.seconds() <= 0 || !playbook::Wanted(context, family)) return {};
    auto answer = source.QueryRange(family, span, step);
    if (answer.ok()) return std::move(answer.value());
    d.picture_errors.push_back(fmt::format("{}: {}", family, answer.error().message));
    return {};
  };
  const std::vector<Series> util = ask(metric_names::kGpuUtilizationPercent);
  const std::vector<Series> power = ask(metric_names::kGpuPowerWatts);
  d.picture = DiagnosisPicture(d, util, power);
}

}  // namespace

Expected<std::vector<const PlaybookSpec*>> SelectPlaybooks(
    const std::vector<std::string>& selection, std::string_view triage_class) {
  std::vector<const PlaybookSpec*> out;
  std::vector<std::string> names = selection.empty() ? std::vector<std::string>{"auto"} : selection;
  for (const std::string& name : names) {
    if (name == "auto") {
      for (const PlaybookSpec* spec : PlaybooksForClass(triage_class)) AddUnique(out, spec);
    } else if (name == "none") {  // discovery and window only (the other job of --compare)
      continue;
    } else if (name == "health") {
      for (const PlaybookSpec* spec : HealthPlaybooks()) AddUnique(out, spec);
    } else if (const PlaybookSpec* spec = FindPlaybook(name)) {
      AddUnique(out, spec);
    } else {
      std::string known;
      for (const PlaybookSpec& each : Playbooks()) known += fmt::format(" {}", each.name);
      return Error{fmt::format("unknown playbook '{}' (auto, health,{})", name, known)};
    }
  }
  return out;
}

Diagnosis Diagnose(PromSource& tsdb, const DiagnoseInputs& inputs, const ProgressFn& progress) {
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  Diagnosis d;
  d.source = tsdb.Describe();
  DiagnoseContext& context = d.context;
  context.job = inputs.job;
  if (inputs.triage) context.triage = FactsFromTriage(*inputs.triage);

  // Step 3: what the TSDB holds.
  DiscoveryInputs discovery_inputs;
  discovery_inputs.tsdb_range = inputs.tsdb_range;
  // The scrape interval first: discovery's query step and every threshold
  // counted in scrapes follow from it.
  discovery_inputs.scrape_interval_seconds = inputs.scrape_interval_seconds;
  FoundInterval interval = DiscoverScrapeInterval(tsdb, inputs.tsdb_range);
  if (interval.seconds) discovery_inputs.scrape_interval_seconds = *interval.seconds;
  if (inputs.manifest) discovery_inputs.expected_hosts = inputs.manifest->nodes;
  Discovery discovery = Discover(tsdb, discovery_inputs);
  ApplyDiscovery(discovery, discovery_inputs, context);
  // Where the exporter's GPU or memory families are absent and Ray's are
  // there, the playbooks read Ray's (ray_stand_ins.h).
  const std::vector<StandIn> stand_ins = StandInsFor(context.families);
  StandInPromSource source(tsdb, stand_ins);
  if (!stand_ins.empty()) {
    std::string which;
    for (const StandIn& s : stand_ins) {
      which += fmt::format("{}{} from {}", which.empty() ? "" : ", ", s.family, s.ray);
      context.families.emplace_back(s.family);
    }
    std::sort(context.families.begin(), context.families.end());
    d.warnings.push_back("the exporter's series are absent; Ray's stand in: " + which);
    say("Ray's series stand in: " + which);
  }
  for (const std::string& e : discovery.errors) d.warnings.push_back("discovery: " + e);
  say("discovery: " + DescribeDiscovery(discovery));
  if (interval.seconds) {
    say(fmt::format("scrape interval: {:g}s (from the spacing of `up` samples)",
                    *interval.seconds));
  } else {
    d.warnings.push_back(fmt::format(
        "scrape interval: not found in the data{}; assuming {:g}s{}",
        interval.error.empty() ? "" : " (" + interval.error + ")", inputs.scrape_interval_seconds,
        inputs.scrape_interval_from_config ? " (the diag dir's prometheus.yml)" : ""));
  }
  if (context.families.empty()) {
    d.warnings.push_back("the TSDB holds no metrics: Prometheus never scraped (see its log)");
  }

  // Step 4: the time frame, then step 3's cross-check against the log.
  BuildWindow(source, inputs, context, d);
  say(fmt::format("window: {} steps mapped, {} checkpoint window(s), rate window {:.0f}s",
                  context.steps.size(), context.checkpoints.size(), context.rate_window_seconds));
  CrossCheck check = CrossCheckTsdb(source, context);
  d.tsdb_matches_log = check.matches;
  d.tsdb_check = check.sentence;
  if (!check.matches) {
    d.warnings.insert(d.warnings.begin(), "WRONG TSDB? " + check.sentence +
                                              " — the verdicts below may be another "
                                              "job's");
  }
  say("cross-check: " + check.sentence);

  // Broken observability, reported beside the playbooks.
  d.observability = CheckObservability(source, context);
  say(fmt::format("observability: {} problem(s)", d.observability.problems.size()));

  // Step 5: the playbooks, each with its own window of interest.
  std::vector<const PlaybookSpec*> specs;
  if (auto selected = SelectPlaybooks(inputs.playbooks, context.triage.primary_class);
      selected.ok()) {
    specs = std::move(selected.value());
  } else {
    d.warnings.push_back(selected.error().message);
  }
  for (const PlaybookSpec* spec : specs) {
    DiagnoseContext own = context;
    own.window = WindowFor(spec->analysis_type, context);
    say(fmt::format("playbook {} ({:.0f}s window)", spec->name, own.window.seconds()));
    PlaybookResult result = RunOne(*spec, source, own);
    say(fmt::format(
        "playbook {}: {}{}", spec->name, result.verdict,
        result.errors.empty() ? "" : fmt::format(" ({} error(s))", result.errors.size())));
    d.playbooks.push_back(std::move(result));
  }
  // After the playbooks: the hosts they name lead the chart.
  if (inputs.picture) {
    try {
      AddPicture(source, d);
    } catch (const std::exception& e) {
      // As with a playbook: the chart's bug must not cost the report.
      d.picture_errors.push_back(fmt::format("the chart stopped: {}", e.what()));
      d.picture.reset();
    }
    say(fmt::format("picture: {} host panel(s){}", d.picture ? d.picture->hosts.size() : 0,
                    d.picture_errors.empty()
                        ? ""
                        : fmt::format(" ({} query error(s))", d.picture_errors.size())));
  }
  return d;
}

}  // namespace jobmon::diagnose
