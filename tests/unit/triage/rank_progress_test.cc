// Per-rank progress (triage/include/jobmon/triage/rank_progress.h): which
// rank a line is from, as the launchers and programs print it, and which
// rank stopped first.

#include "jobmon/triage/rank_progress.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "jobmon/triage/ray_logs.h"
#include "jobmon/triage/triage.h"
#include "shared_scanner.h"

namespace jobmon::triage {
namespace {

std::string RankOf(const std::string& line) {
  auto id = LineRank(line);
  return id ? ToString(*id) : "none";
}

TEST(LineRank, LaunchersPrefixesAndTheProgramsOwnField) {
  // srun -l (right-aligned task ids), torchrun --tee (tail_log.py's
  // "[{name}{local_rank}]:"), both, and the rank in the program's text.
  EXPECT_EQ(RankOf("3: step 5 loss 0.1"), "task 3");
  EXPECT_EQ(RankOf(" 12: step 5 loss 0.1"), "task 12");
  EXPECT_EQ(RankOf("[default1]:step 5 loss 0.1"), "local 1");
  EXPECT_EQ(RankOf("[trainer0]:step 5"), "local 0");
  EXPECT_EQ(RankOf("1: [default0]:step 5"), "task 1 local 0");
  EXPECT_EQ(RankOf("[default0]:rank 1 step 5 loss 0.2"), "rank 1");
  EXPECT_EQ(RankOf("0: rank 0 step 5 loss 0.2"), "rank 0");
  EXPECT_EQ(RankOf("[Rank 2] step=10, skipped=0, lr=[0.001]"), "rank 2");  // DeepSpeed
  EXPECT_EQ(RankOf("rank=7 iter 3/100"), "rank 7");
  EXPECT_EQ(RankOf("RANK: 4 | step 3"), "rank 4");
  EXPECT_EQ(RankOf("rank 3/8 step 9"), "rank 3");
}

TEST(LineRank, WordsThatAreNotARank) {
  for (const char* line : {"training on 2 ranks (gloo), 60 steps", "world_rank 3 step 2",
                           "rank0 step 1", "Frank 3 step 2", "[2026-11-26 10:00:00]: step 3",
                           "[INFO]: step 3", "[12]: step 4", "rank 3x step 2", "step 5 loss 0.1"}) {
    EXPECT_EQ(RankOf(line), "none") << line;
  }
  // Past the first kRankFieldWindow bytes a "rank N" is some other text's.
  EXPECT_EQ(RankOf(std::string(kRankFieldWindow, 'x') + " rank 3 step 2"), "none");
}

RankId Rank(int r) { return RankId{.rank = r}; }

TEST(RankProgress, TheRankBehindStoppedFirst) {
  RankProgress p;
  for (int step = 1; step <= 25; ++step) {
    for (int r = 0; r < 4; ++r) {
      if (r == 1 && step > 24) continue;
      p.Offer(Rank(r), step, std::nullopt, 1000.0 + step, static_cast<uint64_t>(step * 4 + r));
    }
  }
  auto s = p.Stopped();
  ASSERT_TRUE(s);
  ASSERT_EQ(s->ranks.size(), 1u);
  EXPECT_EQ(ToString(s->ranks[0]), "rank 1");
  EXPECT_EQ(s->at.step, 24);
  EXPECT_EQ(s->steps_behind, 1);
  EXPECT_EQ(s->others_step, 25);
  EXPECT_EQ(s->of, 4u);
  EXPECT_DOUBLE_EQ(*s->seconds_behind, 1.0);
  EXPECT_EQ(RankProgress::Describe(*s),
            "rank 1 stopped first: at step 24, 1 step behind the other 3 ranks (at step 25), "
            "whose last step line came 1s later");
}

TEST(RankProgress, AllAtOneStepIsNoOneRanksFaultUnlessTheirTimesSayIt) {
  RankProgress p;
  p.Offer(Rank(0), 10, std::nullopt, std::nullopt, 1);
  p.Offer(Rank(1), 10, std::nullopt, std::nullopt, 2);
  EXPECT_FALSE(p.Stopped()) << "no times: nothing tells them apart";
  RankProgress timed;
  timed.Offer(Rank(0), 10, std::nullopt, 100, 1);
  timed.Offer(Rank(1), 10, std::nullopt, 102, 2);
  EXPECT_FALSE(timed.Stopped()) << "within kSameMomentSeconds";
  timed.Offer(Rank(2), 10, std::nullopt, 60, 3);  // its step 10 came 40 s before the others'
  auto s = timed.Stopped();
  ASSERT_TRUE(s);
  EXPECT_EQ(ToString(s->ranks.at(0)), "rank 2");
  EXPECT_EQ(s->steps_behind, 0);
  EXPECT_DOUBLE_EQ(*s->seconds_behind, 42);
}

TEST(RankProgress, EpochsComeBeforeSteps) {
  RankProgress p;
  p.Offer(Rank(0), 3, 2, std::nullopt, 1);   // epoch 2 step 3
  p.Offer(Rank(1), 90, 1, std::nullopt, 2);  // epoch 1 step 90: behind
  auto s = p.Stopped();
  ASSERT_TRUE(s);
  EXPECT_EQ(ToString(s->ranks.at(0)), "rank 1");
  EXPECT_FALSE(s->steps_behind) << "steps of different epochs do not subtract";
}

TEST(RankProgress, BoundedWhateverTheOutput) {
  RankProgress p;
  for (int r = 0; r < 10000; ++r) p.Offer(Rank(r), r % 7, std::nullopt, std::nullopt, 1);
  EXPECT_EQ(p.ranks().size(), RankProgress::kMaxRanks);
  auto s = p.Stopped();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->ranks.size(), RankProgress::kNamed);
  EXPECT_GT(s->count, RankProgress::kNamed);
  EXPECT_NE(RankProgress::Describe(*s).find(" more stopped first"), std::string::npos)
      << RankProgress::Describe(*s);
}

// A copy or a move keeps its own ranks: an offer to one is not the other's
// (the first ranks are found by a scan of the map's own entries).
TEST(RankProgress, ACopyOrAMoveKeepsItsOwnRanks) {
  RankProgress original;
  original.Offer(Rank(0), 5, std::nullopt, std::nullopt, 1);
  original.Offer(Rank(1), 5, std::nullopt, std::nullopt, 2);
  RankProgress copy = original;
  copy.Offer(Rank(1), 9, std::nullopt, std::nullopt, 3);
  EXPECT_EQ(original.ranks().at(Rank(1)).step, 5);
  EXPECT_EQ(copy.ranks().at(Rank(1)).step, 9);
  RankProgress assigned;
  assigned = copy;
  assigned.Offer(Rank(0), 7, std::nullopt, std::nullopt, 4);
  EXPECT_EQ(copy.ranks().at(Rank(0)).step, 5);
  EXPECT_EQ(assigned.ranks().at(Rank(0)).step, 7);
  RankProgress moved = std::move(assigned);
  moved.Offer(Rank(0), 8, std::nullopt, std::nullopt, 5);
  EXPECT_EQ(moved.ranks().at(Rank(0)).step, 8);
  EXPECT_EQ(moved.ranks().size(), 2u);
  RankProgress move_assigned;
  move_assigned = std::move(moved);
  move_assigned.Offer(Rank(1), 10, std::nullopt, std::nullopt, 6);
  EXPECT_EQ(move_assigned.ranks().at(Rank(1)).step, 10);
  EXPECT_EQ(copy.ranks().at(Rank(1)).step, 9);
}

// Real DDP jobs (tests/fixtures/real/pytorch, README table, round 3): every
// rank prints its steps, rank 1 stops after step 25's all-reduce, and rank 0
// times out waiting for it in step 26.
TEST(RealRanks, TheRankThatStoppedFirstIsNamedUnderSrunAndTorchrun) {
  for (const char* name : {"srun-rank-behind", "torchrun-rank-behind"}) {
    SCOPED_TRACE(name);
    auto facts =
        SharedScanner().ScanFile(std::string(JOBMON_FIXTURES) + "/real/pytorch/" + name + ".log");
    ASSERT_TRUE(facts) << facts.error().message;
    AnalysisContext context;
    context.now = 4102444800;  // long after
    TriageReport r = Analyze(*facts, context);
    EXPECT_EQ(r.primary, "nccl-timeout");
    ASSERT_TRUE(r.ranks);
    EXPECT_EQ(r.ranks->seen, 2u);
    ASSERT_TRUE(r.ranks->stopped_first);
    EXPECT_EQ(ToString(r.ranks->stopped_first->ranks.at(0)), "rank 1");
    EXPECT_EQ(r.ranks->stopped_first->at.step, 24);
    EXPECT_EQ(r.ranks->stopped_first->steps_behind, 1);
    EXPECT_EQ(r.ranks->stopped_first->others_step, 25) << "steps as printed";
    EXPECT_NE(std::find(r.findings.begin(), r.findings.end(), r.ranks->summary), r.findings.end());
  }
}

// The lead: rank 0 where it prints (an unlabelled line and "[Rank 0]" are
// the same rank), and the only printing rank where rank 0 prints no step
// (Megatron's print_rank_last under srun -l); a lower rank that starts
// printing takes over.
TEST(LeadRank, RankZeroWhereItPrintsElseTheLowestThatDoes) {
  LeadRank deepspeed;
  EXPECT_TRUE(deepspeed.Admit(LineRank("[Rank 0] step=10, skipped=0")));
  EXPECT_TRUE(deepspeed.Admit(LineRank("time (ms) | fwd: 1.0 | step: 2.0")));
  EXPECT_FALSE(deepspeed.Admit(LineRank("[Rank 1] step=10, skipped=0")));
  EXPECT_TRUE(deepspeed.Admit(LineRank("0: [default0]:rank 0 step 5")));

  LeadRank megatron;
  EXPECT_TRUE(megatron.Admit(LineRank("3:  iteration       10/      70 |")));
  EXPECT_TRUE(megatron.Admit(LineRank("3:  iteration       20/      70 |")));
  EXPECT_FALSE(megatron.Admit(LineRank("5:  iteration       20/      70 |")));
  EXPECT_TRUE(megatron.Admit(LineRank("1:  iteration       20/      70 |")))
      << "a lower rank takes over";
  EXPECT_FALSE(megatron.Admit(LineRank("3:  iteration       30/      70 |")));

  LeadRank torchrun;  // local 0 on every node, no srun label: the same view
  EXPECT_TRUE(torchrun.Admit(LineRank("[default0]:step 5")));
  EXPECT_FALSE(torchrun.Admit(LineRank("[default1]:step 5")));
  EXPECT_TRUE(torchrun.Admit(LineRank("[default0]:step 6")));
}

}  // namespace
}  // namespace jobmon::triage

