#include "graphtier/loader/bounded_queue.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace graphtier::loader {
namespace {

using namespace std::chrono_literals;

TEST(BoundedQueue, PushWaitsWhileFull) {
  BoundedQueue<int> q(2);
  ASSERT_TRUE(q.push(1));
  ASSERT_TRUE(q.push(2));
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    q.push(3);
    pushed = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(pushed.load()) << "push into a full queue must wait";
  EXPECT_EQ(q.pop(), 1);
  producer.join();
  EXPECT_TRUE(pushed.load());
  EXPECT_EQ(q.pop(), 2);
  EXPECT_EQ(q.pop(), 3);
}

TEST(BoundedQueue, CloseDeliversQueuedItemsThenEnds) {
  BoundedQueue<int> q(4);
  q.push(7);
  q.close();
  EXPECT_EQ(q.pop(), 7);
  EXPECT_EQ(q.pop(), std::nullopt);
}

TEST(BoundedQueue, FailureArrivesAfterQueuedItems) {
  BoundedQueue<int> q(4);
  q.push(1);
  q.fail(std::make_exception_ptr(std::runtime_error("stage broke")));
  EXPECT_EQ(q.pop(), 1);
  EXPECT_THROW(q.pop(), std::runtime_error);
  EXPECT_THROW(q.pop(), std::runtime_error) << "the failure stays";
}

TEST(BoundedQueue, CancelWakesBlockedProducerAndConsumer) {
  BoundedQueue<int> full(1);
  full.push(1);
  BoundedQueue<int> empty(1);
  std::atomic<int> woke{0};
  std::thread producer([&] {
    int item = 2;
    EXPECT_FALSE(full.push(std::move(item)));
    EXPECT_EQ(item, 2) << "a refused push leaves the item with the caller";
    ++woke;
  });
  std::thread consumer([&] {
    EXPECT_EQ(empty.pop(), std::nullopt);
    ++woke;
  });
  std::this_thread::sleep_for(30ms);
  full.cancel();
  empty.cancel();
  producer.join();
  consumer.join();
  EXPECT_EQ(woke.load(), 2);
  EXPECT_EQ(full.take_all().size(), 1u) << "cancel keeps the items for take_all";
}

}  // namespace
}  // namespace graphtier::loader
