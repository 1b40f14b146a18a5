#include "jobmon/alerts/alerts_config.h"

#include <toml++/toml.h>

#include <set>

#include "jobmon/common/http_url.h"
#include "jobmon/common/toml_config.h"

namespace jobmon::alerts {
namespace {

Expected<double> Seconds(const toml::node_view<const toml::node>& node, const std::string& where) {
  auto seconds = TomlDurationSeconds(*node.node());
  if (!seconds) return Error{where + " " + seconds.error().message};
  return seconds;
}

}  // namespace

Expected<AlertsConfig> ParseAlertsConfig(std::string_view text, const std::string& path) {
  auto parsed = ParseTomlConfig(text, path);
  if (!parsed) return parsed.error();
  const toml::table& root = *parsed;
  AlertsConfig config;
  if (root.contains("alerts") && !root["alerts"].is_table())
    return Error{path + ": alerts must be a table ([alerts])"};
  const toml::table* section = root["alerts"].as_table();
  if (!section) return config;
  // A key nobody reads would leave a default (no auth header, no chat) in
  // force silently.
  if (auto known = RejectUnknownKeys(
          *section, {"secrets_file", "max_backoff", "webhook", "alertmanager", "telegram"}, path,
          "alerts");
      !known) {
    return known.error();
  }
  const toml::node_view<const toml::node> alerts{section};
  if (auto f = alerts["secrets_file"].value<std::string>()) config.secrets_file = *f;
  if (alerts["max_backoff"]) {
    auto s = Seconds(alerts["max_backoff"], path + ": alerts.max_backoff");
    if (!s) return s.error();
    config.max_backoff = *s;
  }
  std::set<std::string> names;
  for (const char* kind : {"webhook", "alertmanager", "telegram"}) {
    if (!alerts[kind]) continue;
    const toml::array* list = alerts[kind].as_array();
    if (!list)
      return Error{path + ": alerts." + kind + " must be a list of tables ([[alerts." + kind +
                   "]])"};
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string where = path + ": alerts." + kind + "[" + std::to_string(i) + "]";
      const toml::table* t = (*list)[i].as_table();
      if (!t) return Error{where + " must be a table ([[alerts." + kind + "]])"};
      const toml::node_view<const toml::node> r{t};
      ReceiverConfig rc;
      rc.kind = kind;
      rc.name = r["name"].value_or(std::string(kind) + "-" + std::to_string(i + 1));
      rc.url =
          r["url"].value_or(std::string(rc.kind == "telegram" ? "https://api.telegram.org" : ""));
      if (rc.kind == "telegram")
        rc.min_interval = 1;  // Telegram: about one message a second per chat
      rc.url_secret = r["url_secret"].value_or(std::string());
      if (!rc.url_secret.empty()) {
        if (rc.kind != "webhook") return Error{where + ".url_secret is for webhook receivers"};
        if (r["url"]) return Error{where + ": url and url_secret exclude each other"};
      } else if (!IsHttpUrl(rc.url)) {
        return Error{where + ".url must be an http:// or https:// URL"};
      } else if (UrlHasCredentials(rc.url)) {
        return Error{where +
                     ".url: credentials do not belong in the URL (the config is readable by every "
                     "user); put the URL in a secret and name it with url_secret, or use "
                     "basic_user and basic_password_secret"};
      }
      if (!names.insert(rc.name).second)
        return Error{where + ": receiver name " + rc.name + " used twice"};
      for (auto [key, target] :
           {std::pair{"timeout", &rc.timeout}, std::pair{"min_interval", &rc.min_interval},
            std::pair{"resend_interval", &rc.resend_interval}}) {
        if (!r[key]) continue;
        auto s = Seconds(r[key], where + "." + key);
        if (!s) return s.error();
        *target = *s;
      }
      if (rc.resend_interval < 1) return Error{where + ".resend_interval must be at least 1s"};
      rc.runbook_url = r["runbook_url"].value_or(std::string());
      rc.bearer_token_secret = r["bearer_token_secret"].value_or(std::string());
      rc.basic_user = r["basic_user"].value_or(std::string());
      rc.basic_password_secret = r["basic_password_secret"].value_or(std::string());
      for (const char* forbidden : {"token", "bearer_token", "password", "basic_password"}) {
        if (r[forbidden]) {
          return Error{where + "." + forbidden +
                       ": credentials do not belong in the config; name a secret (" + forbidden +
                       "_secret) kept in the secrets file or the environment"};
        }
      }
      const std::string table_name = std::string("[alerts.") + kind + "]";  // [[alerts.kind]]
      auto known =
          rc.kind == "telegram"
              ? RejectUnknownKeys(
                    *t,
                    {"name", "url", "timeout", "min_interval", "resend_interval", "runbook_url",
                     "bearer_token_secret", "basic_user", "basic_password_secret", "headers",
                     "bot_token_secret", "chat_ids", "message_thread_id"},
                    path, table_name)
              : RejectUnknownKeys(*t,
                                  {"name", "url", "timeout", "min_interval", "resend_interval",
                                   "runbook_url", "bearer_token_secret", "basic_user",
                                   "basic_password_secret", "headers", "url_secret"},
                                  path, table_name);
      if (!known) return known.error();
      if (rc.kind == "telegram") {
        rc.bot_token_secret = r["bot_token_secret"].value_or(std::string());
        if (rc.bot_token_secret.empty()) return Error{where + ".bot_token_secret is required"};
        if (const toml::array* chats = r["chat_ids"].as_array()) {
          for (const auto& chat : *chats) {
            if (auto s = chat.value<std::string>()) {
              rc.chat_ids.push_back(*s);
            } else if (auto n = chat.value<int64_t>()) {
              rc.chat_ids.push_back(std::to_string(*n));
            } else {
              return Error{where + ".chat_ids must hold chat ids (numbers or @channel names)"};
            }
          }
        }
        if (rc.chat_ids.empty()) return Error{where + ".chat_ids must name at least one chat"};
        rc.message_thread_id = r["message_thread_id"].value_or(int64_t{0});
      }
      if (r["headers"] && !r["headers"].is_table())
        return Error{where + ".headers must be a table of strings"};
      if (const toml::table* headers = r["headers"].as_table()) {
        for (const auto& [key, value] : *headers) {
          auto v = value.value<std::string>();
          if (!v) return Error{where + ".headers." + std::string(key.str()) + " must be a string"};
          rc.headers[std::string(key.str())] = *v;
        }
      }
      config.receivers.push_back(rc);
    }
  }
  return config;
}

}  // namespace jobmon::alerts
