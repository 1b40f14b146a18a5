// The alerts library: secrets (mode check, environment, redaction), the
// [alerts] config, the outbox (idempotent enqueue, order per receiver,
// backoff, Retry-After, permanent failures, Alertmanager re-sends ended by
// the resolve, rate limit, a restart between send and acknowledgement), and
// the webhook / Alertmanager requests as a loopback HTTP server sees them.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "jobmon/alerts/alerts_config.h"
#include "jobmon/alerts/outbox.h"
#include "jobmon/alerts/secrets.h"
#include "jobmon/alerts/telegram_format.h"
#include "jobmon/common/html_escape.h"
#include "jobmon/common/http_client.h"
#include "loopback_listener.h"

namespace jobmon::alerts {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/jobmon-alerts-test-XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// ------------------------------------------------------------------ secrets

TEST(Secrets, OwnerOnlyFileIsReadAndAnythingWiderIsRefused) {
  TempDir dir;
  const std::string path = dir.path() + "/secrets.toml";
  std::ofstream(path) << "webhook_token = \"s3cr3t-token-value\"\n";
  chmod(path.c_str(), 0644);
  auto refused = Secrets::Load(path);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("readable by others (mode 0644)"), std::string::npos);
  EXPECT_EQ(refused.error().message.find("s3cr3t"), std::string::npos);
  chmod(path.c_str(), 0640);
  EXPECT_FALSE(Secrets::Load(path).ok()) << "group-readable is refused too";
  chmod(path.c_str(), 0600);
  auto secrets = Secrets::Load(path);
  ASSERT_TRUE(secrets.ok()) << secrets.error().message;
  EXPECT_EQ(secrets->Get("webhook_token"), "s3cr3t-token-value");
  EXPECT_FALSE(secrets->Get("missing"));
  EXPECT_EQ(secrets->Redact("Authorization: Bearer s3cr3t-token-value failed"),
            "Authorization: Bearer <secret:webhook_token> failed");
  setenv("JOBMON_SECRET_WEBHOOK_TOKEN", "from-the-environment", 1);
  EXPECT_EQ(secrets->Get("webhook_token"), "from-the-environment") << "the environment wins";
  EXPECT_EQ(secrets->Redact("x from-the-environment y"),
            "x <secret:JOBMON_SECRET_WEBHOOK_TOKEN> y");
  unsetenv("JOBMON_SECRET_WEBHOOK_TOKEN");
  auto bad = Secrets::Parse("token = \"abc\" garbage s3cr3t", "s.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.find("s3cr3t"), std::string::npos) << "no source text in errors";
}

// ------------------------------------------------------------------ config

TEST(AlertsConfig, ReceiversAndTheirErrors) {
  auto config = ParseAlertsConfig(R"(
[alerts]
secrets_file = "/etc/jobmon/secrets.toml"
[[alerts.webhook]]
name = "ops"
url = "http://127.0.0.1:9999/hook"
bearer_token_secret = "ops_token"
headers = { "X-Team" = "ml" }
min_interval = "2s"
[[alerts.alertmanager]]
url = "http://127.0.0.1:9093"
resend_interval = "1m"
runbook_url = "https://wiki/runbooks/training-hang"
)");
  ASSERT_TRUE(config.ok()) << config.error().message;
  ASSERT_EQ(config->receivers.size(), 2u);
  EXPECT_EQ(config->receivers[0].headers.at("X-Team"), "ml");
  EXPECT_EQ(config->receivers[0].min_interval, 2);
  EXPECT_EQ(config->receivers[1].name, "alertmanager-1");
  EXPECT_EQ(config->receivers[1].resend_interval, 60);
  auto inline_token =
      ParseAlertsConfig("[[alerts.webhook]]\nurl = \"http://x\"\ntoken = \"abc\"\n");
  ASSERT_FALSE(inline_token.ok());
  EXPECT_NE(inline_token.error().message.find("credentials do not belong in the config"),
            std::string::npos);
  EXPECT_FALSE(ParseAlertsConfig("[[alerts.webhook]]\nurl = \"ftp://x\"\n").ok());
  EXPECT_FALSE(ParseAlertsConfig(
                   "[[alerts.webhook]]\nname=\"a\"\nurl=\"http://x\"\n[[alerts.alertmanager]]\n"
                   "name=\"a\"\nurl=\"http://y\"\n")
                   .ok())
      << "names are unique";
  // A missing secret is named, without any value.
  Secrets none;
  auto built = BuildReceivers(*config, none);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.error().message.find("secret 'ops_token'"), std::string::npos);
}

