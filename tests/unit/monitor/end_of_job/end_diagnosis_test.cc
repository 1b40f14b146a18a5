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

// A diagnosis waiting behind a slow one used to get its full timeout only
// once it started: a queue of them held each job's report back for hours.
// The timeout counts from Submit; one that waited it out never starts.
TEST(EndDiagnosis, TheTimeoutCountsFromSubmitNotFromStart) {
  Gate gate;
  EndDiagnosis d(gate.Fake(), 60);
  const auto t0 = EndDiagnosis::Clock::now();
  d.Submit(1, 1, "a", t0);
  d.Submit(2, 2, "b", t0);
  for (int i = 0; i < 1000 && !gate.started; ++i) std::this_thread::sleep_for(1ms);
  auto results = d.Poll(t0 + 61s);
  ASSERT_EQ(results.size(), 2u) << "the running one and the one that waited";
  EXPECT_EQ(results[0].job_id, 1u);
  EXPECT_TRUE(results[0].timed_out);
  EXPECT_EQ(results[1].job_id, 2u);
  EXPECT_TRUE(results[1].timed_out);
  EXPECT_NE(results[1].error.find("waiting behind other diagnoses"), std::string::npos)
      << results[1].error;
  EXPECT_EQ(d.pending(), 0u);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(gate.argument, "a") << "the one that waited it out never started";
}

// One user ending many jobs at once filled an unbounded queue ahead of
// everyone else's diagnoses: beyond its share (and beyond the total) a
// job is dropped, and the next Poll says why.
TEST(EndDiagnosis, OneUserCannotFillTheQueue) {
  Gate gate;
  EndDiagnosis d(gate.Fake(), 60, EndDiagnosis::Limits{.per_user = 2, .total = 3});
  const JobUser alice{1000, 1000}, bob{1001, 1001}, carol{1002, 1002};
  d.Submit(1, 1, "a1", EndDiagnosis::Clock::now(), alice);
  d.Submit(2, 2, "a2", EndDiagnosis::Clock::now(), alice);
  d.Submit(3, 3, "a3", EndDiagnosis::Clock::now(), alice);  // past alice's share
  d.Submit(4, 4, "b1", EndDiagnosis::Clock::now(), bob);
  d.Submit(5, 5, "c1", EndDiagnosis::Clock::now(), carol);  // past the total
  auto results = d.Poll();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].job_id, 3u);
  EXPECT_FALSE(results[0].timed_out);
  EXPECT_NE(results[0].error.find("dropped: uid 1000 has 2 diagnoses"), std::string::npos)
      << results[0].error;
  EXPECT_EQ(results[1].job_id, 5u);
  EXPECT_NE(results[1].error.find("dropped: 3 diagnoses already waiting or running"),
            std::string::npos)
      << results[1].error;
  EXPECT_EQ(d.pending(), 3u) << "alice's two and bob's one";
  gate.Release();
}

}  // namespace
}  // namespace jobmon::monitor
