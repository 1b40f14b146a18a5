// TimeRing: oldest first through growth and wrap-around, bounded by max_items.
#include "jobmon/monitor/time_ring.h"

#include <gtest/gtest.h>

#include <vector>

namespace jobmon::monitor {
namespace {

struct Item {
  double t = 0;
};

std::vector<double> Times(const TimeRing<Item>& ring) {
  std::vector<double> out;
  for (const Item& item : ring) out.push_back(item.t);
  return out;
}

std::vector<double> TimesBackwards(const TimeRing<Item>& ring) {
  std::vector<double> out;
  for (auto it = ring.rbegin(); it != ring.rend(); ++it) out.push_back(it->t);
  return out;
}

TEST(TimeRing, KeepsOrderThroughGrowthAndWrapAround) {
  TimeRing<Item> ring(6);
  EXPECT_TRUE(ring.empty());
  EXPECT_EQ(ring.begin(), ring.end());
  for (int t = 1; t <= 3; ++t) ring.push_back({double(t)});
  ring.pop_front();  // the head moves: the next growth must copy from it
  for (int t = 4; t <= 7; ++t) ring.push_back({double(t)});
  EXPECT_EQ(Times(ring), (std::vector<double>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(TimesBackwards(ring), (std::vector<double>{7, 6, 5, 4, 3, 2}));
  EXPECT_EQ(ring.front().t, 2);
  EXPECT_EQ(ring.back().t, 7);
}

TEST(TimeRing, DropsTheOldestAtItsBound) {
  TimeRing<Item> ring(3);
  for (int t = 1; t <= 10; ++t) ring.push_back({double(t)});
  EXPECT_EQ(ring.size(), 3u);
  EXPECT_EQ(Times(ring), (std::vector<double>{8, 9, 10}));
  ring.pop_back();
  EXPECT_EQ(Times(ring), (std::vector<double>{8, 9}));
  ring.push_back({11});
  ring.push_back({12});
  EXPECT_EQ(Times(ring), (std::vector<double>{9, 11, 12}));
}

TEST(TimeRing, EmptiesAndFillsAgain) {
  TimeRing<Item> ring(4);
  for (int round = 0; round < 3; ++round) {
    for (int t = 0; t < 5; ++t) ring.push_back({double(10 * round + t)});
    while (!ring.empty()) ring.pop_front();
    EXPECT_EQ(ring.size(), 0u);
    EXPECT_TRUE(Times(ring).empty());
  }
  ring.push_back({99});
  EXPECT_EQ(Times(ring), (std::vector<double>{99}));
}

TEST(TimeRing, AZeroBoundStillHoldsTheNewest) {
  TimeRing<Item> ring(0);
  ring.push_back({1});
  ring.push_back({2});
  EXPECT_EQ(Times(ring), (std::vector<double>{2}));
}

}  // namespace
}  // namespace jobmon::monitor
