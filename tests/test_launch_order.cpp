// The chained kernels with tiles taken in launch order (ContextOptions::tile_order = launch) where a tile
// finds many predecessors not yet launched: the chained_fallback scan, Select, the keyed kernels and
// onesweep. On lavapipe each worker thread runs its own contiguous chunk of workgroups, so the first tile of
// every chunk but the first reduces most of the tiles before it itself, and llvmpipe's loops share one
// budget of 65535 iterations per invocation (docs/ALGORITHMS.md, "Loop budget"). CMake runs this binary
// whole with 2 and with 4 worker threads; the cases hold on any device.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

#include "test_support.hpp"
#include "vkprim/run_length_encode.hpp"
#include "vkprim/scan.hpp"
#include "vkprim/select.hpp"
#include "vkprim/sort.hpp"
#include "vkprim/unique.hpp"

using namespace vkprim;

namespace {

// The most tiles per dispatch llvmpipe keeps in launch order (ContextImpl::kLoopBudgetLaunchTiles).
constexpr uint64_t kLaunchTiles = 512;

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Launch-order tiles with the look-back statistics counted and `spin_limit` polls per predecessor.
Device& launch_device(uint32_t spin_limit) {
  ContextOptions o;
  o.tile_order = TileOrder::launch;
  o.collect_statistics = true;
  o.fallback_spin_limit = spin_limit;
  return test::device(o);
}

template <class Plan>
Plan created(Result<Plan> plan) {
  INFO("create: " << (plan ? std::string("ok") : plan.error().message));
  REQUIRE(plan.ok());
  return std::move(plan).value();
}

Buffer scratch_for(const Device& dev, const ScratchRequirements& need) {
  return test::make_buffer(dev, std::max<VkDeviceSize>(16, need.size));
}

// Checks that the statistics of the last record counted `tiles` tiles; with VKPRIM_TEST_VERBOSE set, prints
// them (tiles, fallbacks, look-back steps summed over tiles, deepest look-back).
void check_statistics(const Device& dev, const Buffer& scratch, VkDeviceSize offset, uint64_t tiles, const char* what) {
  const auto stats = test::download<uint32_t>(dev, scratch, 4, offset);
  if (std::getenv("VKPRIM_TEST_VERBOSE"))
    std::fprintf(stderr, "%s: tiles %u, fallbacks %u, steps %u, deepest %u\n", what, stats[0], stats[1], stats[2],
                 stats[3]);
  INFO(what << ": tiles started");
  CHECK(stats[0] == tiles);
}

// Whether `got` equals `expected`; where not, reports how many elements differ and the first of them
// (a CHECK of the vectors themselves would print millions of elements).
template <class T>
bool same_elements(const std::vector<T>& got, const std::vector<T>& expected, const char* what) {
  if (got.size() != expected.size()) {
    FAIL_CHECK(what << ": " << got.size() << " elements, expected " << expected.size());
    return false;
  }
  uint64_t wrong = 0, first = 0;
  for (uint64_t i = got.size(); i-- > 0;)
    if (got[i] != expected[i]) {
      ++wrong;
      first = i;
    }
  if (wrong == 0) return true;
  FAIL_CHECK(what << ": " << wrong << " of " << got.size() << " wrong, the first at " << first << " (got "
                  << got[first] << ", expected " << expected[first] << ")");
  return false;
}

void record_or_fail(const Device& dev, const std::function<Result<void>(VkCommandBuffer)>& record) {
  Result<void> recorded;
  auto submitted = test::submit_compute(dev, [&](VkCommandBuffer cmd) { recorded = record(cmd); });
  INFO("record: " << recorded.message() << ", submit: " << submitted.message());
  REQUIRE(recorded.ok());
  REQUIRE(submitted.ok());
}

// Tiles of 256 x 4 vectors: 4096 u32 elements.
ScanDesc scan_desc(uint64_t n) {
  ScanDesc desc{DataType::u32, Op::add, ScanKind::inclusive, n, ScanAlgorithm::chained_fallback};
  desc.tuning.workgroup_size = 256;
  desc.tuning.vectors_per_thread = 4;
  return desc;
}
constexpr uint64_t kScanTile = 4096;

void check_scan(Device& dev, uint64_t n, std::mt19937_64& rng) {
  Scan plan = created(Scan::create(dev.context(), scan_desc(n)));
  const auto input = test::random_values<uint32_t>(n, rng);
  Buffer in = test::make_buffer(dev, n * 4), out = test::make_buffer(dev, n * 4);
  Buffer scratch = scratch_for(dev, plan.scratch_requirements());
  test::upload(dev, in, input);
  test::poison(dev, out);
  record_or_fail(dev, [&](VkCommandBuffer cmd) { return plan.record(cmd, in.range(), out.range(), n, scratch.range()); });
  std::vector<uint32_t> expected(n);
  std::inclusive_scan(input.begin(), input.end(), expected.begin());
  same_elements(test::download<uint32_t>(dev, out, n), expected, "scan");
  if (plan.dispatch_count(n) == 1)  // the statistics are the last window's
    check_statistics(dev, scratch, plan.statistics_offset(), ceil_div(n, kScanTile), "scan");
}

// Select keeps the values below 8 of values 0..15 (about half).
void check_select(Device& dev, uint64_t n, std::mt19937_64& rng) {
  Select plan = created(Select::create(dev.context(), SelectDesc{DataType::u32, n, SelectPredicate::less,
                                                                 SelectAlgorithm::chained}));
  std::vector<uint32_t> input(n);
  std::uniform_int_distribution<uint32_t> value(0, 15);
  for (auto& v : input) v = value(rng);
  const uint32_t bound = 8;
  Buffer in = test::make_buffer(dev, n * 4), out = test::make_buffer(dev, n * 4), count = test::make_buffer(dev, 16);
  Buffer scratch = scratch_for(dev, plan.scratch_requirements());
  test::upload(dev, in, input);
  test::poison(dev, out);
  test::poison(dev, count);
  record_or_fail(dev, [&](VkCommandBuffer cmd) {
    return plan.record(cmd,
                       SelectOperands{.input = in.range(),
                                      .flags = {},
                                      .output = out.range(),
                                      .selected_count = count.range(0, 4),
                                      .scratch = scratch.range()},
                       n, Comparand::of(bound));
  });
  std::vector<uint32_t> expected;
  std::copy_if(input.begin(), input.end(), std::back_inserter(expected), [&](uint32_t v) { return v < bound; });
  const uint32_t k = test::download<uint32_t>(dev, count, 1)[0];
  check_statistics(dev, scratch, plan.statistics_offset(), ceil_div(n, plan.elements_per_tile()), "select");
  REQUIRE(k == expected.size());
  same_elements(test::download<uint32_t>(dev, out, k), expected, "selected elements");
}

// Every key differs from the one before it: every element is a run of its own.
void check_run_length_encode(Device& dev, uint64_t n, std::mt19937_64& rng) {
  RunLengthEncode plan = created(
      RunLengthEncode::create(dev.context(), RunLengthEncodeDesc{DataType::u32, n, {}, KeyedAlgorithm::chained}));
  std::vector<uint32_t> keys(n);
  std::uniform_int_distribution<uint32_t> step(1, 3);
  keys[0] = uint32_t(rng());
  for (uint64_t i = 1; i < n; ++i) keys[i] = keys[i - 1] + step(rng);
  Buffer in = test::make_buffer(dev, n * 4), unique = test::make_buffer(dev, n * 4);
  Buffer lengths = test::make_buffer(dev, n * 4), count = test::make_buffer(dev, 16);
  Buffer scratch = scratch_for(dev, plan.scratch_requirements());
  test::upload(dev, in, keys);
  test::poison(dev, unique);
  test::poison(dev, lengths);
  test::poison(dev, count);
  record_or_fail(dev, [&](VkCommandBuffer cmd) {
    return plan.record(cmd,
                       RunLengthEncodeOperands{.keys = in.range(),
                                               .unique_keys = unique.range(),
                                               .lengths = lengths.range(),
                                               .run_count = count.range(0, 4),
                                               .scratch = scratch.range()},
                       n);
  });
  const uint32_t k = test::download<uint32_t>(dev, count, 1)[0];
  check_statistics(dev, scratch, plan.statistics_offset(), ceil_div(n, plan.elements_per_tile(n)),
                   "run-length encode");
  REQUIRE(k == n);
  same_elements(test::download<uint32_t>(dev, unique, n), keys, "run keys");
  same_elements(test::download<uint32_t>(dev, lengths, n), std::vector<uint32_t>(n, 1u), "run lengths");
}

// Runs of 1 to 4 equal u64 keys: NonTrivialRuns' offsets and lengths, then Unique's indices.
void check_runs_and_unique_u64(Device& dev, uint64_t n, std::mt19937_64& rng) {
  std::vector<uint64_t> keys(n);
  std::uniform_int_distribution<int> coin(0, 3);
  keys[0] = rng();
  for (uint64_t i = 1; i < n; ++i) keys[i] = coin(rng) == 0 ? keys[i - 1] : keys[i - 1] + 1 + (rng() & 0xFFFF);
  std::vector<uint32_t> expected_offsets, expected_lengths, expected_unique;
  for (uint64_t i = 0; i < n;) {
    uint64_t j = i + 1;
    while (j < n && keys[j] == keys[i]) ++j;
    expected_unique.push_back(uint32_t(i));
    if (j - i > 1) {
      expected_offsets.push_back(uint32_t(i));
      expected_lengths.push_back(uint32_t(j - i));
    }
    i = j;
  }
  Buffer in = test::make_buffer(dev, n * 8), a = test::make_buffer(dev, n * 4), b = test::make_buffer(dev, n * 4);
  Buffer count = test::make_buffer(dev, 16);
  test::upload(dev, in, keys);

  NonTrivialRuns runs = created(
      NonTrivialRuns::create(dev.context(), RunLengthEncodeDesc{DataType::u64, n, {}, KeyedAlgorithm::chained}));
  Buffer scratch = scratch_for(dev, runs.scratch_requirements());
  test::poison(dev, a);
  test::poison(dev, b);
  test::poison(dev, count);
  record_or_fail(dev, [&](VkCommandBuffer cmd) {
    return runs.record(cmd,
                       NonTrivialRunsOperands{.keys = in.range(),
                                              .offsets = a.range(),
                                              .lengths = b.range(),
                                              .run_count = count.range(0, 4),
                                              .scratch = scratch.range()},
                       n);
  });
  const uint32_t k = test::download<uint32_t>(dev, count, 1)[0];
  check_statistics(dev, scratch, runs.statistics_offset(), ceil_div(n, runs.elements_per_tile(n)),
                   "non-trivial runs");
  REQUIRE(k == expected_offsets.size());
  same_elements(test::download<uint32_t>(dev, a, k), expected_offsets, "run offsets");
  same_elements(test::download<uint32_t>(dev, b, k), expected_lengths, "run lengths");

  UniqueDesc desc{DataType::u64, n, SelectOutput::indices};
  desc.algorithm = KeyedAlgorithm::chained;
  Unique unique = created(Unique::create(dev.context(), desc));
  Buffer unique_scratch = scratch_for(dev, unique.scratch_requirements());
  test::poison(dev, a);
  test::poison(dev, count);
  record_or_fail(dev, [&](VkCommandBuffer cmd) {
    return unique.record(cmd,
                         UniqueOperands{.keys = in.range(),
                                        .output = a.range(),
                                        .unique_count = count.range(0, 4),
                                        .scratch = unique_scratch.range()},
                         n);
  });
  const uint32_t u = test::download<uint32_t>(dev, count, 1)[0];
  check_statistics(dev, unique_scratch, unique.statistics_offset(), ceil_div(n, unique.elements_per_tile(n)),
                   "unique");
  REQUIRE(u == expected_unique.size());
  same_elements(test::download<uint32_t>(dev, a, u), expected_unique, "unique indices");
}

void check_sort(Device& dev, uint64_t n, std::mt19937_64& rng) {
  SortDesc desc;
  desc.max_count = n;
  desc.algorithm = SortAlgorithm::onesweep;
  RadixSort plan = created(RadixSort::create(dev.context(), desc));
  const auto keys = test::random_values<uint32_t>(n, rng);
  Buffer buffer = test::make_buffer(dev, n * 4);
  Buffer scratch = scratch_for(dev, plan.scratch_requirements());
  test::upload(dev, buffer, keys);
  record_or_fail(dev, [&](VkCommandBuffer cmd) { return plan.record(cmd, buffer.range(), BufferRange{}, n, scratch.range()); });
  auto expected = keys;
  std::sort(expected.begin(), expected.end());
  same_elements(test::download<uint32_t>(dev, buffer, n), expected, "sorted keys");
}

// Keys per tile of a onesweep plan of `tiles` tiles (the tile shape follows the count).
uint64_t sort_count_of_tiles(Device& dev, uint64_t tiles) {
  SortDesc desc;
  desc.max_count = uint64_t(1) << 20;
  desc.algorithm = SortAlgorithm::onesweep;
  RadixSort probe = created(RadixSort::create(dev.context(), desc));
  return tiles * probe.keys_per_tile();
}

bool keyed_available(Device& dev) { return test::has_features(dev, feature_memory_model, "the chained kernels"); }

}  // namespace