namespace jobmon::triage {
namespace {

// Ray's prefix on a worker's forwarded line (python/ray/_private/worker.py
// print_worker_logs): the actor, its pid and its node's ip, maybe coloured.
TEST(RayPrefix, ActorPidAndIpAreTheRank) {
  auto p = ParseRayPrefix("(TrainWorker pid=1234, ip=10.0.0.12) step 25 loss 0.1");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->actor, "TrainWorker");
  EXPECT_EQ(p->pid, 1234);
  EXPECT_EQ(p->ip, "10.0.0.12");
  EXPECT_EQ(p->rest, "step 25 loss 0.1");
  auto local = ParseRayPrefix("\x1b[2m\x1b[36m(pid=77)\x1b[0m hello");
  ASSERT_TRUE(local) << "a task without a name, on the driver's node";
  EXPECT_EQ(local->actor, "");
  EXPECT_EQ(local->ip, "");
  EXPECT_EQ(local->rest, "hello");
  auto nested = ParseRayPrefix("(MapWorker(MapBatches(f)) pid=9, ip=10.0.0.2) x");
  ASSERT_TRUE(nested);
  EXPECT_EQ(nested->actor, "MapWorker(MapBatches(f))");
  EXPECT_FALSE(ParseRayPrefix("(see pid=12 above) x")) << "no closing after the pid";
  EXPECT_FALSE(ParseRayPrefix("(x) pid=12"));

