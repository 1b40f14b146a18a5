#pragma once
// Per-rank progress, where ranks print their own step lines: which rank a
// line is from, each rank's last step, and which rank(s) stopped first.
// Pure; the triage scan and the monitor's JobProgress both feed it, so a
// hang names the same ranks in `jobmon triage` and in the alert.
//
// A line names its rank in up to three ways, and all three are kept, since
// none alone is unique on a multi-node job:
//  - srun -l's task label "N: " (Slurm's task id; under torchrun, one task
//    per node: the node's agent);
//  - torchrun's --tee prefix "[<role><N>]:" (torch/distributed/elastic/
//    multiprocessing/tail_log.py: "[{name}{local_rank}]:"), the rank on its
//    node, so "[default0]:" repeats on every node;
//  - the program's own "rank N" / "[Rank N]" / "rank=N" field (DeepSpeed's
//    "[Rank 0] step=..."), the global rank;
//  - Ray's prefix on a worker's line forwarded to the driver,
//    "(<actor or task name> pid=<pid>, ip=<ip>) " (ip left out on the
//    driver's own node; python/ray/_private/worker.py print_worker_logs,
//    docs/signature-sources.md "Ray"): the actor, its process and host.

#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jobmon::triage {

struct RankId {
  int task = -1;           // srun -l label; -1: none
  int local = -1;          // torchrun prefix (rank on its node); -1: none
  int rank = -1;           // the program's own global rank; -1: none
  int pid = -1;            // Ray's prefix: the worker process; -1: none
  std::string actor = {};  // Ray's prefix: the actor or task name ("" for a bare pid)
  std::string ip = {};     // Ray's prefix: the worker's node ("" on the driver's node)
  auto operator<=>(const RankId&) const = default;
};
// "rank 3", "task 1 local 0", "task 2", "local 1", "TrainWorker pid=1234 on
// 10.0.0.12"
std::string ToString(const RankId& id);

// The rank `line` names; nullopt when it names none. A "rank N" field counts
// only as a word ("ranks 8" and "world_rank" do not) within the line's first
// kRankFieldWindow bytes after the prefixes (where loggers put it).
std::optional<RankId> LineRank(std::string_view line);
// torchrun's "[<role><N>]:" prefix (--tee; a role is a word: "default",
// "trainer", "rank"): N and the text after it.
std::optional<std::pair<int, std::string_view>> TorchrunPrefix(std::string_view line);
// Ray's "(name pid=N, ip=A) " prefix: the id and the text after it.
struct RayPrefix {
  std::string actor;
  int pid = -1;
  std::string ip;
  std::string_view rest;
};
std::optional<RayPrefix> ParseRayPrefix(std::string_view line);
inline constexpr size_t kRankFieldWindow = 96;

// Ray's log deduplication (on by default, RAY_DEDUP_LOGS) folds a line that
// several actors printed, alike but for their numbers, into its latest
// instance with " [repeated Nx across cluster]" appended (green, the first
// time with a notice; python/ray/_private/ray_logging/__init__.py,
// DedupState.formatted): that line is the job's progress, but no actor's
// own, and the actors' lines in the log are a sample.
bool IsRayFolded(std::string_view line);

// Which rank's step lines are the job's progress: the lowest rank seen
// printing them, an id that names none (or 0) counting as rank 0. That is
// rank 0 where it prints, and the printing rank where only one does
// (Megatron's print_rank_last under `srun -l` is the last task). One view
// of progress: the other ranks' lines go to RankProgress only. The triage
// scan and the monitor's JobProgress both ask it before the step filter.
class LeadRank {
 public:
  // True when a step line of rank `id` (LineRank's, read once by the
  // caller) is the lead's; a rank lower than the lead so far becomes it.
  bool Admit(const std::optional<RankId>& id);

 private:
  std::optional<RankId> lead_;
};

