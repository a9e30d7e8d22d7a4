// Shared test support: validated devices cached per setup (options and test hooks), validation-message checks, a
// per-test random generator whose seed is reported on failure, poison/upload/download helpers and a
// checked reduce run against the host reference (tools/support/host_reference.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>

#include "host_reference.hpp"
#include "vkprim/device.hpp"
#include "vkprim/reduce.hpp"

namespace vkprim::test {

// What a cached test device is created with: the context options, and the test hooks (detail::Testing:
// masked features, lowered limits, skipped publications) that reach the context beside them.
struct DeviceSetup {
  ContextOptions options{};
  detail::Testing testing{};
};
// A Device with validation + synchronization validation on and no persisted pipeline cache, created
// once per ContextOptions and detail::Testing combination for the whole test binary.
Device& device(const ContextOptions& options = {});
Device& device(const DeviceSetup& setup);
// A setup that forces the chained kernels' decoupled fallback: every `period`-th tile publishes nothing
// (detail::Testing::skip_publication_period; 0: every tile publishes) and a waiting tile polls
// `spin_limit` times (ContextOptions::fallback_spin_limit) before counting a predecessor itself.
DeviceSetup forced_fallback(uint32_t period, uint32_t spin_limit = 0);
// forced_fallback(period) with tiles taken in launch order (ContextOptions::tile_order); without skips
// (period 0) the spin limit is 64, so a driver that launches a successor first only costs a fallback.
DeviceSetup launch_order(uint32_t period);
// Options that take the shared-memory emulation of subgroup operations (ContextOptions::force_no_subgroups).
ContextOptions no_subgroups();
// A setup with a 64 KiB storage-buffer range (detail::Testing::max_storage_buffer_range): 16384 32-bit
// elements at most per binding, so plans split larger inputs into windows.
DeviceSetup small_windows();
// device(setup) with `features` masked as well (detail::Testing::mask_features); requires that they are
// reported absent.
Device& device_without(uint32_t features, DeviceSetup setup = {});
// True where `dev` has every feature in `features`; else warns that the test case is skipped, naming
// `what` needs them, and returns false: `if (!test::has_features(dev, feature_memory_model, "...")) return;`
bool has_features(Device& dev, uint32_t features, const char* what);
// Reports the running test case skipped for `why` (a WARN ending ": skipped"); the caller returns. A test
// case that skips without asserting anything makes its ctest test report skipped (listener.cpp: exit
// kSkipExitCode, the tests' SKIP_RETURN_CODE), never passed.
constexpr int kSkipExitCode = 77;
void skip(const std::string& why);
// How many skips were reported so far in this process.
int skip_count();
// Runs `body` in a forked child process (for calls that must abort): whether it died of SIGABRT, and what
// it wrote to stderr. The child must not use Vulkan: a forked child of a process that initialised a GPU
// driver may not use that driver (NVIDIA's fails there); see run_case_in_new_process.
struct ChildOutcome {
  bool aborted = false;
  int exit_code = -1;  // where it exited rather than died of a signal
  std::string stderr_text;
};
ChildOutcome run_in_child(const std::function<void()>& body);
// Runs the hidden test case `name` (tag it "[.]") of this test binary in a new process (fork, then exec of
// /proc/self/exe), which starts its Vulkan from nothing: for cases that must abort after using a device.
ChildOutcome run_case_in_new_process(const char* name);
// Every device created so far (the listener clears their messages when a test case starts).
std::vector<Device*> cached_devices();
// Destroys every cached device (called by main before exit).
void release_devices();

std::string describe_messages(const Device& dev);

// A seed from std::random_device, or VKPRIM_TEST_SEED when set (to replay a failure).
uint64_t fresh_seed();

constexpr uint32_t kPoison = 0xDEADBEEFu;

Buffer make_buffer(const Device& dev, VkDeviceSize bytes);
// Scratch sized by scratch_requirements() (at least 16 bytes, so a range is always valid).
Buffer make_scratch(const Device& dev, const Reduce& plan);
// Fills every word of the buffer with `word` (kPoison unless given).
void poison(const Device& dev, const Buffer& buffer, uint32_t word = kPoison);
// True when every word of the buffer still holds kPoison.
bool still_poisoned(const Device& dev, const Buffer& buffer);

template <class T>
void upload(const Device& dev, const Buffer& buffer, const std::vector<T>& values, VkDeviceSize offset = 0) {
  if (values.empty()) return;
  auto done = dev.upload(buffer, values.data(), values.size() * sizeof(T), offset);
  INFO(done.message());
  REQUIRE(done.ok());
}

template <class T>
std::vector<T> download(const Device& dev, const Buffer& buffer, size_t count, VkDeviceSize offset = 0) {
  std::vector<T> values(count);
  if (count == 0) return values;
  auto done = dev.download(buffer, values.data(), count * sizeof(T), offset);
  INFO(done.message());
  REQUIRE(done.ok());
  return values;
}

Reduce make_reduce(Context& context, const ReduceDesc& desc);

// Submits `body` between the barriers the synchronization contract asks of the caller: transfer
// writes (uploads, poison fills) made visible to compute shaders before, and compute writes made
// visible to transfers (downloads) after. Blocks until done.
Result<void> submit_compute(const Device& dev, const std::function<void(VkCommandBuffer)>& body);

// What `record` returns when recorded into a command buffer that is then submitted (REQUIREd to succeed):
// for calls the plan must refuse without recording anything.
inline Result<void> recorded_result(const Device& dev, const std::function<Result<void>(VkCommandBuffer)>& record) {
  Result<void> r;
  auto submitted = submit_compute(dev, [&](VkCommandBuffer cmd) { r = record(cmd); });
  INFO("submit: " << submitted.message());
  REQUIRE(submitted.ok());
  return r;
}

// A call that must be refused: invalid_argument, a message that starts with `call` ("SegmentedSort::record")
// and names the problem (`says`), and nothing recorded: `untouched` (an output the call would write) is
// poisoned before and must still be after.
inline void check_refused(const Device& dev, const Buffer& untouched, const char* call, const char* says,
                          const std::function<Result<void>(VkCommandBuffer)>& record) {
  poison(dev, untouched);
  const Result<void> r = recorded_result(dev, record);
  INFO("message: " << r.message());
  CHECK(!r.ok());
  CHECK(r.status() == Status::invalid_argument);
  CHECK(r.message().find(call) == 0);
  CHECK(r.message().find(says) != std::string::npos);
  CHECK(still_poisoned(dev, untouched));
}

// A description `create` must refuse: with `status` and a message naming the problem (`says`).
template <class Desc>
struct BadDesc {
  Desc desc;
  Status status;
  const char* says;
};
// Each of `bad` refused by create(desc) with its status and a message "<plan>::create: ...<says>...".
template <class Desc, class Create>
void check_create_refused(const std::vector<BadDesc<Desc>>& bad, const char* plan, Create&& create) {
  const std::string prefix = std::string(plan) + "::create: ";
  for (const BadDesc<Desc>& b : bad) {
    const auto r = create(b.desc);
    INFO("expected: " << b.says << "; message: " << (r ? std::string("(created)") : r.error().message));
    REQUIRE(!r);
    CHECK(r.status() == b.status);
    CHECK(r.error().message.find(prefix) == 0);
    CHECK(r.error().message.find(b.says) != std::string::npos);
  }
}

// vkCmdPipelineBarrier of the test device (tests record their own barriers between records).
inline PFN_vkCmdPipelineBarrier pipeline_barrier(const Device& dev) {
  auto gipa = dev.get_instance_proc_addr();
  auto gdpa = reinterpret_cast<PFN_vkGetDeviceProcAddr>(gipa(dev.instance(), "vkGetDeviceProcAddr"));
  auto barrier = reinterpret_cast<PFN_vkCmdPipelineBarrier>(gdpa(dev.device(), "vkCmdPipelineBarrier"));
  REQUIRE(barrier != nullptr);
  return barrier;
}

// The device functions a test calls itself to record and submit its own command buffers (from several
// threads, each with a pool of its own) instead of through Device::submit.
struct RawVulkan {
  PFN_vkCreateCommandPool create_pool;
  PFN_vkDestroyCommandPool destroy_pool;
  PFN_vkAllocateCommandBuffers allocate;
  PFN_vkBeginCommandBuffer begin;
  PFN_vkEndCommandBuffer end;
  PFN_vkQueueSubmit submit;
  PFN_vkQueueWaitIdle wait_idle;
  PFN_vkCmdPipelineBarrier barrier;
  explicit RawVulkan(const Device& dev) {
    auto gdpa = reinterpret_cast<PFN_vkGetDeviceProcAddr>(
        dev.get_instance_proc_addr()(dev.instance(), "vkGetDeviceProcAddr"));
    auto get = [&](const char* name) { return gdpa(dev.device(), name); };
    create_pool = reinterpret_cast<PFN_vkCreateCommandPool>(get("vkCreateCommandPool"));
    destroy_pool = reinterpret_cast<PFN_vkDestroyCommandPool>(get("vkDestroyCommandPool"));
    allocate = reinterpret_cast<PFN_vkAllocateCommandBuffers>(get("vkAllocateCommandBuffers"));
    begin = reinterpret_cast<PFN_vkBeginCommandBuffer>(get("vkBeginCommandBuffer"));
    end = reinterpret_cast<PFN_vkEndCommandBuffer>(get("vkEndCommandBuffer"));
    submit = reinterpret_cast<PFN_vkQueueSubmit>(get("vkQueueSubmit"));
    wait_idle = reinterpret_cast<PFN_vkQueueWaitIdle>(get("vkQueueWaitIdle"));
    barrier = reinterpret_cast<PFN_vkCmdPipelineBarrier>(get("vkCmdPipelineBarrier"));
  }
};

// What the caller places between two records that share scratch: the next record clears it with
// vkCmdFillBuffer (a transfer write) and its dispatches read and write it.
inline void between_records(PFN_vkCmdPipelineBarrier barrier, VkCommandBuffer cmd) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
          0, 1, &b, 0, nullptr, 0, nullptr);
}

