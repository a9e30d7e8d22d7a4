// The thread contract of include/vkprim/context.hpp and README "Threads": plans may be created and recorded
// from several threads at once. Reduce, Scan (chained where the device has the memory model), Select and
// RadixSort (pairs) are recorded from four std::threads at once, each thread with a command pool of its
// own, and plans are created from four threads at once on one fresh context before other threads record
// them. Every record has buffers and scratch of its own; the command buffers are submitted together and
// every result is compared with the host reference.
// This binary proves the results; its ThreadSanitizer build (ctest test_threads.tsan, VKPRIM_SANITIZER_TESTS)
// is what reports a data race in the runtime. No Catch2 macro runs on a worker thread (Catch2 2 is not
// thread-safe): workers keep what they got, and the main thread asserts after joining them.
#include <algorithm>
#include <array>
#include <cstdint>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "host_scan.hpp"
#include "host_select.hpp"
#include "host_sort.hpp"
#include "test_support.hpp"
#include "vkprim/scan.hpp"
#include "vkprim/select.hpp"
#include "vkprim/sort.hpp"

using namespace vkprim;

namespace {

constexpr int kThreads = 4;
// Each command buffer records every job twice, the reuse barrier between the rounds, as an engine records
// one plan several times per frame (the second round reads what the first wrote: the sort is in place).
constexpr int kRounds = 2;
constexpr uint64_t kMaxCount = 40000;
constexpr uint64_t kGuard = 4;  // poisoned elements past every output, which must keep the poison

// A different count per thread and primitive, none a multiple of a tile, so the threads record
// different dispatch sizes and push constants.
uint64_t count_of(int thread, int primitive) {
  return kMaxCount - 1 - uint64_t(thread) * 4099 - uint64_t(primitive) * 37;
}

// One record of a plan into buffers and scratch of its own, and the check of what the GPU left there.
class Job {
 public:
  virtual ~Job() = default;
  // On a worker thread: nothing here may use Catch2.
  virtual Result<void> record(VkCommandBuffer cmd) const = 0;
  // On the main thread once the command buffers completed: CHECKs the result against the host reference.
  virtual void check() const = 0;
};

bool all_poisoned(const std::vector<uint32_t>& words, size_t from) {
  return std::all_of(words.begin() + std::ptrdiff_t(from), words.end(), [](uint32_t w) { return w == test::kPoison; });
}

class ReduceJob : public Job {
 public:
  ReduceJob(Device& dev, const Reduce& plan, uint64_t n, std::mt19937_64& rng)
      : dev_(dev),
        plan_(plan),
        data_(test::random_values<uint32_t>(n, rng)),
        input_(test::make_buffer(dev, n * 4)),
        output_(test::make_buffer(dev, (1 + kGuard) * 4)),
        scratch_(test::make_scratch(dev, plan)) {
    test::upload(dev, input_, data_);
    test::poison(dev, output_);
  }
  Result<void> record(VkCommandBuffer cmd) const override {
    return plan_.record(cmd, input_.range(0, data_.size() * 4), output_.range(0, 4), data_.size(), scratch_.range());
  }
  void check() const override {
    const Op op = plan_.desc().op;
    const auto got = test::download<uint32_t>(dev_, output_, 1 + kGuard);
    INFO("reduce " << to_string(op) << " n=" << data_.size());
    CHECK(got[0] == host::reduce<uint32_t>(op, data_.data(), data_.size()));
    CHECK(all_poisoned(got, 1));
  }

 private:
  Device& dev_;
  const Reduce& plan_;
  std::vector<uint32_t> data_;
  Buffer input_, output_, scratch_;
};

class ScanJob : public Job {
 public:
  ScanJob(Device& dev, const Scan& plan, uint64_t n, std::mt19937_64& rng)
      : dev_(dev),
        plan_(plan),
        data_(test::random_values<uint32_t>(n, rng)),
        input_(test::make_buffer(dev, n * 4)),
        output_(test::make_buffer(dev, (n + kGuard) * 4)),
        scratch_(test::make_buffer(dev, std::max<VkDeviceSize>(16, plan.scratch_requirements().size))) {
    test::upload(dev, input_, data_);
    test::poison(dev, output_);
  }
  Result<void> record(VkCommandBuffer cmd) const override {
    const uint64_t n = data_.size();
    return plan_.record(cmd, input_.range(0, n * 4), output_.range(0, n * 4), n, scratch_.range());
  }
  void check() const override {
    const ScanDesc& d = plan_.desc();
    const uint64_t n = data_.size();
    const auto got = test::download<uint32_t>(dev_, output_, n + kGuard);
    std::string why;
    const size_t bad =
        host::first_scan_mismatch(d.op, d.kind, data_.data(), got.data(), n, plan_.float_add_depth(n), why);
    INFO(to_string(plan_.algorithm()) << " scan " << to_string(d.kind) << " " << to_string(d.op) << " n=" << n << ": "
                                      << why);
    CHECK(bad == n);
    CHECK(all_poisoned(got, n));
  }