// A webhook URL that is itself a secret (a token in its path or userinfo)
// had to sit in jobmon.toml, which every user may read.
TEST(AlertsConfig, AWebhookUrlThatIsASecretStaysInTheSecretsFile) {
  auto inline_credentials =
      ParseAlertsConfig("[[alerts.webhook]]\nurl = \"https://hook:hunter2@example.org/x\"\n");
  ASSERT_FALSE(inline_credentials.ok());
  EXPECT_NE(inline_credentials.error().message.find("url_secret"), std::string::npos);
  EXPECT_EQ(inline_credentials.error().message.find("hunter2"), std::string::npos);
  EXPECT_FALSE(
      ParseAlertsConfig("[[alerts.webhook]]\nurl = \"http://x\"\nurl_secret = \"h\"\n").ok())
      << "one or the other";
  auto config = ParseAlertsConfig("[[alerts.webhook]]\nname = \"ops\"\nurl_secret = \"hook\"\n");
  ASSERT_TRUE(config.ok()) << config.error().message;
  Secrets none;
  EXPECT_EQ(MissingSecrets(*config, none).size(), 1u);
  auto secrets = Secrets::Parse("hook = \"https://hooks.example.org/T000/B000/XXXX\"\n", "s.toml");
  ASSERT_TRUE(secrets.ok()) << secrets.error().message;
  EXPECT_TRUE(MissingSecrets(*config, *secrets).empty());
  auto built = BuildReceivers(*config, *secrets);
  ASSERT_TRUE(built.ok()) << built.error().message;
  EXPECT_EQ(built->size(), 1u);
  auto not_a_url = Secrets::Parse("hook = \"hooks.example.org\"\n", "s.toml");
  ASSERT_TRUE(not_a_url.ok());
  EXPECT_FALSE(BuildReceivers(*config, *not_a_url).ok());
}

// A misspelt key (bearer_token_secrt) would send alerts
// without their credentials, silently.
TEST(AlertsConfig, UnknownKeysAreRefusedByName) {
  struct Case {
    const char* toml;
    const char* named;
  };
  // Unknown keys as "file:line: unknown key 'x' in [section]" (jobmon_config.h).
  for (const Case& c :
       {Case{"[alerts]\nmax_backof = 5\n", "x.toml:2: unknown key 'max_backof' in [alerts]"},
        Case{"[[alerts.webhok]]\nurl = \"http://x\"\n",
             "x.toml:1: unknown key 'webhok' in [alerts]"},
        Case{"[[alerts.webhook]]\nurl = \"http://x\"\nbearer_token_secrt = \"t\"\n",
             "x.toml:3: unknown key 'bearer_token_secrt' in [[alerts.webhook]]"},
        Case{"[[alerts.webhook]]\nurl = \"http://x\"\nchat_ids = [1]\n",
             "x.toml:3: unknown key 'chat_ids' in [[alerts.webhook]]"},
        Case{"[[alerts.alertmanager]]\nurl = \"http://x\"\nresend = \"1m\"\n",
             "x.toml:3: unknown key 'resend' in [[alerts.alertmanager]]"},
        Case{"[[alerts.telegram]]\nbot_token_secret = \"b\"\nchat_ids = [1]\nchat_id = 2\n",
             "x.toml:4: unknown key 'chat_id' in [[alerts.telegram]]"},
        Case{"[alerts]\nwebhook = \"http://x\"\n", "x.toml: alerts.webhook"}}) {
    auto parsed = ParseAlertsConfig(c.toml, "x.toml");
    ASSERT_FALSE(parsed.ok()) << c.toml;
    EXPECT_NE(parsed.error().message.find(c.named), std::string::npos) << parsed.error().message;
  }
  auto telegram = ParseAlertsConfig(
      "[[alerts.telegram]]\nbot_token_secret = \"b\"\nchat_ids = [1]\nmessage_thread_id = 4\n");
  EXPECT_TRUE(telegram.ok()) << telegram.error().message;
  // An inline credential still gets its own message, not "unknown key".
  auto inline_token = ParseAlertsConfig("[[alerts.webhook]]\nurl = \"http://x\"\ntoken = \"a\"\n");
  ASSERT_FALSE(inline_token.ok());
  EXPECT_NE(inline_token.error().message.find("credentials do not belong"), std::string::npos);
}