// A value that changes the result if the plan reads it by mistake: absorbing for min/max/and/or,
// non-neutral for add/xor.
template <class T>
T hostile(Op op) {
  switch (op) {
    case Op::min: return std::is_integral_v<T> ? std::numeric_limits<T>::lowest() : T(-1e30);
    case Op::max: return std::is_integral_v<T> ? std::numeric_limits<T>::max() : T(1e30);
    case Op::bit_and: return T(0);
    case Op::bit_or:
      if constexpr (std::is_integral_v<T>) return T(~std::make_unsigned_t<T>(0));
      else return T(0);
    default: return T(1000);
  }
}

template <class T>
std::string show(T v) {
  std::ostringstream out;
  if constexpr (std::is_floating_point_v<T>) {
    out.precision(std::numeric_limits<T>::max_digits10);
    out << v;
  } else if constexpr (sizeof(T) == 1) {
    out << int(v);
  } else {
    out << v;
  }
  return out.str();
}

// Checks a GPU result against the host reference: bit-exact for integers and float min/max, the
// documented bound for float add. Reports through CHECK with every detail in INFO.
template <class T>
bool matches_reference(const std::vector<T>& data, Op op, T got, uint64_t sequential_run) {
  const T expected = host::reduce<T>(op, data.data(), data.size());
  INFO("got " << show(got) << ", expected " << show(expected));
  if constexpr (std::is_floating_point_v<T>) {
    if (op == Op::add) {
      const auto exact = host::exact_sum(data.data(), data.size());
      const long double bound = host::float_add_bound(exact, data.size(), sequential_run);
      const long double error = std::fabs(static_cast<long double>(got) - exact.exact);
      INFO("exact " << double(exact.exact) << ", |error| " << double(error) << ", bound " << double(bound)
                    << ", sequential_run " << sequential_run);
      CHECK(error <= bound);
      return error <= bound;
    }
  }
  const bool same = host::same_bits(got, expected);
  CHECK(same);
  return same;
}