 private:
  Device& dev_;
  const Scan& plan_;
  std::vector<uint32_t> data_;
  Buffer input_, output_, scratch_;
};

class SelectJob : public Job {
 public:
  // Uniform u32 against the middle of the range: about half the elements are kept.
  static constexpr uint32_t kComparand = 1u << 31;

  SelectJob(Device& dev, const Select& plan, uint64_t n, std::mt19937_64& rng)
      : dev_(dev),
        plan_(plan),
        data_(test::random_values<uint32_t>(n, rng)),
        input_(test::make_buffer(dev, n * 4)),
        output_(test::make_buffer(dev, (n + kGuard) * 4)),
        count_(test::make_buffer(dev, (1 + kGuard) * 4)),
        scratch_(test::make_buffer(dev, std::max<VkDeviceSize>(16, plan.scratch_requirements().size))) {
    test::upload(dev, input_, data_);
    test::poison(dev, output_);
    test::poison(dev, count_);
  }
  Result<void> record(VkCommandBuffer cmd) const override {
    const uint64_t n = data_.size();
    return plan_.record(cmd,
                        SelectOperands{.input = input_.range(0, n * 4),
                                       .flags = {},
                                       .output = output_.range(0, n * 4),
                                       .selected_count = count_.range(0, 4),
                                       .scratch = scratch_.range()},
                        n, Comparand::of(kComparand));
  }
  void check() const override {
    const SelectDesc& d = plan_.desc();
    const uint64_t n = data_.size();
    uint64_t kept = 0;
    const auto expected = host::compact<uint32_t>(d.predicate, data_, {}, kComparand, false, kept);
    const auto got = test::download<uint32_t>(dev_, output_, n + kGuard);
    const auto count = test::download<uint32_t>(dev_, count_, 1 + kGuard);
    INFO(to_string(plan_.algorithm()) << " select " << to_string(d.predicate) << " " << kComparand << " n=" << n
                                      << ": count " << count[0] << ", expected " << kept);
    CHECK(count[0] == kept);
    CHECK(all_poisoned(count, 1));
    CHECK(std::equal(expected.begin(), expected.end(), got.begin()));
    INFO("nothing past the kept elements is written");
    CHECK(all_poisoned(got, kept));
  }

 private:
  Device& dev_;
  const Select& plan_;
  std::vector<uint32_t> data_;
  Buffer input_, output_, count_, scratch_;
};

// Pairs: the value of key i is i, so the values show the order (and the stability) of the sort.
class SortJob : public Job {
 public:
  SortJob(Device& dev, const RadixSort& plan, uint64_t n, std::mt19937_64& rng)
      : dev_(dev),
        plan_(plan),
        keys_(n),
        key_buffer_(test::make_buffer(dev, (n + kGuard) * 4)),
        value_buffer_(test::make_buffer(dev, (n + kGuard) * 4)),
        scratch_(test::make_buffer(dev, std::max<VkDeviceSize>(16, plan.scratch_requirements().size))) {
    // 4096 distinct keys, about ten of each (an unstable sort shows in the values), and one digit that is
    // the same in every key.
    for (auto& k : keys_) k = rng() & 0xF0F0000Fu;
    std::vector<uint32_t> keys(keys_.begin(), keys_.end()), values(n);
    for (uint64_t i = 0; i < n; ++i) values[i] = uint32_t(i);
    test::poison(dev, key_buffer_);
    test::poison(dev, value_buffer_);
    test::upload(dev, key_buffer_, keys);
    test::upload(dev, value_buffer_, values);
  }
  Result<void> record(VkCommandBuffer cmd) const override {
    const uint64_t n = keys_.size();
    return plan_.record(cmd, key_buffer_.range(0, n * 4), value_buffer_.range(0, n * 4), n, scratch_.range());
  }
  void check() const override {
    const SortDesc& d = plan_.desc();
    const uint64_t n = keys_.size();
    const std::vector<uint64_t> order = host::stable_sort_order(keys_, d);
    const auto keys = test::download<uint32_t>(dev_, key_buffer_, n + kGuard);
    const auto values = test::download<uint32_t>(dev_, value_buffer_, n + kGuard);
    uint64_t bad = n;
    for (uint64_t i = 0; i < n && bad == n; ++i)
      if (keys[i] != uint32_t(keys_[order[i]]) || values[i] != uint32_t(order[i])) bad = i;
    INFO(to_string(plan_.algorithm()) << " sort pairs " << to_string(d.order) << " n=" << n << ": first mismatch at "
                                      << bad);
    CHECK(bad == n);
    CHECK(all_poisoned(keys, n));
    CHECK(all_poisoned(values, n));
  }

