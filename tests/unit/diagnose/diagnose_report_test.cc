#include <gtest/gtest.h>

#include "jobmon/diagnose/report.h"

namespace jobmon::diagnose {
namespace {

Finding MakeFinding(std::string code, std::string host, std::string gpu, double value,
                    double time) {
  Finding f;
  f.code = std::move(code);
  f.severity = Severity::kCritical;
  f.family = "hw_gpu_ras_umc_ue_total";
  f.host = std::move(host);
  f.gpu = std::move(gpu);
  f.value = value;
  f.unit = "count";
  f.time = time;
  f.text = "uncorrectable ECC errors rose";
  return f;
}

Diagnosis BaseDiagnosis() {
  Diagnosis d;
  d.source = "http://127.0.0.1:9191 (read-only, archive /x/tsdb.tar.zst)";
  d.context.job = "4242";
  d.context.hosts = {"node1", "node2"};
  d.context.window = {1795000000, 1795000750};  // 12m30s
  d.context.families = {"hw_gpu_power_watts", "tb_step"};
  d.tsdb_check = "tb_step 199 at the end, the log's last step 199";
  return d;
}

PlaybookResult HealthyGpu() {
  PlaybookResult p;
  p.playbook = "gpu";
  p.analysis_type = "gpu-health";
  p.verdict = "healthy";
  p.summary = "All 16 GPUs within the cluster norm.";
  p.evidence.push_back({"GPU power", "hw_gpu_power_watts", {{"node1", "0", "712 W", "training"}}});
  return p;
}

TEST(DiagnoseMarkdown, HealthyPlaybookHasEverySectionAndNone) {
  Diagnosis d = BaseDiagnosis();
  d.playbooks.push_back(HealthyGpu());
  std::string md = RenderMarkdown(d);
  for (const char* section :
       {"## TSDB Diagnosis: 4242", "**Analysis type:** gpu-health", "**Time window:** ", "(12m30s)",
        "**Nodes:** 2 (node1, node2)", "### Findings", "### Metric evidence",
        "| Host | GPU | Value | Interpretation |", "### Anomalies detected\nNone\n",
        "### Correlation with triage", "### Recommended next steps", "### Observability",
        "tb_step cross-check: tb_step 199", "Query: `hw_gpu_power_watts`",
        "| node1 | 0 | 712 W | training |", "No broken data found"}) {
    EXPECT_NE(md.find(section), std::string::npos) << section << "\n" << md;
  }
  EXPECT_EQ(md.find("MISMATCH"), std::string::npos);
}

TEST(DiagnoseMarkdown, AnomaliesShowTheirNumbersAndRootCause) {
  Diagnosis d = BaseDiagnosis();
  PlaybookResult p;
  p.playbook = "hardware";
  p.analysis_type = "hardware";
  p.verdict = "hardware-fault";
  p.anomalies.push_back(MakeFinding("ecc-uncorrectable", "node2", "3", 17, 1795000100));
  p.anomalies.push_back(MakeFinding("xid-errors", "node2", "3", 2, 1795000200));
  SetRootCauseAndChain(p);
  p.next_steps = {"Drain node2", "RMA GPU 3"};
  p.errors = {"rate(hw_tcp_retransmits_total[300s]): timeout"};
  d.playbooks.push_back(p);
  d.tsdb_matches_log = false;
  std::string md = RenderMarkdown(d);
  EXPECT_EQ(md.find("### Anomalies detected\nNone"), std::string::npos);
  EXPECT_NE(md.find("`ecc-uncorrectable` on node2 GPU 3 from 2026-11-18"), std::string::npos) << md;
  EXPECT_NE(md.find("(17)"), std::string::npos);
  EXPECT_NE(md.find("Root cause (earliest anomaly): [critical] `ecc-uncorrectable`"),
            std::string::npos);
  EXPECT_NE(md.find("1. [critical] `xid-errors`"), std::string::npos);
  EXPECT_NE(md.find("1. Drain node2\n2. RMA GPU 3"), std::string::npos);
  EXPECT_NE(md.find("Query errors (the verdict is partial)"), std::string::npos);
  EXPECT_NE(md.find("MISMATCH (wrong TSDB?)"), std::string::npos);
}

TEST(DiagnoseMarkdown, ObservabilityListsRangesNotToTrust) {
  Diagnosis d = BaseDiagnosis();
  Finding ghost;
  ghost.code = "ghost-data";
  ghost.host = "node2";
  ghost.family = "hw_gpu_power_watts";
  ghost.text = "power frozen at 412 W for 9m";
  d.observability.problems.push_back(ghost);
  d.observability.untrusted.push_back(
      {"node2", "hw_gpu_power_watts", {1795000200, 1795000740}, "ghost data"});
  std::string md = RenderMarkdown(d);
  EXPECT_NE(md.find("## TSDB Diagnosis: 4242\n**Analysis type:** none"), std::string::npos);
  EXPECT_NE(md.find("`ghost-data` on node2: power frozen"), std::string::npos) << md;
  EXPECT_NE(md.find("| node2 | hw_gpu_power_watts | 2026-11-18"), std::string::npos) << md;
  EXPECT_EQ(md.find("No broken data found"), std::string::npos);
}

TEST(DiagnoseMarkdown, TableCellsCannotBreakTheTable) {
  Diagnosis d = BaseDiagnosis();
  PlaybookResult p = HealthyGpu();
  p.evidence[0].rows = {{"node1", "", "a|b", "two\nlines"}};
  d.playbooks.push_back(p);
  EXPECT_NE(RenderMarkdown(d).find("| node1 | - | a\\|b | two lines |"), std::string::npos);
}

// Hosts, labels and finding texts come from what a job's user controls
// (its metrics' labels, its log): the Markdown an admin reads on a terminal
// carries no escape sequence, BEL or 8-bit CSI of theirs.
TEST(DiagnoseMarkdown, NoTerminalControlOfAJobsUserReachesTheReport) {
  Diagnosis d = BaseDiagnosis();
  d.context.hosts = {"node1\x1b]0;owned\x07"};
  PlaybookResult p = HealthyGpu();
  p.evidence[0].rows = {{"node1", "0",
                         "\xc2\x9b"
                         "2J",
                         "\x9b"
                         "31m"}};
  p.anomalies.push_back(MakeFinding("xid-errors", "node2\x1b[8m", "3", 2, 1795000200));
  d.playbooks.push_back(p);
  const std::string md = RenderMarkdown(d);
  for (const char* control : {"\x1b", "\x07", "\x9b"}) {
    EXPECT_EQ(md.find(control), std::string::npos) << md;
  }
  EXPECT_NE(md.find("node1\xef\xbf\xbd]0;owned\xef\xbf\xbd"), std::string::npos) << md;
  EXPECT_NE(md.find("| node1 | 0 | \xef\xbf\xbd"
                    "2J | \xef\xbf\xbd"
                    "31m |"),
            std::string::npos)
      << md;
}

TEST(DiagnoseFormat, SecondsAndVerdictLines) {
  EXPECT_EQ(FormatSeconds(45), "45s");
  EXPECT_EQ(FormatSeconds(750), "12m30s");
  EXPECT_EQ(FormatSeconds(3 * 3600 + 120), "3h02m");
  EXPECT_EQ(FormatSeconds(-1), "?");
  Diagnosis d = BaseDiagnosis();
  d.playbooks.push_back(HealthyGpu());
  EXPECT_EQ(VerdictLines(d), "gpu: healthy\n");
}

TEST(DiagnoseJson, SchemaAndFields) {
  Diagnosis d = BaseDiagnosis();
  PlaybookResult p = HealthyGpu();
  p.anomalies.push_back(MakeFinding("ecc-uncorrectable", "node2", "3", 17, 1795000100));
  SetRootCauseAndChain(p);
  d.playbooks.push_back(p);
  d.context.triage.primary_class = "hang";
  d.context.triage.last_step = 199;
  d.context.checkpoints.push_back({100, {1795000300, 1795000330}});
  d.observability.untrusted.push_back({"node2", "", {1, 2}, "gap"});
  nlohmann::json j = ToJson(d);
  EXPECT_EQ(j["schema"], "jobmon.diagnose/v1");
  EXPECT_EQ(j["job"], "4242");
  EXPECT_EQ(j["source"], d.source);
  EXPECT_EQ(j["context"]["hosts"].size(), 2u);
  EXPECT_EQ(j["context"]["window"]["end"], 1795000750.0);
  EXPECT_EQ(j["context"]["triage"]["primary_class"], "hang");
  EXPECT_EQ(j["context"]["triage"]["last_step"], 199);
  EXPECT_TRUE(j["context"]["triage"]["crash_time"].is_null());
  EXPECT_EQ(j["context"]["checkpoints"][0]["step"], 100);
  EXPECT_TRUE(j["context"]["steps"].is_null());
  EXPECT_EQ(j["tsdb_check"]["matches_log"], true);
  ASSERT_EQ(j["playbooks"].size(), 1u);
  const auto& pj = j["playbooks"][0];
  EXPECT_EQ(pj["verdict"], "healthy");
  EXPECT_EQ(pj["window"]["start"], 1795000000.0);  // the diagnosis' window by default
  EXPECT_EQ(pj["evidence"][0]["rows"][0]["value"], "712 W");
  EXPECT_EQ(pj["anomalies"][0]["code"], "ecc-uncorrectable");
  EXPECT_EQ(pj["anomalies"][0]["value"], 17.0);
  EXPECT_EQ(pj["anomalies"][0]["severity"], "critical");
  EXPECT_TRUE(pj["anomalies"][0]["device"].is_null());
  EXPECT_EQ(pj["root_cause"]["host"], "node2");
  EXPECT_TRUE(j["observability"]["untrusted"][0]["family"].is_null());
  EXPECT_TRUE(j["comparison"].is_null());
}

TEST(DiagnoseJson, PlaybookWithoutVerdictIsUndetermined) {
  Diagnosis d = BaseDiagnosis();
  PlaybookResult p;
  p.playbook = "hang";
  p.window = TimeRange{10, 20};
  d.playbooks.push_back(p);
  nlohmann::json j = ToJson(d);
  EXPECT_EQ(j["playbooks"][0]["verdict"], "undetermined");
  EXPECT_EQ(j["playbooks"][0]["window"]["start"], 10.0);
  EXPECT_TRUE(j["playbooks"][0]["root_cause"].is_null());
}

}  // namespace
}  // namespace jobmon::diagnose
