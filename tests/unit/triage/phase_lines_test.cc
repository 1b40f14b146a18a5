// AnnouncedPhase: the frameworks' own announcements of an evaluation, a
// checkpoint save or load, a data loader's start (docs/signature-sources.md,
// "Phases"), and the lines that only look like them.
#include "jobmon/triage/phase_lines.h"

#include <gtest/gtest.h>

namespace jobmon::triage {
namespace {

struct Case {
  const char* line;
  std::optional<PhaseKind> want;
};

TEST(AnnouncedPhase, EachFamilysWordingsAndTheirLookalikes) {
  using K = PhaseKind;
  const Case cases[] = {
      // HF Trainer (transformers/trainer.py evaluation_loop, _save)
      {"[INFO|trainer.py:3158] 2024-05-01 12:00:00,000 >> ***** Running Evaluation *****",
       K::kEvaluation},
      {"Saving model checkpoint to out/checkpoint-500", K::kCheckpointSave},
      {"Loading model from out/checkpoint-500.", K::kCheckpointLoad},
      // fairseq (fairseq_cli/train.py validate)
      {"2024-05-01 12:00:00 | INFO | fairseq_cli.train | begin validation on \"valid\" subset",
       K::kEvaluation},
      // Megatron (training.py evaluate, checkpointing.py save_checkpoint)
      {"Evaluating iter 3/10", K::kEvaluation},
      {" saving checkpoint at iteration     500 to /ckpt in torch_dist format", K::kCheckpointSave},
      {"> building train, validation, and test datasets ...", K::kDataLoader},
      // DeepSpeed (runtime/checkpoint_engine/torch_checkpoint_engine.py)
      {"[2023-07-24 13:21:33,261] [INFO] [logging.py:96:log_dist] [Rank 0] [Torch] Checkpoint "
       "global_step10 is about to be saved!",
       K::kCheckpointSave},
      // Lightning's validation and sanity-check bars (TQDMProgressBar)
      {"Validation DataLoader 0:  40%|████      | 4/10 [00:01<00:01,  3.2it/s]", K::kEvaluation},
      {"Sanity Checking DataLoader 0: 100%|██████████| 2/2 [00:00<00:00, 12.1it/s]",
       K::kEvaluation},
      // a plain script's own words
      {"Running evaluation...", K::kEvaluation},
      {"epoch 3: starting validation", K::kEvaluation},
      {"Resuming training from step 1200", K::kCheckpointLoad},
      // results and other lines announce nothing
      {"validation loss at iteration 500 | lm loss value: 2.1 |", std::nullopt},
      {"{'eval_loss': 0.41, 'eval_runtime': 3.2, 'epoch': 1.0}", std::nullopt},
      {"successfully saved checkpoint from iteration 500", std::nullopt},
      {"step 120 loss 2.31 lr 3e-4", std::nullopt},
      {"NCCL INFO Channel 00/02 : 0 1", std::nullopt},
      {"eval loss 0.3", std::nullopt},
  };
  for (const Case& c : cases) {
    auto got = AnnouncedPhase(c.line);
    EXPECT_EQ(got.has_value(), c.want.has_value()) << c.line;
    if (got && c.want) {
      EXPECT_EQ(ToString(*got), std::string(ToString(*c.want))) << c.line;
    }
  }
}

TEST(PhaseEnded, ReportsOfAFinishedPhase) {
  for (const char* done :
       {"  [2026-11-26 19:41:52.987476] successfully saved checkpoint from iteration      30 to "
        "/ck",
        "Saved checkpoint /ck/epoch_3.pt (epoch 3 @ 1200 updates)", "checkpoint 1200 saved",
        "Loaded model weights from the checkpoint at /ck/last.ckpt", "Evaluation done in 12.1s",
        "finished validation"}) {
    EXPECT_TRUE(PhaseEnded(done)) << done;
    EXPECT_FALSE(AnnouncedPhase(done)) << done << ": an end is no start";
  }
  for (const char* other : {"Saving model checkpoint to out/checkpoint-500", "step 3 loss 2",
                            "Running evaluation..."}) {
    EXPECT_FALSE(PhaseEnded(other)) << other;
  }
  EXPECT_TRUE(
      PhaseBarDone("Validation DataLoader 0: 100%|##########| 10/10 [00:01<00:00,  6.59it/s]"));
  EXPECT_FALSE(
      PhaseBarDone("Validation DataLoader 0:  90%|######### | 9/10 [00:01<00:00,  6.59it/s]"));
  EXPECT_TRUE(PhaseBarDone("V: 10%|#| 1/10 [00:00<00:01]\rV: 100%|#| 10/10 [00:01<00:00]"));
}

// Checkpoint saves as the projection counts them (phase_lines.h).
TEST(CheckpointSaveOf, AnnouncedOrDoneInTheFrameworksWords) {
  using S = CheckpointSave;
  EXPECT_EQ(CheckpointSaveOf("Saving model checkpoint to out/checkpoint-500"), S::kAnnounced);
  EXPECT_EQ(CheckpointSaveOf(" saving checkpoint at iteration     500 to /ckpt"), S::kAnnounced);
  EXPECT_EQ(CheckpointSaveOf("[Torch] Checkpoint global_step10 is about to be saved!"),
            S::kAnnounced);
  EXPECT_EQ(CheckpointSaveOf("  successfully saved checkpoint from iteration      30 to /ck"),
            S::kDone);
  EXPECT_EQ(CheckpointSaveOf("checkpoint saved in 8.0 s"), S::kDone);
  EXPECT_EQ(CheckpointSaveOf("Loaded model weights from the checkpoint at /ck/last.ckpt"),
            S::kNone);
  EXPECT_EQ(CheckpointSaveOf("Restoring states from the checkpoint path at /ck"), S::kNone);
  EXPECT_EQ(CheckpointSaveOf("step 3 loss 2"), S::kNone);
}

TEST(AnnouncedPhase, ALongBarLineIsReadByItsEndOnly) {
  std::string line(100000, 'x');
  line += " Running evaluation";
  EXPECT_EQ(AnnouncedPhase(line), PhaseKind::kEvaluation);
  std::string stale = "Running evaluation " + std::string(100000, 'x');
  EXPECT_FALSE(AnnouncedPhase(stale));
}

}  // namespace
}  // namespace jobmon::triage