 private:
  Device& dev_;
  const RadixSort& plan_;
  std::vector<uint64_t> keys_;  // as host_sort.hpp takes them
  Buffer key_buffer_, value_buffer_, scratch_;
};

// One plan of each primitive on u32. `variant` (a thread's index) varies the operator, kind, predicate
// and order, so threads that create plans at once build some pipelines in common and some of their own.
struct Plans {
  Reduce reduce;
  Scan scan;
  Select select;
  RadixSort sort;
};

ReduceDesc reduce_desc(int variant) {
  constexpr std::array<Op, 4> kOps = {Op::add, Op::min, Op::max, Op::bit_xor};
  return ReduceDesc{DataType::u32, kOps[size_t(variant) % kOps.size()], kMaxCount};
}
ScanDesc scan_desc(int variant) {
  ScanDesc d;
  d.kind = variant % 2 ? ScanKind::exclusive : ScanKind::inclusive;
  d.max_count = kMaxCount;
  return d;
}
SelectDesc select_desc(int variant) {
  SelectDesc d;
  d.max_count = kMaxCount;
  d.predicate = variant % 2 ? SelectPredicate::greater_equal : SelectPredicate::less;
  return d;
}
SortDesc sort_desc(int variant) {
  SortDesc d;
  d.value_size = 4;
  d.order = variant % 2 ? SortOrder::descending : SortOrder::ascending;
  d.max_count = kMaxCount;
  return d;
}

// The plans, or the first error's message. Safe on any thread (no Catch2).
Result<std::unique_ptr<Plans>> create_plans(Context& context, int variant) {
  auto reduce = Reduce::create(context, reduce_desc(variant));
  if (!reduce) return std::move(reduce).error();
  auto scan = Scan::create(context, scan_desc(variant));
  if (!scan) return std::move(scan).error();
  auto select = Select::create(context, select_desc(variant));
  if (!select) return std::move(select).error();
  auto sort = RadixSort::create(context, sort_desc(variant));
  if (!sort) return std::move(sort).error();
  return std::make_unique<Plans>(
      Plans{std::move(reduce).value(), std::move(scan).value(), std::move(select).value(), std::move(sort).value()});
}

std::vector<std::unique_ptr<Job>> jobs_of(Device& dev, const Plans& plans, int thread, std::mt19937_64& rng) {
  std::vector<std::unique_ptr<Job>> jobs;
  jobs.push_back(std::make_unique<ReduceJob>(dev, plans.reduce, count_of(thread, 0), rng));
  jobs.push_back(std::make_unique<ScanJob>(dev, plans.scan, count_of(thread, 1), rng));
  jobs.push_back(std::make_unique<SelectJob>(dev, plans.select, count_of(thread, 2), rng));
  jobs.push_back(std::make_unique<SortJob>(dev, plans.sort, count_of(thread, 3), rng));
  return jobs;
}

// What the synchronization contract asks of the caller around the records: the uploads' and fills'
// transfer writes visible to compute shaders before, the compute writes visible to the downloads after.
void barrier_before(const test::RawVulkan& vk, VkCommandBuffer cmd) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  vk.barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &b, 0, nullptr, 0,
             nullptr);
}
void barrier_after(const test::RawVulkan& vk, VkCommandBuffer cmd) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  vk.barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &b, 0, nullptr, 0,
             nullptr);
}

// Thread t's recording: a command pool of its own (created here, on the thread), one command buffer,
// kRounds rounds of its jobs. Returns "" or what failed.
std::string record_thread(const Device& dev, const test::RawVulkan& vk, const std::vector<std::unique_ptr<Job>>& jobs,
                          VkCommandPool& pool, VkCommandBuffer& cmd) {
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.queueFamilyIndex = dev.queue_family_index();
  if (VkResult r = vk.create_pool(dev.device(), &pool_info, nullptr, &pool); r != VK_SUCCESS)
    return "vkCreateCommandPool: " + std::to_string(r);
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  if (VkResult r = vk.allocate(dev.device(), &alloc, &cmd); r != VK_SUCCESS)
    return "vkAllocateCommandBuffers: " + std::to_string(r);
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  if (VkResult r = vk.begin(cmd, &begin); r != VK_SUCCESS) return "vkBeginCommandBuffer: " + std::to_string(r);
  barrier_before(vk, cmd);
  std::string failure;
  for (int round = 0; round < kRounds && failure.empty(); ++round) {
    if (round > 0) test::between_records(vk.barrier, cmd);
    for (size_t j = 0; j < jobs.size() && failure.empty(); ++j)
      if (auto r = jobs[j]->record(cmd); !r)
        failure = "round " + std::to_string(round) + ", job " + std::to_string(j) + ": " + r.message();
  }
  barrier_after(vk, cmd);
  if (VkResult r = vk.end(cmd); r != VK_SUCCESS && failure.empty())
    failure = "vkEndCommandBuffer: " + std::to_string(r);
  return failure;
}