TEST(AlertsConfig, TheShippedExampleUncommentedParses) {
  std::ifstream in(JOBMON_SOURCE_DIR "/etc/jobmon.toml");
  std::string text, line;
  bool in_alerts = false;
  while (std::getline(in, line)) {
    if (line.starts_with("[")) in_alerts = line.starts_with("[alerts");
    if (line.starts_with("# [") && line.find("alerts") != std::string::npos) in_alerts = true;
    if (in_alerts && line.starts_with("# ") &&
        (line.starts_with("# [") || line.find(" = ") < line.find(' ', 2) + 1)) {
      line = line.substr(2);
    }
    text += line + "\n";
  }
  auto config = ParseAlertsConfig(text, "uncommented");
  ASSERT_TRUE(config.ok()) << config.error().message;
  ASSERT_EQ(config->receivers.size(), 2u);
  EXPECT_EQ(config->receivers[0].kind, "webhook");
  EXPECT_EQ(config->receivers[0].basic_password_secret, "ops_password");
  EXPECT_EQ(config->receivers[1].resend_interval, 60);
  EXPECT_EQ(config->max_backoff, 600);
}

// ------------------------------------------------------------------ outbox

class ScriptedReceiver : public Receiver {
 public:
  ScriptedReceiver(std::string name, double resend = 0, double min_interval = 0)
      : name_(std::move(name)), resend_(resend), min_interval_(min_interval) {}
  std::string name() const override { return name_; }
  std::string kind() const override { return "scripted"; }
  double resend_interval() const override { return resend_; }
  double min_interval() const override { return min_interval_; }
  Delivery Deliver(const Alert& alert, const std::string& key) override {
    Delivery d = next;
    if (d.ok) {
      received.push_back(alert.status + " " + alert.klass);
      keys.push_back(key);
    }
    return d;
  }
  Delivery next{true, false, std::nullopt, ""};
  std::vector<std::string> received, keys;

 private:
  std::string name_;
  double resend_, min_interval_;
};

Alert Event(const std::string& status, int64_t incident = 1, const std::string& klass = "hang") {
  Alert a;
  a.status = status;
  a.cluster = "c";
  a.job_id = 7;
  a.klass = klass;
  a.key = AlertKey("c", 7, klass);
  a.incident_id = incident;
  a.summary = "no step for 90s";
  a.opened_at = 100;
  a.at = status == "firing" ? 100 : 200;
  return a;
}

class OutboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path = dir.path() + "/state.db";
    Reopen();
  }
  void Reopen() {
    outbox.reset();
    if (db) sqlite3_close(db);
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_TRUE(Outbox::EnsureSchema(db).ok());
    outbox = std::make_unique<Outbox>(db, 60);
  }
  void TearDown() override {
    outbox.reset();
    sqlite3_close(db);
  }
  TempDir dir;
  std::string path;
  sqlite3* db = nullptr;
  std::unique_ptr<Outbox> outbox;
};

TEST_F(OutboxTest, EnqueueIsIdempotentAndDeliveryIsInOrder) {
  ScriptedReceiver a("a"), b("b");
  EXPECT_EQ(outbox->Enqueue(Event("firing"), {"a", "b"}, 100).value(), 2);
  EXPECT_EQ(outbox->Enqueue(Event("firing"), {"a", "b"}, 101).value(), 0) << "queued once";
  EXPECT_EQ(outbox->Enqueue(Event("resolved"), {"a", "b"}, 200).value(), 2);
  auto round = outbox->DeliverDue({&a, &b}, 200, 10);
  EXPECT_EQ(round.delivered, 4);
  EXPECT_EQ(a.received, (std::vector<std::string>{"firing hang", "resolved hang"}));
  EXPECT_EQ(a.keys[0], "c/7/hang/1/firing");
  EXPECT_EQ(outbox->DeliverDue({&a, &b}, 300, 10).delivered, 0) << "nothing twice";
}

TEST_F(OutboxTest, ADiagnosisFollowUpIsAnEventOfItsOwn) {
  ScriptedReceiver a("a");
  ASSERT_EQ(outbox->Enqueue(Event("firing"), {"a"}, 100).value(), 1);
  ASSERT_EQ(outbox->Enqueue(Event("resolved"), {"a"}, 200).value(), 1);
  Alert follow_up = Event("resolved");
  follow_up.diagnosis = "hang: busy-wait-hang\n";
  EXPECT_EQ(outbox->Enqueue(follow_up, {"a"}, 260).value(), 1) << "not the resolve again";
  EXPECT_EQ(outbox->Enqueue(follow_up, {"a"}, 261).value(), 0) << "queued once";
  EXPECT_EQ(outbox->DeliverDue({&a}, 300, 10).delivered, 3);
  ASSERT_EQ(a.keys.size(), 3u);
  EXPECT_EQ(a.keys[2], "c/7/hang/1/resolved/diagnosis");
}

