#pragma once
// Slurm's large JSON answers read fast: simdjson parses the text, and only
// the fields the readers use become an nlohmann::json document, so the
// shapes in json_fields.h stay the one place that reads a field. A
// 10,000-job `squeue --json` answer (28 MiB, over a hundred fields a job)
// took most of the monitor's cycle through nlohmann's parser alone.

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>

namespace jobmon::slurm {

// What of a document to keep: every top-level member whole, except the
// array `list` (e.g. "jobs"), whose objects keep only `fields`.
struct KeptFields {
  std::string_view list;
  const std::set<std::string, std::less<>>* fields;
};

// The document with what `kept` says, numbers typed as nlohmann types them
// (a non-negative integer unsigned); a discarded json when `text` is not
// JSON. Invalid UTF-8 in `text` (a job's name, comment or path) is read as
// U+FFFD: it would otherwise reject the whole answer and leave every job
// unfollowed.
nlohmann::json ParseKept(std::string text, const KeptFields& kept);

}  // namespace jobmon::slurm
