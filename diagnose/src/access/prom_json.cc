#include "jobmon/diagnose/prom_json.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>

#include "jobmon/common/text_lines.h"

namespace jobmon::diagnose {

namespace {

using nlohmann::json;

Expected<json> ParseObject(std::string_view text) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return Error{"not a JSON object"};
  return doc;
}

// The envelope every API answer shares: "status" success with "data", or
// an error with Prometheus's own words.
Expected<json> Data(std::string_view text) {
  auto doc = ParseObject(text);
  if (!doc) return Error{"Prometheus answer: " + doc.error().message};
  const json& d = *doc;
  auto status = d.find("status");
  if (status == d.end() || !status->is_string()) return Error{"Prometheus answer without a status"};
  if (*status != "success") {
    std::string type, message;
    if (auto t = d.find("errorType"); t != d.end() && t->is_string()) type = t->get<std::string>();
    if (auto e = d.find("error"); e != d.end() && e->is_string()) message = e->get<std::string>();
    if (message.empty()) message = "status " + status->dump();
    return Error{"Prometheus: " + (type.empty() ? message : type + ": " + message)};
  }
  auto data = d.find("data");
  if (data == d.end()) return Error{"Prometheus answer without data"};
  return *data;
}

Expected<MsRange> ParseMsRange(const json& object, const char* min_key, const char* max_key) {
  auto lo = object.find(min_key);
  auto hi = object.find(max_key);
  if (lo == object.end() || hi == object.end() || !lo->is_number_integer() ||
      !hi->is_number_integer())
    return Error{std::string("no integer ") + min_key + "/" + max_key};
  return MsRange{lo->get<int64_t>(), hi->get<int64_t>()};
}

}  // namespace

// ParseQueryResponse: prom_query_sax.cc.

Expected<std::vector<std::string>> ParseLabelValues(std::string_view text) {
  auto data = Data(text);
  if (!data) return data.error();
  if (!data->is_array()) return Error{"Prometheus answer: label values are not an array"};
  std::vector<std::string> out;
  for (const auto& v : *data) {
    if (!v.is_string()) return Error{"Prometheus answer: a label value is not a string"};
    out.push_back(v.get<std::string>());
  }
  return out;
}

Expected<BlockMeta> ParseBlockMeta(std::string_view text) {
  auto doc = ParseObject(text);
  if (!doc) return Error{"meta.json: " + doc.error().message};
  auto ulid = doc->find("ulid");
  if (ulid == doc->end() || !ulid->is_string()) return Error{"meta.json: no ulid"};
  auto range = ParseMsRange(*doc, "minTime", "maxTime");
  if (!range) return Error{"meta.json: " + range.error().message};
  if (range->max_ms < range->min_ms) return Error{"meta.json: maxTime before minTime"};
  return BlockMeta{ulid->get<std::string>(), *range};
}

Expected<std::optional<MsRange>> ParseTsdbHeadRange(std::string_view text) {
  auto data = Data(text);
  if (!data) return data.error();
  if (!data->is_object()) return Error{"status/tsdb: data is not an object"};
  auto head = data->find("headStats");
  if (head == data->end() || !head->is_object()) return Error{"status/tsdb: no headStats"};
  auto range = ParseMsRange(*head, "minTime", "maxTime");
  if (!range) return Error{"status/tsdb headStats: " + range.error().message};
  // An empty head: INT64_MAX..INT64_MIN on a new TSDB, or, once blocks are
  // loaded, both at the last block's end with no series.
  if (range->max_ms < range->min_ms) return std::optional<MsRange>();
  if (auto series = head->find("numSeries");
      series != head->end() && series->is_number_integer() && series->get<int64_t>() == 0)
    return std::optional<MsRange>();
  return std::optional<MsRange>(*range);
}

std::optional<MsRange> ParseTsdbTimesFromMetrics(std::string_view text) {
  std::optional<double> lowest, head_max;
  for (std::string_view line : TextLines(text)) {
    size_t space = line.find(' ');
    if (space == std::string_view::npos) continue;
    std::string_view name = line.substr(0, space);
    std::optional<double>* slot = name == "prometheus_tsdb_lowest_timestamp" ? &lowest
                                  : name == "prometheus_tsdb_head_max_time"  ? &head_max
                                                                             : nullptr;
    if (!slot) continue;
    std::string value(line.substr(space + 1));
    value = value.substr(0, value.find(' '));  // a timestamp may follow
    char* parsed_end = nullptr;
    double v = std::strtod(value.c_str(), &parsed_end);
    if (parsed_end == value.c_str() || *parsed_end != '\0' || !std::isfinite(v)) continue;
    *slot = v;
  }
  // Beyond int64 (an empty TSDB's sentinels are at its ends): no range.
  constexpr double kLimit = 9.2e18;
  if (!lowest || !head_max || *head_max < *lowest || *lowest < -kLimit || *head_max > kLimit)
    return std::nullopt;
  return MsRange{static_cast<int64_t>(*lowest), static_cast<int64_t>(*head_max)};
}

Expected<std::optional<std::string>> ParseStatusFlag(std::string_view text, std::string_view flag) {
  auto data = Data(text);
  if (!data) return data.error();
  if (!data->is_object()) return Error{"status/flags: data is not an object"};
  auto value = data->find(std::string(flag));
  if (value == data->end() || !value->is_string()) return std::optional<std::string>();
  return std::optional<std::string>(value->get<std::string>());
}

}  // namespace jobmon::diagnose
