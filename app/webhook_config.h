// The daemon's webhook settings: `gauntlet serve --config FILE` (YAML or JSON) and repeated
// `--webhook URL[,EVENT...]`, validated into what the notifier and the sender need (docs/USER_GUIDE.md
// "Be told").
#pragma once
#include <string>
#include <vector>

#include "app/webhook_sender.h"
#include "core/status.h"
#include "daemon/notifier.h"

namespace gauntlet::app {

struct WebhookConfig {
  daemon::NotifierOptions notifier;
  SenderOptions sender;
};

// Reads `config_file` (empty: none) and adds each `--webhook` flag (URL, then events after commas;
// its secret is $GAUNTLET_WEBHOOK_SECRET). `public_url` is the links' base when the file sets none.
// Invalid names the file's field at fault (webhooks[1].events[0]) or the flag. Reads the file and
// the environment only.
Result<WebhookConfig> LoadWebhookConfig(const std::string& config_file, const std::vector<std::string>& flags,
                                        const std::string& public_url);

}  // namespace gauntlet::app
