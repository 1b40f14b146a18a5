#pragma once
// `jobmon list`'s text: one row per job of a jobmon.list/v1 answer
// (monitor::api::ListRow), in columns.

#include <nlohmann/json.hpp>
#include <string>

namespace jobmon::cli {

// One row, newline-terminated (pure, for tests).
std::string ListLine(const nlohmann::json& row);

}  // namespace jobmon::cli
