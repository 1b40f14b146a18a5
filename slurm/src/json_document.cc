#include "json_document.h"

#include <simdjson.h>

#include <bit>
#include <random>

#include "jobmon/common/valid_utf8.h"

namespace jobmon::slurm {
namespace {

using nlohmann::json;

json Convert(simdjson::dom::element value) {
  switch (value.type()) {
    case simdjson::dom::element_type::ARRAY: {
      json out = json::array();
      const simdjson::dom::array items = value.get_array().value_unsafe();
      for (simdjson::dom::element item : items) out.push_back(Convert(item));
      return out;
    }
    case simdjson::dom::element_type::OBJECT: {
      json out = json::object();
      const simdjson::dom::object fields = value.get_object().value_unsafe();
      for (simdjson::dom::key_value_pair field : fields)
        out[std::string(field.key)] = Convert(field.value);
      return out;
    }
    case simdjson::dom::element_type::INT64: {
      const int64_t n = value.get_int64().value_unsafe();
      return n >= 0 ? json(static_cast<uint64_t>(n)) : json(n);
    }
    case simdjson::dom::element_type::UINT64:
      return json(value.get_uint64().value_unsafe());
    case simdjson::dom::element_type::DOUBLE:
      return json(value.get_double().value_unsafe());
    case simdjson::dom::element_type::STRING:
      return json(std::string(value.get_string().value_unsafe()));
    case simdjson::dom::element_type::BOOL:
      return json(value.get_bool().value_unsafe());
    case simdjson::dom::element_type::NULL_VALUE:
      return json(nullptr);
  }
  return json(nullptr);
}

uint64_t Mix(uint64_t print, uint64_t value) {
  return (std::rotl(print, 23) ^ value) * 0x9e3779b97f4a7c15ULL;
}

// Each value's type and content, and each object's names, in order.
uint64_t Fingerprint(simdjson::dom::element value, uint64_t print) {
  const std::hash<std::string_view> text;
  switch (value.type()) {
    case simdjson::dom::element_type::ARRAY: {
      print = Mix(print, 1);
      const simdjson::dom::array items = value.get_array().value_unsafe();
      for (simdjson::dom::element item : items) print = Fingerprint(item, print);
      return Mix(print, 2);
    }
    case simdjson::dom::element_type::OBJECT: {
      print = Mix(print, 3);
      const simdjson::dom::object fields = value.get_object().value_unsafe();
      for (simdjson::dom::key_value_pair field : fields)
        print = Fingerprint(field.value, Mix(print, text(field.key)));
      return Mix(print, 4);
    }
    case simdjson::dom::element_type::INT64:
      return Mix(Mix(print, 5), static_cast<uint64_t>(value.get_int64().value_unsafe()));
    case simdjson::dom::element_type::UINT64:
      return Mix(Mix(print, 6), value.get_uint64().value_unsafe());
    case simdjson::dom::element_type::DOUBLE:
      return Mix(Mix(print, 7), std::bit_cast<uint64_t>(value.get_double().value_unsafe()));
    case simdjson::dom::element_type::STRING:
      return Mix(Mix(print, 8), text(value.get_string().value_unsafe()));
    case simdjson::dom::element_type::BOOL:
      return Mix(print, value.get_bool().value_unsafe() ? 9 : 10);
    case simdjson::dom::element_type::NULL_VALUE:
      return Mix(print, 11);
  }
  return Mix(print, 12);
}

// Only `fields` of each object in `list`; anything else as it is.
json ConvertList(simdjson::dom::element list, const KeptFields& kept) {
  if (!list.is_array()) return Convert(list);
  json out = json::array();
  const simdjson::dom::array items = list.get_array().value_unsafe();
  for (simdjson::dom::element item : items) {
    if (!item.is_object()) {
      out.push_back(Convert(item));
      if (kept.fingerprints) kept.fingerprints->push_back(0);
      continue;
    }
    const simdjson::dom::object all = item.get_object().value_unsafe();
    if (kept.fingerprints) {
      // Seeded per process: a job's name or paths, which its user chooses,
      // cannot be made to collide with another job's fields (its reading
      // would then stand for the other job, or hide it).
      static const uint64_t kSeed =
          (uint64_t{std::random_device{}()} << 32) | std::random_device{}();
      uint64_t print = kSeed;
      for (simdjson::dom::key_value_pair field : all) {
        if (kept.Keeps(field.key))
          print = Fingerprint(field.value, Mix(print, std::hash<std::string_view>{}(field.key)));
      }
      print |= 1;  // never 0
      kept.fingerprints->push_back(print);
      if (kept.known && kept.known(print)) {
        out.push_back(nullptr);
        continue;
      }
    }
    json object = json::object();
    for (simdjson::dom::key_value_pair field : all) {
      if (kept.Keeps(field.key)) object[std::string(field.key)] = Convert(field.value);
    }
    out.push_back(std::move(object));
  }
  return out;
}

// nlohmann's parser, keeping the same: the fallback for what simdjson
// refuses and nlohmann reads (an integer past 64 bits, nesting past 1024).
json ParseKeptSlowly(std::string_view text, const KeptFields& kept) {
  bool in_list = false;
  json::parser_callback_t keep = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event != json::parse_event_t::key) return true;
    // Depth 1: the top level's keys; 3: those of an object in one of its arrays.
    if (depth == 1) in_list = parsed == kept.list;
    if (depth != 3 || !in_list) return true;
    return kept.Keeps(parsed.get_ref<const std::string&>());
  };
  return json::parse(text, keep, /*allow_exceptions=*/false);
}

// simdjson reads SIMDJSON_PADDING bytes past the text's end: they are
// added to `text` itself (within its capacity, usually), not to a copy.
simdjson::error_code ParseInPlace(simdjson::dom::parser& parser, std::string& text,
                                  simdjson::dom::element& doc) {
  const size_t length = text.size();
  text.resize(length + simdjson::SIMDJSON_PADDING);
  simdjson::error_code error = parser.parse(text.data(), length, false).get(doc);
  text.resize(length);
  return error;
}

}  // namespace

json ParseKept(std::string& text, const KeptFields& kept) {
  if (kept.fingerprints) kept.fingerprints->clear();
  // Kept between answers: a fresh parser's buffers, as large as the
  // answer, cost more in page faults than its parse.
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::error_code error = ParseInPlace(parser, text, doc);
  if (error == simdjson::UTF8_ERROR) {
    text = ValidUtf8(text);
    error = ParseInPlace(parser, text, doc);
  }
  if (error != simdjson::SUCCESS) return ParseKeptSlowly(ValidUtf8(text), kept);
  if (!doc.is_object()) return Convert(doc);
  json out = json::object();
  const simdjson::dom::object members = doc.get_object().value_unsafe();
  for (simdjson::dom::key_value_pair member : members) {
    out[std::string(member.key)] =
        member.key == kept.list ? ConvertList(member.value, kept) : Convert(member.value);
  }
  return out;
}

}  // namespace jobmon::slurm
