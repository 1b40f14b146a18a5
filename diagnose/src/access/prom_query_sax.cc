// ParseQueryResponse as a SAX pass: the answer's series and samples are
// built as the text is read, without a JSON document in between. A DOM of
// a store's answer (hundreds of thousands of series, each point an array of
// a number and a string) was most of the monitor's store-mode CPU, in
// allocations alone.
#include <cmath>
#include <nlohmann/json.hpp>

#include "jobmon/common/prom_value.h"
#include "jobmon/diagnose/prom_json.h"

namespace jobmon::diagnose {

namespace {

using nlohmann::json;

// Where a value sits in {"status":..,"data":{"resultType":..,"result":[..]}}.
enum class Where { kRoot, kData, kResult, kSeries, kMetric, kValues, kPair, kSkip };

struct Frame {
  Where where;
  std::string key;  // objects: the key of the value being read
  int items = 0;    // arrays: values read so far
};

// A [time, value] pair as read.
struct Pair {
  int items = 0;
  std::optional<double> time;
  std::optional<std::string> text;
  std::optional<double> number;
};

struct SeriesBuild {
  Series series;
  std::vector<Sample> single;  // from "value" (a vector)
  bool has_values = false, has_value = false;
};

class QuerySax {
 public:
  // nlohmann::json_sax interface.
  bool null() { return Scalar(std::nullopt, nullptr); }
  bool boolean(bool) { return Scalar(std::nullopt, nullptr); }
  bool number_integer(json::number_integer_t v) { return Scalar(static_cast<double>(v), nullptr); }
  bool number_unsigned(json::number_unsigned_t v) {
    return Scalar(static_cast<double>(v), nullptr);
  }
  bool number_float(json::number_float_t v, const std::string&) { return Scalar(v, nullptr); }
  bool string(std::string& s) { return Scalar(std::nullopt, &s); }
  bool binary(json::binary_t&) { return Scalar(std::nullopt, nullptr); }
  bool start_object(std::size_t) { return Open(true); }
  bool key(std::string& k) {
    stack_.back().key = k;
    return true;
  }
  bool end_object() { return Close(); }
  bool start_array(std::size_t) { return Open(false); }
  bool end_array() { return Close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    if (!error_) error_ = "Prometheus answer: not a JSON object";
    return false;
  }

  Expected<std::vector<Series>> Finish() {
    // An error answer's own words come first: the rest of it is not series.
    if (status_ && *status_ != "success") {
      std::string message = message_.value_or("");
      if (message.empty()) message = "status " + json(*status_).dump();
      const std::string type = error_type_.value_or("");
      return Error{"Prometheus: " + (type.empty() ? message : type + ": " + message)};
    }
    if (error_) return Error{*error_};
    if (!root_seen_) return Error{"Prometheus answer: not a JSON object"};
    if (!status_) return Error{"Prometheus answer without a status"};
    if (!data_seen_) return Error{"Prometheus answer without data"};
    if (!data_is_object_) return Error{"Prometheus answer: data is not an object"};
    if (!result_type_ || !result_seen_) return Error{"Prometheus answer without resultType/result"};
    std::vector<Series> out;
    if (*result_type_ == "scalar") {
      if (!result_is_array_ || !result_series_.empty())
        return Error{"Prometheus answer: a sample is not [time, value]"};
      Series series;
      auto added = Append(result_pair_, series.samples);
      if (!added) return added.error();
      out.push_back(std::move(series));
      return out;
    }
    if (*result_type_ != "matrix" && *result_type_ != "vector")
      return Error{"Prometheus answer: a " + *result_type_ + ", not series"};
    if (!result_is_array_) return Error{"Prometheus answer: result is not an array"};
    if (result_pair_.items > 0) return Error{"Prometheus answer: a series is not an object"};
    const bool matrix = *result_type_ == "matrix";
    out.reserve(result_series_.size());
    for (SeriesBuild& b : result_series_) {
      if (matrix && !b.has_values)
        return Error{"Prometheus answer: a matrix series without values"};
      if (!matrix && !b.has_value)
        return Error{"Prometheus answer: a vector series without a value"};
      if (!matrix) b.series.samples = std::move(b.single);
      out.push_back(std::move(b.series));
    }
    return out;
  }

 private:
  bool Fail(std::string message) {
    if (!error_) error_ = std::move(message);
    return false;
  }

  // What a value that starts here is, from its parent and the parent's key.
  Where RoleOfNext(bool is_object, bool is_array) {
    if (stack_.empty()) return Where::kRoot;
    Frame& parent = stack_.back();
    switch (parent.where) {
      case Where::kRoot:
        if (parent.key == "data") {
          data_seen_ = true;
          data_is_object_ = is_object;
          return is_object ? Where::kData : Where::kSkip;
        }
        return Where::kSkip;
      case Where::kData:
        if (parent.key == "result") {
          result_seen_ = true;
          result_is_array_ = is_array;
          return is_array ? Where::kResult : Where::kSkip;
        }
        return Where::kSkip;
      case Where::kResult:
        return is_object ? Where::kSeries : Where::kSkip;
      case Where::kSeries:
        if (parent.key == "metric") return Where::kMetric;
        if (parent.key == "values") return Where::kValues;
        if (parent.key == "value") return Where::kPair;
        return Where::kSkip;
      case Where::kValues:
        return Where::kPair;
      case Where::kMetric:
      case Where::kPair:
      case Where::kSkip:
        return Where::kSkip;
    }
    return Where::kSkip;
  }

