#include "jobmon/common/slurm_pattern.h"

#include <algorithm>
#include <cctype>
#include <functional>

namespace jobmon::slurm_pattern {
namespace {

std::string Padded(uint64_t value, unsigned width) {
  std::string digits = std::to_string(value);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

// A letter's value for this job at this width; nullopt: not one of ours.
using Resolve = std::function<std::optional<std::string>(char letter, unsigned width)>;

// The job-level letters both readings share.
std::optional<std::string> JobLetter(char letter, unsigned width, const JobFields& job) {
  switch (letter) {
    case 'A':
      return Padded(job.array_job_id ? job.array_job_id : job.job_id, width);
    case 'a':
      return Padded(job.array_task_id.value_or(0), width);
    case 'b':
      return Padded(job.array_task_id.value_or(0) % 10, width);
    case 'j':
    case 'J':  // the batch script's: no ".step"
      return Padded(job.job_id, width);
    case 'u':
      return job.user;
    case 'x':
      return job.name;
    case 'N':
      if (job.batch_host.empty()) return std::nullopt;
      return job.batch_host;
    default:
      return std::nullopt;
  }
}

struct Unexpanded {
  std::string spec;  // as written: "%q", "%5q", "%" at the end
};

// Walks a pattern: `resolve` gives each %[width]letter its text; `keep`
// says what to do with one it cannot (false: stop with that spec).
Expected<std::string> Walk(const std::string& pattern, const Resolve& resolve, bool keep,
                           Unexpanded* unexpanded) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    if (i + 1 < pattern.size() && pattern[i + 1] == '%') {
      out += '%';
      ++i;
      continue;
    }
    size_t at = i + 1;
    unsigned width = 0;
    while (at < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[at]))) {
      width = std::min(width * 10 + static_cast<unsigned>(pattern[at] - '0'), 10u);
      ++at;
    }
    if (at >= pattern.size()) {  // a trailing "%" or "%5": Slurm drops it
      if (keep) break;
      unexpanded->spec = pattern.substr(i);
      return Error{""};
    }
    if (auto text = resolve(pattern[at], width)) {
      out += *text;
    } else if (keep) {
      out += pattern.substr(i, at - i + 1);
    } else {
      unexpanded->spec = pattern.substr(i, at - i + 1);
      return Error{""};
    }
    i = at;
  }
  return out;
}

// Walk without a fallback: the first specifier it cannot expand is the error.
Expected<std::string> Strict(const std::string& pattern, const Resolve& resolve,
                             const std::string& known) {
  Unexpanded unexpanded;
  auto out = Walk(pattern, resolve, false, &unexpanded);
  if (out) return out;
  const std::string& spec = unexpanded.spec;
  if (spec.size() == 1 || std::isdigit(static_cast<unsigned char>(spec.back())))
    return Error{"'" + pattern + "' ends in a lone " + spec};
  if (spec.back() == 'N' && known.find("%N") != std::string::npos)
    return Error{"'" + pattern + "': %N (the batch host) is not known for this job"};
  return Error{"'" + pattern + "': unknown pattern " + spec + " (known: " + known + ")"};
}

}  // namespace

std::string ExpandStdio(const std::string& pattern, const JobFields& job) {
  std::string out;
  if (pattern.find('\\') != std::string::npos) {
    std::copy_if(pattern.begin(), pattern.end(), std::back_inserter(out),
                 [](char c) { return c != '\\'; });
  } else {
    auto resolve = [&job](char letter, unsigned width) -> std::optional<std::string> {
      switch (letter) {
        case 't':  // the batch script is task 0 on node 0 of its job
        case 'n':
          return Padded(0, width);
        case 's':
          return "batch";
        default:
          return JobLetter(letter, width, job);
      }
    };
    out = *Walk(pattern, resolve, true, nullptr);
  }
  if (!out.starts_with('/')) out = job.work_dir + "/" + out;
  return out;
}

std::string StdoutPath(const std::string& pattern, const JobFields& job) {
  if (!pattern.empty()) return ExpandStdio(pattern, job);
  return ExpandStdio(job.array_task_id ? "slurm-%A_%a.out" : "slurm-%j.out", job);
}

std::string DirectoryOf(const std::string& path, const std::string& work_dir) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return work_dir;
  return slash == 0 ? "/" : path.substr(0, slash);
}

Expected<std::string> ExpandDiagDir(const std::string& pattern, const JobFields& job,
                                    const std::string& stdout_dir) {
  auto resolve = [&](char letter, unsigned width) -> std::optional<std::string> {
    if (letter == 'o') return stdout_dir;
    return JobLetter(letter, width, job);
  };
  return Strict(pattern, resolve, "%o %j %J %A %a %b %u %x %N %%");
}

Expected<std::string> ExpandLetters(const std::string& pattern,
                                    const std::map<char, std::string>& vars) {
  std::string known;
  for (const auto& [letter, value] : vars) known += std::string("%") + letter + " ";
  auto resolve = [&vars](char letter, unsigned width) -> std::optional<std::string> {
    auto it = vars.find(letter);
    if (it == vars.end() || width > 0) return std::nullopt;
    return it->second;
  };
  return Strict(pattern, resolve, known + "%%");
}

Expected<void> CheckDiagDirPattern(const std::string& pattern) {
  JobFields sample;
  sample.job_id = 1;
  sample.user = "user";
  sample.name = "job";
  sample.batch_host = "node";
  sample.work_dir = "/";
  auto expanded = ExpandDiagDir(pattern, sample, "/");
  if (!expanded) return expanded.error();
  return {};
}

}  // namespace jobmon::slurm_pattern
