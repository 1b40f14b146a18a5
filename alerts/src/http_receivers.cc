// The generic webhook and Alertmanager v2 receivers.
#include <ctime>

#include "jobmon/alerts/alerts_config.h"
#include "jobmon/common/http_client.h"
#include "jobmon/common/http_url.h"
#include "jobmon/common/iso_time.h"

namespace jobmon::alerts {
namespace {

class WebhookReceiver : public Receiver {
 public:
  WebhookReceiver(ReceiverConfig config, std::string bearer, std::string password)
      : config_(std::move(config)), bearer_(std::move(bearer)), password_(std::move(password)) {}
  std::string name() const override { return config_.name; }
  std::string kind() const override { return "webhook"; }
  double min_interval() const override { return config_.min_interval; }

  Delivery Deliver(const Alert& alert, const std::string& idempotency_key) override {
    nlohmann::json body = ToJson(alert);
    body["idempotency_key"] = idempotency_key;
    HttpRequest request;
    request.url = config_.url;
    request.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    request.timeout_seconds = config_.timeout;
    request.headers.push_back("Idempotency-Key: " + idempotency_key);
    for (const auto& [header, value] : config_.headers)
      request.headers.push_back(header + ": " + value);
    if (!bearer_.empty()) request.headers.push_back("Authorization: Bearer " + bearer_);
    if (!config_.basic_user.empty()) {
      request.basic_user = config_.basic_user;
      request.basic_password = password_;
    }
    return FromHttp(HttpPost(request));
  }

 private:
  ReceiverConfig config_;
  std::string bearer_, password_;
};

class AlertmanagerReceiver : public Receiver {
 public:
  explicit AlertmanagerReceiver(ReceiverConfig config) : config_(std::move(config)) {}
  std::string name() const override { return config_.name; }
  std::string kind() const override { return "alertmanager"; }
  double min_interval() const override { return config_.min_interval; }
  double resend_interval() const override { return config_.resend_interval; }

  Delivery Deliver(const Alert& alert, const std::string&) override {
    // Alertmanager deduplicates by label set: the same labels on every
    // re-send and on the resolve, so one incident is one alert there.
    nlohmann::json labels = {{"alertname", AlertName(alert.klass)},
                             {"job_id", std::to_string(alert.job_id)},
                             {"cluster", alert.cluster},
                             {"class", alert.klass},
                             {"severity", Severity(alert.klass)},
                             {"incident", std::to_string(alert.incident_id)}};
    if (!alert.user.empty()) labels["user"] = alert.user;
    std::string description;
    for (const std::string& line : alert.evidence) description += line + "\n";
    nlohmann::json annotations = {{"summary", Title(alert) + ": " + alert.summary},
                                  {"description", description}};
    if (!config_.runbook_url.empty()) annotations["runbook_url"] = config_.runbook_url;
    if (!alert.tunnel_command.empty()) annotations["tunnel_command"] = alert.tunnel_command;
    if (!alert.diag_dir.empty()) annotations["diag_dir"] = alert.diag_dir;
    if (!alert.diagnosis.empty()) annotations["diagnosis"] = alert.diagnosis;
    if (!alert.recovery.empty())
      annotations["recovery"] = alert.recovery_step + ": " + alert.recovery;
    nlohmann::json entry = {
        {"labels", labels},
        {"annotations", annotations},
        {"startsAt", FormatIsoUtc(alert.opened_at > 0 ? alert.opened_at : alert.at)}};
    if (alert.status == "resolved") {
      entry["endsAt"] = FormatIsoUtc(alert.at);
    } else {
      // Firing until the next re-send is due, with room for a missed one.
      entry["endsAt"] =
          FormatIsoUtc(static_cast<double>(time(nullptr)) + 3 * config_.resend_interval);
    }
    HttpRequest request;
    std::string base = config_.url;
    while (!base.empty() && base.back() == '/') base.pop_back();
    request.url = base + "/api/v2/alerts";
    request.body = nlohmann::json::array({entry}).dump(-1, ' ', false,
                                                       nlohmann::json::error_handler_t::replace);
    request.timeout_seconds = config_.timeout;
    return FromHttp(HttpPost(request));
  }