// Records jobs[t] on thread t, all threads released at once, submits the command buffers in one batch,
// waits, and checks every job.
void record_on_threads_and_check(Device& dev, const std::vector<std::vector<std::unique_ptr<Job>>>& jobs) {
  const test::RawVulkan vk(dev);
  const size_t threads = jobs.size();
  std::vector<VkCommandPool> pools(threads, VK_NULL_HANDLE);
  std::vector<VkCommandBuffer> cmds(threads, VK_NULL_HANDLE);
  std::vector<std::string> failures(threads);
  {
    std::latch start{std::ptrdiff_t(threads)};
    std::vector<std::thread> workers;
    for (size_t t = 0; t < threads; ++t)
      workers.emplace_back([&, t] {
        start.arrive_and_wait();  // every thread records at the same time
        failures[t] = record_thread(dev, vk, jobs[t], pools[t], cmds[t]);
      });
    for (auto& w : workers) w.join();
  }
  bool recorded = true;
  for (size_t t = 0; t < threads; ++t) {
    INFO("thread " << t << ": " << failures[t]);
    CHECK(failures[t].empty());
    recorded = recorded && failures[t].empty();
  }
  VkResult done = VK_NOT_READY;
  if (recorded) {
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = uint32_t(threads);
    submit.pCommandBuffers = cmds.data();
    done = vk.submit(dev.queue(), 1, &submit, VK_NULL_HANDLE);
    if (done == VK_SUCCESS) done = vk.wait_idle(dev.queue());
  }
  for (VkCommandPool pool : pools)
    if (pool) vk.destroy_pool(dev.device(), pool, nullptr);
  REQUIRE(recorded);
  INFO("vkQueueSubmit / vkQueueWaitIdle: " << done);
  REQUIRE(done == VK_SUCCESS);
  for (size_t t = 0; t < threads; ++t) {
    INFO("thread " << t);
    for (const auto& job : jobs[t]) job->check();
  }
}

}  // namespace

TEST_CASE("one Reduce, Scan, Select and RadixSort plan each, recorded from four threads at once into their own "
          "command buffers, give the host's results",
          "[threads]") {
  const bool push_descriptors = GENERATE(true, false);
  ContextOptions options;
  options.disable_push_descriptors = !push_descriptors;  // off: records take sets from each plan's shared pools
  Device& dev = test::device(options);
  INFO((push_descriptors ? "push descriptors where the device has them" : "push descriptors off"));
  VKPRIM_TEST_RNG(rng);
  auto plans = create_plans(dev.context(), 0);
  INFO("create: " << (plans ? std::string("ok") : plans.error().message));
  REQUIRE(plans.ok());
  std::vector<std::vector<std::unique_ptr<Job>>> jobs;
  for (int t = 0; t < kThreads; ++t) jobs.push_back(jobs_of(dev, *plans.value(), t, rng));
  record_on_threads_and_check(dev, jobs);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("plans created from four threads at once on one fresh context give the host's results when recorded "
          "from other threads",
          "[threads]") {
  // A device of its own: its context's pipeline cache starts empty, so the threads race to build the
  // pipelines (the same ones for the plans they have in common) instead of finding them built.
  DeviceOptions device_options;
  device_options.validation = true;
  device_options.persistent_pipeline_cache = false;
  auto created = Device::create(device_options);
  INFO("Device::create: " << (created ? std::string("ok") : created.error().message));
  REQUIRE(created.ok());
  Device& dev = *created.value();
  VKPRIM_TEST_RNG(rng);

  std::vector<std::unique_ptr<Plans>> plans(kThreads);
  std::vector<std::string> failures(kThreads);
  {
    std::latch start(kThreads);
    std::vector<std::thread> workers;
    for (int t = 0; t < kThreads; ++t)
      workers.emplace_back([&, t] {
        start.arrive_and_wait();
        auto made = create_plans(dev.context(), t);
        if (made) plans[size_t(t)] = std::move(made).value();
        else failures[size_t(t)] = made.error().message;
      });
    for (auto& w : workers) w.join();
  }
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread " << t << ": " << failures[size_t(t)]);
    REQUIRE(plans[size_t(t)]);
  }
  // Thread t records the plans thread t + 1 created.
  std::vector<std::vector<std::unique_ptr<Job>>> jobs;
  for (int t = 0; t < kThreads; ++t) jobs.push_back(jobs_of(dev, *plans[size_t((t + 1) % kThreads)], t, rng));
  record_on_threads_and_check(dev, jobs);
  jobs.clear();
  plans.clear();
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}
