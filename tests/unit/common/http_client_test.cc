// HttpGetAll hands a finished request's libcurl handle to the next one
// (common/src/http_client.cc): nothing of the first request may reach the
// server with the second.
#include "jobmon/common/http_client.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "loopback_listener.h"

namespace jobmon {
namespace {

// Answers `count` requests, one connection at a time, each with its own
// request head as the body.
void EchoRequests(int listener, int count) {
  for (int i = 0; i < count; ++i) {
    const int client = accept(listener, nullptr, nullptr);
    if (client < 0) return;
    test_support::SendOk(client, test_support::ReadRequestHead(client), "text/plain");
    close(client);
  }
}

TEST(HttpGetAll, AReusedHandleCarriesNothingOfTheRequestBefore) {
  const auto listener = test_support::ListenOnLoopback(8);
  ASSERT_GE(listener.fd, 0);
  std::thread server(EchoRequests, listener.fd, 3);
  HttpRequest first;
  first.url = "http://" + listener.Address() + "/first";
  first.headers = {"X-First: secret-header"};
  first.basic_user = "alice";
  first.basic_password = "secret-password";
  HttpRequest second;
  second.url = "http://" + listener.Address() + "/second";
  HttpRequest third = first;
  third.url = "http://" + listener.Address() + "/third";
  // One at a time: the second and third get the first's handle, reset.
  const auto answers = HttpGetAll({first, second, third}, /*max_parallel=*/1);
  server.join();
  close(listener.fd);
  ASSERT_EQ(answers.size(), 3u);
  for (const auto& answer : answers) ASSERT_EQ(answer.status, 200) << answer.error;
  EXPECT_NE(answers[0].body.find("GET /first "), std::string::npos);
  EXPECT_NE(answers[0].body.find("X-First: secret-header"), std::string::npos);
  EXPECT_NE(answers[0].body.find("Authorization: Basic"), std::string::npos);
  EXPECT_NE(answers[1].body.find("GET /second "), std::string::npos);
  EXPECT_EQ(answers[1].body.find("X-First"), std::string::npos) << answers[1].body;
  EXPECT_EQ(answers[1].body.find("Authorization"), std::string::npos) << answers[1].body;
  EXPECT_NE(answers[2].body.find("GET /third "), std::string::npos);
  EXPECT_NE(answers[2].body.find("X-First: secret-header"), std::string::npos)
      << "its own options again";
}

}  // namespace
}  // namespace jobmon
