#include "jobmon/monitor/store_client.h"

#include "jobmon/diagnose/prom_http.h"

namespace jobmon::monitor {

Expected<StoreScrapes> FetchStoreScrapes(const StoreAccess& access, const StoreScopes& scopes,
                                         double range_seconds, double now, StoreFamilies families) {
  if (scopes.empty()) return StoreScrapes{};
  std::vector<uint32_t> job_ids;
  for (const auto& [id, scope] : scopes) job_ids.push_back(id);
  diagnose::PromHttpOptions options;
  options.timeout_seconds = access.timeout_seconds;
  options.connect_timeout_seconds = access.timeout_seconds;
  options.max_body = size_t{256} << 20;  // a back-fill of many jobs over the whole window
  options.bearer_token = access.bearer_token;
  options.basic_user = access.basic_user;
  options.basic_password = access.basic_password;
  // VictoriaMetrics's response cache would hold back the newest samples.
  options.extra_query = "nocache=1";
  diagnose::PromHttpSource store(access.url, options);
  auto series =
      store.QueryInstant(StoreEvidenceQuery(job_ids, access.cluster, range_seconds, families), now);
  if (!series) return Error{"central store " + series.error().message};
  return GroupStoreSeries(*series, {}, &scopes);
}

}  // namespace jobmon::monitor