// One plan with its input (room for max_count plus guards), output and scratch buffers.
template <class T>
class ReduceRig {
 public:
  // Guard elements around the data in the input buffer hold hostile values.
  static constexpr uint64_t kGuard = 16;

  ReduceRig(Device& dev, const ReduceDesc& desc)
      : dev_(dev),
        plan_(make_reduce(dev.context(), desc)),
        input_(make_buffer(dev, (desc.max_count + 2 * kGuard) * sizeof(T))),
        output_(make_buffer(dev, 64)),
        scratch_(make_scratch(dev, plan_)) {}

  const Reduce& plan() const { return plan_; }
  const Buffer& input() const { return input_; }
  const Buffer& output() const { return output_; }
  const Buffer& scratch() const { return scratch_; }

  // Reduces `data` placed at element `in_shift` of the input buffer into element `out_shift` of the
  // poisoned output buffer; checks the result and that no other output word was written.
  bool check(const std::vector<T>& data, uint64_t in_shift = 0, uint64_t out_shift = 0) {
    const Op op = plan_.desc().op;
    const uint64_t n = data.size();
    REQUIRE(in_shift <= kGuard);
    REQUIRE((out_shift + 1) * sizeof(T) <= output_.size());
    INFO(to_string(plan_.algorithm()) << " " << to_string(plan_.desc().type) << " " << to_string(op) << " n=" << n
                                      << " input shift " << in_shift << " output shift " << out_shift);
    // [hostile x in_shift][data][hostile x kGuard]
    std::vector<T> staged(in_shift + n + kGuard, hostile<T>(op));
    std::copy(data.begin(), data.end(), staged.begin() + std::ptrdiff_t(in_shift));
    upload(dev_, input_, staged);
    poison(dev_, output_);
    Result<void> recorded;
    auto submitted = submit_compute(dev_, [&](VkCommandBuffer cmd) {
      recorded = plan_.record(cmd, input_.range(in_shift * sizeof(T), n * sizeof(T)),
                              output_.range(out_shift * sizeof(T), sizeof(T)), n, scratch_.range());
    });
    INFO("record: " << recorded.message() << " submit: " << submitted.message());
    REQUIRE(recorded.ok());
    REQUIRE(submitted.ok());
    const auto words = download<uint32_t>(dev_, output_, output_.size() / 4);
    T got{};
    std::memcpy(&got, reinterpret_cast<const char*>(words.data()) + out_shift * sizeof(T), sizeof(T));
    bool untouched = true;
    for (size_t w = 0; w < words.size(); ++w) {
      const bool inside = w * 4 >= out_shift * sizeof(T) && w * 4 < (out_shift + 1) * sizeof(T);
      if (!inside && words[w] != kPoison) untouched = false;
    }
    INFO("output words outside the result must keep the poison");
    CHECK(untouched);
    return matches_reference(data, op, got, plan_.sequential_run(n)) && untouched;
  }

