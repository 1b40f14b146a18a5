#pragma once
// A diagnosis as chart/'s Picture (chart/include/jobmon/chart/picture.h),
// the chart of `jobmon diagnose --html`: the job's step map against the
// expected line, the stall shaded, and each host's GPU utilisation and
// power. Pure: Diagnose (diagnose/src/diagnose.cc) asks the GPU series
// (PictureSpan, PictureStep) and hands them here; tests give canned ones.

#include <optional>
#include <string>
#include <vector>

#include "jobmon/chart/picture.h"
#include "jobmon/diagnose/prom_source.h"
#include "jobmon/diagnose/result.h"

namespace jobmon::diagnose {

// What the picture spans: the job's range (its own `up` samples), else the
// TSDB's when the job's is unknown.
TimeRange PictureSpan(const DiagnoseContext& context);

// The step of the GPU range queries over PictureSpan: every line then has at
// most chart::kMaxPointsPerLine points (never under the scrape interval).
double PictureStep(const DiagnoseContext& context);

// "Job 4242: hang busy-wait-hang", one playbook verdict after another; the
// page's title and the chart's.
std::string DiagnosisTitle(const Diagnosis& diagnosis);

// The expected line: from the first steady step of the step map (after the
// playbooks' warmup, kit.h's SteadyRange) at the median seconds per step of
// the steady map's intervals, straight to `to`. The median, so the compile
// step, checkpoint pauses and the stall itself do not bend it. Empty when
// the steady map has no interval.
std::vector<chart::Point> ExpectedLine(const DiagnoseContext& context, double to);

// Where the stall band begins: the triage's hang start, else the last
// mapped step's time when the triage says the job hung (class hang or
// status hanging); nullopt for a job that did not hang.
std::optional<double> StallSince(const DiagnoseContext& context);

// The hosts the diagnosis names, each once, the most accused first: the
// triage's accused hosts, then each playbook's root cause, then their
// critical and then warning findings. Info findings name no one.
std::vector<std::string> NamedHosts(const Diagnosis& diagnosis);

// The picture: PictureSpan, the step map, ExpectedLine, StallSince, and a
// panel per host (NamedHosts first, then the job's other hosts by name)
// with one line per GPU of `util` and `power`, series labelled `host` and
// `gpu` as the playbooks read them. Bound() (chart/picture.h) applied.
chart::Picture DiagnosisPicture(const Diagnosis& diagnosis, const std::vector<Series>& util,
                                const std::vector<Series>& power);

}  // namespace jobmon::diagnose