TEST_F(OutboxTest, ReceiverDownBacksOffKeepsOrderAndDeliversEverythingLater) {
  ScriptedReceiver hook("hook");
  ASSERT_TRUE(outbox->Enqueue(Event("firing"), {"hook"}, 100).ok());
  hook.next = {false, false, std::nullopt, "Connection refused"};
  auto round = outbox->DeliverDue({&hook}, 100, 10);
  EXPECT_EQ(round.retried, 1);
  EXPECT_EQ(round.errors[0], "hook: Connection refused");
  ASSERT_TRUE(outbox->Enqueue(Event("resolved"), {"hook"}, 101).ok());
  hook.next = {true, false, std::nullopt, ""};
  EXPECT_EQ(outbox->DeliverDue({&hook}, 101, 10).delivered, 0)
      << "the resolve waits behind the firing that is backing off";
  double due = 0;
  const std::vector<OutboxRow> rows = outbox->Rows().value();
  for (const auto& row : rows) {
    if (row.status == "firing") due = row.next_attempt_at;
  }
  EXPECT_GE(due, 101) << "backoff 1-2 s after the first failure";
  EXPECT_LE(due, 102.5);
  EXPECT_EQ(outbox->DeliverDue({&hook}, 103, 10).delivered, 2);
  EXPECT_EQ(hook.received, (std::vector<std::string>{"firing hang", "resolved hang"}));
}

TEST_F(OutboxTest, RetryAfterPermanentFailureAndRateLimit) {
  ScriptedReceiver tg("tg", 0, 5);
  ASSERT_TRUE(outbox->Enqueue(Event("firing", 1), {"tg"}, 100).ok());
  ASSERT_TRUE(outbox->Enqueue(Event("firing", 2, "tgs-degradation"), {"tg"}, 100).ok());
  tg.next = {false, false, 30.0, "HTTP 429"};
  outbox->DeliverDue({&tg}, 100, 10);
  EXPECT_EQ(outbox->Rows().value()[0].next_attempt_at, 130) << "Retry-After honoured";
  tg.next = {true, false, std::nullopt, ""};
  EXPECT_EQ(outbox->DeliverDue({&tg}, 131, 10).delivered, 1) << "then one per min_interval";
  EXPECT_EQ(outbox->DeliverDue({&tg}, 133, 10).delivered, 0);
  EXPECT_EQ(outbox->DeliverDue({&tg}, 136, 10).delivered, 1);
  ASSERT_TRUE(outbox->Enqueue(Event("resolved", 2, "tgs-degradation"), {"tg"}, 140).ok());
  tg.next = {false, true, std::nullopt, "HTTP 400: Bad Request"};
  auto round = outbox->DeliverDue({&tg}, 150, 10);
  EXPECT_EQ(round.failed, 1);
  EXPECT_EQ(outbox->Rows().value().back().state, "failed") << "not retried forever";
}

TEST_F(OutboxTest, AlertmanagerResendsWhileFiringUntilTheResolve) {
  ScriptedReceiver am("am", 60);
  ASSERT_TRUE(outbox->Enqueue(Event("firing"), {"am"}, 100).ok());
  EXPECT_EQ(outbox->DeliverDue({&am}, 100, 10).delivered, 1);
  EXPECT_EQ(outbox->DeliverDue({&am}, 130, 10).delivered, 0);
  EXPECT_EQ(outbox->DeliverDue({&am}, 161, 10).delivered, 1) << "re-sent after resend_interval";
  ASSERT_TRUE(outbox->Enqueue(Event("resolved"), {"am"}, 170).ok());
  EXPECT_EQ(outbox->DeliverDue({&am}, 300, 10).delivered, 1) << "the resolve, and no more re-sends";
  EXPECT_EQ(am.received.back(), "resolved hang");
  EXPECT_EQ(outbox->DeliverDue({&am}, 500, 10).delivered, 0);
}

TEST_F(OutboxTest, RestartBetweenEnqueueAndDeliveryLosesNothing) {
  ASSERT_TRUE(outbox->Enqueue(Event("firing"), {"hook"}, 100).ok());
  Reopen();  // the daemon was killed before it sent anything
  ScriptedReceiver hook("hook");
  EXPECT_EQ(outbox->DeliverDue({&hook}, 101, 10).delivered, 1);
  Reopen();
  EXPECT_EQ(outbox->DeliverDue({&hook}, 102, 10).delivered, 0);
  EXPECT_EQ(hook.received.size(), 1u);
}

