// The daemon's socket API (api_protocol.h, api_server.h, api_client.h): requests parsed
// strictly, each caller sees their own jobs only (root and the admin group
// all), the records survive the trip as JSON, and a slow or oversized
// client neither stalls the server nor holds a connection past its deadline.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "jobmon/common/base64.h"
#include "jobmon/common/unique_fd.h"
#include "jobmon/monitor/api_client.h"
#include "jobmon/monitor/api_protocol.h"
#include "jobmon/monitor/api_server.h"
#include "jobmon/monitor/state_store.h"
#include "monitor_test_support.h"

namespace jobmon::monitor {
namespace {

using nlohmann::json;
using test_support::TempDir;
namespace fs = std::filesystem;

constexpr uint32_t kAlice = 1000, kBob = 1001;

JobRecord Job(uint32_t id, std::optional<uint32_t> uid, const std::string& user) {
  JobRecord j;
  j.job_id = id;
  j.name = "train-" + std::to_string(id);
  j.user = user;
  j.uid = uid;
  j.source = "manifest";
  j.slurm_state = "RUNNING";
  j.first_seen = j.last_seen = 100;
  j.log_path = "/shared/" + std::to_string(id) + ".out";
  return j;
}

// A database with one job of alice (with progress and an incident), one of
// bob, and one written before owners were recorded.
void Fill(StateStore& store) {
  ASSERT_TRUE(store.UpsertJob(Job(1, kAlice, "alice")).ok());
  ASSERT_TRUE(store.UpsertJob(Job(2, kBob, "bob")).ok());
  ASSERT_TRUE(store.UpsertJob(Job(3, std::nullopt, "carol")).ok());
  ProgressRecord p;
  p.job_id = 1;
  p.last_step = 420;
  p.phase = "training";
  p.median_interval = 1.5;
  p.updated_at = 200;
  ASSERT_TRUE(store.SaveProgress(p).ok());
  IncidentRecord i;
  i.job_id = 1;
  i.klass = "hang/busy-wait";
  i.state = "open";
  i.opened_at = 150;
  i.summary = "no step for 90s";
  i.evidence = {"line one", "line two"};
  i.hosts = {"node1"};
  ASSERT_TRUE(store.OpenIncident(i).ok());
}

TEST(ApiProtocol, ParsesOnlyWellFormedRequests) {
  auto status = api::ParseRequest(R"({"op":"status","job_id":42})");
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_EQ(status->op, "status");
  EXPECT_EQ(status->job_id, std::optional<uint32_t>(42));
  auto list = api::ParseRequest(R"({"op":"list","all":true})");
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(list->all);
  for (const char* bad :
       {"", "not json", "[1]", R"({"op":"delete","job_id":1})", R"({"op":"status"})",
        R"({"op":"status","job_id":0})", R"({"op":"status","job_id":-1})",
        R"({"op":"status","job_id":4294967296})", R"({"op":"status","job_id":"1"})",
        R"({"op":"list","all":"yes"})", R"({"op":"status","job_id":1,"chart":1})"}) {
    EXPECT_FALSE(api::ParseRequest(bad).ok()) << bad;
  }
  EXPECT_FALSE(api::ParseRequest(std::string(5000, ' ') + R"({"op":"list"})").ok());
  // What the client sends is what the server reads.
  api::Request r{.op = "watch", .job_id = 7, .all = false};
  auto back = api::ParseRequest(api::RequestJson(r).dump());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->op, "watch");
  EXPECT_EQ(back->job_id, std::optional<uint32_t>(7));
}

TEST(ApiProtocol, RecordsSurviveTheTripAsJson) {
  JobRecord j = Job(9, kAlice, "alice");
  j.ended_at = 300;
  j.final_class = "hang/busy-wait";
  j.diagnosis = "hang: busy-wait-hang\n";
  j.diagnosed_at = 360;
  auto back = api::JobFromJson(api::JobJson(j));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(api::JobJson(*back), api::JobJson(j));
  EXPECT_EQ(back->diagnosis, "hang: busy-wait-hang\n");
  json older = api::JobJson(j);  // an older daemon's answer has no diagnosis
  older.erase("diagnosis");
  older.erase("diagnosed_at");
  ASSERT_TRUE(api::JobFromJson(older).ok());
  EXPECT_EQ(api::JobFromJson(older)->diagnosis, "");
  EXPECT_EQ(back->uid, std::optional<uint32_t>(kAlice));
  EXPECT_EQ(back->ended_at, std::optional<double>(300));
  json wrong = api::JobJson(j);
  wrong["first_seen"] = "yesterday";
  EXPECT_FALSE(api::JobFromJson(wrong).ok());

  IncidentRecord i;
  i.id = 4;
  i.klass = "hang/node-death";
  i.evidence = {"a", "b"};
  i.closed_at = 12;
  auto ib = api::IncidentFromJson(api::IncidentJson(i));
  ASSERT_TRUE(ib.ok());
  EXPECT_EQ(api::IncidentJson(*ib), api::IncidentJson(i));
  ProgressRecord p;
  p.last_step = 5;
  p.p99_interval = 2.5;
  auto pb = api::ProgressFromJson(api::ProgressJson(p));
  ASSERT_TRUE(pb.ok());
  EXPECT_EQ(api::ProgressJson(*pb), api::ProgressJson(p));
}

TEST(ApiProtocol, AUserSeesTheirOwnJobsAndAnAdminAll) {
  TempDir dir;
  auto store = StateStore::Open((dir.path / "state.db").string());
  ASSERT_TRUE(store.ok());
  Fill(**store);
  std::vector<WatchRequest> watches;
  auto sink = [&watches](const WatchRequest& w) {
    watches.push_back(w);
    return true;
  };
  const api::Caller alice{.uid = kAlice, .privileged = false};
  const api::Caller admin{.uid = 4242, .privileged = true};

  json own = api::Answer(**store, alice, {.op = "status", .job_id = 1, .all = false}, sink);
  ASSERT_TRUE(own["ok"].get<bool>()) << own.dump();
  EXPECT_EQ(own["job"]["name"], "train-1");
  EXPECT_EQ(own["progress"]["last_step"], 420);
  ASSERT_EQ(own["incidents"].size(), 1u);
  EXPECT_EQ(own["incidents"][0]["evidence"], json({"line one", "line two"}));

  for (uint32_t other : {2u, 3u}) {  // bob's, and one with no recorded owner
    json refused =
        api::Answer(**store, alice, {.op = "status", .job_id = other, .all = false}, sink);
    EXPECT_FALSE(refused["ok"].get<bool>());
    EXPECT_EQ(refused["code"], "forbidden");
    EXPECT_NE(refused["error"].get<std::string>().find("is not yours"), std::string::npos);
    EXPECT_FALSE(refused.contains("job")) << "nothing of another's job leaks";
  }
  EXPECT_EQ(api::Answer(**store, alice, {.op = "status", .job_id = 77, .all = false}, sink)["code"],
            "not_found");
  EXPECT_TRUE(api::Answer(**store, admin, {.op = "status", .job_id = 2, .all = false}, sink)["ok"]
                  .get<bool>());

  // The incident's chart, asked for: the owner gets it, another user nothing.
  EXPECT_FALSE(own.contains("chart")) << "not asked for";
  const int64_t incident = (*store)->Incidents(1).value().at(0).id;
  ASSERT_TRUE((*store)->SaveIncidentChart(incident, std::string("\x89PNG\0chart", 10)).ok());
  api::Request with_chart{.op = "status", .job_id = 1, .all = false, .chart = true};
  ASSERT_TRUE(api::ParseRequest(api::RequestJson(with_chart).dump())->chart);
  json charted = api::Answer(**store, alice, with_chart, sink);
  EXPECT_EQ(charted["chart"]["incident_id"], incident);
  EXPECT_EQ(charted["chart"]["png_base64"], Base64Encode(std::string("\x89PNG\0chart", 10)));
  with_chart.job_id = 2;
  EXPECT_FALSE(api::Answer(**store, alice, with_chart, sink).contains("chart"));

  json mine =
      api::Answer(**store, alice, {.op = "list", .job_id = std::nullopt, .all = true}, sink);
  ASSERT_EQ(mine["jobs"].size(), 1u);
  EXPECT_EQ(mine["jobs"][0]["job_id"], 1);
  EXPECT_EQ(mine["jobs"][0]["open_incident"], "hang/busy-wait");
  EXPECT_EQ(
      api::Answer(**store, admin, {.op = "list", .job_id = std::nullopt, .all = true}, sink)["jobs"]
          .size(),
      3u);

  // Watches: another's known job is refused now; an unknown one is asked in
  // the user's name (the daemon checks the owner when Slurm lists it).
  EXPECT_EQ(api::Answer(**store, alice, {.op = "watch", .job_id = 2, .all = false}, sink)["code"],
            "forbidden");
  EXPECT_TRUE(api::Answer(**store, alice, {.op = "watch", .job_id = 50, .all = false}, sink)["ok"]
                  .get<bool>());
  EXPECT_TRUE(api::Answer(**store, admin, {.op = "watch", .job_id = 51, .all = false}, sink)["ok"]
                  .get<bool>());
  EXPECT_EQ(watches, (std::vector<WatchRequest>{{50, kAlice}, {51, std::nullopt}}));
}

ApiServerOptions Options(const std::string& socket, const std::string& db) {
  ApiServerOptions o;
  o.socket_path = socket;
  o.state_db = db;
  return o;
}

// A server on a temporary socket over a filled database.
struct Served {
  TempDir dir;
  std::string socket, db;
  std::unique_ptr<ApiServer> server;
  explicit Served(double client_timeout = 2) {
    fs::permissions(dir.path, fs::perms(0755));  // other uids reach the socket
    db = (dir.path / "state.db").string();
    socket = (dir.path / "run" / "monitor.sock").string();
    {
      auto store = StateStore::Open(db);
      EXPECT_TRUE(store.ok());
      Fill(**store);
    }
    auto started = ApiServer::Start({.socket_path = socket,
                                     .state_db = db,
                                     .admin_group = "",
                                     .client_timeout_seconds = client_timeout,
                                     .max_clients = 32});
    EXPECT_TRUE(started.ok()) << started.error().message;
    if (started) server = std::move(started).value();
  }
};

UniqueFd Connect(const std::string& path) {
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
  EXPECT_EQ(connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  return fd;
}

std::string ReadAll(int fd) {
  std::string out;
  char buffer[4096];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) out.append(buffer, static_cast<size_t>(n));
  return out;
}

TEST(ApiServer, AnswersThroughTheSocketWhichAnyoneMayReach) {
  Served s;
  ASSERT_TRUE(s.server);
  struct stat st {};
  ASSERT_EQ(stat(s.socket.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0666u);
  ASSERT_EQ(stat((s.dir.path / "run").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);

  auto answer = CallApi(s.socket, {.op = "list", .job_id = std::nullopt, .all = true});
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ((*answer)["ok"], true);
  // This test's own uid decides what it sees: root all three, anyone else none.
  EXPECT_EQ((*answer)["jobs"].size(), geteuid() == 0 ? 3u : 0u);
  EXPECT_EQ((*answer)["all_users"], geteuid() == 0);

  auto watch = CallApi(s.socket, {.op = "watch", .job_id = 60, .all = false});
  ASSERT_TRUE(watch.ok());
  EXPECT_EQ(s.server->TakeWatches().size(), 1u);
  EXPECT_TRUE(s.server->TakeWatches().empty()) << "taken once";
}

TEST(ApiServer, ASilentClientStallsNobodyAndIsDroppedAtItsDeadline) {
  Served s(/*client_timeout=*/0.5);
  ASSERT_TRUE(s.server);
  UniqueFd silent = Connect(s.socket);  // connects, never writes
  UniqueFd half = Connect(s.socket);    // writes half a request, never the rest
  ASSERT_GT(send(half.get(), "{\"op\":", 6, MSG_NOSIGNAL), 0);
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) {
    auto answer = CallApi(s.socket, {.op = "status", .job_id = 1, .all = false}, 2);
    ASSERT_TRUE(answer.ok()) << answer.error().message;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(400))
      << "other clients are answered while two hold connections open";
  // Their deadline closes both: end of stream, no answer.
  timeval wait{.tv_sec = 3, .tv_usec = 0};
  setsockopt(silent.get(), SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  setsockopt(half.get(), SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  EXPECT_EQ(ReadAll(silent.get()), "");
  EXPECT_EQ(ReadAll(half.get()), "");
  EXPECT_EQ(s.server->stats().timed_out, 2u);
  EXPECT_GE(s.server->stats().answered, 5u);
}

TEST(ApiServer, AnOversizedOrMalformedRequestIsRefused) {
  Served s;
  ASSERT_TRUE(s.server);
  {
    UniqueFd fd = Connect(s.socket);
    const std::string flood(8192, 'x');  // no newline: refused once past 4096 bytes
    send(fd.get(), flood.data(), flood.size(), MSG_NOSIGNAL);
    json answer = json::parse(ReadAll(fd.get()), nullptr, false);
    EXPECT_EQ(answer["code"], "bad_request") << answer.dump();
  }
  {
    UniqueFd fd = Connect(s.socket);
    send(fd.get(), "{\"op\":\"rm\"}\n", 12, MSG_NOSIGNAL);
    json answer = json::parse(ReadAll(fd.get()), nullptr, false);
    EXPECT_EQ(answer["code"], "bad_request");
    EXPECT_NE(answer["error"].get<std::string>().find("unknown op"), std::string::npos);
  }
  EXPECT_EQ(s.server->stats().refused, 2u);
}

TEST(ApiServer, ReplacesAStaleSocketAndRefusesALiveOneOrAFile) {
  Served s;
  ASSERT_TRUE(s.server);
  auto second = ApiServer::Start(Options(s.socket, s.db));
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find("another slurm_job_monitor"), std::string::npos);
  // A stale socket (its server gone without removing it) is replaced.
  const std::string stale = (s.dir.path / "stale.sock").string();
  {
    UniqueFd fd(socket(AF_UNIX, SOCK_STREAM, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, stale.c_str(), sizeof(a.sun_path) - 1);
    ASSERT_EQ(bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  }
  auto replaced = ApiServer::Start(Options(stale, s.db));
  EXPECT_TRUE(replaced.ok()) << replaced.error().message;
  const std::string file = (s.dir.path / "file.sock").string();
  std::ofstream(file) << "x";
  auto refused = ApiServer::Start(Options(file, s.db));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("not a socket"), std::string::npos);
  EXPECT_FALSE(ApiServer::Start({.socket_path = "relative-or-absent/x.sock",
                                 .state_db = s.db,
                                 .admin_group = "no-such-group-jobmon"})
                   .ok());
}

// Two real uids: the test (root) serves; a child turned into `nobody` asks.
TEST(ApiServer, PeerCredentialsDecideNotTheRequest) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to become another uid";
  passwd* nobody = getpwnam("nobody");
  if (!nobody) GTEST_SKIP() << "no user nobody";
  const uid_t nobody_uid = nobody->pw_uid;
  const gid_t nobody_gid = nobody->pw_gid;
  Served s;
  ASSERT_TRUE(s.server);
  {
    auto store = StateStore::Open(s.db);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->UpsertJob(Job(4, nobody_uid, "nobody")).ok());
  }
  EXPECT_FALSE(IsPrivileged(nobody_uid, std::nullopt));
  EXPECT_TRUE(IsPrivileged(0, std::nullopt));
  EXPECT_TRUE(IsPrivileged(nobody_uid, nobody_gid)) << "a member of the admin group (primary)";

  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Bits of the exit code: each check that failed.
    int failed = 0;
    if (setgroups(0, nullptr) != 0 || setgid(nobody_gid) != 0 || setuid(nobody_uid) != 0)
      _exit(100);
    auto own = CallApi(s.socket, {.op = "status", .job_id = 4, .all = false});
    if (!own || !(*own)["ok"].get<bool>() || (*own)["job"]["uid"] != nobody_uid) failed |= 1;
    auto other = CallApi(s.socket, {.op = "status", .job_id = 1, .all = false});
    if (!other || (*other)["code"] != "forbidden") failed |= 2;
    auto list = CallApi(s.socket, {.op = "list", .job_id = std::nullopt, .all = true});
    if (!list || (*list)["jobs"].size() != 1 || (*list)["jobs"][0]["job_id"] != 4) failed |= 4;
    auto watch = CallApi(s.socket, {.op = "watch", .job_id = 2, .all = false});
    if (!watch || (*watch)["code"] != "forbidden") failed |= 8;
    _exit(failed);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "bits: 1 own status, 2 another's refused, 4 list, "
                                       "8 watch refused, 100 setuid";
}

// A child process that becomes `uid` (root turns into anyone; the uid needs
// no passwd entry), opens `count` connections and holds them silent until
// `release` is closed. Returns once they are open, so they queue before
// anything the test connects afterwards.
struct Holder {
  pid_t pid = -1;
  UniqueFd release;
  ~Holder() {
    release.reset();
    if (pid > 0) waitpid(pid, nullptr, 0);
  }
};

std::unique_ptr<Holder> HoldConnections(const std::string& path, uid_t uid, int count) {
  int ready[2], release[2];
  if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(release, O_CLOEXEC) != 0) return nullptr;
  const pid_t pid = fork();
  if (pid == 0) {
    // Only its own pipe ends: an earlier holder's release end, kept open
    // here, would keep that holder waiting.
    for (int fd = 3; fd < 1024; ++fd) {
      if (fd != ready[1] && fd != release[0]) close(fd);
    }
    if (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0) _exit(100);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
    for (int i = 0; i < count; ++i) {
      const int fd = socket(AF_UNIX, SOCK_STREAM, 0);  // left open until _exit
      if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) _exit(101);
    }
    char c = 1;
    if (write(ready[1], &c, 1) != 1) _exit(102);
    while (read(release[0], &c, 1) > 0) {
    }
    _exit(0);
  }
  close(ready[1]);
  close(release[0]);
  auto holder = std::make_unique<Holder>();
  holder->pid = pid;
  holder->release.reset(release[1]);
  char c = 0;
  const bool opened = pid > 0 && read(ready[0], &c, 1) == 1;
  close(ready[0]);
  return opened ? std::move(holder) : nullptr;
}

