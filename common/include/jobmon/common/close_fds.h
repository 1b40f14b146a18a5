#pragma once
// Closing what a child must not take across exec: the forked child of a
// process that holds sockets (libcurl's connections, the daemon's API
// socket) inherits every descriptor not marked close-on-exec. Both places
// that start a program (run_command.cc, daemon.cc) close the rest here.

namespace jobmon {

// Closes every descriptor from `first` up except those in `keep`
// (ascending, -1 for none, each >= first). Async-signal-safe: for the
// child between fork and exec.
void CloseFdsFrom(int first, const int (&keep)[2]);

}  // namespace jobmon