// ------------------------------------------------------------------ HTTP

// Answers `count` requests on loopback with `status` and `body`, recording
// each request (head and body).
class OneShotServer {
 public:
  OneShotServer(int status, std::string body, int count = 1) {
    const auto listener = test_support::ListenOnLoopback(4);
    fd_ = listener.fd;
    port_ = listener.port;
    thread_ = std::thread([this, status, body, count] {
      for (int i = 0; i < count; ++i) {
        int c = accept(fd_, nullptr, nullptr);
        if (c < 0) return;
        std::string request;
        char buffer[8192];
        size_t want = std::string::npos;
        while (true) {
          ssize_t n = read(c, buffer, sizeof buffer);
          if (n <= 0) break;
          request.append(buffer, static_cast<size_t>(n));
          auto head_end = request.find("\r\n\r\n");
          if (head_end != std::string::npos && want == std::string::npos) {
            auto cl = request.find("Content-Length: ");
            size_t length = cl == std::string::npos ? 0 : std::stoul(request.substr(cl + 16));
            want = head_end + 4 + length;
          }
          if (want != std::string::npos && request.size() >= want) break;
        }
        {
          std::lock_guard lock(mutex_);
          requests_.push_back(request);
        }
        std::string reply = "HTTP/1.1 " + std::to_string(status) +
                            " X\r\nContent-Type: application/json\r\nRetry-After: 7\r\n"
                            "Connection: close\r\nContent-Length: " +
                            std::to_string(body.size()) + "\r\n\r\n" + body;
        (void)!write(c, reply.data(), reply.size());
        close(c);
      }
    });
  }
  ~OneShotServer() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  int fd_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<std::string> requests_;
};

TEST(HttpReceivers, WebhookCarriesAuthIdempotencyKeyAndTheAlert) {
  OneShotServer server(200, "{}");
  AlertsConfig config;
  ReceiverConfig hook;
  hook.kind = "webhook";
  hook.name = "ops";
  hook.url = server.url() + "/hook";
  hook.bearer_token_secret = "ops_token";
  hook.headers = {{"X-Team", "ml"}};
  config.receivers = {hook};
  setenv("JOBMON_SECRET_OPS_TOKEN", "tok-123456", 1);
  auto receivers = BuildReceivers(config, Secrets{});
  unsetenv("JOBMON_SECRET_OPS_TOKEN");
  ASSERT_TRUE(receivers.ok()) << receivers.error().message;
  Delivery d = receivers.value()[0]->Deliver(Event("firing"), "c/7/hang/1/firing");
  EXPECT_TRUE(d.ok) << d.error;
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  const std::string& r = requests[0];
  EXPECT_NE(r.find("POST /hook HTTP/1.1"), std::string::npos);
  EXPECT_NE(r.find("Authorization: Bearer tok-123456"), std::string::npos);
  EXPECT_NE(r.find("Idempotency-Key: c/7/hang/1/firing"), std::string::npos);
  EXPECT_NE(r.find("X-Team: ml"), std::string::npos);
  auto body = nlohmann::json::parse(r.substr(r.find("\r\n\r\n") + 4));
  EXPECT_EQ(body["schema"], kAlertSchema);
  EXPECT_EQ(body["class"], "hang");
  EXPECT_EQ(body["severity"], "critical");
  EXPECT_EQ(body["idempotency_key"], "c/7/hang/1/firing");
}

