#include "jobmon/exporter/collector_pool.h"

#include <condition_variable>
#include <iostream>
#include <thread>

#include "jobmon/common/metric_names.h"

namespace jobmon::exporter {

using Clock = std::chrono::steady_clock;

// Shared by the pool and one thread; outlives either.
struct CollectorPool::Worker {
  std::mutex m;
  std::condition_variable cv;
  std::unique_ptr<Collector> collector;
  uint64_t requested = 0;  // job ids
  uint64_t finished = 0;
  bool busy = false;
  bool stop = false;
  bool abandoned = false;
  Clock::time_point started;
  Expected<Families> result = Error{"not run yet"};
  std::vector<std::string> problems;  // of the last collection (collector.h)
  double seconds = 0;
  std::shared_ptr<std::atomic<int>> stuck;

  void Run() {
    std::unique_lock lock(m);
    for (;;) {
      cv.wait(lock, [&] { return stop || requested > finished; });
      if (stop && requested == finished) return;
      uint64_t job = requested;
      busy = true;
      started = Clock::now();
      lock.unlock();
      Expected<Families> out = Error{"no result"};
      std::vector<std::string> found;
      try {
        out = collector->Collect();
        found = collector->TakeProblems();
      } catch (const std::exception& e) {
        out = Error{std::string("collector threw: ") + e.what()};
      }
      double took = std::chrono::duration<double>(Clock::now() - started).count();
      lock.lock();
      result = std::move(out);
      problems = std::move(found);
      seconds = took;
      finished = job;
      busy = false;
      cv.notify_all();
      if (abandoned) {
        stuck->fetch_sub(1);  // it came back after all; this thread ends
        return;
      }
    }
  }
};

CollectorPool::CollectorPool(std::vector<CollectorFactory> factories, PoolOptions options)
    : options_(std::move(options)) {
  for (auto& factory : factories) {
    Slot slot;
    slot.factory = std::move(factory);
    slot.worker = StartWorker(slot.factory);
    slots_.push_back(std::move(slot));
  }
}

std::shared_ptr<CollectorPool::Worker> CollectorPool::StartWorker(
    const CollectorFactory& factory) const {
  auto worker = std::make_shared<Worker>();
  worker->collector = factory.make();
  worker->stuck = stuck_;
  // Detached: a thread stuck in the kernel cannot be joined; it owns its
  // Worker through the shared_ptr and ends when (if) its read returns.
  std::thread([worker] { worker->Run(); }).detach();
  return worker;
}

void CollectorPool::SayWhy(Slot& slot, std::optional<std::string> reason,
                           Clock::time_point now) const {
  std::string line;
  if (!reason) {
    if (!slot.reason) return;
    line = "collector " + slot.factory.name + " recovered";
  } else {
    bool repeat = slot.reason == reason && now - slot.reason_logged < options_.repeat_reason_after;
    if (repeat) return;
    line = "collector " + slot.factory.name + " failed: " + *reason;
    slot.reason_logged = now;
  }
  slot.reason = std::move(reason);
  if (options_.log) {
    options_.log(line);
  } else {
    std::cerr << "jobmon-exporter: " << line << "\n";
  }
}

CollectorPool::~CollectorPool() {
  for (Slot& slot : slots_) {
    std::lock_guard lock(slot.worker->m);
    slot.worker->stop = true;
    slot.worker->cv.notify_all();
  }
}

std::vector<prometheus::MetricFamily> CollectorPool::Collect() const {
  std::lock_guard scrape(scrape_mutex_);
  const auto scrape_start = Clock::now();
  if (options_.min_interval.count() == 0) return CollectNow(scrape_start);
  if (last_collection_ && scrape_start - *last_collection_ < options_.min_interval) {
    return last_result_;
  }
  last_collection_ = scrape_start;
  last_result_ = CollectNow(scrape_start);
  return last_result_;
}

std::vector<prometheus::MetricFamily> CollectorPool::CollectNow(
    std::chrono::steady_clock::time_point scrape_start) const {
  std::vector<std::optional<uint64_t>> jobs(slots_.size());
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[i];
    std::unique_lock lock(slot.worker->m);
    if (slot.worker->busy) {
      auto running = scrape_start - slot.worker->started;
      if (running < options_.abandon_after || stuck_->load() >= options_.max_stuck_threads) {
        continue;  // still running the previous collection: no series this scrape
      }
      // Abandon the stuck thread and give the collector a fresh one.
      slot.worker->abandoned = true;
      slot.worker->stop = true;
      stuck_->fetch_add(1);
      lock.unlock();
      slot.worker = StartWorker(slot.factory);
      lock = std::unique_lock(slot.worker->m);
    }
    jobs[i] = ++slot.worker->requested;
    slot.worker->cv.notify_all();
  }

