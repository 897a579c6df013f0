// cuset_async.h: asynchronous copies into shared memory and the barriers and pipelines that
// order them, for the CPU emulator (included by <cuda/barrier>, <cuda/pipeline>,
// <cuda_pipeline.h> and <cooperative_groups/memcpy_async.h>).
//
//   copies     cuda::memcpy_async, cooperative_groups::memcpy_async, __pipeline_memcpy_async:
//              the bytes are copied when the call is made. That is stronger than CUDA promises
//              (completion only at the matching wait), and gives the same results for every
//              program that waits before it reads, as CUDA requires. A group copy is made once,
//              by the group's rank 0, before that thread arrives anywhere.
//   barriers   cuda::barrier<thread_scope_block>: init(&bar, count), arrive (a token of the
//              phase), wait(token), arrive_and_wait, arrive_and_drop, wait_parity. Arrivals are
//              counted, so a barrier of some of the block's threads works; a waiting thread is a
//              fiber parked until the phase it waits for has completed (the block scheduler
//              polls it), and threads that can never complete a phase are reported as a
//              deadlock. A device- or system-scope barrier (blocks of a grid meeting) is
//              refused when a thread would have to wait at it: blocks here are not all resident.
//   pipelines  cuda::pipeline<thread_scope_thread> (make_pipeline()): each stage is complete
//              when issued, so acquire/commit/wait/release only keep CUDA's call protocol.
//              cuda::pipeline_shared_state<thread_scope_block, N> with make_pipeline(group,
//              &state[, role | producer count]): per stage a `produced` and a `consumed`
//              barrier as libcu++ keeps them, so producers really wait for consumers to
//              release a stage before refilling it, and consumers for the producers' commit.
//              quit() only detaches the calling thread's pipeline (no arrive_and_drop).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace cuset {

template <class F>
bool poll_call(const void* f) {
  return (*static_cast<const F*>(f))();
}

// Parks the calling fiber until `ready()` holds (at once when it already does).
template <class F>
void wait_until(const F& ready, const char* what, const char* file, int line) {
  if (ready()) return;
  Block* b = cur_block;
  if (!b) fault(std::string(what) + " waited on outside a kernel");
  if (!b->fibers)
    fault("internal: " + where() + " waits at " + what + " in a kernel analysed as free of barriers; rerun with CUSET_FIBERS=always");
  Thread* t = cur_thread;
  t->state = State::Poll;
  t->poll = &poll_call<F>;
  t->poll_arg = &ready;
  t->file = file;
  t->line = line;
  yield_to_scheduler();
}

// A collective copy: made once, by rank 0 of the group.
template <class Group>
bool copies_for_group(const Group& g) {
  return g.thread_rank() == 0;
}

inline void copy_now(void* dst, const void* src, size_t n) {
  if (n) memmove(dst, src, n);
}

}  // namespace cuset

namespace cuda {

enum thread_scope { thread_scope_system = 0, thread_scope_device = 1, thread_scope_block = 2, thread_scope_thread = 3 };

template <size_t Align>
struct aligned_size_t {
  static constexpr size_t align = Align;
  size_t value;
  constexpr explicit aligned_size_t(size_t v) : value(v) {}
  constexpr operator size_t() const { return value; }
};

enum class async_contract_fulfillment { none, async };

namespace details {
struct empty_completion {
  void operator()() noexcept {}
};
}  // namespace details

// Lives in shared memory, where no constructor runs: init() makes it (placement new).
template <thread_scope Scope, class Completion = details::empty_completion>
class barrier {
 public:
  class arrival_token {
   public:
    arrival_token() = default;
    explicit arrival_token(unsigned long long p) : phase(p) {}
    unsigned long long phase = 0;
  };

  barrier() = default;
  barrier(std::ptrdiff_t expected, Completion c = Completion()) : expected_(expected), pending_(expected), completion_(c) {}
  barrier(const barrier&) = delete;
  barrier& operator=(const barrier&) = delete;

  friend void init(barrier* b, std::ptrdiff_t expected, Completion c = Completion()) { new (b) barrier(expected, c); }

  static constexpr std::ptrdiff_t max() noexcept { return (std::ptrdiff_t(1) << 30) - 1; }