  auto id = LineRank("(TrainWorker pid=1234, ip=10.0.0.12) step 25 loss 0.1");
  ASSERT_TRUE(id);
  EXPECT_EQ(ToString(*id), "TrainWorker pid=1234 on 10.0.0.12");
  auto with_rank = LineRank("(TrainWorker pid=1234, ip=10.0.0.12) [rank 3] step 25");
  ASSERT_TRUE(with_rank);
  EXPECT_EQ(ToString(*with_rank), "rank 3 (TrainWorker pid=1234) on 10.0.0.12");
}

TEST(RayPrefix, TheFirstActorToPrintLeadsAndAStoppedOneIsNamedWithItsHost) {
  LeadRank lead;
  auto a = LineRank("(TrainWorker pid=900, ip=10.0.0.12) step 1");
  auto b = LineRank("(TrainWorker pid=100, ip=10.0.0.13) step 1");
  EXPECT_TRUE(lead.Admit(a));
  EXPECT_FALSE(lead.Admit(b)) << "a lower pid is no lower rank";
  EXPECT_TRUE(lead.Admit(a));
  RankProgress ranks;
  ranks.Offer(*a, 30, std::nullopt, 100.0, 1);
  ranks.Offer(*b, 24, std::nullopt, 90.0, 2);
  auto stopped = ranks.Stopped();
  ASSERT_TRUE(stopped);
  EXPECT_NE(RankProgress::Describe(*stopped).find("TrainWorker pid=100 on 10.0.0.13"),
            std::string::npos)
      << RankProgress::Describe(*stopped);
}

}  // namespace
}  // namespace jobmon::triage

