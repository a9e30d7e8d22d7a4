// Stream compaction: Select against std::copy_if and Partition against std::stable_partition, on the
// chained single pass (forced fallback included), the portable count_scan_scatter path (memory model
// masked), the no-subgroup path, record_indirect, unaligned offsets, and every argument error.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "select_rig.hpp"
#include "test_support.hpp"
#include "vkprim/select.hpp"

using namespace vkprim;
using test::CompactionRig;
using test::Shifts;

namespace {

constexpr std::array<SelectPredicate, 7> kPredicates = {
    SelectPredicate::flagged, SelectPredicate::less,  SelectPredicate::less_equal, SelectPredicate::greater,
    SelectPredicate::greater_equal, SelectPredicate::equal, SelectPredicate::not_equal};
constexpr std::array<DataType, 6> kTypes = {DataType::u32, DataType::i32, DataType::f32,
                                            DataType::u64, DataType::i64, DataType::f64};

// Elements per tile of the plan these tests build for `type` on this context (the device's default shape), so
// the edge sizes land on its tile boundaries whatever the tuning.
template <class Plan = Select>
uint64_t tile_of(Context& context, DataType type) {
  return test::make_compaction<Plan>(context, SelectDesc{type, 1, SelectPredicate::flagged}).elements_per_tile();
}

test::DeviceSetup no_memory_model() {
  test::DeviceSetup s;
  s.testing.mask_features = feature_memory_model;
  return s;
}
test::DeviceSetup no_subgroups(bool memory_model = true) {
  test::DeviceSetup s;
  s.options.force_no_subgroups = true;
  if (!memory_model) s.testing.mask_features = feature_memory_model;
  return s;
}
test::DeviceSetup no_push_descriptors() {
  test::DeviceSetup s;
  s.options.disable_push_descriptors = true;
  return s;
}
test::DeviceSetup forced_fallback(uint32_t period, bool subgroups = true) {
  test::DeviceSetup s = test::forced_fallback(period);
  s.options.force_no_subgroups = !subgroups;
  return s;
}

// Values with many repeats (so equal/not_equal and the comparand's own value matter), and for floats
// NaNs, both zeros and infinities sprinkled in.
template <class T>
std::vector<T> test_values(uint64_t n, std::mt19937_64& rng, bool small_range) {
  std::vector<T> v = test::random_values<T>(n, rng);
  if (small_range)
    for (auto& x : v) {
      if constexpr (std::is_floating_point_v<T>) x = T(int64_t(rng() % 9) - 4) / T(2);
      else x = T(int64_t(rng() % 9) - 4);
    }
  if constexpr (std::is_floating_point_v<T>) {
    const T specials[] = {std::numeric_limits<T>::quiet_NaN(), -std::numeric_limits<T>::quiet_NaN(), T(0), -T(0),
                          std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity()};
    for (auto& x : v)
      if (rng() % 16 == 0) x = specials[rng() % 6];
  }
  return v;
}

template <class T>
T pick_comparand(const std::vector<T>& data, std::mt19937_64& rng) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (rng() % 6) {
      case 0: return -T(0);
      case 1: return std::numeric_limits<T>::quiet_NaN();
      default: break;
    }
  }
  return data.empty() ? T(0) : data[rng() % data.size()];
}

// Every predicate x edge sizes (empty, one, around a subgroup and a workgroup, tile +- 1, several tiles)
// for one type, with Select or Partition.
template <class T, class Plan>
void check_type(Device& dev, DataType type, std::mt19937_64& rng, bool all_sizes, RejectedOrder order) {
  const uint64_t tile = tile_of<Plan>(dev.context(), type);
  std::vector<uint64_t> sizes = {0, 1, 7, 9, 257, tile - 1, tile, tile + 1, 3 * tile + 5};
  if (!all_sizes) sizes = {0, 1, tile + 1, 3 * tile + 5};
  for (SelectPredicate p : kPredicates) {
    SelectDesc desc{type, 3 * tile + 5, p};
    desc.rejected_order = order;
    CompactionRig<T, Plan> rig(dev, desc);
    for (uint64_t n : sizes) {
      const auto data = test_values<T>(n, rng, n % 2 == 1);
      const auto flags = host::random_flags(n, n % 3 == 0 ? 50 : 10, rng);
      CHECK(rig.check(data, flags, pick_comparand(data, rng)));
    }
  }
}

