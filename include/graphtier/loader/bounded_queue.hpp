// A bounded blocking queue between two pipeline stages: back-pressure (push waits while full),
// end of stream (close), a failure carried downstream (fail), and cancellation that wakes every
// waiter (cancel), so that no stage can hang a shutdown.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <utility>

namespace graphtier::loader {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  /// Waits while the queue is full. Returns false, leaving `item` untouched, once the queue is
  /// cancelled.
  bool push(T&& item) {
    std::unique_lock lock(mutex_);
    not_full_.wait(lock, [&] { return cancelled_ || items_.size() < capacity_; });
    if (cancelled_) return false;
    items_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }

  /// Waits for an item. Items pushed before close() or fail() are delivered first; then pop returns
  /// nullopt after close(), or rethrows the failure passed to fail(). A cancelled queue returns
  /// nullopt at once.
  std::optional<T> pop() {
    std::unique_lock lock(mutex_);
    not_empty_.wait(lock, [&] { return cancelled_ || closed_ || !items_.empty(); });
    return take(lock);
  }

  /// pop() without waiting: nullopt when no item is ready (or the queue is closed or cancelled).
  std::optional<T> try_pop() {
    std::unique_lock lock(mutex_);
    if (items_.empty()) return std::nullopt;
    return take(lock);
  }

  /// The producer is done: no more pushes.
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    not_empty_.notify_all();
  }

  /// The producer failed: consumers get `error` after the items already queued.
  void fail(std::exception_ptr error) {
    std::lock_guard lock(mutex_);
    error_ = std::move(error);
    closed_ = true;
    not_empty_.notify_all();
  }

  /// Shutdown: wakes every waiter; pushes fail and pops return nullopt from now on. The items
  /// left stay for take_all().
  void cancel() {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
    not_empty_.notify_all();
    not_full_.notify_all();
  }

  /// Removes and returns every queued item (after cancel(): what no consumer will see).
  std::deque<T> take_all() {
    std::lock_guard lock(mutex_);
    std::deque<T> items;
    items.swap(items_);
    not_full_.notify_all();
    return items;
  }

  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return items_.size();
  }
  std::size_t capacity() const noexcept { return capacity_; }

 private:
  std::optional<T> take(std::unique_lock<std::mutex>&) {
    if (cancelled_) return std::nullopt;
    if (items_.empty()) {
      if (error_) std::rethrow_exception(error_);
      return std::nullopt;
    }
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }

  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable not_empty_;
  std::condition_variable not_full_;
  std::deque<T> items_;
  std::exception_ptr error_;
  bool closed_ = false;
  bool cancelled_ = false;
};

}  // namespace graphtier::loader
