// GPU-driven counts for reduce and scan (record_indirect): the element count is a u32 read on the GPU,
// clamped to max_count, and the dispatch sizes are computed on the GPU. Every count is checked against the
// host reference with the output poisoned first; counts written by the GPU in the same command buffer
// need no read-back; algorithms that size their passes on the CPU are refused.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "scan_rig.hpp"
#include "test_support.hpp"

using namespace vkprim;

namespace {

// Counts around grid_stride's and the chained scan's tiles (4096 u32 elements each), 0, 1 and max_count.
std::vector<uint32_t> indirect_counts(uint32_t max_count, std::mt19937_64& rng) {
  std::vector<uint32_t> counts = {0, 1, 2, 7, 8, 9, 4095, 4096, 4097, 3 * 4096 + 5, max_count - 1, max_count};
  counts.push_back(std::uniform_int_distribution<uint32_t>(1, max_count)(rng));
  return counts;
}

void upload_count(const Device& dev, const Buffer& buffer, uint32_t count, VkDeviceSize offset) {
  const std::vector<uint32_t> word = {count};
  test::upload(dev, buffer, word, offset);
}

}  // namespace

TEST_CASE("grid_stride reduce recorded indirectly reduces exactly the GPU count, clamped to max_count",
          "[indirect][reduce]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  constexpr uint32_t kMax = (1u << 16) + 3;
  for (Op op : {Op::add, Op::max}) {
    Reduce plan = test::make_reduce(dev.context(), ReduceDesc{DataType::u32, op, kMax});
    REQUIRE(plan.algorithm() == ReduceAlgorithm::grid_stride);
    const auto data = test::random_values<uint32_t>(kMax, rng);
    Buffer input = test::make_buffer(dev, kMax * 4);
    Buffer output = test::make_buffer(dev, 64);
    Buffer count = test::make_buffer(dev, 64);
    Buffer scratch = test::make_scratch(dev, plan);
    test::upload(dev, input, data);
    auto counts = indirect_counts(kMax, rng);
    counts.push_back(kMax + 1000);     // above max_count: clamped
    counts.push_back(0xffffffffu);
    for (uint32_t n : counts) {
      INFO(to_string(op) << " GPU count " << n);
      upload_count(dev, count, n, 12);
      test::poison(dev, output);
      Result<void> recorded;
      auto submitted = test::submit_compute(dev, [&](VkCommandBuffer cmd) {
        recorded = plan.record_indirect(cmd, input.range(), output.range(4, 4), count.range(12, 4), scratch.range());
      });
      INFO("record_indirect: " << recorded.message() << " submit: " << submitted.message());
      REQUIRE(recorded.ok());
      REQUIRE(submitted.ok());
      const auto words = test::download<uint32_t>(dev, output, 16);
      const std::vector<uint32_t> used(data.begin(), data.begin() + std::min(n, kMax));
      CHECK(test::matches_reference(used, op, words[1], 1));
      CHECK(words[0] == test::kPoison);
      CHECK(words[2] == test::kPoison);
    }
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

// reduce_then_scan's structure follows max_count: one tile, one block of tile sums, and two block levels.
namespace {

void check_scan_indirect(ScanAlgorithm algorithm, uint32_t max_count, std::mt19937_64& rng) {
  Device& dev = test::device();
  for (ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
    Scan plan = test::make_scan(dev.context(), ScanDesc{DataType::u32, Op::add, kind, max_count, algorithm});
    const auto data = test::random_values<uint32_t>(max_count, rng);
    Buffer input = test::make_buffer(dev, uint64_t(max_count) * 4);
    Buffer output = test::make_buffer(dev, (uint64_t(max_count) + 8) * 4);
    Buffer count = test::make_buffer(dev, 16);
    Buffer scratch = test::make_scratch(dev, plan);
    test::upload(dev, input, data);
    std::vector<uint32_t> counts = {0, 1, 2, 9, max_count - 1, max_count, max_count + 77};
    for (uint32_t c : indirect_counts(max_count, rng))
      if (c <= max_count) counts.push_back(c);
    for (uint32_t n : counts) {
      INFO(to_string(algorithm) << " " << to_string(kind) << " max_count " << max_count << " GPU count " << n);
      upload_count(dev, count, n, 0);
      test::poison(dev, output);
      Result<void> recorded;
      auto submitted = test::submit_compute(dev, [&](VkCommandBuffer cmd) {
        recorded = plan.record_indirect(cmd, input.range(), output.range(), count.range(), scratch.range());
      });
      INFO("record_indirect: " << recorded.message() << " submit: " << submitted.message());
      REQUIRE(recorded.ok());
      REQUIRE(submitted.ok());
      const uint32_t used = std::min(n, max_count);
      const auto got = test::download<uint32_t>(dev, output, uint64_t(max_count) + 8);
      std::string why;
      const size_t bad = host::first_scan_mismatch(Op::add, kind, data.data(), got.data(), used, 1, why);
      INFO(why);
      CHECK(bad == used);
      bool untouched = true;
      for (size_t i = used; i < got.size(); ++i) untouched = untouched && got[i] == test::kPoison;
      INFO("outputs past the GPU count keep the poison");
      CHECK(untouched);
    }
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

}  // namespace

TEST_CASE("chained scans recorded indirectly write exactly the GPU count of outputs, clamped to max_count",
          "[indirect][scan]") {
  if (!test::has_features(test::device(), feature_memory_model, "chained scans (the Vulkan memory model)")) return;
  VKPRIM_TEST_RNG(rng);
  check_scan_indirect(ScanAlgorithm::chained_fallback, (1u << 16) + 5, rng);
}

TEST_CASE("reduce_then_scan recorded indirectly matches the CPU for one tile, one block and two block levels",
          "[indirect][scan]") {
  VKPRIM_TEST_RNG(rng);
  // u32 tiles are 128 x 4 x 4 = 2048 elements; a block holds 512 tile sums.
  for (uint32_t max_count : {1000u, (1u << 16) + 5, (1u << 20) + (1u << 12) + 3})
    check_scan_indirect(ScanAlgorithm::reduce_then_scan, max_count, rng);
}

TEST_CASE("a count written by the GPU in the same command buffer drives reduce and scan with no read-back",
          "[indirect]") {
  Device& dev = test::device();
  if (!test::has_features(dev, feature_memory_model, "chained scans (the Vulkan memory model)")) return;
  VKPRIM_TEST_RNG(rng);
  constexpr uint32_t kMax = 50000;
  // The count comes from a reduce: max of a buffer holding the count among smaller values.
  const uint32_t n = std::uniform_int_distribution<uint32_t>(1, kMax)(rng);
  std::vector<uint32_t> count_source = test::random_values<uint32_t>(1000, rng);
  for (auto& v : count_source) v %= n;
  count_source[std::uniform_int_distribution<size_t>(0, 999)(rng)] = n;
  Reduce count_plan = test::make_reduce(dev.context(), ReduceDesc{DataType::u32, Op::max, 1000});
  Reduce sum_plan = test::make_reduce(dev.context(), ReduceDesc{DataType::u32, Op::add, kMax});
  Scan scan_plan = test::make_scan(dev.context(), ScanDesc{DataType::u32, Op::add, ScanKind::exclusive, kMax});
  const auto data = test::random_values<uint32_t>(kMax, rng);
  Buffer source = test::make_buffer(dev, 1000 * 4), count = test::make_buffer(dev, 16);
  Buffer input = test::make_buffer(dev, kMax * 4), scanned = test::make_buffer(dev, kMax * 4);
  Buffer sum = test::make_buffer(dev, 16);
  Buffer s0 = test::make_scratch(dev, count_plan), s1 = test::make_scratch(dev, sum_plan),
         s2 = test::make_scratch(dev, scan_plan);
  test::upload(dev, source, count_source);
  test::upload(dev, input, data);
  test::poison(dev, scanned);
  test::poison(dev, sum);
  auto barrier = test::pipeline_barrier(dev);
  Result<void> r0, r1, r2;
  auto submitted = test::submit_compute(dev, [&](VkCommandBuffer cmd) {
    r0 = count_plan.record(cmd, source.range(), count.range(0, 4), 1000, s0.range());
    VkMemoryBarrier after{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    after.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    after.dstAccessMask = VK_ACCESS_SHADER_READ_BIT;
    barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &after, 0, nullptr,
            0, nullptr);
    r1 = sum_plan.record_indirect(cmd, input.range(), sum.range(0, 4), count.range(0, 4), s1.range());
    r2 = scan_plan.record_indirect(cmd, input.range(), scanned.range(), count.range(0, 4), s2.range());
  });
  INFO("records: " << r0.message() << " / " << r1.message() << " / " << r2.message() << "; submit "
                   << submitted.message());
  REQUIRE((r0.ok() && r1.ok() && r2.ok() && submitted.ok()));
  const std::vector<uint32_t> used(data.begin(), data.begin() + n);
  const auto got_sum = test::download<uint32_t>(dev, sum, 1);
  CHECK(test::matches_reference(used, Op::add, got_sum[0], 1));
  const auto got = test::download<uint32_t>(dev, scanned, kMax);
  std::string why;
  INFO("GPU count " << n);
  CHECK(host::first_scan_mismatch(Op::add, ScanKind::exclusive, data.data(), got.data(), n, 1, why) == n);
  INFO(why);
  CHECK(std::all_of(got.begin() + n, got.end(), [](uint32_t w) { return w == test::kPoison; }));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

// ScratchRequirements' reuse rule: with a barrier from compute-shader reads and writes to compute-shader
// reads and writes and transfer writes, one scratch range serves two indirect records in a row (the second
// args pass overwrites the arguments the first dispatches read), with no validation message.
TEST_CASE("two record_indirect calls sharing one scratch range in one command buffer are both right",
          "[indirect][reuse]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const Scan plan = test::make_scan(dev.context(), ScanDesc{DataType::u32, Op::add, ScanKind::inclusive, 70000});
  test::check_two_records<uint32_t>(dev, plan, {65536 + 17, 1234}, true, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("record_indirect refuses algorithms sized on the CPU, bad count buffers and counts past one window",
          "[indirect][errors]") {
  Device& dev = test::device();
  Buffer buf = test::make_buffer(dev, 1 << 16);
  {
    Reduce plan = test::make_reduce(dev.context(), ReduceDesc{DataType::u32, Op::add, 1000,
                                                              ReduceAlgorithm::sequential});
    auto r = plan.record_indirect(VK_NULL_HANDLE, buf.range(), buf.range(), buf.range(), buf.range());
    INFO(r.message());
    CHECK(r == Status::unsupported);
    CHECK(r.message().find("sequential") != std::string::npos);
  }
  {
    Scan plan = test::make_scan(dev.context(), ScanDesc{DataType::u32, Op::add, ScanKind::inclusive, 1000,
                                                        ScanAlgorithm::hillis_steele});
    auto r = plan.record_indirect(VK_NULL_HANDLE, buf.range(), buf.range(), buf.range(), buf.range());
    INFO(r.message());
    CHECK(r == Status::unsupported);
  }
  Reduce plan = test::make_reduce(dev.context(), ReduceDesc{DataType::u32, Op::add, 1000});
  Buffer input = test::make_buffer(dev, 4000), output = test::make_buffer(dev, 16), count = test::make_buffer(dev, 16);
  Buffer scratch = test::make_scratch(dev, plan);
  auto expect = [&](const BufferRange& count_range, const char* words) {
    auto r = plan.record_indirect(VK_NULL_HANDLE, input.range(), output.range(), count_range, scratch.range());
    INFO(r.message());
    CHECK(r == Status::invalid_argument);
    CHECK(r.message().find(words) != std::string::npos);
  };
  expect(BufferRange{}, "count buffer is VK_NULL_HANDLE");
  expect(count.range(2, 4), "not a multiple of 4");
  expect(count.range(0, 2), "4 are needed");
  // A count buffer inside scratch would be overwritten by the plan's own arguments.
  {
    auto r = plan.record_indirect(VK_NULL_HANDLE, input.range(), output.range(), scratch.range(0, 4), scratch.range());
    CHECK(r == Status::invalid_argument);
  }
  // Past one storage-buffer window: refused before any buffer is looked at.
  const uint64_t window_elements = dev.context().capabilities().max_storage_buffer_range / 4;
  Reduce big = test::make_reduce(dev.context(), ReduceDesc{DataType::u32, Op::add, window_elements + 1});
  auto r = big.record_indirect(VK_NULL_HANDLE, input.range(), output.range(), count.range(), scratch.range());
  INFO(r.message());
  CHECK(r == Status::unsupported);
  CHECK(r.message().find("window") != std::string::npos);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}