  arrival_token arrive(std::ptrdiff_t update = 1, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    unsigned long long now = phase();
    if (update <= 0 || update > pending())
      cuset::fault(std::string("cuda::barrier::arrive(") + std::to_string(update) + ") at " + cuset::site(file, line) + " with " +
                   std::to_string(pending()) + " arrivals pending in this phase (more arrivals than init() expected)");
    if (sub_pending(update) == 0) complete();
    return arrival_token(now);
  }
  void wait(arrival_token&& token, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    const unsigned long long want = token.phase;
    block_wait([this, want] { return phase() != want; }, file, line);
  }
  void arrive_and_wait(const char* file = __builtin_FILE(), int line = __builtin_LINE()) { wait(arrive(1, file, line), file, line); }
  void arrive_and_drop(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    --expected_;
    (void)arrive(1, file, line);
  }
  bool try_wait(arrival_token&& token) const { return phase() != token.phase; }
  bool try_wait_parity(bool parity) const { return (phase() & 1) != (unsigned long long)parity; }
  void wait_parity(bool parity, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    block_wait([this, parity] { return try_wait_parity(parity); }, file, line);
  }

 private:
  template <class F>
  void block_wait(const F& ready, const char* file, int line) const {
    if constexpr (Scope == thread_scope_block || Scope == thread_scope_thread) {
      cuset::wait_until(ready, "a cuda::barrier", file, line);
    } else {
      if (!ready())
        cuset::unsupported("waiting at a cuda::barrier of device or system scope (" + cuset::site(file, line) +
                           "): the emulator does not keep every block of a grid resident");
    }
  }
  // Block and thread scope: one OS thread runs the block's fibers, so plain updates are exact.
  // Wider scopes are shared by blocks running on several OS threads: atomics.
  unsigned long long phase() const {
    if constexpr (Scope == thread_scope_block || Scope == thread_scope_thread) return phase_;
    else return __atomic_load_n(&phase_, __ATOMIC_ACQUIRE);
  }
  std::ptrdiff_t pending() const {
    if constexpr (Scope == thread_scope_block || Scope == thread_scope_thread) return pending_;
    else return __atomic_load_n(&pending_, __ATOMIC_ACQUIRE);
  }
  std::ptrdiff_t sub_pending(std::ptrdiff_t n) {
    if constexpr (Scope == thread_scope_block || Scope == thread_scope_thread) return pending_ -= n;
    else return __atomic_sub_fetch(&pending_, n, __ATOMIC_ACQ_REL);
  }
  void complete() {
    completion_();
    if constexpr (Scope == thread_scope_block || Scope == thread_scope_thread) {
      pending_ = expected_;
      ++phase_;
    } else {
      __atomic_store_n(&pending_, expected_, __ATOMIC_RELEASE);
      __atomic_add_fetch(&phase_, 1, __ATOMIC_ACQ_REL);
    }
  }

  std::ptrdiff_t expected_;
  std::ptrdiff_t pending_;
  unsigned long long phase_ = 0;
  [[no_unique_address]] Completion completion_;
};

template <class Shape, thread_scope Scope, class Completion>
async_contract_fulfillment memcpy_async(void* dst, const void* src, Shape size, barrier<Scope, Completion>&) {
  cuset::copy_now(dst, src, (size_t)size);
  return async_contract_fulfillment::none;
}
template <class Group, class Shape, thread_scope Scope, class Completion>
async_contract_fulfillment memcpy_async(const Group& g, void* dst, const void* src, Shape size, barrier<Scope, Completion>&) {
  if (cuset::copies_for_group(g)) cuset::copy_now(dst, src, (size_t)size);
  return async_contract_fulfillment::none;
}

// --- pipelines ---------------------------------------------------------------------------------

enum class pipeline_role { producer, consumer };

template <thread_scope Scope, uint8_t Stages>
struct pipeline_shared_state {
  barrier<Scope> produced[Stages];
  barrier<Scope> consumed[Stages];
  unsigned count;  // make_pipeline: producers counted here
};

template <thread_scope Scope>
class pipeline {
 public:
  pipeline() = default;
  pipeline(barrier<Scope>* produced, barrier<Scope>* consumed, uint8_t stages, bool producer, bool consumer)
      : produced_(produced), consumed_(consumed), stages_(stages), producer_(producer), consumer_(consumer) {}
  pipeline(pipeline&&) = default;
  pipeline& operator=(pipeline&&) = default;
  pipeline(const pipeline&) = delete;

