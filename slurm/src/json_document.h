#pragma once
// Slurm's large JSON answers read fast: simdjson parses the text, and only
// the fields the readers use become an nlohmann::json document, so the
// shapes in json_fields.h stay the one place that reads a field. A
// 10,000-job `squeue --json` answer (28 MiB, over a hundred fields a job)
// took most of the monitor's cycle through nlohmann's parser alone.

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace jobmon::slurm {

// What of a document to keep: every top-level member whole, except the
// array `list` (e.g. "jobs"), whose objects keep only `fields`.
struct KeptFields {
  KeptFields(std::string_view list_name, const std::set<std::string, std::less<>>* kept_fields,
             std::vector<uint64_t>* prints = nullptr, std::function<bool(uint64_t)> is_known = {})
      : list(list_name),
        fingerprints(prints),
        known(std::move(is_known)),
        fields(kept_fields->begin(), kept_fields->end()) {}

  // Whether a field of a list's object is kept: asked of every field of
  // every job (a hundred each), where the ordered set's compares were a
  // fortieth of a 10,000-job monitor's cycle.
  bool Keeps(std::string_view field) const { return fields.count(field) > 0; }

  std::string_view list;
  // With `fingerprints`: each object of `list` gets a fingerprint of its
  // kept fields (names and values; never 0, which marks an item that is no
  // object), in the list's order. An object whose fingerprint `known` says
  // the caller has read already is kept as null, not converted: most of an
  // answer is as it was a poll ago. Left empty when the text took the
  // slow parser.
  std::vector<uint64_t>* fingerprints;
  std::function<bool(uint64_t)> known;
  // Views of the kept names: the set they came from outlives this.
  std::unordered_set<std::string_view> fields;
};

// The document with what `kept` says, numbers typed as nlohmann types them
// (a non-negative integer unsigned); a discarded json when `text` is not
// JSON. Invalid UTF-8 in `text` (a job's name, comment or path) is read as
// U+FFFD: it would otherwise reject the whole answer and leave every job
// unfollowed. `text` is read in place (simdjson's padding goes into its
// capacity) and left as it was, or with its invalid UTF-8 replaced.
nlohmann::json ParseKept(std::string& text, const KeptFields& kept);

}  // namespace jobmon::slurm
