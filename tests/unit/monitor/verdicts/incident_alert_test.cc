// Alerts built from the typed records at send time, and the incident's
// typed evidence through the state store (the one place it is JSON).

#include "jobmon/monitor/incident_alert.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

#include "jobmon/monitor/state_store.h"
#include "jobmon/triage/report.h"

namespace jobmon::monitor {
namespace {

JobRecord Job() {
  JobRecord job;
  job.job_id = 1234;
  job.name = "llama-7b";
  job.user = "alice";
  job.diag_dir = "/shared/diag/1234";
  return job;
}

IncidentRecord Incident() {
  IncidentRecord incident;
  incident.id = 9;
  incident.job_id = 1234;
  incident.klass = "hang/node-death";
  incident.state = "open";
  incident.opened_at = 1000;
  incident.summary = "node2's exporter is gone";
  incident.evidence = {"node2: exporter down for 45s", "log tail: 0: step 40"};
  incident.hosts = {"node2"};
  return incident;
}

TEST(IncidentAlert, FiringCarriesTheRecordsAndTheReportRenderedAtSendTime) {
  triage::TriageReport report;
  report.log_path = "/shared/llama-1234.out";
  report.primary = "hang";
  report.what_happened = "training stopped at step 40";
  const alerts::Alert alert = BuildAlert({"gpu-a", "ssh -N -L 9090:node1:9090 head"}, Job(),
                                         Incident(), "firing", 1005, &report);
  EXPECT_EQ(alert.status, "firing");
  EXPECT_EQ(alert.cluster, "gpu-a");
  EXPECT_EQ(alert.key, "gpu-a/1234/hang/node-death");
  EXPECT_EQ(alert.job_id, 1234u);
  EXPECT_EQ(alert.job_name, "llama-7b");
  EXPECT_EQ(alert.user, "alice");
  EXPECT_EQ(alert.incident_id, 9);
  EXPECT_EQ(alert.klass, "hang/node-death");
  EXPECT_EQ(alert.summary, "node2's exporter is gone");
  EXPECT_EQ(alert.evidence, Incident().evidence);
  EXPECT_EQ(alert.hosts, std::vector<std::string>{"node2"});
  EXPECT_EQ(alert.opened_at, 1000);
  EXPECT_EQ(alert.at, 1005);
  EXPECT_EQ(alert.diag_dir, "/shared/diag/1234");
  EXPECT_EQ(alert.tunnel_command, "ssh -N -L 9090:node1:9090 head");
  EXPECT_EQ(alert.report, triage::RenderMarkdown(report));
  EXPECT_NE(alert.report.find("training stopped at step 40"), std::string::npos);
}

TEST(IncidentAlert, ResolvedCarriesTheCloseReasonAndNoReport) {
  IncidentRecord closed = Incident();
  closed.state = "closed";
  closed.closed_at = 1100;
  closed.close_reason = "resumed";
  const alerts::Alert alert = BuildAlert({"gpu-a", ""}, Job(), closed, "resolved", 1100, nullptr);
  EXPECT_EQ(alert.status, "resolved");
  EXPECT_EQ(alert.close_reason, "resumed");
  EXPECT_EQ(alert.key, "gpu-a/1234/hang/node-death") << "pairs with its firing";
  EXPECT_TRUE(alert.report.empty());
}

TEST(IncidentAlert, TheDiagnosisFollowUpKeepsTheIncidentsKeyAndStatus) {
  IncidentRecord closed = Incident();
  closed.state = "closed";
  closed.close_reason = "ended";
  const alerts::Alert alert = BuildDiagnosisAlert(
      {"gpu-a", ""}, Job(), closed, 1200, "hang: node-death\n", "## TSDB Diagnosis: 1234\n");
  EXPECT_EQ(alert.key, "gpu-a/1234/hang/node-death");
  EXPECT_EQ(alert.incident_id, 9);
  EXPECT_EQ(alert.status, "resolved") << "a closed incident stays resolved";
  EXPECT_EQ(alert.diagnosis, "hang: node-death\n");
  EXPECT_EQ(alert.diagnosis_report, "## TSDB Diagnosis: 1234\n");
  EXPECT_TRUE(alert.report.empty());
  EXPECT_EQ(alert.at, 1200);
  EXPECT_EQ(BuildDiagnosisAlert({"gpu-a", ""}, Job(), Incident(), 1200, "x\n", "").status, "firing")
      << "an incident still open";
}

std::string EvidenceColumn(StateStore& store, int64_t id) {
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(store.handle(), "SELECT evidence_json FROM incidents WHERE id=?1",
                               -1, &s, nullptr),
            SQLITE_OK);
  sqlite3_bind_int64(s, 1, id);
  std::string out;
  if (sqlite3_step(s) == SQLITE_ROW) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  }
  sqlite3_finalize(s);
  return out;
}

TEST(IncidentEvidence, TypedInMemoryOneJsonColumnInTheStore) {
  auto store = StateStore::Open(":memory:");
  ASSERT_TRUE(store.ok()) << store.error().message;
  JobRecord job = Job();
  ASSERT_TRUE((*store)->UpsertJob(job).ok());
  IncidentRecord incident = Incident();
  incident.evidence.push_back("a \"quoted\" line");
  auto opened = (*store)->OpenIncident(incident);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  // The column keeps the format jobmon status and the integration test read.
  EXPECT_EQ(EvidenceColumn(**store, opened->first),
            R"({"evidence":["node2: exporter down for 45s","log tail: 0: step 40",)"
            R"("a \"quoted\" line"],"hosts":["node2"]})");
  auto back = (*store)->OpenIncidentOf(1234).value();
  ASSERT_TRUE(back);
  EXPECT_EQ(back->evidence, incident.evidence);
  EXPECT_EQ(back->hosts, incident.hosts);
}

TEST(IncidentEvidence, AColumnThatIsNotTheWrittenObjectReadsAsNone) {
  auto store = StateStore::Open(":memory:");
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->UpsertJob(Job()).ok());
  auto opened = (*store)->OpenIncident(Incident());
  ASSERT_TRUE(opened.ok());
  for (const char* bad : {"not json", "[1,2]", R"({"evidence":"one","hosts":[3,"node3"]})"}) {
    sqlite3_stmt* s = nullptr;
    ASSERT_EQ(
        sqlite3_prepare_v2((*store)->handle(), "UPDATE incidents SET evidence_json=?1 WHERE id=?2",
                           -1, &s, nullptr),
        SQLITE_OK);
    sqlite3_bind_text(s, 1, bad, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 2, opened->first);
    ASSERT_EQ(sqlite3_step(s), SQLITE_DONE);
    sqlite3_finalize(s);
    auto back = (*store)->OpenIncidentOf(1234).value();
    ASSERT_TRUE(back) << bad;
    EXPECT_TRUE(back->evidence.empty()) << bad;
    EXPECT_EQ(back->hosts, std::string(bad).starts_with("{") ? std::vector<std::string>{"node3"}
                                                             : std::vector<std::string>{})
        << bad;
  }
}

}  // namespace
}  // namespace jobmon::monitor