TEST_CASE("the context keeps launch order on llvmpipe up to 512 tiles per dispatch and takes tickets above",
          "[launch_order][tile_order]") {
  Device& dev = launch_device(64);
  const Context& context = dev.context();
  const bool llvmpipe = context.capabilities().driver_id == VK_DRIVER_ID_MESA_LLVMPIPE;
  CHECK(context.tile_order(1) == TileOrder::launch);
  CHECK(context.tile_order(kLaunchTiles) == TileOrder::launch);
  CHECK(context.tile_order(kLaunchTiles + 1) == (llvmpipe ? TileOrder::ticket : TileOrder::launch));
  ContextOptions ticket;
  ticket.tile_order = TileOrder::ticket;
  CHECK(test::device(ticket).context().tile_order(1) == TileOrder::ticket);
  const TileOrder automatic = test::device().context().tile_order(1);
  CHECK(automatic == (context.capabilities().driver_id == VK_DRIVER_ID_NVIDIA_PROPRIETARY ? TileOrder::launch
                                                                                         : TileOrder::ticket));
}

// The look-back's steps are counted over every fallback round of a tile: with 4096 polls per predecessor a
// tile that reduces a few hundred predecessors itself stays within llvmpipe's budget only that way.
TEST_CASE("chained kernels in launch order at 512 tiles with 4096 polls per predecessor match the CPU",
          "[launch_order][fallback]") {
  Device& dev = launch_device(4096);
  if (!keyed_available(dev)) return;
  REQUIRE(dev.context().tile_order(kLaunchTiles) == TileOrder::launch);
  VKPRIM_TEST_RNG(rng);
  check_scan(dev, kLaunchTiles * kScanTile, rng);
  {
    Select probe = created(Select::create(dev.context(), SelectDesc{DataType::u32, 1000, SelectPredicate::less,
                                                                    SelectAlgorithm::chained}));
    check_select(dev, kLaunchTiles * probe.elements_per_tile(), rng);
  }
  {
    RunLengthEncode probe = created(RunLengthEncode::create(
        dev.context(), RunLengthEncodeDesc{DataType::u32, 1000, {}, KeyedAlgorithm::chained}));
    const uint64_t n = kLaunchTiles * probe.elements_per_tile();
    REQUIRE(probe.elements_per_tile() == created(RunLengthEncode::create(dev.context(), RunLengthEncodeDesc{
                                                     DataType::u32, n, {}, KeyedAlgorithm::chained}))
                                             .elements_per_tile(n));
    check_run_length_encode(dev, n, rng);
  }
  check_sort(dev, sort_count_of_tiles(dev, kLaunchTiles), rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("chained_fallback scan of 2^23 u32 in launch order matches the CPU", "[launch_order][scan]") {
  Device& dev = launch_device(64);
  VKPRIM_TEST_RNG(rng);
  check_scan(dev, uint64_t(1) << 23, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("chained Select of 2^24 u32 in launch order keeps what std::copy_if keeps", "[launch_order][select]") {
  Device& dev = launch_device(64);
  if (!keyed_available(dev)) return;
  VKPRIM_TEST_RNG(rng);
  check_select(dev, uint64_t(1) << 24, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("RunLengthEncode of 2^23 distinct u32 keys in launch order finds every run", "[launch_order][by_key]") {
  Device& dev = launch_device(64);
  if (!keyed_available(dev)) return;
  VKPRIM_TEST_RNG(rng);
  check_run_length_encode(dev, uint64_t(1) << 23, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("NonTrivialRuns and Unique of 2^22 u64 keys in launch order match the CPU", "[launch_order][by_key]") {
  Device& dev = launch_device(64);
  if (!keyed_available(dev)) return;
  if (!test::type_supported(dev.context(), DataType::u64)) {
    test::skip("u64 keys need shaderInt64");
    return;
  }
  VKPRIM_TEST_RNG(rng);
  check_runs_and_unique_u64(dev, uint64_t(1) << 22, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("onesweep sort of 2^22 u32 keys in launch order matches std::sort", "[launch_order][sort]") {
  Device& dev = launch_device(64);
  if (!keyed_available(dev)) return;
  VKPRIM_TEST_RNG(rng);
  check_sort(dev, uint64_t(1) << 22, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}