  bool Open(bool is_object) {
    const Where role = RoleOfNext(is_object, !is_object);
    if (stack_.empty()) {
      if (!is_object) return Fail("Prometheus answer: not a JSON object");
      root_seen_ = true;
    } else {
      Frame& parent = stack_.back();
      ++parent.items;
      if (parent.where == Where::kResult && !is_object)
        return Fail("Prometheus answer: a series is not an object");
      if (parent.where == Where::kSeries) {
        if (parent.key == "metric" && !is_object)
          return Fail("Prometheus answer: a series' metric is not an object");
        if (parent.key == "values" && is_object)
          return Fail("Prometheus answer: a matrix series without values");
        if (parent.key == "value" && is_object)
          return Fail("Prometheus answer: a sample is not [time, value]");
      }
      if (parent.where == Where::kValues && is_object)
        return Fail("Prometheus answer: a sample is not [time, value]");
      if (parent.where == Where::kMetric)
        return Fail("Prometheus answer: label " + parent.key + " is not a string");
      if (parent.where == Where::kPair)
        return Fail("Prometheus answer: a sample is not [time, value]");
    }
    if (role == Where::kSeries) {
      result_series_.emplace_back();
    } else if (role == Where::kPair) {
      pair_ = Pair{};
    } else if (role == Where::kValues) {
      result_series_.back().has_values = true;
    }
    stack_.push_back(Frame{role, {}, 0});
    return true;
  }

  bool Close() {
    const Frame frame = std::move(stack_.back());
    stack_.pop_back();
    if (frame.where != Where::kPair) return true;
    // A pair ends: a series' "value" or one of its "values".
    SeriesBuild& b = result_series_.back();
    const bool single = stack_.back().where == Where::kSeries;
    if (single) b.has_value = true;
    auto added = Append(pair_, single ? b.single : b.series.samples);
    if (!added) return Fail(added.error().message);
    return true;
  }

  // A scalar value, where it sits.
  bool Scalar(std::optional<double> number, std::string* text) {
    if (stack_.empty()) return Fail("Prometheus answer: not a JSON object");
    Frame& parent = stack_.back();
    ++parent.items;
    switch (parent.where) {
      case Where::kRoot:
        if (parent.key == "status") {
          if (!text) return Fail("Prometheus answer without a status");
          status_ = *text;
        } else if (parent.key == "error" && text) {
          message_ = *text;
        } else if (parent.key == "errorType" && text) {
          error_type_ = *text;
        } else if (parent.key == "data") {
          data_seen_ = true;
          data_is_object_ = false;
        }
        return true;
      case Where::kData:
        if (parent.key == "resultType" && text) result_type_ = *text;
        if (parent.key == "result") {
          result_seen_ = true;
          result_is_array_ = false;
        }
        return true;
      case Where::kResult:
        // A scalar's result is itself the pair; a series must be an object
        // (decided in Finish, once resultType is known).
        AddToPair(result_pair_, number, text);
        return true;
      case Where::kSeries:
        if (parent.key == "metric")
          return Fail("Prometheus answer: a series' metric is not an object");
        if (parent.key == "values")
          return Fail("Prometheus answer: a matrix series without values");
        if (parent.key == "value") return Fail("Prometheus answer: a sample is not [time, value]");
        return true;
      case Where::kMetric:
        if (!text) return Fail("Prometheus answer: label " + parent.key + " is not a string");
        result_series_.back().series.labels.emplace(parent.key, std::move(*text));
        return true;
      case Where::kValues:
        return Fail("Prometheus answer: a sample is not [time, value]");
      case Where::kPair:
        AddToPair(pair_, number, text);
        return true;
      case Where::kSkip:
        return true;
    }
    return true;
  }

  static void AddToPair(Pair& pair, std::optional<double> number, std::string* text) {
    if (pair.items == 0) {
      pair.time = number;
    } else if (pair.items == 1) {
      pair.number = number;
      if (text) pair.text = *text;
    }
    ++pair.items;
  }

  // [<unix time>, "<value>"]: false (nothing added) for a NaN.
  static Expected<bool> Append(const Pair& pair, std::vector<Sample>& out) {
    if (pair.items != 2 || !pair.time || (!pair.number && !pair.text))
      return Error{"Prometheus answer: a sample is not [time, value]"};
    std::optional<double> value = pair.number;
    if (!value) value = ParsePromValue(*pair.text);
    if (!value)
      return Error{"Prometheus answer: a sample value is not a number: " + json(*pair.text).dump()};
    if (std::isnan(*value)) return false;
    out.push_back(Sample{*pair.time, *value});
    return true;
  }

  std::vector<Frame> stack_;
  std::optional<std::string> error_;
  bool root_seen_ = false, data_seen_ = false, data_is_object_ = false;
  bool result_seen_ = false, result_is_array_ = false;
  std::optional<std::string> status_, message_, error_type_, result_type_;
  std::vector<SeriesBuild> result_series_;
  Pair pair_, result_pair_;
};

}  // namespace

Expected<std::vector<Series>> ParseQueryResponse(std::string_view text) {
  QuerySax sax;
  json::sax_parse(text.begin(), text.end(), &sax, json::input_format_t::json, /*strict=*/true);
  return sax.Finish();
}

}  // namespace jobmon::diagnose
