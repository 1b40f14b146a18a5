#include "jobmon/alerts/secrets.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

namespace jobmon::alerts {

Expected<Secrets> Secrets::Parse(std::string_view text, const std::string& path) {
  toml::table table;
  try {
    table = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    // The description, never the offending source text (it may be a secret).
    return Error{path + ": not valid TOML (line " + std::to_string(e.source().begin.line) + ")"};
  }
  Secrets secrets;
  for (const auto& [key, node] : table) {
    auto value = node.value<std::string>();
    if (!value) return Error{path + ": " + std::string(key.str()) + " must be a string"};
    secrets.values_[std::string(key.str())] = *value;
  }
  return secrets;
}

Expected<Secrets> Secrets::Load(const std::string& path) { return Load(path, geteuid()); }

Expected<Secrets> Secrets::Load(const std::string& path, uid_t owner) {
  if (path.empty()) return Secrets{};
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return Error{"secrets file " + path + ": " + std::strerror(errno)};
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Error{"secrets file " + path + ": not a regular file"};
  }
  if ((st.st_mode & 077) != 0) {
    close(fd);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Error{"secrets file " + path + " is readable by others (mode " + mode +
                 "): refused; chmod 0600 it"};
  }
  if (st.st_uid != owner) {
    close(fd);
    return Error{"secrets file " + path + " is not owned by the user reading it (uid " +
                 std::to_string(owner) + "; owner uid " + std::to_string(st.st_uid) + "): refused"};
  }
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  close(fd);
  return Parse(text, path);
}

std::optional<std::string> Secrets::Get(const std::string& name) const {
  std::string env = "JOBMON_SECRET_";
  for (char c : name) env += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (const char* value = std::getenv(env.c_str()); value && *value) return std::string(value);
  auto found = values_.find(name);
  if (found == values_.end() || found->second.empty()) return std::nullopt;
  return found->second;
}

std::string Secrets::Redact(std::string text) const {
  auto scrub = [&text](const std::string& name, const std::string& value) {
    if (value.size() < 4) return;  // too short to tell from ordinary text
    for (size_t at = text.find(value); at != std::string::npos; at = text.find(value, at)) {
      text.replace(at, value.size(), "<secret:" + name + ">");
    }
  };
  for (const auto& [name, value] : values_) scrub(name, value);
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string_view kv = *entry;
    if (!kv.starts_with("JOBMON_SECRET_")) continue;
    auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    scrub(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return text;
}

}  // namespace jobmon::alerts