TEST(HttpReceivers, AlertmanagerV2LabelsAnnotationsAndEndsAt) {
  OneShotServer server(200, "", 2);
  AlertsConfig config;
  ReceiverConfig am;
  am.kind = "alertmanager";
  am.name = "am";
  am.url = server.url() + "/";
  am.runbook_url = "https://wiki/hang";
  config.receivers = {am};
  auto receivers = BuildReceivers(config, Secrets{}).value();
  Alert firing = Event("firing", 3, "hang/busy-wait");
  firing.evidence = {"node1: GPU util 100%, power 300 W"};
  ASSERT_TRUE(receivers[0]->Deliver(firing, "k").ok);
  ASSERT_TRUE(receivers[0]->Deliver(Event("resolved", 3, "hang/busy-wait"), "k2").ok);
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_NE(requests[0].find("POST /api/v2/alerts HTTP/1.1"), std::string::npos);
  auto alerts = nlohmann::json::parse(requests[0].substr(requests[0].find("\r\n\r\n") + 4));
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0]["labels"]["alertname"], "TrainingJobHang");
  EXPECT_EQ(alerts[0]["labels"]["job_id"], "7");
  EXPECT_EQ(alerts[0]["labels"]["class"], "hang/busy-wait");
  EXPECT_EQ(alerts[0]["labels"]["severity"], "critical");
  EXPECT_EQ(alerts[0]["annotations"]["runbook_url"], "https://wiki/hang");
  EXPECT_NE(alerts[0]["annotations"]["description"].get<std::string>().find("power 300 W"),
            std::string::npos);
  EXPECT_EQ(alerts[0]["startsAt"], "1970-01-01T00:01:40Z");
  auto resolved = nlohmann::json::parse(requests[1].substr(requests[1].find("\r\n\r\n") + 4));
  EXPECT_EQ(resolved[0]["labels"], alerts[0]["labels"]) << "same labels: one alert there";
  EXPECT_EQ(resolved[0]["endsAt"], "1970-01-01T00:03:20Z");
}

TEST(HttpReceivers, TheDiagnosisFollowUpIsAnAnnotationOfTheSameAlertmanagerAlert) {
  OneShotServer server(200, "", 2);
  AlertsConfig config;
  ReceiverConfig am;
  am.kind = "alertmanager";
  am.name = "am";
  am.url = server.url();
  config.receivers = {am};
  auto receivers = BuildReceivers(config, Secrets{}).value();
  Alert resolved = Event("resolved", 3, "ended/python-exception");
  Alert follow_up = resolved;
  follow_up.diagnosis = "hardware: pcie-fatal\nnetwork: healthy\n";
  follow_up.diagnosis_report = "## TSDB Diagnosis: 7\n";
  ASSERT_TRUE(receivers[0]->Deliver(resolved, "k").ok);
  ASSERT_TRUE(receivers[0]->Deliver(follow_up, "k2").ok);
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  auto first = nlohmann::json::parse(requests[0].substr(requests[0].find("\r\n\r\n") + 4));
  auto second = nlohmann::json::parse(requests[1].substr(requests[1].find("\r\n\r\n") + 4));
  EXPECT_FALSE(first[0]["annotations"].contains("diagnosis"));
  EXPECT_EQ(second[0]["annotations"]["diagnosis"], follow_up.diagnosis);
  EXPECT_EQ(second[0]["labels"], first[0]["labels"]) << "the same alert, updated";
  EXPECT_EQ(second[0]["endsAt"], first[0]["endsAt"]) << "still resolved";
}

// A Telegram receiver posting to `url` for chat 5.
std::unique_ptr<Receiver> TelegramTo(const std::string& url) {
  ReceiverConfig tg;
  tg.kind = "telegram";
  tg.name = "tg";
  tg.url = url;
  tg.chat_ids = {"5"};
  return MakeTelegramReceiver(tg, "T0KEN");
}

TEST(TelegramReceiver, TheFollowUpSendsTheVerdictsThenTheDiagnosisAsADocument) {
  OneShotServer server(200, "{\"ok\":true}", 2);
  auto receiver = TelegramTo(server.url());
  Alert follow_up = Event("resolved", 3, "ended/python-exception");
  follow_up.report = "# triage, sent with the firing";
  follow_up.diagnosis = "hardware: pcie-fatal\n";
  follow_up.diagnosis_report = "## TSDB Diagnosis: 7\nverdict pcie-fatal\n";
  Delivery d = receiver->Deliver(follow_up, "k");
  ASSERT_TRUE(d.ok) << d.error;
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_NE(requests[0].find("sendMessage"), std::string::npos);
  EXPECT_NE(requests[0].find("hardware: pcie-fatal"), std::string::npos);
  EXPECT_NE(requests[1].find("sendDocument"), std::string::npos);
  EXPECT_NE(requests[1].find("diagnosis-7.md"), std::string::npos);
  EXPECT_NE(requests[1].find("verdict pcie-fatal"), std::string::npos);
  EXPECT_EQ(requests[1].find("sent with the firing"), std::string::npos);
}

