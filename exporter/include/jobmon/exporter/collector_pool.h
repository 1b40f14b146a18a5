#pragma once
// Runs every collector on a worker thread of its own, under a per-scrape
// deadline. A collector that is late or failed contributes no series (no
// ghost data) and hw_collector_success 0. A worker stuck in the kernel (a
// D-state sysfs read) is abandoned after `abandon_after` and replaced by a
// fresh collector instance, at most `max_stuck_threads` at a time; it never
// blocks a scrape or another collector. A collector whose Collect() reports
// problems (broken files, collector.h) serves its other series with
// hw_collector_success 0. Why a collector failed is a log line, not a label
// (a label would make a new series per reason): said when the reason
// changes, again every `repeat_reason_after` while it holds, and once when
// the collector recovers.

#include <prometheus/collectable.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "jobmon/exporter/collector.h"

namespace jobmon::exporter {

struct PoolOptions {
  std::string host;  // the `host` label on every series
  std::chrono::milliseconds deadline{2000};
  std::chrono::milliseconds abandon_after{10000};
  int max_stuck_threads = 8;
  // Collections are at most this frequent: a scrape sooner than this after
  // the last collection is served that collection's result (several
  // scrapers -- the job's Prometheus and the monitor -- cost one collection).
  std::chrono::milliseconds min_interval{0};
  std::function<void(const std::string&)> log{};  // empty: stderr
  std::chrono::milliseconds repeat_reason_after{600000};
};

class CollectorPool : public prometheus::Collectable {
 public:
  CollectorPool(std::vector<CollectorFactory> factories, PoolOptions options);
  ~CollectorPool() override;
  CollectorPool(const CollectorPool&) = delete;
  CollectorPool& operator=(const CollectorPool&) = delete;

  // One scrape. Serialised: concurrent scrapes wait for each other.
  std::vector<prometheus::MetricFamily> Collect() const override;

  int stuck_threads() const { return stuck_->load(); }

  struct Worker;

 private:
  struct Slot {
    CollectorFactory factory;
    std::shared_ptr<Worker> worker;
    std::optional<double> last_success_unix;
    // It overran the deadline last time: scrapes stop waiting for it (they
    // take its result only if it is already there) until it is on time again,
    // so one stuck collector costs one deadline, not one per scrape.
    bool overran = false;
    std::optional<std::string> reason;  // why it failed last, as logged
    std::chrono::steady_clock::time_point reason_logged;
  };
  void SayWhy(Slot& slot, std::optional<std::string> reason,
              std::chrono::steady_clock::time_point now) const;
  std::shared_ptr<Worker> StartWorker(const CollectorFactory& factory) const;
  std::vector<prometheus::MetricFamily> CollectNow(
      std::chrono::steady_clock::time_point scrape_start) const;

  PoolOptions options_;
  mutable std::mutex scrape_mutex_;
  mutable std::vector<Slot> slots_;
  mutable std::optional<std::chrono::steady_clock::time_point> last_collection_;
  mutable std::vector<prometheus::MetricFamily> last_result_;
  std::shared_ptr<std::atomic<int>> stuck_ = std::make_shared<std::atomic<int>>(0);
};

}  // namespace jobmon::exporter
