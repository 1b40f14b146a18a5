#pragma once
// The [alerts] section of jobmon.toml: receivers and where secrets live.
// Credentials are never written in this file, only the names of secrets
// (see secrets.h). Parsing is pure; building receivers resolves secrets.

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/alerts/receiver.h"
#include "jobmon/alerts/secrets.h"
#include "jobmon/common/expected.h"

namespace jobmon::alerts {

struct ReceiverConfig {
  std::string kind;  // webhook | alertmanager | telegram
  std::string name;
  std::string url;
  // webhook: the URL is a secret of this name instead (a Slack-style hook
  // carries its token in the path): not in jobmon.toml, which every user
  // may read, and never logged.
  std::string url_secret;
  double timeout = 10;
  double min_interval = 0;
  double resend_interval = 60;                 // alertmanager
  std::string runbook_url;                     // alertmanager annotation
  std::map<std::string, std::string> headers;  // webhook
  std::string bearer_token_secret;             // webhook: secret name
  std::string basic_user, basic_password_secret;
  // telegram: url is the Bot API base (https://api.telegram.org)
  std::string bot_token_secret;
  std::vector<std::string> chat_ids;
  int64_t message_thread_id = 0;  // 0: none (forum topic otherwise)
};

struct AlertsConfig {
  std::string secrets_file;  // empty: secrets from the environment only
  double max_backoff = 600;
  std::vector<ReceiverConfig> receivers;
};

Expected<AlertsConfig> ParseAlertsConfig(std::string_view toml_text,
                                         const std::string& path_for_errors = "jobmon.toml");

std::unique_ptr<Receiver> MakeTelegramReceiver(const ReceiverConfig& config,
                                               const std::string& token);

Expected<std::vector<std::unique_ptr<Receiver>>> BuildReceivers(const AlertsConfig& config,
                                                                const Secrets& secrets);

// Every secret a receiver names that `secrets` lacks, one message each
// (the message BuildReceivers stops at); empty when all are there.
std::vector<std::string> MissingSecrets(const AlertsConfig& config, const Secrets& secrets);

}  // namespace jobmon::alerts
