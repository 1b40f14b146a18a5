#include "jobmon/diagnose/prom_json.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>

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

std::optional<double> ParseValue(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (!v.is_string()) return std::nullopt;
  const auto& s = v.get_ref<const std::string&>();
  if (s == "+Inf" || s == "Inf") return std::numeric_limits<double>::infinity();
  if (s == "-Inf") return -std::numeric_limits<double>::infinity();
  if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  double out = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return out;
}

// [<unix time>, "<value>"]; false when malformed. A NaN is left out.
Expected<bool> AppendSample(const json& pair, std::vector<Sample>& out) {
  if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number())
    return Error{"Prometheus answer: a sample is not [time, value]"};
  auto value = ParseValue(pair[1]);
  if (!value) return Error{"Prometheus answer: a sample value is not a number: " + pair[1].dump()};
  if (std::isnan(*value)) return false;
  out.push_back(Sample{pair[0].get<double>(), *value});
  return true;
}

Expected<Labels> ParseLabels(const json& metric) {
  Labels labels;
  if (!metric.is_object()) return Error{"Prometheus answer: a series' metric is not an object"};
  for (const auto& [name, value] : metric.items()) {
    if (!value.is_string()) return Error{"Prometheus answer: label " + name + " is not a string"};
    labels.emplace(name, value.get<std::string>());
  }
  return labels;
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

Expected<std::vector<Series>> ParseQueryResponse(std::string_view text) {
  auto data = Data(text);
  if (!data) return data.error();
  const json& d = *data;
  if (!d.is_object()) return Error{"Prometheus answer: data is not an object"};
  auto type = d.find("resultType");
  auto result = d.find("result");
  if (type == d.end() || !type->is_string() || result == d.end())
    return Error{"Prometheus answer without resultType/result"};
  std::vector<Series> out;
  if (*type == "scalar") {
    Series series;
    auto added = AppendSample(*result, series.samples);
    if (!added) return added.error();
    out.push_back(std::move(series));
    return out;
  }
  if (*type != "matrix" && *type != "vector")
    return Error{"Prometheus answer: a " + type->get<std::string>() + ", not series"};
  if (!result->is_array()) return Error{"Prometheus answer: result is not an array"};
  const bool matrix = *type == "matrix";
  for (const auto& item : *result) {
    if (!item.is_object()) return Error{"Prometheus answer: a series is not an object"};
    Series series;
    if (auto metric = item.find("metric"); metric != item.end()) {
      auto labels = ParseLabels(*metric);
      if (!labels) return labels.error();
      series.labels = std::move(*labels);
    }
    if (matrix) {
      auto values = item.find("values");
      if (values == item.end() || !values->is_array())
        return Error{"Prometheus answer: a matrix series without values"};
      for (const auto& pair : *values) {
        auto added = AppendSample(pair, series.samples);
        if (!added) return added.error();
      }
    } else {
      auto value = item.find("value");
      if (value == item.end()) return Error{"Prometheus answer: a vector series without a value"};
      auto added = AppendSample(*value, series.samples);
      if (!added) return added.error();
    }
    out.push_back(std::move(series));
  }
  return out;
}

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
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
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