  void producer_acquire(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    if (produced_) consumed_[head_].wait_parity(consumed_parity_, file, line);
  }
  void producer_commit(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    if (!produced_) return;
    (void)produced_[head_].arrive(1, file, line);
    if (++head_ == stages_) {
      head_ = 0;
      consumed_parity_ = !consumed_parity_;
    }
  }
  void consumer_wait(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    if (produced_) produced_[tail_].wait_parity(produced_parity_, file, line);
  }
  template <class Rep, class Period>
  bool consumer_wait_for(const std::chrono::duration<Rep, Period>&, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    consumer_wait(file, line);
    return true;
  }
  template <class Clock, class Duration>
  bool consumer_wait_until(const std::chrono::time_point<Clock, Duration>&, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    consumer_wait(file, line);
    return true;
  }
  void consumer_release(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    if (!produced_) return;
    (void)consumed_[tail_].arrive(1, file, line);
    if (++tail_ == stages_) {
      tail_ = 0;
      produced_parity_ = !produced_parity_;
    }
  }
  bool quit() {
    produced_ = consumed_ = nullptr;
    return true;
  }

 private:
  barrier<Scope>* produced_ = nullptr;  // null: a thread-scope pipeline (every stage complete at issue)
  barrier<Scope>* consumed_ = nullptr;
  uint8_t stages_ = 1, head_ = 0, tail_ = 0;
  bool producer_ = true, consumer_ = true;
  bool consumed_parity_ = true;  // the first round of acquires passes: every stage starts empty
  bool produced_parity_ = false;
};

inline pipeline<thread_scope_thread> make_pipeline() { return pipeline<thread_scope_thread>(); }

namespace details {
// Rank 0 sets the stage barriers up for `producers` producers of the group; all wait for it.
template <class Group, thread_scope Scope, uint8_t Stages>
void setup(const Group& g, pipeline_shared_state<Scope, Stages>* s, unsigned producers, unsigned consumers) {
  if (g.thread_rank() == 0)
    for (uint8_t i = 0; i < Stages; ++i) {
      init(&s->produced[i], (std::ptrdiff_t)producers);
      init(&s->consumed[i], (std::ptrdiff_t)consumers);
    }
  g.sync();
}
}  // namespace details

template <class Group, thread_scope Scope, uint8_t Stages>
pipeline<Scope> make_pipeline(const Group& g, pipeline_shared_state<Scope, Stages>* s) {
  const unsigned n = (unsigned)g.size();
  details::setup(g, s, n, n);
  return pipeline<Scope>(s->produced, s->consumed, Stages, true, true);
}
template <class Group, thread_scope Scope, uint8_t Stages>
pipeline<Scope> make_pipeline(const Group& g, pipeline_shared_state<Scope, Stages>* s, size_t producer_count) {
  const unsigned n = (unsigned)g.size();
  details::setup(g, s, (unsigned)producer_count, n - (unsigned)producer_count);
  const bool producer = g.thread_rank() < producer_count;
  return pipeline<Scope>(s->produced, s->consumed, Stages, producer, !producer);
}
template <class Group, thread_scope Scope, uint8_t Stages>
pipeline<Scope> make_pipeline(const Group& g, pipeline_shared_state<Scope, Stages>* s, pipeline_role role) {
  if (g.thread_rank() == 0) s->count = 0;
  g.sync();
  if (role == pipeline_role::producer) ++s->count;  // the block's fibers run one at a time
  g.sync();
  const unsigned producers = s->count, n = (unsigned)g.size();
  g.sync();  // everyone has read the count before rank 0 reuses the state
  details::setup(g, s, producers, n - producers);
  return pipeline<Scope>(s->produced, s->consumed, Stages, role == pipeline_role::producer, role == pipeline_role::consumer);
}

template <class Shape, thread_scope Scope>
void memcpy_async(void* dst, const void* src, Shape size, pipeline<Scope>&) {
  cuset::copy_now(dst, src, (size_t)size);
}
template <class Group, class Shape, thread_scope Scope>
void memcpy_async(const Group& g, void* dst, const void* src, Shape size, pipeline<Scope>&) {
  if (cuset::copies_for_group(g)) cuset::copy_now(dst, src, (size_t)size);
}

// cuda::pipeline_consumer_wait_prior<N>(pipe): with every stage complete at issue, nothing to wait for.
template <uint8_t Prior>
void pipeline_consumer_wait_prior(pipeline<thread_scope_thread>&) {}

}  // namespace cuda
