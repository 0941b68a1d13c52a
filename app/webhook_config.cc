#include "app/webhook_config.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "core/yaml_json.h"

namespace gauntlet::app {
using nlohmann::json;

namespace {

Status CheckEvent(const std::string& e, const std::string& field) {
  const auto& all = daemon::WebhookEvents();
  if (std::find(all.begin(), all.end(), e) == all.end()) {
    std::string names;
    for (auto& n : all) names += (names.empty() ? "" : ", ") + n;
    return Status::Invalid("unknown event '" + e + "' (events: " + names + ")", field);
  }
  return Status::Ok();
}

Status AddTarget(WebhookConfig* c, WebhookTarget t, const std::string& field) {
  std::string base, target;
  if (Status s = SplitWebhookUrl(t.hook.url, &base, &target, field + "url"); !s.ok()) return s;
  for (auto& other : c->sender.targets)
    if (other.hook.url == t.hook.url) return Status::Invalid("a webhook URL is named twice: " + t.hook.url, field + "url");
  c->notifier.hooks.push_back(t.hook);
  c->sender.targets.push_back(std::move(t));
  return Status::Ok();
}

Status FromFile(const json& j, WebhookConfig* c) {
  static const std::set<std::string> kTop = {"public_url", "regression_threshold", "webhooks", "webhook_retry"};
  if (!j.is_object()) return Status::Invalid("the config file holds an object", "config");
  for (auto& [k, v] : j.items())
    if (!kTop.count(k)) return Status::Invalid("unknown setting (known: public_url, regression_threshold, webhooks, webhook_retry)", k);
  if (j.contains("public_url")) {
    if (!j["public_url"].is_string()) return Status::Invalid("a URL", "public_url");
    c->notifier.public_url = j["public_url"];
  }
  if (j.contains("regression_threshold")) {
    const json& t = j["regression_threshold"];
    if (!t.is_number() || t.get<double>() < 0 || t.get<double>() > 1)
      return Status::Invalid("a fraction from 0 to 1", "regression_threshold");
    c->notifier.threshold = t;
  }
  if (j.contains("webhook_retry")) {
    const json& r = j["webhook_retry"];
    if (!r.is_object()) return Status::Invalid("an object", "webhook_retry");
    for (auto& [k, v] : r.items()) {
      const std::string f = "webhook_retry." + k;
      if (!v.is_number_integer() || v.get<int64_t>() < 1) return Status::Invalid("a positive whole number", f);
      if (k == "backoff_ms") c->sender.backoff_ms = v;
      else if (k == "max_backoff_ms") c->sender.max_backoff_ms = v;
      else if (k == "retry_for_s") c->sender.retry_for_ms = v.get<int64_t>() * 1000;
      else if (k == "timeout_ms") c->sender.timeout_ms = v;
      else return Status::Invalid("unknown (known: backoff_ms, max_backoff_ms, retry_for_s, timeout_ms)", f);
    }
  }
  if (!j.contains("webhooks")) return Status::Ok();
  if (!j["webhooks"].is_array()) return Status::Invalid("a list", "webhooks");
  for (size_t i = 0; i < j["webhooks"].size(); ++i) {
    const json& w = j["webhooks"][i];
    const std::string f = "webhooks[" + std::to_string(i) + "].";
    if (!w.is_object() || !w.contains("url") || !w["url"].is_string())
      return Status::Invalid("a webhook is an object with a url", f + "url");
    WebhookTarget t;
    t.hook.url = w["url"];
    for (auto& [k, v] : w.items()) {
      if (k == "url") continue;
      if (k == "events") {
        if (!v.is_array()) return Status::Invalid("a list of events", f + "events");
        for (size_t e = 0; e < v.size(); ++e) {
          const std::string ef = f + "events[" + std::to_string(e) + "]";
          if (!v[e].is_string()) return Status::Invalid("an event name", ef);
          if (Status s = CheckEvent(v[e], ef); !s.ok()) return s;
          t.hook.events.insert(v[e].get<std::string>());
        }
      } else if (k == "format") {
        if (v != "json" && v != "slack") return Status::Invalid("json or slack", f + "format");
        t.hook.format = v;
      } else if (k == "secret") {
        if (!v.is_string()) return Status::Invalid("a string", f + "secret");
        t.secret = v;
      } else if (k == "secret_env") {
        if (!v.is_string()) return Status::Invalid("an environment variable's name", f + "secret_env");
        const char* s = getenv(v.get<std::string>().c_str());
        if (!s || !*s) return Status::Invalid("$" + v.get<std::string>() + " is not set", f + "secret_env");
        t.secret = s;
      } else {
        return Status::Invalid("unknown (known: url, events, format, secret, secret_env)", f + k);
      }
    }
    if (Status s = AddTarget(c, std::move(t), f); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace

Result<WebhookConfig> LoadWebhookConfig(const std::string& config_file, const std::vector<std::string>& flags,
                                        const std::string& public_url) {
  WebhookConfig c;
  if (!config_file.empty()) {
    auto j = ReadJsonOrYaml(config_file);
    if (!j.ok()) return j.status();
    if (Status s = FromFile(*j, &c); !s.ok())
      return Status::Invalid(config_file + ": " + s.field() + ": " + s.message(), s.field());
  }
  const char* secret = getenv("GAUNTLET_WEBHOOK_SECRET");
  for (auto& flag : flags) {
    WebhookTarget t;
    size_t comma = flag.find(',');
    t.hook.url = flag.substr(0, comma);
    while (comma != std::string::npos) {
      size_t next = flag.find(',', comma + 1);
      std::string e = flag.substr(comma + 1, next == std::string::npos ? std::string::npos : next - comma - 1);
      if (!e.empty()) {
        if (Status s = CheckEvent(e, "--webhook"); !s.ok()) return Status::Invalid("--webhook: " + s.message(), "--webhook");
        t.hook.events.insert(e);
      }
      comma = next;
    }
    if (secret) t.secret = secret;
    if (Status s = AddTarget(&c, std::move(t), "--webhook "); !s.ok())
      return Status::Invalid("--webhook: " + s.message(), "--webhook");
  }
  if (c.notifier.public_url.empty()) c.notifier.public_url = public_url;
  while (!c.notifier.public_url.empty() && c.notifier.public_url.back() == '/') c.notifier.public_url.pop_back();
  return c;
}

}  // namespace gauntlet::app
