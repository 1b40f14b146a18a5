#pragma once
// Store mode's I/O half: asks the central store (store_query.h builds the
// query, groups the answer) through diagnose's PromHttpSource (libcurl via
// common/http_client), with the store's credentials when configured.

#include <cstdint>
#include <string>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/monitor/store_query.h"

namespace jobmon::monitor {

struct StoreAccess {
  std::string url;      // "http://127.0.0.1:8428"
  std::string cluster;  // the `cluster` label to match; empty: any
  double timeout_seconds = 10;
  std::string bearer_token;  // resolved secrets, never logged
  std::string basic_user, basic_password;
};

// Raw samples of `families` for the jobs of `scopes` over the
// `range_seconds` before `now`, each job's only within its scope
// (GroupStoreSeries). Errors name the store's URL, never a credential.
Expected<StoreScrapes> FetchStoreScrapes(const StoreAccess& access, const StoreScopes& scopes,
                                         double range_seconds, double now, StoreFamilies families);

}  // namespace jobmon::monitor
