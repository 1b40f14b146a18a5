#pragma once
// Store mode ([monitor] evidence = "store"): the monitor takes a --diag
// job's evidence from a central Prometheus-compatible store (VictoriaMetrics)
// that the jobs' Prometheus remote-write to, instead of scraping exporters.
// The pure half: the PromQL asked, and the answer turned into the per-host
// scrapes MetricWindow already takes, so the classifiers are unchanged.
//
// One query per batch of jobs, not one per job or per family: each cycle
// every job's TensorBoard step, and for the jobs a verdict needs it for
// (NeedsStoreEvidence) every family the window reads, as raw samples over a range
//   {__name__=~"up|hw_gpu_power_watts|...",slurm_job_id=~"12|13",cluster="c"}[40s]
// An instant query of a range selector answers raw samples with their own
// timestamps (a query_range would resample them onto its step, and
// VictoriaMetrics shifts a range's last 30 s to older values). Every sample
// of one Prometheus scrape carries the scrape's time, so (job, host, time)
// rebuilds that scrape; `up` says whether it succeeded.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "jobmon/common/store_labels.h"
#include "jobmon/diagnose/prom_source.h"
#include "jobmon/monitor/exposition.h"
#include "jobmon/monitor/metric_window.h"
#include "jobmon/monitor/progress_tracker.h"

namespace jobmon::monitor {

// The labels that tell jobs apart in the store: common/include/jobmon/common/store_labels.h.

// What Slurm says of a job, against which a store's answer is checked: its
// series count only with the job's own user and on the job's own nodes.
// The labels are written by the job's Prometheus, which runs as its user;
// that another user cannot write this user's `user` label is the store's
// to enforce (README "Central store": vmauth's extra_label per user).
struct StoreJobScope {
  std::string user;             // empty: not checked
  std::set<std::string> hosts;  // empty: not checked
};
using StoreScopes = std::map<uint32_t, StoreJobScope>;
inline constexpr char kStoreHostLabel[] = "host";
// A DNS name's most: a longer `host` label is no node's.
inline constexpr size_t kMaxStoreHostBytes = 255;

// What a query asks for: a job's whole evidence (the window's families and
// `up`), or only its TensorBoard step, the one family progress reads.
enum class StoreFamilies { kEvidence, kTensorBoardStep };

// The selector above: the families, the jobs by a regex of their ids,
// `cluster` when not empty, raw samples over `range_seconds` (whole
// seconds, at least 1). `job_ids` must not be empty.
std::string StoreEvidenceQuery(const std::vector<uint32_t>& job_ids, const std::string& cluster,
                               double range_seconds,
                               StoreFamilies families = StoreFamilies::kEvidence);

// Store mode reads a job's evidence from the store only when a verdict
// needs it: the job is stalled past its threshold after a first step (the
// stall classifier reads the window), or a heartbeat accusation waits to be
// judged. The store keeps the whole window meanwhile, so a healthy job costs
// one TensorBoard-step series per cycle, not every family re-read.
bool NeedsStoreEvidence(const ProgressState& state, bool heartbeat_pending);

// One scrape of one host as the store has it.
struct StoreScrape {
  double t = 0;
  bool ok = true;  // `up` was 1, or absent while the host's samples are there
  Exposition samples;
};
// job id -> host -> its scrapes, oldest first.
using StoreScrapes = std::map<uint32_t, std::map<std::string, std::vector<StoreScrape>>>;

// Groups an answer's series into scrapes by (slurm_job_id, host, time to
// the millisecond). Series without a numeric job id or a host are skipped;
// a scrape whose `up` is 0 is a failed one (its other samples dropped).
// The labels are the job's Prometheus's to write, so the window's limits
// apply here already, in the answer's order: a job's first max_hosts hosts
// (each name at most kMaxStoreHostBytes), a host's first max_gpus_per_host
// GPU labels (each at most kMaxGpuLabelBytes); the rest is not copied. The
// per-job series cap is the window's, as the scrapes are fed to it.
StoreScrapes GroupStoreSeries(const std::vector<diagnose::Series>& series,
                              const WindowLimits& limits = {}, const StoreScopes* scopes = nullptr);

// Feeds one job's answer into its window. The store's newest scrapes can be
// partial when asked (remote_write sends a scrape's samples in several
// batches; the store makes rows visible in shards), so what the window
// holds newer than `since` (the start of the span the answer covers) is
// replaced by the answer's scrapes of that span, never kept as first seen:
// a sample that arrives late still counts. Returns the scrapes fed.
// With MetricWindow::Keep::kLacking nothing is replaced: only the series
// the window lacks are filled (a job turned from sparse scrapes,
// scrape_cadence.h), and its own scrapes stay.
size_t FeedStoreAnswer(MetricWindow& window,
                       const std::map<std::string, std::vector<StoreScrape>>& hosts, double since,
                       MetricWindow::Keep keep = MetricWindow::Keep::kAll);

// A job's newest TensorBoard step in a kTensorBoardStep answer (scrapes
// newer than `since`), as MetricWindow::LatestOf reads it: the largest
// value at its series' newest time; nullopt when no host has one.
std::optional<MetricWindow::Latest> NewestTensorBoardStep(
    const std::map<std::string, std::vector<StoreScrape>>& hosts, double since);

}  // namespace jobmon::monitor