template <class Plan>
void check_all_types(const test::DeviceSetup& setup, bool all_sizes = true,
                     RejectedOrder order = RejectedOrder::input) {
  Device& dev = test::device(setup);
  VKPRIM_TEST_RNG(rng);
  for (DataType type : kTypes) {
    if (!test::type_supported(dev.context(), type)) {
      test::skip(std::string(to_string(type)) + " is not supported by this device");
      continue;
    }
    host::with_type(type, [&](auto t) { check_type<decltype(t), Plan>(dev, type, rng, all_sizes, order); });
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

// Every size from tile - 64 to tile + 64 (u32, flagged, ~50%), batched: up to 129 records in one command
// buffer, each into its own output slot and count word, with the caller's barrier between records.
template <class Plan>
void check_every_size_across_a_tile(const test::DeviceSetup& setup, RejectedOrder order = RejectedOrder::input) {
  Device& dev = test::device(setup);
  VKPRIM_TEST_RNG(rng);
  constexpr bool partition = std::is_same_v<Plan, Partition>;
  const uint64_t tile = tile_of<Plan>(dev.context(), DataType::u32);
  const uint64_t first = tile - 64, last = tile + 64, max_n = last;
  SelectDesc desc{DataType::u32, max_n, SelectPredicate::flagged};
  desc.rejected_order = order;
  const Plan plan = test::make_compaction<Plan>(dev.context(), desc);
  const auto data = test::random_values<uint32_t>(max_n, rng);
  const auto flags = host::random_flags(max_n, 50, rng);
  const uint64_t sizes = last - first + 1;
  Buffer input = test::make_buffer(dev, max_n * 4);
  Buffer flag_buffer = test::make_buffer(dev, max_n * 4);
  Buffer output = test::make_buffer(dev, sizes * max_n * 4);
  Buffer counts = test::make_buffer(dev, sizes * 4);
  Buffer scratch = test::make_buffer(dev, plan.scratch_requirements().size);
  test::upload(dev, input, data);
  test::upload(dev, flag_buffer, flags);
  test::poison(dev, output);
  test::poison(dev, counts);
  const auto barrier = test::pipeline_barrier(dev);
  Result<void> recorded;
  auto submitted = test::submit_compute(dev, [&](VkCommandBuffer cmd) {
    for (uint64_t s = 0; s < sizes && recorded.ok(); ++s) {
      if (s > 0) test::between_records(barrier, cmd);  // the next record clears scratch and reuses it
      const uint64_t n = first + s;
      recorded = plan.record(cmd,
                             SelectOperands{.input = input.range(0, n * 4),
                                            .flags = flag_buffer.range(0, n * 4),
                                            .output = output.range(s * max_n * 4, n * 4),
                                            .selected_count = counts.range(s * 4, 4),
                                            .scratch = scratch.range()},
                             n);
    }
  });
  INFO("record: " << recorded.message() << " submit: " << submitted.message());
  REQUIRE(recorded.ok());
  REQUIRE(submitted.ok());
  const auto got = test::download<uint32_t>(dev, output, sizes * max_n);
  const auto got_counts = test::download<uint32_t>(dev, counts, sizes);
  uint64_t failures = 0;
  for (uint64_t s = 0; s < sizes; ++s) {
    const uint64_t n = first + s;
    const std::vector<uint32_t> d(data.begin(), data.begin() + std::ptrdiff_t(n));
    const std::vector<uint32_t> f(flags.begin(), flags.begin() + std::ptrdiff_t(n));
    uint64_t k = 0;
    auto expected = host::compact(SelectPredicate::flagged, d, f, 0u, partition, k);
    if (order == RejectedOrder::reversed) expected = host::reverse_rejected(expected, k);
    bool ok = got_counts[s] == k;
    for (uint64_t i = 0; i < max_n && ok; ++i)
      ok = got[s * max_n + i] == (i < expected.size() ? expected[i] : test::kPoison);
    if (!ok && failures++ < 5) FAIL_CHECK("n=" << n << ": count " << got_counts[s] << " (expected " << k << ") or output wrong");
  }
  CHECK(failures == 0);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

// What Plan::create says of `desc`: ok, or its error.
template <class Plan>
Result<void> created(Context& context, const SelectDesc& desc) {
  auto plan = Plan::create(context, desc);
  if (!plan) return plan.error();
  return {};
}

// 2^20 + 13 u32 elements at the given flag density; n random u32 also for a comparison predicate.
template <class Plan>
void check_large(const test::DeviceSetup& setup, std::initializer_list<double> densities) {
  Device& dev = test::device(setup);
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = (uint64_t(1) << 20) + 13;
  CompactionRig<uint32_t, Plan> rig(dev, SelectDesc{DataType::u32, n, SelectPredicate::flagged});
  const auto data = test::random_values<uint32_t>(n, rng);
  for (double density : densities) {
    INFO("density " << density << "%");
    CHECK(rig.check(data, host::random_flags(n, density, rng), 0u));
  }
  CompactionRig<float, Plan> floats(dev, SelectDesc{DataType::f32, n, SelectPredicate::greater});
  CHECK(floats.check(test_values<float>(n, rng, false), {}, 0.25f));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

}  // namespace

// ---- Select ----

TEST_CASE("select of u32 flagged keeps order and writes the count at edge sizes and densities 0%, 1%, 50%, 100%",
          "[select]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t tile = tile_of(dev.context(), DataType::u32);
  CompactionRig<uint32_t, Select> rig(dev, SelectDesc{DataType::u32, 3 * tile + 5, SelectPredicate::flagged});
  CHECK(rig.plan().algorithm() == SelectAlgorithm::chained);
  CHECK(rig.plan().dispatch_count(0) == 1);
  CHECK(rig.plan().dispatch_count(3 * tile + 5) == 1);
  for (uint64_t n : {uint64_t(0), uint64_t(1), uint64_t(2), uint64_t(8), tile - 1, tile, tile + 1, 3 * tile + 5})
    for (double density : {0.0, 1.0, 50.0, 100.0}) {
      INFO("density " << density << "%");
      CHECK(rig.check(test::random_values<uint32_t>(n, rng), host::random_flags(n, density, rng), 0u));
    }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("select of u32 flagged matches std::copy_if at every size from tile-64 to tile+64", "[select][sizes]") {
  check_every_size_across_a_tile<Select>({});
}

TEST_CASE("select of 2^20+13 u32 flagged at 1%, 50% and 100% keeps order and writes the count", "[select][large][host]") {
  check_large<Select>({}, {1.0, 50.0, 100.0});
}

TEST_CASE("select of every type with every predicate matches std::copy_if (NaN, -0.0, infinities included)",
          "[select][types]") {
  check_all_types<Select>({});
}

TEST_CASE("select compares floats per IEEE: NaN only passes not_equal, -0.0 equals +0.0, payloads are copied exactly",
          "[select][float]") {
  Device& dev = test::device();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  uint32_t payload_bits = 0x7FC12345u;
  float payload;
  std::memcpy(&payload, &payload_bits, 4);
  const std::vector<float> data = {1.0f, nan, -0.0f, 0.0f, -inf, payload, inf, -1.0f, 0.0f};
  for (SelectPredicate p : kPredicates) {
    if (p == SelectPredicate::flagged) continue;
    CompactionRig<float, Select> rig(dev, SelectDesc{DataType::f32, 64, p});
    for (float rhs : {0.0f, -0.0f, nan, 1.0f, inf}) CHECK(rig.check(data, {}, rhs));
  }
  if (test::type_supported(dev.context(), DataType::f64)) {
    const double dnan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> d = {dnan, -0.0, 0.0, 2.5, -std::numeric_limits<double>::infinity(), 0.0, dnan};
    for (SelectPredicate p : {SelectPredicate::equal, SelectPredicate::not_equal, SelectPredicate::less_equal}) {
      CompactionRig<double, Select> rig(dev, SelectDesc{DataType::f64, 64, p});
      for (double rhs : {0.0, -0.0, dnan}) CHECK(rig.check(d, {}, rhs));
    }
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("select reads and writes at unaligned element offsets (scalar paths) and any 4-byte count offset",
          "[select][offsets]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 2 * tile_of(dev.context(), DataType::u32) + 77;
  CompactionRig<uint32_t, Select> rig(dev, SelectDesc{DataType::u32, n, SelectPredicate::flagged});
  for (Shifts s : {Shifts{1, 3, 5, 1}, Shifts{4, 4, 4, 3}, Shifts{3, 0, 2, 7}})
    CHECK(rig.check(test::random_values<uint32_t>(n, rng), host::random_flags(n, 50, rng), 0u, s));
  if (test::type_supported(dev.context(), DataType::i64)) {
    CompactionRig<int64_t, Select> r64(dev, SelectDesc{DataType::i64, n, SelectPredicate::greater});
    CHECK(r64.check(test_values<int64_t>(n, rng, true), {}, int64_t(0), Shifts{1, 0, 3, 2}));
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("select with forced fallback (spin limit 0, every 3rd tile publishing nothing) falls back and matches",
          "[select][fallback]") {
  for (bool subgroups : {true, false}) {
    Device& dev = test::device(forced_fallback(3, subgroups));
    VKPRIM_TEST_RNG(rng);
    const uint64_t tiles = 12;
    const uint64_t n = tiles * tile_of(dev.context(), DataType::u32) - 3;
    CompactionRig<uint32_t, Select> rig(dev, SelectDesc{DataType::u32, n, SelectPredicate::flagged});
    REQUIRE(rig.plan().algorithm() == SelectAlgorithm::chained);
    for (double density : {1.0, 50.0})
      CHECK(rig.check(test::random_values<uint32_t>(n, rng), host::random_flags(n, density, rng), 0u));
    const auto stats = test::download<uint32_t>(dev, rig.scratch(), 4, rig.plan().statistics_offset());
    INFO("subgroups " << subgroups << ": tiles " << stats[0] << ", fallbacks " << stats[1] << ", steps " << stats[2]
                      << ", depth " << stats[3]);
    CHECK(stats[0] == tiles);
    CHECK(stats[1] >= 3);  // tiles 2, 5, 8 never publish and have successors
    CompactionRig<double, Select> doubles(dev, SelectDesc{DataType::f64, n / 2, SelectPredicate::less});
    if (test::type_supported(dev.context(), DataType::f64))
      CHECK(doubles.check(test_values<double>(n / 2, rng, false), {}, 0.0));
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
}

// llvmpipe ends every loop after 65535 iterations and falls through with its state undefined. A spin
// limit at or past that, with tiles that never publish, would leave the look-back to that cut (seen: a
// wrong count); the context keeps lavapipe's limit below it (ContextImpl::spin_limit), so the tiles fall
// back instead.
TEST_CASE("select and partition asked for a spin limit past lavapipe's loop cut (65535 iterations), with tiles "
          "that never publish, fall back and match",
          "[select][fallback][loop_limit]") {
  test::DeviceSetup o = forced_fallback(3);
  o.options.fallback_spin_limit = 0xFFFFFFFFu;  // packed as 65535
  Device& dev = test::device(o);
  if (dev.context().capabilities().driver_id != VK_DRIVER_ID_MESA_LLVMPIPE) {
    test::skip("only lavapipe cuts loops short; elsewhere this would wait for ever");
    return;
  }
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 7 * tile_of(dev.context(), DataType::u32) + 3;
  CompactionRig<uint32_t, Select> select(dev, SelectDesc{DataType::u32, n, SelectPredicate::flagged});
  REQUIRE(select.plan().algorithm() == SelectAlgorithm::chained);
  CHECK(select.check(test::random_values<uint32_t>(n, rng), host::random_flags(n, 50.0, rng), 0u));
  CompactionRig<uint32_t, Partition> partition(dev, SelectDesc{DataType::u32, n, SelectPredicate::flagged});
  CHECK(partition.check(test::random_values<uint32_t>(n, rng), host::random_flags(n, 50.0, rng), 0u));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("select and partition with tiles taken in launch order (workgroup index, no ticket) match, also with forced "
          "fallback",
          "[select][fallback][tile_order]") {
  for (uint32_t period : {0u, 3u}) {
    Device& dev = test::device(test::launch_order(period));
    VKPRIM_TEST_RNG(rng);
    const uint64_t tiles = 12;
    const uint64_t n = tiles * tile_of(dev.context(), DataType::u32) - 3;
    INFO("skip period " << period);
    CompactionRig<uint32_t, Select> rig(dev, SelectDesc{DataType::u32, n, SelectPredicate::flagged});
    REQUIRE(rig.plan().algorithm() == SelectAlgorithm::chained);
    for (double density : {1.0, 50.0})
      CHECK(rig.check(test::random_values<uint32_t>(n, rng), host::random_flags(n, density, rng), 0u));
    const auto stats = test::download<uint32_t>(dev, rig.scratch(), 4, rig.plan().statistics_offset());
    INFO("tiles " << stats[0] << ", fallbacks " << stats[1]);
    CHECK(stats[0] == tiles);
    if (period != 0) CHECK(stats[1] >= 3);  // tiles 2, 5, 8 never publish and have successors
    CompactionRig<uint32_t, Partition> parts(dev, SelectDesc{DataType::u32, n, SelectPredicate::less});
    CHECK(parts.check(test::random_values<uint32_t>(n, rng), {}, 1u << 31));
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
}

TEST_CASE("select without the Vulkan memory model runs count_scan_scatter and matches std::copy_if",
          "[select][portable]") {
  Device& dev = test::device(no_memory_model());
  CHECK_FALSE(dev.context().capabilities().has(feature_memory_model));
  auto chained = Select::create(dev.context(), SelectDesc{DataType::u32, 100, SelectPredicate::flagged,
                                                          SelectAlgorithm::chained});
  CHECK(chained.status() == Status::unsupported);
  if (!chained) CHECK(chained.error().message.find("vulkanMemoryModel") != std::string::npos);
  CompactionRig<uint32_t, Select> probe(dev, SelectDesc{DataType::u32, 10, SelectPredicate::flagged});
  CHECK(probe.plan().algorithm() == SelectAlgorithm::count_scan_scatter);
  CHECK(probe.plan().dispatch_count(10) == 3);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
  check_all_types<Select>(no_memory_model(), false);
  check_large<Select>(no_memory_model(), {1.0});
}

TEST_CASE("select on the no-subgroup path (chained and count_scan_scatter) matches std::copy_if",
          "[select][no_subgroups][no_subgroup_ops]") {
  check_all_types<Select>(no_subgroups(), false);
  check_all_types<Select>(no_subgroups(false), false);
}

TEST_CASE("select_indirect reads the count on the GPU, clamps it to max_count and writes 0 for a zero count",
          "[select][indirect]") {
  for (const test::DeviceSetup& o : {test::DeviceSetup{}, no_memory_model()}) {
    Device& dev = test::device(o);
    VKPRIM_TEST_RNG(rng);
    const uint64_t tile = tile_of(dev.context(), DataType::u32);
    const uint64_t max_n = 3 * tile + 5;
    CompactionRig<uint32_t, Select> rig(dev, SelectDesc{DataType::u32, max_n, SelectPredicate::flagged});
    const auto data = test::random_values<uint32_t>(max_n, rng);
    const auto flags = host::random_flags(max_n, 50, rng);
    for (uint32_t gpu : {uint32_t(0), uint32_t(1), uint32_t(tile + 1), uint32_t(max_n),
                         uint32_t(max_n + 1000)})
      CHECK(rig.check(data, flags, 0u, Shifts{0, 1, 2, 1}, &gpu));
    CompactionRig<float, Select> floats(dev, SelectDesc{DataType::f32, max_n, SelectPredicate::less_equal});
    const uint32_t gpu = uint32_t(max_n - 100);
    CHECK(floats.check(test_values<float>(max_n, rng, true), {}, 0.5f, Shifts{}, &gpu));
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
}

TEST_CASE("select and partition with tuned tile shapes match std::copy_if and std::stable_partition or refuse "
          "the shape at create",
          "[select][partition][tuning]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (auto [wg, vectors] : {std::pair{64u, 1u}, std::pair{128u, 8u}, std::pair{512u, 2u}, std::pair{1024u, 1u}}) {
    SelectDesc desc{DataType::u32, 0, SelectPredicate::flagged};
    desc.tuning.workgroup_size = wg;
    desc.tuning.vectors_per_thread = vectors;
    desc.max_count = 3ull * wg * vectors * 4 + 5;
    INFO("workgroup_size " << wg << " x " << vectors);
    auto plan = Select::create(dev.context(), desc);
    if (!plan) {
      INFO(plan.error().message);
      CHECK(plan.status() == Status::unsupported);
      continue;
    }
    CHECK(plan.value().elements_per_tile() == uint64_t(wg) * vectors * 4);
    CompactionRig<uint32_t, Select> rig(dev, desc);
    CompactionRig<uint32_t, Partition> part(dev, desc);
    for (uint64_t n : {uint64_t(1), desc.max_count}) {
      CHECK(rig.check(test::random_values<uint32_t>(n, rng), host::random_flags(n, 30, rng), 0u));
      CHECK(part.check(test::random_values<uint32_t>(n, rng), host::random_flags(n, 30, rng), 0u));
    }
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("select works with push descriptors off (descriptor sets per record)", "[select][descriptors][host]") {
  Device& dev = test::device(no_push_descriptors());
  VKPRIM_TEST_RNG(rng);
  CompactionRig<uint32_t, Select> rig(dev, SelectDesc{DataType::u32, 10000, SelectPredicate::flagged});
  for (uint64_t n : {0, 10000}) CHECK(rig.check(test::random_values<uint32_t>(n, rng), host::random_flags(n, 50, rng), 0u));
  CompactionRig<int32_t, Partition> part(dev, SelectDesc{DataType::i32, 10000, SelectPredicate::less});
  CHECK(part.check(test_values<int32_t>(10000, rng, true), {}, 0));
  rig.plan().release_descriptor_sets();
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

// ---- Partition ----

TEST_CASE("partition of u32 flagged matches std::stable_partition at every size from tile-64 to tile+64",
          "[partition][sizes]") {
  check_every_size_across_a_tile<Partition>({});
}

TEST_CASE("partition of 2^20+13 u32 flagged at 1%, 50% and 100% matches std::stable_partition", "[partition][large][host]") {
  check_large<Partition>({}, {1.0, 50.0, 100.0});
}

TEST_CASE("partition of every type with every predicate matches std::stable_partition", "[partition][types]") {
  check_all_types<Partition>({});
}

namespace {

// Partition in `order` through forced fallback, the portable path (memory model masked), the no-subgroup
// path with and without the memory model, unaligned offsets and record_indirect; at densities 0%, 30% and
// 100% (every element rejected, a mix, every element kept).
void check_partition_paths(RejectedOrder order) {
  VKPRIM_TEST_RNG(rng);
  for (const test::DeviceSetup& o : {forced_fallback(2), forced_fallback(3, false), no_memory_model(), no_subgroups(),
                                     no_subgroups(false)}) {
    Device& dev = test::device(o);
    const uint64_t n = 9 * tile_of<Partition>(dev.context(), DataType::u32) + 7;
    SelectDesc desc{DataType::u32, n, SelectPredicate::flagged};
    desc.rejected_order = order;
    CompactionRig<uint32_t, Partition> rig(dev, desc);
    INFO(to_string(rig.plan().algorithm()));
    const bool chained = rig.plan().algorithm() == SelectAlgorithm::chained;
    CHECK(rig.plan().dispatch_count(n) == (!chained ? 3u : order == RejectedOrder::reversed ? 1u : 2u));
    const auto data = test::random_values<uint32_t>(n, rng);
    for (double density : {0.0, 30.0, 100.0})
      CHECK(rig.check(data, host::random_flags(n, density, rng), 0u, Shifts{1, 2, 3, 1}));
    const uint32_t gpu = uint32_t(n - 1000);
    CHECK(rig.check(data, host::random_flags(n, 70, rng), 0u, Shifts{}, &gpu));
    if (test::type_supported(dev.context(), DataType::f64)) {
      desc = SelectDesc{DataType::f64, n / 2, SelectPredicate::not_equal};
      desc.rejected_order = order;
      CompactionRig<double, Partition> d(dev, desc);
      CHECK(d.check(test_values<double>(n / 2, rng, true), {}, 0.5));
    }
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
}

}  // namespace

TEST_CASE("partition with forced fallback, without the memory model, without subgroups and indirect matches",
          "[partition][fallback][portable][no_subgroups][indirect]") {
  check_partition_paths(RejectedOrder::input);
}

TEST_CASE("partition with rejected_order reversed writes the rejected elements in reverse input order at every size "
          "from tile-64 to tile+64, in one dispatch with no spill",
          "[partition][reversed][sizes]") {
  check_every_size_across_a_tile<Partition>({}, RejectedOrder::reversed);
  Device& dev = test::device();
  SelectDesc desc{DataType::u32, 1 << 20, SelectPredicate::flagged};
  const Partition in_order = test::make_compaction<Partition>(dev.context(), desc);
  desc.rejected_order = RejectedOrder::reversed;
  const Partition reversed = test::make_compaction<Partition>(dev.context(), desc);
  CHECK(reversed.dispatch_count(desc.max_count) == 1);
  // No spill: the scratch is the tile state's, 4 MiB less than the input-order plan's.
  CHECK(reversed.scratch_requirements().size + desc.max_count * 4 <= in_order.scratch_requirements().size);
}

TEST_CASE("partition with rejected_order reversed of every type with every predicate matches std::stable_partition "
          "with the rejected side reversed",
          "[partition][reversed][types]") {
  check_all_types<Partition>({}, false, RejectedOrder::reversed);
}

TEST_CASE("partition with rejected_order reversed matches with forced fallback, without the memory model, without "
          "subgroups and with indirect counts",
          "[partition][reversed][fallback][portable][no_subgroups][indirect]") {
  check_partition_paths(RejectedOrder::reversed);
}

// ---- Errors ----

// ---- Indices ----

namespace {

// Runs Select or Partition with SelectOutput::indices on `data` (flags under the flagged predicate; the
// input buffer is then not even bound: BufferRange{}) and checks the u32 positions against the host, the
// count, and that nothing past the written indices changed. gpu_count: record_indirect with that count.
template <class T, class Plan>
void check_indices(Device& dev, SelectDesc desc, const std::vector<T>& data, const std::vector<uint32_t>& flags,
                   T rhs, const uint32_t* gpu_count = nullptr) {
  constexpr bool partition = std::is_same_v<Plan, Partition>;
  desc.output = SelectOutput::indices;
  desc.max_count = std::max<uint64_t>(1, data.size());
  const uint64_t n = data.size();
  const uint64_t used = gpu_count ? std::min<uint64_t>(*gpu_count, n) : n;
  const bool flagged = desc.predicate == SelectPredicate::flagged;
  INFO((partition ? "partition" : "select") << " indices " << to_string(desc.type) << " " << to_string(desc.predicate)
                                            << " " << to_string(desc.algorithm) << " n=" << n
                                            << (gpu_count ? " indirect" : ""));
  Plan plan = test::make_compaction<Plan>(dev.context(), desc);
  Buffer input = test::make_buffer(dev, std::max<uint64_t>(n, 1) * sizeof(T));
  Buffer flag_buffer = test::make_buffer(dev, std::max<uint64_t>(n, 1) * 4);
  Buffer output = test::make_buffer(dev, (n + 8) * 4);
  Buffer count = test::make_buffer(dev, 16), gpu = test::make_buffer(dev, 16);
  Buffer scratch = test::make_buffer(dev, plan.scratch_requirements().size);
  if (n) test::upload(dev, input, data);
  if (n && flagged) test::upload(dev, flag_buffer, flags);
  if (gpu_count) test::upload(dev, gpu, std::vector<uint32_t>{*gpu_count});
  test::poison(dev, output);
  test::poison(dev, count);
  const SelectOperands operands{.input = flagged ? BufferRange{} : input.range(),
                                .flags = flagged ? flag_buffer.range() : BufferRange{},
                                .output = output.range(),
                                .selected_count = count.range(0, 4),
                                .scratch = scratch.range()};
  Result<void> recorded;
  auto submitted = test::submit_compute(dev, [&](VkCommandBuffer cmd) {
    recorded = gpu_count ? plan.record_indirect(cmd, operands, gpu.range(0, 4), test::comparand_of(rhs))
                         : plan.record(cmd, operands, n, test::comparand_of(rhs));
  });
  INFO("record: " << recorded.message() << " submit: " << submitted.message());
  REQUIRE(recorded.ok());
  REQUIRE(submitted.ok());
  std::vector<uint32_t> kept, rejected;
  for (uint32_t i = 0; i < used; ++i) {
    const bool keep = host::select_keep(desc.predicate, data[i], flagged ? flags[i] : 0u, rhs);
    (keep ? kept : rejected).push_back(i);
  }
  std::vector<uint32_t> expect = kept;
  if (partition && desc.rejected_order == RejectedOrder::reversed) std::reverse(rejected.begin(), rejected.end());
  if (partition) expect.insert(expect.end(), rejected.begin(), rejected.end());
  const auto got = test::download<uint32_t>(dev, output, n + 8);
  const auto got_count = test::download<uint32_t>(dev, count, 2);
  CHECK(got_count[0] == kept.size());
  CHECK(got_count[1] == test::kPoison);
  CHECK(std::equal(expect.begin(), expect.end(), got.begin()));
  CHECK(std::all_of(got.begin() + std::ptrdiff_t(expect.size()), got.end(),
                    [](uint32_t w) { return w == test::kPoison; }));
}

template <class Plan>
void check_indices_matrix(Device& dev, SelectAlgorithm algorithm, std::mt19937_64& rng,
                          RejectedOrder order = RejectedOrder::input) {
  auto desc = [&](DataType type, uint64_t n, SelectPredicate p) {
    SelectDesc d{type, n, p, algorithm};
    d.rejected_order = order;
    return d;
  };
  const uint64_t tile = 256 * 4 * 4;  // default tile of 32-bit elements
  for (uint64_t n : {uint64_t(0), uint64_t(1), tile - 1, tile, tile + 1, (uint64_t(1) << 18) + 7}) {
    const auto data = test::random_values<uint32_t>(n, rng);
    check_indices<uint32_t, Plan>(dev, desc(DataType::u32, n, SelectPredicate::flagged), data,
                                  host::random_flags(n, 50, rng), 0u);
    check_indices<uint32_t, Plan>(dev, desc(DataType::u32, n, SelectPredicate::greater), data, {}, 0x80000000u);
  }
  if (test::type_supported(dev.context(), DataType::f64)) {
    const uint64_t n = 3 * 2048 + 5;
    std::vector<double> values(n);
    for (auto& v : values) v = std::uniform_real_distribution<double>(-1, 1)(rng);
    check_indices<double, Plan>(dev, desc(DataType::f64, n, SelectPredicate::less), values, {}, 0.25);
  }
  const uint64_t n = 50000;
  const uint32_t gpu_count = 31337;
  check_indices<uint32_t, Plan>(dev, desc(DataType::u32, n, SelectPredicate::flagged),
                                test::random_values<uint32_t>(n, rng), host::random_flags(n, 30, rng), 0u,
                                &gpu_count);
}

}  // namespace

TEST_CASE("select and partition of indices write the input positions std::copy_if and std::stable_partition keep; "
          "flagged indices need no input",
          "[select][partition][indices]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (SelectAlgorithm a : {SelectAlgorithm::chained, SelectAlgorithm::count_scan_scatter}) {
    if (a == SelectAlgorithm::chained && !dev.context().capabilities().has(feature_memory_model)) continue;
    check_indices_matrix<Select>(dev, a, rng);
    check_indices_matrix<Partition>(dev, a, rng);
    check_indices_matrix<Partition>(dev, a, rng, RejectedOrder::reversed);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("select and partition create refuse bad descriptions with a status and a message", "[select][errors][host]") {
  Device& dev = test::device();
  auto expect = [&](const SelectDesc& desc, Status status, const char* words) {
    for (bool partition : {false, true}) {
      const Result<void> r = partition ? created<Partition>(dev.context(), desc) : created<Select>(dev.context(), desc);
      INFO((partition ? "Partition" : "Select") << ": " << r.message());
      CHECK(r.status() == status);
      CHECK(r.message().find(words) != std::string::npos);
    }
  };
  expect(SelectDesc{DataType::u32, 0, SelectPredicate::flagged}, Status::invalid_argument, "max_count");
  expect(SelectDesc{DataType::u32, uint64_t(1) << 32, SelectPredicate::flagged}, Status::invalid_argument, "2^32-1");
  // Past one storage-buffer binding (lavapipe: 128 MiB = 2^25 u32).
  const uint64_t too_many = dev.context().capabilities().max_storage_buffer_range / 4 + 1;
  if (too_many < (uint64_t(1) << 32))
    expect(SelectDesc{DataType::u32, too_many, SelectPredicate::flagged}, Status::unsupported, "storage-buffer binding");
  SelectDesc bad_shape{DataType::u32, 1000, SelectPredicate::flagged};
  bad_shape.tuning.workgroup_size = 100;
  expect(bad_shape, Status::invalid_argument, "tuning.workgroup_size");
  bad_shape.tuning.workgroup_size = 256;
  bad_shape.tuning.vectors_per_thread = 9;
  expect(bad_shape, Status::invalid_argument, "tuning.vectors_per_thread");
  SelectDesc bad_predicate{DataType::u32, 1000, SelectPredicate(42)};
  expect(bad_predicate, Status::invalid_argument, "predicate");
  SelectDesc bad_output{DataType::u32, 1000, SelectPredicate::flagged};
  bad_output.output = SelectOutput(9);
  expect(bad_output, Status::invalid_argument, "output");
  expect(SelectDesc{DataType(42), 1000, SelectPredicate::flagged}, Status::invalid_argument, "unknown DataType 42");
  SelectDesc bad_order{DataType::u32, 1000, SelectPredicate::flagged};
  bad_order.rejected_order = RejectedOrder(7);
  expect(bad_order, Status::invalid_argument, "unknown rejected_order 7");
  bad_order.rejected_order = RejectedOrder::reversed;
  const Result<void> select_reversed = created<Select>(dev.context(), bad_order);
  INFO(select_reversed.message());
  CHECK(select_reversed.status() == Status::invalid_argument);
  CHECK(select_reversed.message().find("rejected_order reversed applies to Partition only") != std::string::npos);
  CHECK(created<Partition>(dev.context(), bad_order).ok());
  for (SelectAlgorithm a : {SelectAlgorithm::automatic, SelectAlgorithm::chained, SelectAlgorithm::count_scan_scatter}) {
    SelectDesc sort_key{DataType::u8, 1000, SelectPredicate::less};
    sort_key.algorithm = a;
    expect(sort_key, Status::invalid_argument, "u8 is a sort-key type only (RadixSort)");
    sort_key.type = DataType::u16;
    expect(sort_key, Status::invalid_argument, "u16 is a sort-key type only (RadixSort)");
  }
  test::DeviceSetup masked;
  masked.testing.mask_features = feature_int64 | feature_float64;
  Device& no64 = test::device(masked);
  for (DataType t : {DataType::u64, DataType::i64, DataType::f64}) {
    auto plan = Select::create(no64.context(), SelectDesc{t, 100, SelectPredicate::less});
    INFO(to_string(t) << ": " << (plan ? std::string("ok") : plan.error().message));
    CHECK(plan.status() == Status::unsupported);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("select and partition record refuse bad buffers with a message and record nothing", "[select][errors][host]") {
  Device& dev = test::device();
  const uint64_t n = 1000;
  const Select plan = test::make_compaction<Select>(dev.context(), SelectDesc{DataType::u32, n, SelectPredicate::flagged});
  const Partition part = test::make_compaction<Partition>(dev.context(), SelectDesc{DataType::f64, n, SelectPredicate::less});
  Buffer a = test::make_buffer(dev, 64 * 1024);
  Buffer b = test::make_buffer(dev, 64 * 1024);
  Buffer c = test::make_buffer(dev, 64 * 1024);
  Buffer cnt = test::make_buffer(dev, 64);
  Buffer scratch = test::make_buffer(dev, std::max(plan.scratch_requirements().size, part.scratch_requirements().size));
  const VkDeviceSize need = plan.scratch_requirements().size;
  struct Case {
    const char* what;
    BufferRange input, flags, output, count;
    uint64_t n;
    BufferRange scratch;
    const char* words;
  };
  const std::vector<Case> cases = {
      {"count past max_count", a.range(), b.range(), c.range(), cnt.range(), n + 1, scratch.range(), "max_count"},
      {"null input", {}, b.range(), c.range(), cnt.range(), n, scratch.range(), "input"},
      {"null output", a.range(), b.range(), {}, cnt.range(), n, scratch.range(), "output"},
      {"null selected_count", a.range(), b.range(), c.range(), {}, n, scratch.range(), "selected_count"},
      {"missing flags", a.range(), {}, c.range(), cnt.range(), n, scratch.range(), "flags"},
      {"small input", a.range(0, n * 4 - 4), b.range(), c.range(), cnt.range(), n, scratch.range(), "input"},
      {"small flags", a.range(), b.range(0, 16), c.range(), cnt.range(), n, scratch.range(), "flags"},
      {"small output", a.range(), b.range(), c.range(0, 100), cnt.range(), n, scratch.range(), "output"},
      {"misaligned input", a.range(2, n * 4), b.range(), c.range(), cnt.range(), n, scratch.range(), "input"},
      {"misaligned count", a.range(), b.range(), c.range(), cnt.range(2, 4), n, scratch.range(), "selected_count"},
      {"small count", a.range(), b.range(), c.range(), cnt.range(0, 2), n, scratch.range(), "selected_count"},
      {"small scratch", a.range(), b.range(), c.range(), cnt.range(), n, scratch.range(0, need - 16), "scratch"},
      {"null scratch", a.range(), b.range(), c.range(), cnt.range(), n, {}, "scratch"},
      {"in place", a.range(), b.range(), a.range(), cnt.range(), n, scratch.range(), "in-place"},
      {"flags overlap output", a.range(), c.range(0, n * 4), c.range(n * 2, n * 4), cnt.range(), n, scratch.range(),
       "overlap"},
      {"count inside output", a.range(), b.range(), c.range(0, n * 4), c.range(8, 4), n, scratch.range(), "overlap"},
      {"scratch overlaps input", a.range(0, n * 4), b.range(), c.range(), cnt.range(), n, a.range(), "overlap"},
  };
  test::poison(dev, c);
  test::poison(dev, cnt);
  for (const Case& k : cases) {
    const Result<void> r = test::recorded_result(dev, [&](VkCommandBuffer cmd) {
      return plan.record(cmd,
                         SelectOperands{.input = k.input,
                                        .flags = k.flags,
                                        .output = k.output,
                                        .selected_count = k.count,
                                        .scratch = k.scratch},
                         k.n);
    });
    INFO(k.what << ": " << r.message());
    CHECK(r.status() == Status::invalid_argument);
    CHECK(r.message().find(k.words) != std::string::npos);
    CHECK(r.message().find("Select::record") != std::string::npos);
  }
  CHECK(test::still_poisoned(dev, c));
  CHECK(test::still_poisoned(dev, cnt));
  // A comparison predicate ignores flags; record_indirect checks its count buffer.
  auto record_indirect = [&](BufferRange count, BufferRange gpu_count) {
    return test::recorded_result(dev, [&](VkCommandBuffer cmd) {
      return part.record_indirect(cmd,
                                  SelectOperands{.input = a.range(),
                                                 .flags = {},
                                                 .output = c.range(),
                                                 .selected_count = count,
                                                 .scratch = scratch.range()},
                                  gpu_count);
    });
  };
  const Result<void> misaligned = record_indirect(cnt.range(), cnt.range(2, 4));
  INFO(misaligned.message());
  CHECK(misaligned.status() == Status::invalid_argument);
  CHECK(misaligned.message().find("count") != std::string::npos);
  CHECK(record_indirect(cnt.range(0, 4), cnt.range(0, 4)).status() == Status::invalid_argument);
  CHECK(test::still_poisoned(dev, c));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("a comparand made for another type than the plan's is refused, record and record_indirect",
          "[select][errors][host]") {
  // Comparand::of(100.0f) on a u32 select once kept everything (the float's bits compared as a u32).
  Device& dev = test::device();
  const uint64_t n = 1000;
  const Select select = test::make_compaction<Select>(dev.context(), SelectDesc{DataType::u32, n, SelectPredicate::less});
  const Partition part = test::make_compaction<Partition>(dev.context(), SelectDesc{DataType::f64, n, SelectPredicate::less});
  Buffer a = test::make_buffer(dev, n * 8), c = test::make_buffer(dev, n * 8), cnt = test::make_buffer(dev, 64);
  Buffer scratch = test::make_buffer(dev, std::max(select.scratch_requirements().size, part.scratch_requirements().size));
  test::poison(dev, c);
  test::poison(dev, cnt);
  const SelectOperands operands{.input = a.range(),
                                .flags = {},
                                .output = c.range(),
                                .selected_count = cnt.range(0, 4),
                                .scratch = scratch.range()};
  struct Case {
    const char* what;
    std::function<Result<void>(VkCommandBuffer)> record;
    const char* made_for;
  };
  const std::vector<Case> cases = {
      {"f32 comparand on u32", [&](VkCommandBuffer cmd) {
         return select.record(cmd, operands, n, Comparand::of(100.0f));
       }, "f32"},
      {"i32 comparand on u32", [&](VkCommandBuffer cmd) {
         return select.record(cmd, operands, n, Comparand::of(int32_t(-1)));
       }, "i32"},
      {"f32 comparand on f64, indirect", [&](VkCommandBuffer cmd) {
         return part.record_indirect(cmd, operands, cnt.range(16, 4), Comparand::of(1.5f));
       }, "f32"},
  };
  for (const Case& k : cases) {
    const Result<void> r = test::recorded_result(dev, k.record);
    INFO(k.what << ": " << r.message());
    CHECK(r.status() == Status::invalid_argument);
    CHECK(r.message().find(k.made_for) != std::string::npos);
    CHECK(r.message().find("comparand") != std::string::npos);
  }
  CHECK(test::still_poisoned(dev, c));
  CHECK(test::still_poisoned(dev, cnt));
  // The matching type records.
  const Result<void> ok = test::recorded_result(dev, [&](VkCommandBuffer cmd) {
    return select.record(cmd, operands, n, Comparand::of(100u));
  });
  INFO(ok.message());
  CHECK(ok.ok());
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}
