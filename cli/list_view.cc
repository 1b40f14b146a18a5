#include "list_view.h"

#include <fmt/format.h>

#include "jobmon/common/terminal_text.h"

namespace jobmon::cli {

using nlohmann::json;

std::string ListLine(const json& r) {
  // A job's name and user, its incident's text: a job's user's, printed
  // to an admin's terminal; no control character of theirs goes through.
  const auto T = [](const json& field) { return TerminalText(field.get<std::string>()); };
  return fmt::format(
      "{:<8} {:<20} {:<10} {:<9} {:<11} {:<9} {:>9}  {}\n", r["job_id"].get<uint32_t>(),
      T(r["name"]).substr(0, 20), T(r["user"]).substr(0, 10), T(r["source"]), T(r["slurm_state"]),
      r["ended"].get<bool>() ? "ended" : (r["phase"].is_null() ? "-" : T(r["phase"])),
      r["last_step"].is_null() ? "-" : std::to_string(r["last_step"].get<int64_t>()),
      r["open_incident"].is_null()
          ? (r["final_class"].get<std::string>().empty() ? "-" : "ended: " + T(r["final_class"]))
          : T(r["open_incident"]));
}

}  // namespace jobmon::cli
