#include "scan_patterns.h"

#include <hs/hs.h>

#include "jobmon/triage/log_scan.h"
#include "jobmon/triage/signatures.h"
#include "jobmon/triage/step_lines.h"
#include "line_fact_patterns.h"

namespace jobmon::triage {

std::vector<PatternDef> AllPatterns() {
  std::vector<PatternDef> out;
  const auto& classes = FailureClasses();
  for (size_t i = 0; i < classes.size(); ++i) {
    for (const Signature& p : classes[i].patterns) {
      out.push_back({p.expression, HS_FLAG_MULTILINE, Kind::kClass, static_cast<int>(i),
                     WeightOf(classes[i], p), p.source});
    }
  }
  for (const std::string& p : HarmlessPatterns()) out.push_back({p, 0, Kind::kHarmless, 0});
  auto step = [&](const char* p, StepProfile profile, unsigned flags = 0,
                  CarriedTest carried = nullptr, const char* carried_after = "") {
    out.push_back({p, flags, Kind::kStep, static_cast<int>(profile)});
    out.back().carried_test = carried;
    out.back().carried_after = carried_after;
  };
  // Prefilters only: the parsers in step_lines.cc decide (and name their sources).
  // The generic one leads with its keywords, no word boundary before them:
  // a boundary class first made Hyperscan try it at every character, a
  // third of all matching on a training log (tests/bench/triage_bench.py);
  // ParseGenericStep checks the boundary itself ("substep 3" is no step).
  step(R"(completed step: \d)", StepProfile::kMaxText, 0, MaxTextStepAt, ":");
  step(R"(iteration[ \t]+\d+/[ \t]*\d+[ \t]*\|)", StepProfile::kMegatron, 0, MegatronIterationAt,
       " \t");
  step(R"(step:[ \t]+\d+[ \t]+(\x1b\[\d+m)?loss:)", StepProfile::kTorchTitan, 0, TorchTitanStepAt,
       ":");
  step(R"(\d+/\d+ \[[0-9:]+<[0-9:?]+,[ \t]*[0-9.]+(s/it|it/s)[,\]])", StepProfile::kHuggingFace);
  step(R"(Epoch \d+(/\d+)?[: ])", StepProfile::kLightning);
  step(R"(steps: \d+ loss: )", StepProfile::kDeepSpeed);
  step(R"(step=\d+, skipped=)", StepProfile::kDeepSpeed, 0, DeepSpeedSkippedAt, "=");
  step(R"(logging_writer\.py:\d+\] \[\d+\])", StepProfile::kT5x);
  // Hyperscan matches its keywords and a separator only: the bounded
  // `[ \t:=#]{1,3}\d` after them was a sixth of its time on a training log,
  // and most lines with such a keyword are a specific format's, where the
  // generic counter is not read. The scan state confirms the rest.
  step(R"((step|iteration|iter)[ \t:=#]{1,3}\d)", StepProfile::kGeneric, HS_FLAG_CASELESS);
  out.back().parts = {R"((step|iteration|iter)[ \t:=#])"};
  out.back().confirm = GenericStepKeyword;
  // The specific formats that hold a match of its keyword part ("step:",
  // "iteration ", "step=") are read at those matches, not compiled: a step
  // line costs Hyperscan one match instead of two or three.
  const int generic = static_cast<int>(out.size() - 1);
  for (PatternDef& def : out) {
    if (def.carried_test) def.carrier = generic;
  }
  for (const FactPattern& f : FactPatterns()) {
    out.push_back({f.expression, f.line_start ? HS_FLAG_MULTILINE : 0u, Kind::kFact,
                   static_cast<int>(f.fact), Weight::kAsClass, "", f.parts, f.at_line_start,
                   f.on_every_line});
  }
  return out;
}

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kClass:
      return "class";
    case Kind::kHarmless:
      return "harmless";
    case Kind::kStep:
      return "step";
    case Kind::kFact:
      return "fact";
  }
  return "?";
}

std::vector<ScanPattern> ScanPatterns() {
  std::vector<ScanPattern> out;
  for (const PatternDef& def : AllPatterns()) {
    std::string name = def.kind == Kind::kClass  ? FailureClasses()[static_cast<size_t>(def.arg)].id
                       : def.kind == Kind::kStep ? ToString(static_cast<StepProfile>(def.arg))
                                                 : "";
    out.push_back({KindName(def.kind), name, def.expression,
                   def.kind == Kind::kClass ? ToString(def.weight) : "", def.source});
  }
  return out;
}

}  // namespace jobmon::triage