TEST(TelegramReceiver, AFiringWithAChartSendsItAsAPhotoAfterTheMessage) {
  OneShotServer server(200, "{\"ok\":true}", 3);
  auto receiver = TelegramTo(server.url());
  Alert firing = Event("firing", 3, "hang/busy-wait");
  firing.chart_png = std::string("\x89PNG\r\n\x1a\nCHART-BYTES", 19);
  firing.report = "# triage";
  Delivery d = receiver->Deliver(firing, "k");
  ASSERT_TRUE(d.ok) << d.error;
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_NE(requests[0].find("sendMessage"), std::string::npos);
  EXPECT_NE(requests[1].find("sendPhoto"), std::string::npos);
  EXPECT_NE(requests[1].find("name=\"photo\"; filename=\"" + ChartFilename(firing) + "\""),
            std::string::npos);
  EXPECT_NE(requests[1].find("Content-Type: image/png"), std::string::npos);
  EXPECT_NE(requests[1].find("CHART-BYTES"), std::string::npos);
  EXPECT_NE(requests[2].find("sendDocument"), std::string::npos);
}

TEST(TelegramReceiver, LaterEventsOfAnIncidentReplyToItsFirstMessage) {
  OneShotServer server(200, R"({"ok":true,"result":{"message_id":41}})", 5);
  auto receiver = TelegramTo(server.url());
  Alert firing = Event("firing", 3, "hang/busy-wait");
  Alert step = firing;
  step.recovery_step = "signal";
  step.recovery = "sent SIGUSR1 to the job's steps";
  Alert resolved = Event("resolved", 3, "hang/busy-wait");
  resolved.diagnosis = "hardware: healthy\n";
  resolved.diagnosis_report = "## TSDB Diagnosis: 7\n";
  Alert other = Event("firing", 4, "hang/busy-wait");
  ASSERT_TRUE(receiver->Deliver(firing, "a").ok);
  ASSERT_TRUE(receiver->Deliver(step, "b").ok);
  ASSERT_TRUE(receiver->Deliver(resolved, "c").ok);
  ASSERT_TRUE(receiver->Deliver(other, "d").ok);
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 5u);
  auto json_body = [](const std::string& r) {
    return nlohmann::json::parse(r.substr(r.find("\r\n\r\n") + 4));
  };
  EXPECT_FALSE(json_body(requests[0]).contains("reply_parameters")) << "the first message";
  const nlohmann::json reply = {{"message_id", 41}, {"allow_sending_without_reply", true}};
  EXPECT_EQ(json_body(requests[1])["reply_parameters"], reply) << "the recovery step";
  EXPECT_EQ(json_body(requests[2])["reply_parameters"], reply) << "the resolution";
  EXPECT_NE(requests[3].find("sendDocument"), std::string::npos);
  EXPECT_NE(requests[3].find("name=\"reply_parameters\""), std::string::npos)
      << "the diagnosis document under it too";
  EXPECT_FALSE(json_body(requests[4]).contains("reply_parameters")) << "another incident";
}

TEST(AlertJson, TheChartTravelsAsBase64AndComesBackTheSameBytes) {
  Alert firing = Event("firing", 3, "hang/busy-wait");
  EXPECT_FALSE(ToJson(firing).contains("chart")) << "no chart, no member";
  firing.chart_png = std::string("\x89PNG\0\xff\x01", 7);
  const nlohmann::json json = ToJson(firing);
  EXPECT_EQ(json["chart"]["content_type"], "image/png");
  EXPECT_EQ(json["chart"]["encoding"], "base64");
  EXPECT_EQ(json["chart"]["filename"], "jobmon-7-incident-3.png");
  EXPECT_EQ(AlertFromJson(json).chart_png, firing.chart_png);
  nlohmann::json broken = json;
  broken["chart"]["data"] = "not base64!";
  EXPECT_EQ(AlertFromJson(broken).chart_png, "");
}

TEST(HttpReceivers, StatusClassification) {
  {
    OneShotServer server(429, R"({"ok":false,"parameters":{"retry_after":12}})");
    HttpRequest r;
    r.url = server.url();
    Delivery d = FromHttp(HttpPost(r));
    EXPECT_FALSE(d.ok);
    EXPECT_FALSE(d.permanent);
    EXPECT_EQ(d.retry_after, 12) << "Telegram's body wins over the header";
  }
  {
    OneShotServer server(400, "bad");
    HttpRequest r;
    r.url = server.url();
    Delivery d = FromHttp(HttpPost(r));
    EXPECT_TRUE(d.permanent);
    EXPECT_EQ(d.error, "HTTP 400: bad");
  }
  {
    OneShotServer server(503, "");
    HttpRequest r;
    r.url = server.url();
    Delivery d = FromHttp(HttpPost(r));
    EXPECT_FALSE(d.permanent);
    EXPECT_EQ(d.retry_after, 7) << "Retry-After header";
  }
  HttpRequest refused;
  refused.url = "http://127.0.0.1:1/";
  refused.timeout_seconds = 2;
  Delivery d = FromHttp(HttpPost(refused));
  EXPECT_FALSE(d.ok);
  EXPECT_FALSE(d.permanent);
}

