#include "lifecycle/plugin_config.h"

#include <functional>
#include <map>

#include "jobmon/common/duration.h"
#include "jobmon/common/http_url.h"
#include "jobmon/common/private_ip.h"
#include "jobmon/common/whole_number.h"

namespace jobmon::lifecycle {
namespace {

using Setter = std::function<Expected<void>(PluginConfig&, const std::string&)>;

Expected<int> Integer(const std::string& value, int low, int high) {
  const std::optional<int> out = WholeNumber<int>(value);
  if (!out || *out < low || *out > high) {
    return Error{"expected an integer in " + std::to_string(low) + ".." + std::to_string(high)};
  }
  return *out;
}

Expected<bool> Switch(const std::string& value) {
  if (value == "on" || value == "yes" || value == "true" || value == "1") return true;
  if (value == "off" || value == "no" || value == "false" || value == "0") return false;
  return Error{"expected on or off"};
}

Expected<void> AbsolutePath(std::string& field, const std::string& value) {
  if (value.empty() || value.front() != '/') return Error{"expected an absolute path"};
  field = value;
  return {};
}

template <typename T, typename Fn>
Setter Parsed(Fn parse, T PluginConfig::*field) {
  return [parse, field](PluginConfig& config, const std::string& value) -> Expected<void> {
    auto parsed = parse(value);
    if (!parsed) return parsed.error();
    config.*field = *parsed;
    return {};
  };
}

Setter Path(std::string PluginConfig::*field) {
  return [field](PluginConfig& config, const std::string& value) {
    return AbsolutePath(config.*field, value);
  };
}

Setter Port(int PluginConfig::*field) {
  return Parsed<int>([](const std::string& v) { return Integer(v, 1024, 65000); }, field);
}

Setter Duration(std::chrono::milliseconds PluginConfig::*field, std::chrono::milliseconds low) {
  return [field, low](PluginConfig& config, const std::string& value) -> Expected<void> {
    auto parsed = ParseDuration(value);
    if (!parsed) return parsed.error();
    if (*parsed < low) return Error{"at least " + std::to_string(low.count()) + "ms"};
    config.*field = *parsed;
    return {};
  };
}

// Comma-separated CIDR blocks.
Setter CidrList(std::vector<Cidr> PluginConfig::*field) {
  return [field](PluginConfig& config, const std::string& value) -> Expected<void> {
    std::vector<Cidr> cidrs;
    size_t start = 0;
    while (start <= value.size()) {
      size_t comma = value.find(',', start);
      auto cidr =
          Cidr::Parse(value.substr(start, comma == value.npos ? value.npos : comma - start));
      if (!cidr) return cidr.error();
      cidrs.push_back(*cidr);
      if (comma == value.npos) break;
      start = comma + 1;
    }
    config.*field = std::move(cidrs);
    return {};
  };
}

const std::map<std::string, Setter>& Setters() {
  static const std::map<std::string, Setter> setters = {
      {"exporter", Path(&PluginConfig::exporter)},
      {"supervisor", Path(&PluginConfig::supervisor)},
      {"archiver", Path(&PluginConfig::archiver)},
      {"prometheus", Path(&PluginConfig::prometheus)},
      {"scontrol", Path(&PluginConfig::scontrol)},
      {"diag_dir",
       [](PluginConfig& c, const std::string& v) -> Expected<void> {
         if (v.empty()) return Error{"expected a path pattern"};
         c.diag_dir = v;
         return {};
       }},
      {"private_cidrs", CidrList(&PluginConfig::private_cidrs)},
      {"scrapers", CidrList(&PluginConfig::scrapers)},
      {"exporter_port", Port(&PluginConfig::exporter_port)},
      {"prometheus_port", Port(&PluginConfig::prometheus_port)},
      {"port_tries", Parsed<int>([](const std::string& v) { return Integer(v, 1, 1000); },
                                 &PluginConfig::port_tries)},
      {"scrape_interval",
       Duration(&PluginConfig::scrape_interval, std::chrono::milliseconds(1000))},
      {"service_user",
       [](PluginConfig& c, const std::string& v) -> Expected<void> {
         if (v.empty()) return Error{"expected a user name"};
         c.service_user = v;
         return {};
       }},
      {"archive", Parsed<bool>(Switch, &PluginConfig::archive)},
      {"compression", Parsed<int>([](const std::string& v) { return Integer(v, 1, 19); },
                                  &PluginConfig::compression_level)},
      {"keep_tsdb", Parsed<bool>(Switch, &PluginConfig::keep_tsdb)},
      {"default", Parsed<bool>(Switch, &PluginConfig::default_on)},
      {"remote_write",
       [](PluginConfig& c, const std::string& v) -> Expected<void> {
         if (!IsHttpUrl(v)) {
           return Error{"expected an http:// or https:// URL"};
         }
         // The URL goes into the job's manifest, which its user reads.
         if (UrlHasCredentials(v)) {
           return Error{
               "credentials do not belong in the URL (it is copied into every job's "
               "manifest); use remote_write_user with remote_write_password_file, or "
               "remote_write_bearer_file"};
         }
         c.remote_write = v;
         return {};
       }},
      {"tsdb_dir",
       [](PluginConfig& c, const std::string& v) -> Expected<void> {
         if (v.empty() || (v.front() != '/' && v.rfind("%d", 0) != 0)) {
           return Error{"expected an absolute path pattern"};
         }
         c.tsdb_dir = v;
         return {};
       }},
      {"tsdb_min_free_mb", Parsed<int>([](const std::string& v) { return Integer(v, 0, 1 << 30); },
                                       &PluginConfig::tsdb_min_free_mb)},
      {"cluster",
       [](PluginConfig& c, const std::string& v) -> Expected<void> {
         if (v.empty()) return Error{"expected a cluster name"};
         c.cluster = v;
         return {};
       }},
      {"remote_write_bearer_file", Path(&PluginConfig::remote_write_bearer_file)},
      {"remote_write_user",
       [](PluginConfig& c, const std::string& v) -> Expected<void> {
         if (v.empty()) return Error{"expected a user name"};
         c.remote_write_user = v;
         return {};
       }},
      {"remote_write_password_file", Path(&PluginConfig::remote_write_password_file)},
      {"remote_write_ca_file", Path(&PluginConfig::remote_write_ca_file)},
      {"rule_file",
       [](PluginConfig& c, const std::string& v) -> Expected<void> {
         // Prometheus reads rule_files entries as glob patterns: a name
         // with a metacharacter would match other files, or none.
         if (v.find_first_of("*?[\\") != std::string::npos) {
           return Error{"expected a file name without glob characters (*?[\\)"};
         }
         return AbsolutePath(c.rule_file, v);
       }},
      {"epilog_wait", Duration(&PluginConfig::epilog_wait, std::chrono::milliseconds(0))},
      {"run_dir", Path(&PluginConfig::run_dir)},
      {"ray_discovery",
       [](PluginConfig& c, const std::string& v) -> Expected<void> {
         if (v == "off") {
           c.ray_discovery.clear();
           return {};
         }
         return AbsolutePath(c.ray_discovery, v);
       }},
      {"tfevents_dir",
       [](PluginConfig& c, const std::string& v) -> Expected<void> {
         if (v.empty()) return Error{"expected a path pattern"};
         c.tfevents_dir = v;
         return {};
       }},
      {"exporter_arg",
       [](PluginConfig& c, const std::string& v) -> Expected<void> {
         if (v.rfind("--", 0) != 0) return Error{"expected an exporter flag like --sysfs=DIR"};
         for (const char* owned : {"--listen", "--host"}) {
           if (v.rfind(owned, 0) == 0) return Error{std::string(owned) + " is set by the plugin"};
         }
         c.exporter_args.push_back(v);
         return {};
       }},
      {"exporter_restarts", Parsed<int>([](const std::string& v) { return Integer(v, 0, 100); },
                                        &PluginConfig::exporter_restarts)},
  };
  return setters;
}

}  // namespace

std::vector<std::string> PluginConfigKeys() {
  std::vector<std::string> keys;
  for (const auto& [key, setter] : Setters()) keys.push_back(key);
  return keys;
}

Expected<PluginConfig> ParsePluginConfig(const std::vector<std::string>& args) {
  PluginConfig config;
  for (const std::string& arg : args) {
    size_t eq = arg.find('=');
    if (eq == std::string::npos) {
      return Error{"plugstack.conf argument '" + arg + "' is not key=value"};
    }
    std::string key = arg.substr(0, eq), value = arg.substr(eq + 1);
    auto it = Setters().find(key);
    if (it == Setters().end()) {
      std::string known;
      for (const auto& k : PluginConfigKeys()) known += " " + k;
      return Error{"unknown plugstack.conf argument '" + key + "' (known:" + known + ")"};
    }
    if (auto set = it->second(config, value); !set) {
      return Error{"plugstack.conf argument " + key + "=" + value + ": " + set.error().message};
    }
  }
  if (config.exporter_port + config.port_tries > 65535 ||
      config.prometheus_port + config.port_tries > 65535) {
    return Error{"port_tries reaches past port 65535"};
  }
  // Prometheus accepts one of the two per remote_write entry.
  if (!config.remote_write_bearer_file.empty() &&
      (!config.remote_write_user.empty() || !config.remote_write_password_file.empty())) {
    return Error{"remote_write_bearer_file and remote_write_user/password_file exclude each other"};
  }
  if (config.remote_write_user.empty() != config.remote_write_password_file.empty()) {
    return Error{"remote_write_user and remote_write_password_file go together"};
  }
  return config;
}

std::vector<std::string> ExporterAllowArgs(const PluginConfig& config, const IpAddress& listen) {
  if (listen.family != IpAddress::Family::kV4) return {};
  const std::vector<Cidr> blocks = !config.scrapers.empty()        ? config.scrapers
                                   : !config.private_cidrs.empty() ? config.private_cidrs
                                                                   : Rfc1918Cidrs();
  std::vector<std::string> args;
  for (const Cidr& cidr : blocks) {
    if (cidr.network.family == IpAddress::Family::kV4)
      args.insert(args.end(), {"--allow", cidr.ToString()});
  }
  return args;
}

}  // namespace jobmon::lifecycle
