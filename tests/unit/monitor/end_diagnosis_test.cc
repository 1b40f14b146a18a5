// The monitor's end-of-job diagnosis runs beside the cycle: Submit never
// waits for it, a finished one comes back rendered, one past the timeout
// is abandoned and told to stop (its Prometheus with it).

#include "jobmon/monitor/end_diagnosis.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

namespace jobmon::monitor {
namespace {

using diagnose::TargetOutcome;
using diagnose::TargetRequest;
using namespace std::chrono_literals;

// A diagnosis that waits for the test's go (or its cancel flag), and says
// whether it saw the cancel: where the real one closes its TSDB session.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool go = false;
  std::atomic<bool> started{false}, saw_cancel{false}, session_closed{false};
  std::atomic<bool> cleanup_on_signal{true};
  std::string argument;

  diagnose::TargetDiagnoser Fake() {
    return [this](const TargetRequest& r) {
      started = true;
      argument = r.argument;
      cleanup_on_signal = r.cleanup_on_signal;
      std::unique_lock lock(mu);
      while (!go && !(r.cancel && r.cancel->load())) cv.wait_for(lock, 5ms);
      TargetOutcome out;
      if (!go) {
        saw_cancel = true;
        session_closed = true;
        out.status = TargetOutcome::Status::kCancelled;
        out.error = "cancelled";
        return out;
      }
      out.diagnosis.context.job = "77";
      diagnose::PlaybookResult p;
      p.playbook = "hardware";
      p.analysis_type = "hardware";
      p.verdict = "hardware-fault";
      out.diagnosis.playbooks.push_back(p);
      return out;
    };
  }
  void Release() {
    std::lock_guard lock(mu);
    go = true;
    cv.notify_all();
  }
};

std::vector<EndDiagnosis::Result> PollUntilResult(EndDiagnosis& d) {
  for (int i = 0; i < 1000; ++i) {
    auto r = d.Poll();
    if (!r.empty()) return r;
    std::this_thread::sleep_for(2ms);
  }
  return {};
}

TEST(EndDiagnosis, SubmitDoesNotWaitAndTheReportComesBack) {
  Gate gate;
  EndDiagnosis d(gate.Fake(), 60);
  d.Submit(77, 5, "/diag/77/tsdb.tar.zst");  // returns while the diagnosis is held
  EXPECT_EQ(d.pending(), 1u);
  EXPECT_TRUE(d.Poll().empty());
  gate.Release();
  auto results = PollUntilResult(d);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(gate.argument, "/diag/77/tsdb.tar.zst");
  EXPECT_FALSE(gate.cleanup_on_signal) << "the daemon's SIGTERM stays the daemon's";
  EXPECT_EQ(results[0].job_id, 77u);
  EXPECT_EQ(results[0].incident_id, 5);
  EXPECT_FALSE(results[0].timed_out);
  EXPECT_NE(results[0].markdown.find("## TSDB Diagnosis: 77"), std::string::npos);
  EXPECT_EQ(results[0].verdicts, "hardware: hardware-fault\n");
  EXPECT_EQ(d.pending(), 0u);
}

TEST(EndDiagnosis, PastTheTimeoutItIsAbandonedAndStopped) {
  Gate gate;
  EndDiagnosis d(gate.Fake(), 0.05);
  d.Submit(78, 6, "/diag/78/tsdb.tar.zst");
  auto results = PollUntilResult(d);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].timed_out);
  EXPECT_TRUE(results[0].markdown.empty());
  for (int i = 0; i < 1000 && !gate.session_closed; ++i) std::this_thread::sleep_for(2ms);
  EXPECT_TRUE(gate.saw_cancel);
  EXPECT_TRUE(gate.session_closed);
  EXPECT_TRUE(d.Poll().empty());  // the late outcome is not reported
}

TEST(EndDiagnosis, OneAtATimeTheNextQueued) {
  Gate gate;
  EndDiagnosis d(gate.Fake(), 60);
  d.Submit(1, 1, "a");
  d.Submit(2, 2, "b");
  EXPECT_EQ(d.pending(), 2u);
  gate.Release();
  auto first = PollUntilResult(d);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].job_id, 1u);
  auto second = PollUntilResult(d);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].job_id, 2u);
}

TEST(EndDiagnosis, DestroyingCancelsWhatRuns) {
  Gate gate;
  {
    EndDiagnosis d(gate.Fake(), 60);
    d.Submit(9, 9, "x");
    for (int i = 0; i < 1000 && !gate.started; ++i) std::this_thread::sleep_for(1ms);
  }
  EXPECT_TRUE(gate.saw_cancel);
}

}  // namespace
}  // namespace jobmon::monitor