// In a child of `uid`: one status request, exit 0 when any JSON answer came
// (a refusal of another's job is an answer; a dropped connection is not).
int AnsweredAs(const std::string& socket, uid_t uid) {
  const pid_t child = fork();
  if (child == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0) _exit(100);
    auto answer = CallApi(socket, {.op = "status", .job_id = 1, .all = false});
    _exit(answer && answer->contains("ok") ? 0 : 1);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

constexpr uid_t kNobody = 65534;

// The admission rule itself (the socket tests below need root).
TEST(ApiServer, AdmissionCapsEachUserAndKeepsSlotsForAdmins) {
  const ApiServerOptions o;  // 32 in all, 4 per user, the last 8 for admins
  EXPECT_TRUE(AdmitClient(o, 0, 0, false));
  EXPECT_TRUE(AdmitClient(o, 23, 3, false));
  EXPECT_FALSE(AdmitClient(o, 10, 4, false)) << "a fifth connection of one user";
  EXPECT_FALSE(AdmitClient(o, 24, 0, false)) << "only admins' slots are left";
  EXPECT_TRUE(AdmitClient(o, 31, 20, true)) << "an admin has no per-user cap";
  EXPECT_FALSE(AdmitClient(o, 32, 0, true)) << "every slot taken";
}

// Root (an admin) asks for a job's status and gets an answer.
void ExpectRootAnswered(const std::string& socket) {
  auto root = CallApi(socket, {.op = "status", .job_id = 1, .all = false});
  ASSERT_TRUE(root.ok()) << root.error().message;
  EXPECT_EQ((*root)["ok"], true);
}

// One local user opening 40 silent connections held all 32
// slots, so every other user and root got no answer until they timed out.
TEST(ApiServer, OneUserHoldingEverySlotDoesNotLockOutOthers) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to connect as other uids";
  Served s;
  ASSERT_TRUE(s.server);
  auto flood = HoldConnections(s.socket, kNobody, 40);
  ASSERT_TRUE(flood);
  EXPECT_EQ(AnsweredAs(s.socket, kNobody - 1), 0) << "another user is answered";
  ExpectRootAnswered(s.socket);
}

