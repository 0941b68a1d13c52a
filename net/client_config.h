// Where a client of the daemon connects and how it authenticates (the CLI's subcommands, the Slurm
// launcher): flags, the environment, then the config file. Plain values and the environment only.
#pragma once
#include <string>

namespace gauntlet::net {

// Where the daemon is and how to authenticate; a plain value, copied freely.
struct Conn {
  std::string server;  // --server, GAUNTLET_SERVER, the config file, or http://127.0.0.1:8080
  std::string token;   // --token, GAUNTLET_TOKEN, the config file
  std::string ca_file; // --ca-file, GAUNTLET_CA_FILE, the config file: CAs trusted for https:// ("" : the system's)
  double timeout_s = 0;  // --timeout, GAUNTLET_TIMEOUT: how long one call may take (0 until resolved: 30)
};

// The config file: $GAUNTLET_CONFIG, else $XDG_CONFIG_HOME/gauntlet/config, else
// ~/.config/gauntlet/config; "" when none of those variables is set. Lines are `key = value` (server,
// token); '#' starts a comment. Reads only the environment.
std::string ConfigPath();

// Fills *c's unset fields from the environment, then the config file, then defaults, and normalizes
// the server to a URL without a trailing '/'. Flags win over the environment, which wins over the
// file, so a one-off `--server` never needs the file edited. Reads the environment and the file only,
// and sets the process-wide default CA file (SetDefaultCaFile) to c->ca_file.
void Resolve(Conn* c);

}  // namespace gauntlet::net