  const auto deadline = scrape_start + options_.deadline;
  Families out;
  prometheus::MetricFamily success{metric_names::kCollectorSuccess,
                                   "1 if the collector's last collection succeeded in time",
                                   prometheus::MetricType::Gauge,
                                   {}};
  prometheus::MetricFamily duration{metric_names::kCollectorDurationSeconds,
                                    "Time the collector took",
                                    prometheus::MetricType::Gauge,
                                    {}};
  prometheus::MetricFamily last_success{"hw_collector_last_success_timestamp_seconds",
                                        "Unix time of the collector's last success",
                                        prometheus::MetricType::Gauge,
                                        {}};
  auto sample = [&](prometheus::MetricFamily& family, const std::string& collector, double value) {
    prometheus::ClientMetric m;
    m.label = {{"collector", collector}, {"host", options_.host}};
    m.gauge.value = value;
    family.metric.push_back(std::move(m));
  };
  // Wait for the collectors that have been on time first, then take what
  // the overrunning ones have by then.
  std::vector<Families*> results(slots_.size(), nullptr);
  std::vector<double> seconds(slots_.size(), 0);
  std::vector<std::optional<std::string>> reasons(slots_.size());
  auto gather = [&](size_t i, Clock::time_point until) {
    Slot& slot = slots_[i];
    std::unique_lock lock(slot.worker->m);
    bool done = jobs[i] && slot.worker->cv.wait_until(
                               lock, until, [&] { return slot.worker->finished >= *jobs[i]; });
    if (jobs[i]) slot.overran = !done;  // no job: still busy, stays overran
    if (!done) {
      // Still running (this scrape's collection or an earlier one's): the
      // time it has taken so far, not the time this scrape spent on it.
      seconds[i] = std::chrono::duration<double>(Clock::now() - slot.worker->started).count();
      reasons[i] =
          "did not finish within the " + std::to_string(options_.deadline.count()) + " ms deadline";
      return;
    }
    seconds[i] = slot.worker->seconds;
    if (!slot.worker->result.ok()) {
      reasons[i] = slot.worker->result.error().message;
      return;
    }
    results[i] = &slot.worker->result.value();
    if (!slot.worker->problems.empty()) {
      std::string all;
      for (const std::string& p : slot.worker->problems) all += (all.empty() ? "" : "; ") + p;
      reasons[i] = "its other series served without: " + all;
    }
  };
  std::vector<bool> suspect(slots_.size());
  for (size_t i = 0; i < slots_.size(); ++i) suspect[i] = slots_[i].overran;
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (!suspect[i]) gather(i, deadline);
  }
  const auto now = Clock::now();
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (suspect[i]) gather(i, std::min(now, deadline));
  }
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[i];
    // A worker only rewrites its result when asked again, which takes
    // scrape_mutex_, so reading it here without the worker's lock is safe.
    bool served = results[i] != nullptr;
    bool ok = served && !reasons[i];
    if (served) {
      // Moved out: the worker writes a new result before it is read again.
      for (auto& family : *results[i]) {
        for (auto& metric : family.metric) metric.label.push_back({"host", options_.host});
        out.push_back(std::move(family));
      }
      results[i]->clear();
    }
    if (ok) {
      slot.last_success_unix =
          std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
              .count();
    }
    SayWhy(slot, reasons[i], now);
    sample(success, slot.factory.name, ok ? 1 : 0);
    sample(duration, slot.factory.name, seconds[i]);
    if (slot.last_success_unix) sample(last_success, slot.factory.name, *slot.last_success_unix);
  }
  out.push_back(std::move(success));
  out.push_back(std::move(duration));
  if (!last_success.metric.empty()) out.push_back(std::move(last_success));
  prometheus::MetricFamily stuck{"hw_collector_stuck_threads",
                                 "Collector threads abandoned while stuck (e.g. in a D-state read)",
                                 prometheus::MetricType::Gauge,
                                 {}};
  prometheus::ClientMetric stuck_metric;
  stuck_metric.label = {{"host", options_.host}};
  stuck_metric.gauge.value = stuck_->load();
  stuck.metric.push_back(std::move(stuck_metric));
  out.push_back(std::move(stuck));
  prometheus::MetricFamily scrape_duration{
      metric_names::kScrapeDurationSeconds,
      "Time this scrape took (kept for the diagnosis playbooks)",
      prometheus::MetricType::Gauge,
      {}};
  prometheus::ClientMetric scrape_metric;
  scrape_metric.label = {{"host", options_.host}};
  scrape_metric.gauge.value = std::chrono::duration<double>(Clock::now() - scrape_start).count();
  scrape_duration.metric.push_back(std::move(scrape_metric));
  out.push_back(std::move(scrape_duration));
  return out;
}

}  // namespace jobmon::exporter
