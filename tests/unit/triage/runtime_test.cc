#include "jobmon/triage/runtime.h"

#include <gtest/gtest.h>

#include "../../../triage/src/next_steps.h"

namespace jobmon::triage {
namespace {

TEST(RuntimeTest, TracebackFramesAndLauncherWordsNameTheRuntime) {
  EXPECT_EQ(RuntimesNamedBy(
                R"(  File "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", line 1)"),
            Bit(Runtime::kPyTorch));
  EXPECT_TRUE(Has(RuntimesNamedBy("torch.multiprocessing.spawn.ProcessRaisedException: "),
                  Runtime::kTorchSpawn));
  EXPECT_TRUE(Has(RuntimesNamedBy("torch.distributed.elastic.multiprocessing.errors."
                                  "ChildFailedError: "),
                  Runtime::kTorchrun));
  EXPECT_TRUE(Has(RuntimesNamedBy("srun: error: node2: task 1: Killed"), Runtime::kSrun));
  EXPECT_TRUE(Has(RuntimesNamedBy(R"(  File "/opt/MaxText/train.py", line 9)"), Runtime::kMaxText));
  EXPECT_TRUE(
      Has(RuntimesNamedBy("jaxlib.xla_extension.XlaRuntimeError: INTERNAL"), Runtime::kJax));
  EXPECT_TRUE(Has(RuntimesNamedBy("ray.exceptions.ActorDiedError: The actor died"), Runtime::kRay));
  EXPECT_TRUE(Has(RuntimesNamedBy("\x1b[33m(raylet)\x1b[0m Task was killed"), Runtime::kRay));
  EXPECT_EQ(RuntimesNamedBy("step 25 loss 0.12"), 0u);
}

TEST(RuntimeTest, AJaxLogIsJaxWhateverElseItNames) {
  EXPECT_EQ(EcosystemOf(Bit(Runtime::kJax) | Bit(Runtime::kPyTorch)), Ecosystem::kJax);
  EXPECT_EQ(EcosystemOf(Bit(Runtime::kTorchrun)), Ecosystem::kPyTorch);
  EXPECT_EQ(EcosystemOf(Bit(Runtime::kSrun)), Ecosystem::kUnknown) << "srun runs anything";
  EXPECT_EQ(Names(Bit(Runtime::kPyTorch) | Bit(Runtime::kSrun)),
            (std::vector<std::string>{"pytorch", "srun"}));
}

bool Mentions(const std::vector<std::string>& steps, std::string_view word) {
  for (const std::string& step : steps)
    if (step.find(word) != std::string::npos) return true;
  return false;
}

TEST(RuntimeTest, APyTorchJobGetsNoMaxTextAdvice) {
  auto torch = RuntimeNextSteps("python-exception", Bit(Runtime::kPyTorch));
  ASSERT_FALSE(torch.empty());
  EXPECT_FALSE(Mentions(torch, "MaxText"));
  EXPECT_TRUE(Mentions(
      RuntimeNextSteps("python-exception", Bit(Runtime::kPyTorch) | Bit(Runtime::kTorchSpawn)),
      "terminated with the following error"));
  EXPECT_TRUE(Mentions(RuntimeNextSteps("oom-host", Bit(Runtime::kPyTorch)), "num_workers"));
  EXPECT_FALSE(
      Mentions(RuntimeNextSteps("oom-host", Bit(Runtime::kPyTorch)), "per_device_batch_size"));
  EXPECT_TRUE(Mentions(RuntimeNextSteps("hang", Bit(Runtime::kPyTorch)), "py-spy"));
  EXPECT_TRUE(Mentions(RuntimeNextSteps("oom-host", Bit(Runtime::kRay) | Bit(Runtime::kPyTorch)),
                       "RAY_memory_usage_threshold"))
      << "Ray's memory monitor, not the DataLoader";
  EXPECT_TRUE(RuntimeNextSteps("python-exception", Bit(Runtime::kMaxText)).empty())
      << "the catalogue's steps are MaxText's";
  auto unknown = RuntimeNextSteps("oom-host", 0);
  ASSERT_FALSE(unknown.empty());
  EXPECT_FALSE(Mentions(unknown, "remat_policy"));
  EXPECT_FALSE(Mentions(unknown, "num_workers")) << "no PyTorch names without PyTorch";
}

TEST(RuntimeTest, TheFirstFailureStepNamesRankHostAndLine) {
  EXPECT_EQ(FirstFailureStep("1", "node2", 42, true),
            "Start with rank 1 on node2, line 42: it failed first; the other ranks' errors "
            "follow from it.");
  EXPECT_EQ(FirstFailureStep("", "", 7, true).find("the failing process, line 7"), 11u);
  EXPECT_EQ(FirstFailureStep("task 1", "", 9, false),
            "Start with task 1, line 9: the failure is its own.");
}

}  // namespace
}  // namespace jobmon::triage