namespace jobmon::triage {
namespace {

// A Ray session's worker files (Ray 2.32 ray_logging get_worker_log_file_name)
// read as the driver shows them (ray_logs.h).
TEST(RayLogs, WorkerFilesAreTheirActorsLines) {
  EXPECT_EQ(RayWorkerLogPid("worker-e1d8-01000000-3907.err"), 3907);
  EXPECT_EQ(RayWorkerLogPid("worker-e1d8-3907.out"), 3907) << "no job id";
  EXPECT_FALSE(RayWorkerLogPid("raylet.out"));
  EXPECT_FALSE(RayWorkerLogPid("python-core-worker-e1d8_3907.log"));
  EXPECT_FALSE(RayWorkerLogPid("worker-e1d8-01000000-x.out"));
  std::string lines = PrefixRayWorkerLines(
      ":job_id:01000000\n:actor_name:RayTrainWorker\nstep 1 loss 1\n:task_name:f\nboom\n", 3907);
  EXPECT_EQ(lines, "(RayTrainWorker pid=3907) step 1 loss 1\n(f pid=3907) boom\n");
  auto id = LineRank("(RayTrainWorker pid=3907) step 1 loss 1");
  ASSERT_TRUE(id);
  EXPECT_EQ(ToString(*id), "RayTrainWorker pid=3907");
}

// Ray's log deduplication (DedupState.formatted, Ray 2.32): the marker in
// green, the first time with its notice; a folded line names no actor's
// own progress, and then no actor is said to have stopped first.
TEST(RayFolded, AFoldedLineIsTheJobsProgressNoActorsOwn) {
  const std::string first =
      "\x1b[36m(RayTrainWorker pid=4211)\x1b[0m step 51 loss 0.0196\x1b[32m [repeated 100x across "
      "cluster] (Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to disable log "
      "deduplication, or see https://docs.ray.io/en/master/ray-observability/user-guides/"
      "configure-logging.html#log-deduplication for more options.)\x1b[0m";
  EXPECT_TRUE(IsRayFolded(first));
  EXPECT_TRUE(
      IsRayFolded("(RayTrainWorker pid=3907, ip=10.0.0.12) step 120 loss 0.0083\x1b[32m "
                  "[repeated 39x across cluster]\x1b[0m"));
  EXPECT_FALSE(IsRayFolded("(RayTrainWorker pid=3907) step 120 loss 0.0083"));
  EXPECT_FALSE(IsRayFolded("the value [repeated x across cluster]")) << "no count";
  EXPECT_FALSE(IsRayFolded("[repeated 3x across cluster] " + std::string(500, 'a')))
      << "not at the end";

  RankProgress ranks;
  ranks.Offer(RankId{.pid = 4211, .actor = "RayTrainWorker"}, 30, std::nullopt, 10.0, 1);
  ranks.Offer(RankId{.pid = 3907, .actor = "RayTrainWorker", .ip = "10.0.0.12"}, 29, std::nullopt,
              10.0, 2);
  ASSERT_TRUE(ranks.Stopped());
  ranks.Fold();
  EXPECT_TRUE(ranks.folded());
  EXPECT_FALSE(ranks.Stopped()) << "the actors' lines are a sample: no one is named";
}

}  // namespace
}  // namespace jobmon::triage
