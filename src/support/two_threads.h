// Runs independent tasks 0..count-1 on two threads (the caller's and one more), each taking the
// next task not yet taken. For work that only reads shared state and writes to a slot of its own
// (a sink per check or rule), so that the results are those of running the tasks in order.
#pragma once

#include <atomic>
#include <cstddef>
#include <future>

namespace tpudoctor {

template <typename Task>
void RunOnTwoThreads(std::size_t count, const Task& task) {
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < count; i = next++) task(i);
  };
  auto helper = std::async(std::launch::async, work);
  work();
  helper.get();
}

}  // namespace tpudoctor