 private:
  ReceiverConfig config_;
};

}  // namespace

Delivery FromHttp(const HttpResponse& r) {
  Delivery d;
  if (r.status >= 200 && r.status < 300) {
    d.ok = true;
    return d;
  }
  if (r.status == 0) {
    d.error = r.error.empty() ? "no answer" : r.error;
    return d;
  }
  d.error = "HTTP " + std::to_string(r.status);
  if (!r.body.empty()) d.error += ": " + r.body.substr(0, 200);
  d.retry_after = r.retry_after;  // 429 and 503 may carry Retry-After
  if (r.status == 429) {
    try {  // Telegram puts it in the body: {"parameters": {"retry_after": N}}
      auto body = nlohmann::json::parse(r.body);
      if (body.contains("parameters") && body["parameters"].contains("retry_after")) {
        d.retry_after = body["parameters"]["retry_after"].get<double>();
      }
    } catch (const std::exception&) {
    }
  } else if (r.status != 408 && r.status < 500) {
    d.permanent = true;
  }
  return d;
}

namespace {

std::string MissingSecretMessage(const ReceiverConfig& r, const std::string& name,
                                 const char* what) {
  return "receiver " + r.name + ": secret '" + name + "' (" + what +
         ") is neither in the secrets file nor in $JOBMON_SECRET_<NAME>";
}

// The secrets a receiver of this kind uses, with what each is for.
std::vector<std::pair<std::string, const char*>> NamedSecrets(const ReceiverConfig& r) {
  if (r.kind == "webhook") {
    return {{r.bearer_token_secret, "bearer token"},
            {r.basic_password_secret, "basic auth password"},
            {r.url_secret, "URL"}};
  }
  if (r.kind == "telegram") return {{r.bot_token_secret, "bot token"}};
  return {};
}

}  // namespace

std::vector<std::string> MissingSecrets(const AlertsConfig& config, const Secrets& secrets) {
  std::vector<std::string> missing;
  for (const ReceiverConfig& r : config.receivers) {
    for (const auto& [name, what] : NamedSecrets(r)) {
      if (!name.empty() && !secrets.Get(name))
        missing.push_back(MissingSecretMessage(r, name, what));
    }
  }
  return missing;
}

Expected<std::vector<std::unique_ptr<Receiver>>> BuildReceivers(const AlertsConfig& config,
                                                                const Secrets& secrets) {
  std::vector<std::unique_ptr<Receiver>> out;
  auto secret = [&](const ReceiverConfig& r, const std::string& name,
                    const char* what) -> Expected<std::string> {
    if (name.empty()) return std::string();
    auto value = secrets.Get(name);
    if (!value) return Error{MissingSecretMessage(r, name, what)};
    return *value;
  };
  for (const ReceiverConfig& r : config.receivers) {
    if (r.kind == "webhook") {
      auto bearer = secret(r, r.bearer_token_secret, "bearer token");
      if (!bearer) return bearer.error();
      auto password = secret(r, r.basic_password_secret, "basic auth password");
      if (!password) return password.error();
      ReceiverConfig with_url = r;
      if (!r.url_secret.empty()) {
        auto url = secret(r, r.url_secret, "URL");
        if (!url) return url.error();
        if (!IsHttpUrl(*url))
          return Error{"receiver " + r.name + ": secret '" + r.url_secret +
                       "' (URL) is not an http:// or https:// URL"};
        with_url.url = *url;
      }
      out.push_back(std::make_unique<WebhookReceiver>(with_url, *bearer, *password));
    } else if (r.kind == "alertmanager") {
      out.push_back(std::make_unique<AlertmanagerReceiver>(r));
    } else if (r.kind == "telegram") {
      auto token = secret(r, r.bot_token_secret, "bot token");
      if (!token) return token.error();
      out.push_back(MakeTelegramReceiver(r, *token));
    } else {
      return Error{"receiver " + r.name + ": unknown kind " + r.kind};
    }
  }
  return out;
}

}  // namespace jobmon::alerts
