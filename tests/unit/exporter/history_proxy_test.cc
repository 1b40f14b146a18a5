// The head node's exporter forwards the job_history range query, and only
// it, to its job's loopback Prometheus (exporter/include/jobmon/exporter/history_proxy.h).

#include "jobmon/exporter/history_proxy.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "jobmon/common/job_history.h"

namespace jobmon::exporter {
namespace {

SocketAddress Loopback(uint16_t port) {
  return ParseSocketAddress("127.0.0.1:" + std::to_string(port)).value();
}

TEST(HistoryProxy, ForwardsTheCheckedQueryRebuiltToTheJobsPrometheus) {
  std::vector<HttpRequest> forwarded;
  auto proxy = HistoryProxy::Make(Loopback(9190), [&](const HttpRequest& request) {
    forwarded.push_back(request);
    return HttpResponse{
        200, R"({"status":"success","data":{"resultType":"matrix","result":[]}})", "", {}};
  });
  ASSERT_TRUE(proxy);
  HttpAnswer answer = proxy->Answer(R"({__name__=~"up|hw_gpu_power_watts"})", "100", "700", "15");
  EXPECT_EQ(answer.status, 200);
  EXPECT_NE(answer.body.find("matrix"), std::string::npos);
  ASSERT_EQ(forwarded.size(), 1u);
  EXPECT_EQ(forwarded[0].url,
            "http://127.0.0.1:9190/api/v1/query_range?query=%7B__name__%3D~%22up%7Chw_gpu_power_"
            "watts%22%7D&start=100.000&end=700.000&step=15.000");
  EXPECT_EQ(forwarded[0].max_body, job_history::kMaxAnswerBytes);
  EXPECT_EQ(forwarded[0].protocols, "http");
}

TEST(HistoryProxy, AnyOtherQueryIsRefusedWithoutAskingPrometheus) {
  int asked = 0;
  auto proxy = HistoryProxy::Make(Loopback(9190), [&](const HttpRequest&) {
    ++asked;
    return HttpResponse{200, "{}", "", {}};
  });
  ASSERT_TRUE(proxy);
  HttpAnswer answer = proxy->Answer(R"(count({__name__=~".+"}))", "0", "60", "15");
  EXPECT_EQ(answer.status, 400);
  EXPECT_NE(answer.body.find(R"("status":"error")"), std::string::npos) << answer.body;
  EXPECT_EQ(proxy->Answer(R"({__name__=~"up"})", "0", "86400", "1").status, 400);
  EXPECT_EQ(asked, 0);
}

TEST(HistoryProxy, NothingIsForwardedOffTheNode) {
  EXPECT_FALSE(HistoryProxy::Make(ParseSocketAddress("10.0.0.5:9190").value()));
}

TEST(HistoryProxy, APrometheusThatDoesNotAnswerIsABadGateway) {
  auto proxy = HistoryProxy::Make(Loopback(9190), [](const HttpRequest&) {
    return HttpResponse{0, "", "Couldn't connect to server", {}};
  });
  ASSERT_TRUE(proxy);
  HttpAnswer answer = proxy->Answer(R"({__name__=~"up"})", "0", "60", "15");
  EXPECT_EQ(answer.status, 502);
  EXPECT_NE(answer.body.find("did not answer"), std::string::npos);
}

TEST(HistoryProxy, OneRequestAtATimeSoNoCallerHoldsEveryWorker) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> inside{false};
  auto proxy = HistoryProxy::Make(Loopback(9190), [&](const HttpRequest&) {
    inside = true;
    released.wait();
    return HttpResponse{200, "{}", "", {}};
  });
  ASSERT_TRUE(proxy);
  std::thread first([&] { proxy->Answer(R"({__name__=~"up"})", "0", "60", "15"); });
  for (int i = 0; i < 500 && !inside; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(inside);
  EXPECT_EQ(proxy->Answer(R"({__name__=~"up"})", "0", "60", "15").status, 503);
  release.set_value();
  first.join();
  EXPECT_EQ(proxy->Answer(R"({__name__=~"up"})", "0", "60", "15").status, 200);
}

// The exporter's wiring: the route on its /metrics server reaches the
// proxy with the request's decoded arguments, and its answer comes back.
TEST(HistoryProxy, TheExportersServerAnswersTheRouteThroughTheProxy) {
  std::vector<HttpRequest> forwarded;
  auto proxy = HistoryProxy::Make(Loopback(9190), [&](const HttpRequest& request) {
    forwarded.push_back(request);
    return HttpResponse{200, R"({"status":"success","data":{"resultType":"matrix"}})", "", {}};
  });
  ASSERT_TRUE(proxy);
  auto server =
      MetricsServer::Start({IpAddress::Parse("127.0.0.1").value(), 0}).value();  // any port
  proxy->ServeOn(*server);
  const std::string base = "http://127.0.0.1:" + std::to_string(server->port());
  const job_history::Request asked{{"up", "hw_gpu_power_watts"}, 100, 700, 15};
  HttpRequest get;
  get.url = base + job_history::ForwardTarget(asked);
  get.timeout_seconds = 5;
  HttpResponse answer = HttpGetAll({get}).front();
  EXPECT_EQ(answer.status, 200) << answer.error << answer.body;
  EXPECT_NE(answer.body.find("matrix"), std::string::npos) << answer.body;
  ASSERT_EQ(forwarded.size(), 1u);
  EXPECT_EQ(forwarded[0].url, "http://127.0.0.1:9190" + job_history::ForwardTarget(asked));

  get.url = base + std::string(job_history::kPath) + "?query=up&start=0&end=60&step=15";
  answer = HttpGetAll({get}).front();
  EXPECT_EQ(answer.status, 400) << "not a family selector: " << answer.body;
  HttpRequest post = get;
  post.body = "{}";
  EXPECT_EQ(HttpPost(post).status, 405);
  EXPECT_EQ(forwarded.size(), 1u) << "only the checked request was forwarded";
}

}  // namespace
}  // namespace jobmon::exporter