// Several users together filling every slot locked out
// root and the admin group; the last slots are kept for them.
TEST(ApiServer, UsersFillingTheSharedSlotsDoNotLockOutAdmins) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to connect as other uids";
  Served s;
  ASSERT_TRUE(s.server);
  std::vector<std::unique_ptr<Holder>> users;
  for (uid_t uid = 60001; uid <= 60008; ++uid) {  // 8 users x 4 = the 32 slots
    users.push_back(HoldConnections(s.socket, uid, 4));
    ASSERT_TRUE(users.back());
  }
  ExpectRootAnswered(s.socket);
}

// Every watch of a made-up id was queued, and each cost
// the daemon a warning; a user has a bounded number pending.
TEST(ApiServer, AUserCannotQueueUnboundedWatches) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to connect as another uid";
  Served s;
  ASSERT_TRUE(s.server);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0) _exit(100);
    int accepted = 0, capped = 0;
    for (uint32_t id = 5000; id < 5020; ++id) {
      auto w = CallApi(s.socket, {.op = "watch", .job_id = id, .all = false});
      if (w && w->value("ok", false)) ++accepted;
      if (w && w->value("code", "") == "too_many_watches") ++capped;
    }
    _exit(accepted == 16 && capped == 4 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "16 watches accepted, then too_many_watches";
  EXPECT_EQ(s.server->TakeWatches().size(), 16u);
  auto admin = CallApi(s.socket, {.op = "watch", .job_id = 6000, .all = false});
  ASSERT_TRUE(admin.ok()) << admin.error().message;
  EXPECT_EQ((*admin)["ok"], true) << "root has no cap";
}

}  // namespace
}  // namespace jobmon::monitor
