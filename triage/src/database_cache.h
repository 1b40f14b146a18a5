#pragma once
// The compiled signature database, kept between runs: compiling it is most
// of a `jobmon triage` of a small log (0.4 s of 0.42 s), so it is compiled
// once per pattern set, Hyperscan release and machine, serialized
// (hs_serialize_database) into the user's cache dir and loaded from there
// (hs_deserialize_database checks the release and the machine's platform;
// a file that does not load is compiled again and replaced).
//
// The cache dir is the user's own: $JOBMON_CACHE_DIR, else
// $XDG_CACHE_HOME/jobmon, else $HOME/.cache/jobmon ("off" or no HOME: no
// cache). A file is used only when it and its dir belong to the caller and
// nobody else may write them, and only when the pattern set stored in it is
// the one asked for, byte for byte; at most kKeptDatabases are kept.

#include <hs/hs.h>

#include <cstddef>
#include <string>

namespace jobmon::triage {

inline constexpr size_t kKeptDatabases = 16;

// The cache dir, or "" for none.
std::string DatabaseCacheDir();

// `key` names the pattern set (every expression, flag and id, and
// hs_version()). A database it loads is the caller's to free; nullptr: not
// cached (or not loadable).
hs_database_t* LoadCachedDatabase(const std::string& dir, const std::string& key);
// Best effort: a cache that cannot be written costs the next run a compile.
void StoreCachedDatabase(const std::string& dir, const std::string& key, const hs_database_t* db);

}  // namespace jobmon::triage
