#pragma once
// The daemon core's fakes, shared by its tests: a job source that answers
// what the test says (or fails, as an unreachable controller), a notifier
// that records every alert, an event log that keeps its lines.

#include <string>
#include <vector>

#include "jobmon/alerts/notifier.h"
#include "jobmon/monitor/event_log.h"
#include "jobmon/monitor/job_source.h"

namespace jobmon::monitor::test_support {

using slurm::SlurmJob;

class ScriptedSource : public JobSource {
 public:
  Expected<std::vector<SlurmJob>> ListJobs() override {
    ++calls;
    if (down) return Error{"scontrol exited with 1 (controller unreachable?)"};
    return jobs;
  }
  Expected<NodeAddresses> ListNodeAddresses() override {
    ++node_calls;
    if (down || nodes_down) return Error{"sinfo exited with 1 (controller unreachable?)"};
    return nodes;
  }
  // Recovery's actions, as "signal 7 USR1", "requeue 7 without node2", ...
  Expected<void> SignalJobSteps(uint32_t job_id, const std::string& signal) override {
    return Act("signal " + std::to_string(job_id) + " " + signal);
  }
  Expected<void> RequeueExcluding(uint32_t job_id, const std::string& node) override {
    return Act("requeue " + std::to_string(job_id) + " without " + node);
  }
  Expected<void> CancelJob(uint32_t job_id, const std::string& reason) override {
    return Act("cancel " + std::to_string(job_id) + ": " + reason);
  }
  Expected<void> DrainNode(const std::string& node, const std::string& reason) override {
    return Act("drain " + node + ": " + reason);
  }
  Expected<void> Act(std::string what) {
    if (down) return Error{"scontrol exited with 1 (controller unreachable?)"};
    actions.push_back(std::move(what));
    return {};
  }
  std::vector<std::string> actions;
  std::vector<SlurmJob> jobs;
  NodeAddresses nodes = {{"node1", {IpAddress::Parse("10.0.0.11").value()}},
                         {"node2", {IpAddress::Parse("10.0.0.12").value()}},
                         {"node3", {IpAddress::Parse("10.0.0.13").value()}}};
  bool down = false;
  bool nodes_down = false;
  int node_calls = 0;
  int calls = 0;
};

class RecordingNotifier : public alerts::Notifier {
 public:
  std::string name() const override { return "recording"; }
  Expected<void> Notify(const alerts::Alert& alert) override {
    sent.push_back(alert);
    return {};
  }
  std::vector<alerts::Alert> sent;
};

class RecordingLog : public EventLog {
 public:
  void Write(LogLevel, std::string_view event, const LogFields& fields) override {
    lines.push_back(RenderLogfmt(event, fields));
  }
  bool Has(const std::string& text) const {
    for (const auto& l : lines) {
      if (l.find(text) != std::string::npos) return true;
    }
    return false;
  }
  std::vector<std::string> lines;
};

}  // namespace jobmon::monitor::test_support
