#pragma once
// The read-only Prometheus a diagnosis starts listens on loopback, where
// every local user can reach it for as long as it runs: it serves a job's
// metrics to whoever holds the one-time password made here (Prometheus's
// --web.config.file, basic_auth_users with a bcrypt hash, the scheme it
// documents), which only the diagnosis that started it knows.

#include <string>

#include "access/session_support.h"
#include "jobmon/common/expected.h"

namespace jobmon::diagnose {

// A random user name's password (getrandom, 192 bits, hex) for `user`.
Expected<BasicAuth> MakeOneTimeCredentials(const std::string& user = "jobmon");

// The web config's text: `user` with the bcrypt hash of `password`
// (libcrypt's $2b$, cost 4: the password is random, so the cost buys
// nothing and every query pays it).
Expected<std::string> WebConfigYaml(const BasicAuth& auth);

}  // namespace jobmon::diagnose
