#include "pinned_ring.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <set>
#include <thread>
#include <vector>

namespace graphtier::loader {
namespace {

/// A ring over plain memory that counts what it allocates and frees.
struct Counted {
  int allocated = 0;
  int freed = 0;
  PinnedRing ring() {
    return PinnedRing(
        [this](std::size_t bytes) {
          ++allocated;
          return std::malloc(bytes);
        },
        [this](void* p) {
          ++freed;
          std::free(p);
        });
  }
};

TEST(PinnedRing, AReleasedSlotIsReusedWithoutAllocating) {
  Counted c;
  PinnedRing ring = c.ring();
  int64_t* first = nullptr;
  {
    PinnedRing::Lease a = ring.acquire(100);
    first = a.data();
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(a.ids().size(), 100u);
  }
  for (int batch = 0; batch < 50; ++batch) {  // one minibatch in flight at a time: one slot
    PinnedRing::Lease b = ring.acquire(static_cast<std::size_t>(90 + batch % 20));
    EXPECT_EQ(b.data(), first) << batch;
    b.data()[0] = batch;
  }
  EXPECT_EQ(ring.slots(), 1u);
  EXPECT_EQ(ring.allocations(), 1u);
  EXPECT_EQ(c.allocated, 1);
}

TEST(PinnedRing, SlotsInFlightAreDistinctAndTheRingStopsGrowingInSteadyState) {
  Counted c;
  PinnedRing ring = c.ring();
  std::vector<PinnedRing::Lease> in_flight;
  for (int step = 0; step < 200; ++step) {
    // A pipeline of depth 4: a new minibatch enters, the oldest leaves once 4 are in flight.
    in_flight.push_back(ring.acquire(500));
    if (in_flight.size() > 4) in_flight.erase(in_flight.begin());
    std::set<int64_t*> distinct;
    for (const auto& l : in_flight) distinct.insert(l.data());
    ASSERT_EQ(distinct.size(), in_flight.size()) << "two minibatches in flight share a slot at step " << step;
  }
  EXPECT_EQ(ring.slots(), 5u);
  EXPECT_EQ(ring.allocations(), 5u);
}

TEST(PinnedRing, ASlotTooSmallGrowsAndALargeEnoughOneIsPreferred) {
  Counted c;
  PinnedRing ring = c.ring();
  int64_t* large = nullptr;
  {
    PinnedRing::Lease small = ring.acquire(10);
    PinnedRing::Lease big = ring.acquire(1 << 16);
    large = big.data();
  }  // both back; `small` returned last
  {
    PinnedRing::Lease again = ring.acquire(1 << 15);
    EXPECT_EQ(again.data(), large) << "the large slot, though the small one came back last";
  }
  EXPECT_EQ(ring.allocations(), 2u);
  {
    PinnedRing::Lease a = ring.acquire(1 << 16);
    PinnedRing::Lease b = ring.acquire(1 << 17);  // only the small slot is free: it grows
    EXPECT_NE(b.data(), nullptr);
    b.data()[(1 << 17) - 1] = 7;
  }
  EXPECT_EQ(ring.slots(), 2u);
  EXPECT_EQ(ring.allocations(), 3u);
  EXPECT_EQ(c.freed, 1) << "the grown slot's old buffer";
}

TEST(PinnedRing, ALeaseMayOutliveItsRingAndEveryBufferIsFreedOnce) {
  Counted c;
  PinnedRing::Lease kept;
  {
    PinnedRing ring = c.ring();
    PinnedRing::Lease other = ring.acquire(3);
    kept = ring.acquire(5);
    kept.data()[4] = 1;
  }
  EXPECT_EQ(c.freed, 0) << "the lease keeps the ring's buffers";
  EXPECT_EQ(kept.ids().size(), 5u);
  kept = PinnedRing::Lease();
  EXPECT_EQ(c.freed, 2);
  EXPECT_EQ(c.allocated, 2);
}

TEST(PinnedRing, ConcurrentLeasesNeverShareASlot) {
  Counted c;
  PinnedRing ring = c.ring();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&ring, t] {
      for (int i = 0; i < 2000; ++i) {
        PinnedRing::Lease l = ring.acquire(64);
        for (int k = 0; k < 64; ++k) l.data()[k] = t;
        for (int k = 0; k < 64; ++k) ASSERT_EQ(l.data()[k], t);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_LE(ring.slots(), 4u);
}

TEST(PinnedRing, ShrinkTrimsALeaseToTheRealCountAndNeverGrowsIt) {
  Counted c;
  PinnedRing ring = c.ring();
  PinnedRing::Lease lease = ring.acquire(100);  // a bound
  int64_t* data = lease.data();
  lease.shrink(7);  // the real count
  EXPECT_EQ(lease.ids().size(), 7u);
  EXPECT_EQ(lease.ids().data(), data);
  lease.shrink(50);
  EXPECT_EQ(lease.ids().size(), 7u);
}

/// A consumer's queued copy, as a fence: done once `finished` is set.
PinnedRing::Fence copy_done(const std::shared_ptr<std::atomic<bool>>& finished) {
  return [finished] { return finished->load(); };
}

TEST(PinnedRing, AFencedSlotIsReusedOnlyOnceItsConsumersCopyHasCompleted) {
  Counted c;
  PinnedRing ring = c.ring();
  auto copied = std::make_shared<std::atomic<bool>>(false);
  int64_t* fenced = nullptr;
  {
    PinnedRing::Lease a = ring.acquire(100);
    fenced = a.data();
    a.fence_after(copy_done(copied));  // the consumer queued a copy of it, then dropped the batch
  }
  int64_t* other = nullptr;
  for (int batch = 0; batch < 10; ++batch) {  // the copy is still queued: a second slot serves
    PinnedRing::Lease b = ring.acquire(100);
    EXPECT_NE(b.data(), fenced) << "batch " << batch << " got the slot a consumer's copy still reads";
    if (other == nullptr) other = b.data();
    EXPECT_EQ(b.data(), other) << "the unfenced slot is reused";
  }
  EXPECT_EQ(ring.slots(), 2u);
  copied->store(true);
  {
    PinnedRing::Lease l1 = ring.acquire(100);
    PinnedRing::Lease l2 = ring.acquire(100);
    EXPECT_TRUE((l1.data() == fenced) != (l2.data() == fenced)) << "the slot whose copy completed is free again";
  }
  EXPECT_EQ(ring.slots(), 2u);
  EXPECT_EQ(ring.allocations(), 2u);
}

TEST(PinnedRing, ASlotSharedByBatchesWaitsForEveryConsumersFence) {
  // One merged gather: several batches share the slot, each fences it behind its own consumer.
  Counted c;
  PinnedRing ring = c.ring();
  auto first = std::make_shared<std::atomic<bool>>(false);
  auto second = std::make_shared<std::atomic<bool>>(false);
  int64_t* shared = nullptr;
  {
    auto lease = std::make_shared<PinnedRing::Lease>(ring.acquire(64));
    shared = lease->data();
    lease->fence_after(copy_done(first));
    lease->fence_after(copy_done(second));
  }
  first->store(true);
  {
    PinnedRing::Lease l = ring.acquire(64);
    EXPECT_NE(l.data(), shared) << "one consumer's copy is still queued";
  }
  second->store(true);
  PinnedRing::Lease l1 = ring.acquire(64);
  PinnedRing::Lease l2 = ring.acquire(64);  // both free slots are ready now
  EXPECT_TRUE(l1.data() == shared || l2.data() == shared);
  EXPECT_EQ(ring.allocations(), 2u);
}

TEST(PinnedRing, AFenceIsPolledNeverWaitedForAndDroppedOnceDone) {
  Counted c;
  PinnedRing ring = c.ring();
  auto polls = std::make_shared<int>(0);
  int64_t* fenced = nullptr;
  {
    PinnedRing::Lease a = ring.acquire(8);
    fenced = a.data();
    a.fence_after([polls] { return ++*polls >= 3; });  // done at the third poll
  }
  PinnedRing::Lease b = ring.acquire(8);  // poll 1: not done, a new slot
  PinnedRing::Lease d = ring.acquire(8);  // poll 2: not done, a new slot
  EXPECT_NE(b.data(), fenced);
  EXPECT_NE(d.data(), fenced);
  PinnedRing::Lease e = ring.acquire(8);  // poll 3: done
  EXPECT_EQ(e.data(), fenced);
  EXPECT_EQ(*polls, 3);
  e = PinnedRing::Lease();
  PinnedRing::Lease f = ring.acquire(8);
  EXPECT_EQ(f.data(), fenced);
  EXPECT_EQ(*polls, 3) << "a fence once done is dropped, not polled again";
  EXPECT_EQ(ring.slots(), 3u);
}

}  // namespace
}  // namespace graphtier::loader
