#pragma once
// Text a job's user controls (a job name, a host, a label, a log line)
// printed to an admin's terminal: `jobmon list`, `jobmon status`, the
// Markdown report of `jobmon diagnose`. A control character there is an
// instruction to the terminal (ESC and 8-bit CSI 0x9b start escape
// sequences that move the cursor, rewrite the title or hide text; BEL
// rings), so every C0 and C1 control and DEL becomes U+FFFD, and invalid
// UTF-8 too (a lone 0x9b byte is CSI to an 8-bit terminal).

#include <string>
#include <string_view>

namespace jobmon {

// One line: every control but the tab replaced, newlines included.
std::string TerminalText(std::string_view text);

// Lines: as TerminalText, but newlines are kept.
std::string TerminalLines(std::string_view text);

}  // namespace jobmon
