// Telegram Bot API: sendMessage (parse_mode=HTML, split to the 4096 limit)
// to every chat, then the incident's chart as a photo (a firing with one:
// sendPhoto, multipart), then the triage report (a firing) or the diagnosis
// (a follow-up) as a document (sendDocument, multipart). Parts already delivered for an event are
// remembered, so a retry after a failure (a 429, one chat down) does not repeat them.
// Every later event of an incident (a recovery step, the resolution, the
// diagnosis) is a reply to the incident's first message in that chat
// (reply_parameters); the daemon keeps those message ids in memory only, so
// after its restart a follow-up goes out as a plain message.
#include <deque>
#include <set>

#include "jobmon/alerts/alerts_config.h"
#include "jobmon/alerts/telegram_format.h"
#include "jobmon/common/http_client.h"

namespace jobmon::alerts {
namespace {

class TelegramReceiver : public Receiver {
 public:
  TelegramReceiver(ReceiverConfig config, std::string token)
      : config_(std::move(config)), token_(std::move(token)) {}
  std::string name() const override { return config_.name; }
  std::string kind() const override { return "telegram"; }
  double min_interval() const override { return config_.min_interval; }

  Delivery Deliver(const Alert& alert, const std::string& idempotency_key) override {
    std::set<std::string>& done = done_[idempotency_key];
    const std::vector<std::string> messages = FormatTelegramMessages(alert);
    for (const std::string& chat : config_.chat_ids) {
      for (size_t i = 0; i < messages.size(); ++i) {
        const std::string part = chat + "/message/" + std::to_string(i);
        if (done.count(part)) continue;
        nlohmann::json body = {{"chat_id", chat},
                               {"text", messages[i]},
                               {"parse_mode", "HTML"},
                               {"disable_web_page_preview", true}};
        if (config_.message_thread_id) body["message_thread_id"] = config_.message_thread_id;
        const std::string thread = ThreadKey(chat, alert);
        const auto first = first_message_.find(thread);
        if (first != first_message_.end()) body["reply_parameters"] = ReplyTo(first->second);
        HttpRequest request;
        request.url = Method("sendMessage");
        request.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        request.timeout_seconds = config_.timeout;
        const HttpResponse response = HttpPost(request);
        Delivery d = FromHttp(response);
        if (!d.ok) return Failed(d, chat);
        done.insert(part);
        if (first == first_message_.end() && i == 0 && alert.status == "firing") {
          RememberFirstMessage(thread, response.body);
        }
      }
      // The chart as a photo (sendPhoto), under the message it belongs to.
      if (!alert.chart_png.empty() && alert.status == "firing" && !done.count(chat + "/photo")) {
        HttpRequest request;
        request.url = Method("sendPhoto");
        request.timeout_seconds = config_.timeout;
        request.multipart = {{"chat_id", chat, "", ""},
                             {"caption", Title(alert), "", ""},
                             {"photo", alert.chart_png, ChartFilename(alert), "image/png"}};
        if (config_.message_thread_id) {
          request.multipart.push_back(
              {"message_thread_id", std::to_string(config_.message_thread_id), "", ""});
        }
        AddReplyPart(request, chat, alert);
        Delivery d = FromHttp(HttpPost(request));
        if (!d.ok) return Failed(d, chat);
        done.insert(chat + "/photo");
      }
      const bool follow_up = !alert.diagnosis_report.empty();
      const std::string& document = follow_up ? alert.diagnosis_report : alert.report;
      if (document.empty() || (!follow_up && alert.status != "firing")) continue;
      const std::string part = chat + "/document";
      if (done.count(part)) continue;
      HttpRequest request;
      request.url = Method("sendDocument");
      request.timeout_seconds = config_.timeout;
      request.multipart = {
          {"chat_id", chat, "", ""},
          {"caption", Title(alert), "", ""},
          {"document", document,
           (follow_up ? "diagnosis-" : "triage-") + std::to_string(alert.job_id) + ".md",
           "text/markdown"}};
      if (config_.message_thread_id) {
        request.multipart.push_back(
            {"message_thread_id", std::to_string(config_.message_thread_id), "", ""});
      }
      AddReplyPart(request, chat, alert);
      Delivery d = FromHttp(HttpPost(request));
      if (!d.ok) return Failed(d, chat);
      done.insert(part);
    }
    done_.erase(idempotency_key);
    return Delivery{true, false, std::nullopt, ""};
  }

 private:
  // The token is part of the URL: never put the URL in an error.
  std::string Method(const char* method) const {
    std::string base = config_.url;
    while (!base.empty() && base.back() == '/') base.pop_back();
    return base + "/bot" + token_ + "/" + method;
  }
  // Sent even where the first message was deleted (Telegram ignores this in a
  // forum topic, where the message must exist).
  static nlohmann::json ReplyTo(int64_t message_id) {
    return {{"message_id", message_id}, {"allow_sending_without_reply", true}};
  }
  // A photo or document goes under the incident's first message too.
  void AddReplyPart(HttpRequest& request, const std::string& chat, const Alert& alert) const {
    const auto first = first_message_.find(ThreadKey(chat, alert));
    if (first != first_message_.end()) {
      request.multipart.push_back({"reply_parameters", ReplyTo(first->second).dump(), "", ""});
    }
  }
  // One incident's messages in one chat.
  static std::string ThreadKey(const std::string& chat, const Alert& alert) {
    return chat + "\n" + alert.key + "#" + std::to_string(alert.incident_id);
  }
  // The sent message's id, from sendMessage's answer ({"ok":true,"result":{"message_id":N}}).
  void RememberFirstMessage(const std::string& thread, const std::string& answer) {
    const auto json = nlohmann::json::parse(answer, nullptr, false);
    if (json.is_discarded() || !json.contains("result") || !json["result"].is_object()) return;
    const auto id = json["result"].find("message_id");
    if (id == json["result"].end() || !id->is_number_integer()) return;
    first_message_[thread] = id->get<int64_t>();
    threads_.push_back(thread);
    if (threads_.size() > kMaxThreads) {  // bounded: the oldest incidents lose their thread
      first_message_.erase(threads_.front());
      threads_.pop_front();
    }
  }
  Delivery Failed(Delivery d, const std::string& chat) {
    d.error = "chat " + chat + ": " + d.error;
    if (done_.size() > 1000) done_.clear();  // bounded; a repeat is the worst case
    return d;
  }

  ReceiverConfig config_;
  std::string token_;
  std::map<std::string, std::set<std::string>> done_;  // idempotency key -> parts sent
  static constexpr size_t kMaxThreads = 10000;
  std::map<std::string, int64_t> first_message_;  // chat + incident -> its first message's id
  std::deque<std::string> threads_;               // first_message_'s keys, oldest first
};

}  // namespace

std::unique_ptr<Receiver> MakeTelegramReceiver(const ReceiverConfig& config,
                                               const std::string& token) {
  return std::make_unique<TelegramReceiver>(config, token);
}

}  // namespace jobmon::alerts