 private:
  Device& dev_;
  Reduce plan_;
  Buffer input_, output_, scratch_;
};

template <class T>
std::vector<T> random_values(uint64_t n, std::mt19937_64& rng) {
  std::vector<T> v(n);
  host::fill_random(v, rng);
  return v;
}

inline bool type_supported(const Context& context, DataType type) {
  const auto& caps = context.capabilities();
  if (type == DataType::u64 || type == DataType::i64) return caps.has(feature_int64);
  if (type == DataType::f64) return caps.has(feature_float64);
  if (type == DataType::u8) return caps.has(feature_storage_8bit);
  if (type == DataType::u16) return caps.has(feature_storage_16bit);
  return true;
}

inline std::vector<Op> ops_for(DataType type) {
  if (is_integer(type)) return {Op::add, Op::min, Op::max, Op::bit_and, Op::bit_or, Op::bit_xor};
  return {Op::add, Op::min, Op::max};
}

inline const char* algorithm_name(ReduceAlgorithm a) { return to_string(a); }

}  // namespace vkprim::test

// Declares `rng`, a std::mt19937_64 seeded freshly for this test case; the seed is printed with
// every failure in scope (replay with VKPRIM_TEST_SEED=<seed>).
#define VKPRIM_TEST_RNG(rng)                                  \
  const uint64_t rng##_seed = ::vkprim::test::fresh_seed();   \
  INFO("random seed " << rng##_seed << " (VKPRIM_TEST_SEED)"); \
  std::mt19937_64 rng(rng##_seed)

// Checked at the end of every test case: no validation message (warning or error) was reported on
// the device since the test case started. Prints them on failure.
#define REQUIRE_NO_VALIDATION_MESSAGES(dev)                                         \
  do {                                                                              \
    const ::vkprim::Device& vkprim_dev_ = (dev);                                    \
    INFO("validation messages:\n" << ::vkprim::test::describe_messages(vkprim_dev_)); \
    REQUIRE(vkprim_dev_.validation_message_count() == 0);                           \
  } while (0)
