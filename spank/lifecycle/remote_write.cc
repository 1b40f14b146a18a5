#include "lifecycle/remote_write.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "jobmon/common/fs_identity.h"
#include "jobmon/common/unique_fd.h"
#include "lifecycle/diag_paths.h"

namespace jobmon::lifecycle {

Expected<void> CheckSecretFileMode(const std::string& path, uid_t owner, mode_t mode,
                                   SecretKind kind) {
  if (!S_ISREG(mode)) return Error{path + ": not a regular file"};
  if (owner != 0) return Error{path + ": not owned by root"};
  if ((mode & (S_IWGRP | S_IWOTH)) != 0) return Error{path + ": writable by group or others"};
  if (kind == SecretKind::kCredential && (mode & S_IRWXO) != 0) {
    char octal[8];
    snprintf(octal, sizeof octal, "%04o", static_cast<unsigned>(mode & 07777));
    return Error{path + ": mode " + octal + " lets every user read it (use 0600 or 0640)"};
  }
  return {};
}

Expected<void> CheckSecretFile(const std::string& path, SecretKind kind, uid_t uid, gid_t gid) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return Error{path + ": " + std::strerror(errno)};
  if (auto mode = CheckSecretFileMode(path, st.st_uid, st.st_mode, kind); !mode) return mode;
  FsIdentity as_user(uid, gid);
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    return Error{path + ": the user Prometheus runs as (uid " + std::to_string(uid) +
                 ") cannot read it: " + std::strerror(errno)};
  }
  return {};
}

Expected<void> CheckRemoteWriteFiles(const PluginConfig& config, uid_t uid, gid_t gid) {
  const std::pair<const std::string*, SecretKind> files[] = {
      {&config.remote_write_bearer_file, SecretKind::kCredential},
      {&config.remote_write_password_file, SecretKind::kCredential},
      {&config.remote_write_ca_file, SecretKind::kCertificate},
  };
  for (auto [path, kind] : files) {
    if (path->empty()) continue;
    if (auto checked = CheckSecretFile(*path, kind, uid, gid); !checked) return checked;
  }
  return {};
}

Expected<PluginConfig> WithUserCredentials(const PluginConfig& config, const std::string& user) {
  PluginConfig out = config;
  for (std::string* field :
       {&out.remote_write_user, &out.remote_write_password_file, &out.remote_write_bearer_file}) {
    auto expanded = slurm_pattern::ExpandLetters(*field, {{'u', user}});
    if (!expanded) return expanded.error();
    *field = std::move(expanded.value());
  }
  return out;
}

}  // namespace jobmon::lifecycle