TEST(TelegramFormat, AFollowUpShowsTheVerdictsNotTheEvidence) {
  Alert a;
  a.status = "resolved";
  a.cluster = "c";
  a.job_id = 42;
  a.klass = "ended/oom";
  a.summary = "CUDA out of memory";
  a.evidence = {"log line 9: OutOfMemoryError"};
  a.diagnosis = "oom: gradual-ramp <x>\nhardware: clean\n";
  const auto messages = FormatTelegramMessages(a);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("🩺 DIAGNOSIS Job 42: ended/oom diagnosis"), std::string::npos)
      << messages[0];
  EXPECT_NE(messages[0].find("• oom: gradual-ramp &lt;x&gt;"), std::string::npos) << messages[0];
  EXPECT_NE(messages[0].find("• hardware: clean"), std::string::npos);
  EXPECT_EQ(messages[0].find("OutOfMemoryError"), std::string::npos);
}

}  // namespace
}  // namespace jobmon::alerts

namespace jobmon::alerts {
namespace {

TEST(TelegramFormat, EscapesSplitsAndKeepsEveryMessageValid) {
  EXPECT_EQ(EscapeHtml("a < b && c > d"), "a &lt; b &amp;&amp; c &gt; d");
  EXPECT_EQ(VisibleLength("<b>ab</b> &amp; <code>c</code>"), 6u);
  EXPECT_EQ(VisibleLength("ü😀"), 3u) << "UTF-16 code units, as Telegram counts";
  Alert a;
  a.status = "firing";
  a.cluster = "c";
  a.job_id = 42;
  a.job_name = "llama <7b>";
  a.klass = "hang/busy-wait";
  a.summary = "GPUs busy & idle power";
  a.tunnel_command = "ssh -N -L 9190:127.0.0.1:9190 node1";
  for (int i = 0; i < 400; ++i)
    a.evidence.push_back("node" + std::to_string(i) + ": util 100% <x>");
  a.evidence.push_back(std::string(9000, 'y'));  // one line longer than a message
  auto messages = FormatTelegramMessages(a);
  ASSERT_GT(messages.size(), 3u);
  for (const auto& m : messages) {
    EXPECT_LE(VisibleLength(m), kTelegramMaxText);
    EXPECT_EQ(m.find("<x>"), std::string::npos) << "escaped";
    // Tags balance within each message.
    size_t open = 0, close = 0;
    for (size_t at = m.find("<b>"); at != std::string::npos; at = m.find("<b>", at + 1)) ++open;
    for (size_t at = m.find("</b>"); at != std::string::npos; at = m.find("</b>", at + 1)) ++close;
    EXPECT_EQ(open, close);
  }
  EXPECT_NE(messages[0].find("<b>🔴 FIRING Job 42 (llama &lt;7b&gt;): hang/busy-wait</b>"),
            std::string::npos);
  EXPECT_NE(messages.back().find("<code>ssh -N -L 9190:127.0.0.1:9190 node1</code>"),
            std::string::npos);
  bool cut = false;
  for (const auto& m : messages) cut = cut || m.find("yyy…") != std::string::npos;
  EXPECT_TRUE(cut) << "the over-long line is cut, not dropped";
}

// An over-long line is cut as text and escaped again: quotes and
// apostrophes once, not twice (&amp;quot;).
TEST(TelegramFormat, ACutLineIsEscapedOnce) {
  EXPECT_EQ(UnescapeHtml(EscapeHtml("a \"b\" & 'c' <d>")), "a \"b\" & 'c' <d>");
  EXPECT_EQ(UnescapeHtml("&nbsp;&amp;"), "&nbsp;&") << "another entity stays as it is";
  Alert a;
  a.status = "firing";
  a.job_id = 42;
  a.klass = "hang";
  a.evidence.push_back("log: \"rank 3's step\" " + std::string(9000, 'q'));
  std::string all;
  for (const auto& m : FormatTelegramMessages(a)) all += m;
  EXPECT_NE(all.find("&quot;rank 3&#39;s step&quot;"), std::string::npos);
  EXPECT_EQ(all.find("&amp;quot;"), std::string::npos) << "escaped twice";
  EXPECT_EQ(all.find("&amp;#39;"), std::string::npos) << "escaped twice";
}

}  // namespace
}  // namespace jobmon::alerts
