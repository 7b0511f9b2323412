// Page-locked host buffers reused from minibatch to minibatch: the ids a GPU-sampled minibatch sends
// to the host (its input nodes, which the feature gather routes to the host tiers), one buffer per
// minibatch in flight in the pipeline (sampled, waiting in the window, or being gathered), and
// pinned feature outputs, one per gather whose batches are still alive or whose consumer's copies
// are still queued. Steady state allocates nothing. The allocator is handed in (cudaHostAlloc in
// the loader, plain memory in the CPU tests), and so are the fences (a CUDA event in the loader, a
// flag in the CPU tests), so the reuse is checked without a GPU.
//
// A slot goes back to the ring when its lease dies, but a consumer may still have copies of it
// queued on a stream (a non_blocking copy to the GPU returns at once): a lease fenced with
// `fence_after` (LoadedBatch::release_after records an event on the consumer's stream) is handed
// out again only once every fence reports done, the same contract as the device memory that
// release_after orders on the stream that frees it. Fences are polled when a slot is wanted, never
// waited for: a slot still fenced is skipped, and the ring grows while copies are in flight.
#pragma once

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

namespace graphtier::loader {

class PinnedRing {
 public:
  using Allocate = std::function<void*(std::size_t bytes)>;
  using Free = std::function<void(void*)>;
  /// True once the work it was recorded behind has completed (polled, never waited on; it owns
  /// what it polls, e.g. a CUDA event).
  using Fence = std::function<bool()>;

 private:
  struct Slot {
    int64_t* data = nullptr;
    std::size_t capacity = 0;  // entries
    std::vector<Fence> fences;  // the consumers' copies that must complete before reuse
    /// Whether every fence is done (those that are are dropped). Called under the ring's mutex.
    bool ready() {
      std::erase_if(fences, [](const Fence& f) { return f(); });
      return fences.empty();
    }
  };
  struct State {
    State(Allocate a, Free f) : allocate(std::move(a)), free(std::move(f)) {}
    ~State() {
      for (const auto& s : all) {
        if (s->data != nullptr) free(s->data);
      }
    }
    Slot* take(std::size_t count) {
      const std::lock_guard lock(mutex);
      // Free slots whose fences are done, most recently returned last.
      Slot* fit = nullptr;
      Slot* newest = nullptr;
      std::size_t fit_at = 0, newest_at = 0;
      for (std::size_t i = free_slots.size(); i-- > 0;) {
        Slot* s = free_slots[i];
        if (!s->ready()) continue;
        if (newest == nullptr) {
          newest = s;
          newest_at = i;
        }
        if (s->capacity >= count) {
          fit = s;
          fit_at = i;
          break;
        }
      }
      Slot* s = nullptr;
      if (fit != nullptr) {
        free_slots.erase(free_slots.begin() + static_cast<std::ptrdiff_t>(fit_at));
        return fit;
      }
      if (newest != nullptr) {
        s = newest;
        free_slots.erase(free_slots.begin() + static_cast<std::ptrdiff_t>(newest_at));
      } else {
        s = all.emplace_back(std::make_unique<Slot>()).get();
        free_slots.reserve(all.size());  // so that give_back never allocates
      }
      if (s->capacity < count) {
        // Headroom: the next minibatches are about as large.
        const std::size_t capacity = std::max<std::size_t>(count + count / 4, 1024);
        auto* data = static_cast<int64_t*>(allocate(capacity * sizeof(int64_t)));
        if (s->data != nullptr) free(s->data);
        s->data = data;
        s->capacity = capacity;
        ++allocations;
      }
      return s;
    }
    void give_back(Slot* s) noexcept {
      const std::lock_guard lock(mutex);
      free_slots.push_back(s);  // capacity reserved by take
    }
    void fence(Slot* s, Fence f) {
      const std::lock_guard lock(mutex);
      s->fences.push_back(std::move(f));
    }

    Allocate allocate;
    Free free;
    mutable std::mutex mutex;
    std::vector<std::unique_ptr<Slot>> all;
    std::vector<Slot*> free_slots;
    std::size_t allocations = 0;
  };

 public:
  PinnedRing(Allocate allocate, Free free) : state_(std::make_shared<State>(std::move(allocate), std::move(free))) {}

  /// A slot of at least `count` int64 entries, back in the ring when the lease dies (it keeps the
  /// ring's buffers alive, so a lease may outlive the ring). Move-only.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept : state_(std::move(other.state_)), slot_(std::exchange(other.slot_, nullptr)),
                                    size_(std::exchange(other.size_, 0)) {}
    Lease& operator=(Lease&& other) noexcept {
      if (this != &other) {
        release();
        state_ = std::move(other.state_);
        slot_ = std::exchange(other.slot_, nullptr);
        size_ = std::exchange(other.size_, 0);
      }
      return *this;
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { release(); }

    int64_t* data() const noexcept { return slot_ == nullptr ? nullptr : slot_->data; }
    /// The `count` entries asked for.
    std::span<const int64_t> ids() const noexcept { return {data(), size_}; }
    bool empty() const noexcept { return slot_ == nullptr; }
    /// Keeps the first `count` entries of those asked for (a bound, once the real count is known).
    void shrink(std::size_t count) noexcept { size_ = std::min(size_, count); }
    /// The slot is not handed out again, after this lease dies, before `done` reports true: called
    /// once per consumer whose queued work (a copy on its stream) still reads or writes the slot.
    void fence_after(Fence done) {
      if (slot_ != nullptr) state_->fence(slot_, std::move(done));
    }

   private:
    friend class PinnedRing;
    void release() noexcept {
      if (slot_ != nullptr) state_->give_back(slot_);
      slot_ = nullptr;
      state_.reset();
    }
    std::shared_ptr<State> state_;
    Slot* slot_ = nullptr;
    std::size_t size_ = 0;
  };

  /// A free slot with room for `count` ids, among those whose fences are done: the most recently
  /// returned one that is large enough, else the most recent one regrown, else a new one (only
  /// while the pipeline fills, or while consumers' copies are in flight).
  Lease acquire(std::size_t count) {
    Lease lease;
    lease.state_ = state_;
    lease.slot_ = state_->take(count);
    lease.size_ = count;
    return lease;
  }

  /// Slots made so far (free or leased) and allocations made (growths included): constant once
  /// the pipeline runs in steady state.
  std::size_t slots() const {
    const std::lock_guard lock(state_->mutex);
    return state_->all.size();
  }
  std::size_t allocations() const {
    const std::lock_guard lock(state_->mutex);
    return state_->allocations;
  }

 private:
  std::shared_ptr<State> state_;
};

}  // namespace graphtier::loader
