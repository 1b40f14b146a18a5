#pragma once
// remote_write's credential and CA files. prometheus.yml names them
// (authorization.credentials_file, basic_auth.password_file,
// tls_config.ca_file: Prometheus re-reads them itself, so the secret is
// never copied into the diag dir). The job's Prometheus runs as the job's
// user, so it must be able to read them; what is checked is that nobody but
// root can change them and that they are not world-readable.

#include <sys/types.h>

#include <string>
#include <vector>

#include "jobmon/common/expected.h"
#include "lifecycle/plugin_config.h"

namespace jobmon::lifecycle {

// Pure: a credential file must be a regular file (not a symlink) owned by
// root, with no write bit for group or others and no bit at all for others
// (0600, or 0640 with a group of the users it serves). A CA certificate is
// public: only the ownership and write bits count.
enum class SecretKind { kCredential, kCertificate };
Expected<void> CheckSecretFileMode(const std::string& path, uid_t owner, mode_t mode,
                                   SecretKind kind);

// lstat + CheckSecretFileMode, then whether uid:gid (the user Prometheus
// runs as) can open it for reading.
Expected<void> CheckSecretFile(const std::string& path, SecretKind kind, uid_t uid, gid_t gid);

// Every file remote_write names, checked; the first problem, else ok.
Expected<void> CheckRemoteWriteFiles(const PluginConfig& config, uid_t uid, gid_t gid);

// `config` with "%u" in remote_write_user, remote_write_password_file and
// remote_write_bearer_file replaced by the job's user name (slurm_pattern::ExpandLetters:
// "%%" is a %, any other letter an error): one credential per user
// (remote_write_password_file=/etc/jobmon/remote-write/%u), which the
// store's proxy ties to that user's `user` label.
Expected<PluginConfig> WithUserCredentials(const PluginConfig& config, const std::string& user);

}  // namespace jobmon::lifecycle
