#include "access/web_auth.h"

#include <crypt.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>

namespace jobmon::diagnose {

Expected<BasicAuth> MakeOneTimeCredentials(const std::string& user) {
  unsigned char bytes[24];
  for (size_t got = 0; got < sizeof bytes;) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{std::string("getrandom: ") + std::strerror(errno)};
    got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  BasicAuth auth{user, {}};
  for (unsigned char b : bytes) {
    auth.password += kHex[b >> 4];
    auth.password += kHex[b & 15];
  }
  return auth;
}

Expected<std::string> WebConfigYaml(const BasicAuth& auth) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  if (!crypt_gensalt_rn("$2b$", 4, nullptr, 0, salt, sizeof salt))
    return Error{std::string("crypt_gensalt: ") + std::strerror(errno)};
  crypt_data data{};
  const char* hash = crypt_rn(auth.password.c_str(), salt, &data, sizeof data);
  if (!hash || hash[0] == '*') return Error{"crypt: bcrypt is not available"};
  // The hash is [./A-Za-z0-9$] only: quoted, it is one YAML scalar.
  return "basic_auth_users:\n  " + auth.user + ": '" + std::string(hash) + "'\n";
}

}  // namespace jobmon::diagnose