class RankProgress {
 public:
  RankProgress() = default;
  // The scanned ranks point into the map: a copy or move points them into its own.
  RankProgress(const RankProgress& other) : ranks_(other.ranks_), folded_(other.folded_) {
    IndexFirstRanks();
  }
  RankProgress(RankProgress&& other) noexcept
      : ranks_(std::move(other.ranks_)), folded_(other.folded_) {
    IndexFirstRanks();
    other.first_ranks_.clear();
  }
  RankProgress& operator=(const RankProgress& other) {
    if (this != &other) *this = RankProgress(other);
    return *this;
  }
  RankProgress& operator=(RankProgress&& other) noexcept {
    ranks_ = std::move(other.ranks_);
    folded_ = other.folded_;
    IndexFirstRanks();
    other.first_ranks_.clear();
    return *this;
  }
  struct Last {
    int64_t step = 0;
    std::optional<int64_t> epoch;
    std::optional<double> at;  // the line's time (own stamp or arrival); seconds
    uint64_t line = 0;         // the caller's line number
  };
  // A step line of `id`. Positions compare by (epoch, step); a lower one
  // than the rank's last (a restart) replaces it. The optionals by
  // reference: every step line offers one, and an optional copied into a
  // register stalls on its flag's one-byte store (perf annotate).
  void Offer(const RankId& id, int64_t step, const std::optional<int64_t>& epoch,
             const std::optional<double>& at, uint64_t line);
  // A step line Ray folded (IsRayFolded): from then on the log does not
  // tell which actor stopped first, and Stopped() says nothing.
  void Fold() { folded_ = true; }
  bool folded() const { return folded_; }
  static constexpr std::string_view kFoldedNote =
      "Ray folded its actors' alike lines into \"[repeated Nx across cluster]\" "
      "(RAY_DEDUP_LOGS, on by default): the log does not say which actor stopped first; "
      "RAY_DEDUP_LOGS=0 keeps each actor's lines";
  const std::map<RankId, Last>& ranks() const { return ranks_; }
  bool full() const { return ranks_.size() >= kMaxRanks; }

  // Which rank(s) stopped first, with two or more ranks seen: the ranks at
  // the lowest position while others went further; with every rank at the
  // same position, the one(s) whose last line came first, when the lines
  // have times at least kSameMomentSeconds apart. nullopt: fewer than two
  // ranks, or nothing tells them apart (all stopped at once: the collective
  // they all wait in, not one rank, is the place to look).
  struct StoppedFirst {
    std::vector<RankId> ranks;  // at most kNamed, lowest first
    size_t count = 0;           // how many ranks stopped there
    size_t of = 0;              // ranks seen
    Last at;                    // where they stopped
    int64_t others_step = 0;    // the furthest rank's step
    std::optional<int64_t> steps_behind;
    std::optional<double> seconds_behind;  // the furthest rank's last line after theirs
  };
  std::optional<StoppedFirst> Stopped() const;
  // One sentence: "rank 1 stopped first: at step 24, 3 steps behind the
  // other 3 ranks (at step 27)". `places` adds where a rank runs, as the
  // monitor knows it: "rank 1 (task 1 on node2) stopped first: ...".
  static std::string Describe(const StoppedFirst& s,
                              const std::map<RankId, std::string>& places = {});

  static constexpr size_t kMaxRanks = 4096;  // bounded, whatever the output
  static constexpr size_t kNamed = 8;
  static constexpr double kSameMomentSeconds = 5;

 private:
  std::map<RankId, Last> ranks_;
  // The first ranks seen, found by a scan before the map is searched: a
  // step line of each rank asks, and most jobs log a few.
  static constexpr size_t kScannedRanks = 16;
  std::vector<std::map<RankId, Last>::iterator> first_ranks_;
  bool folded_ = false;
  void IndexFirstRanks() {
    first_ranks_.clear();
    for (auto it = ranks_.begin(); it != ranks_.end() && first_ranks_.size() < kScannedRanks; ++it)
      first_ranks_.push_back(it);
  }
};

}  // namespace jobmon::triage
