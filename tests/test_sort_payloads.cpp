// RadixSort payloads wider than 8 bytes (every multiple of 4 up to 64, moved as bits in units of 16 or 4
// bytes) and u8 / u16 keys, against std::stable_sort of the indices (sort_rig.hpp): every word of every
// value is checked, and guards around keys and values must keep their values. Sizes around the tile, both
// algorithms, every key width, descending float keys, bit ranges with an odd pass count (copy back), forced
// onesweep fallback, the no-subgroup path, direct scatter, partitioned ranking where the device has it,
// element offsets, record_indirect, and the refusals of narrow keys.
#include <cstdint>
#include <string>
#include <vector>

#include "sort_rig.hpp"
#include "test_support.hpp"
#include "vkprim/sort.hpp"
#include "vkprim/version.hpp"

using namespace vkprim;
using namespace vkprim::test;

namespace {

// Sizes in units of 4 bytes (12, 36) and of 16 bytes (16, 64), the smallest and largest of each unit; 64
// stages one item per invocation per round. Each size and key transform is a pipeline of its own (a
// specialization constant), and lavapipe compiles each for seconds, so the cases pick their sizes.
constexpr uint32_t kWideSizes[] = {12, 16, 36, 64};

}  // namespace

TEST_CASE("radix sort with values of 12 to 64 bytes matches std::stable_sort around one and two tiles",
          "[sort][payloads][subgroup_sizes]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    for (uint32_t vb : kWideSizes) {
      const uint64_t tile = tile_of(dev, vb, a);
      SortRig rig(dev, desc_of(a, DataType::u32, 2 * tile + 33, vb));
      INFO(to_string(a) << " value_size " << vb << ", tile " << tile);
      for (uint64_t n : {uint64_t(1), uint64_t(2), tile - 1, tile + 1, 2 * tile + 33})
        CHECK(rig.check(few_distinct_keys(n, rng)));
    }
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("radix sort with 16- and 52-byte values matches std::stable_sort at every size across one tile boundary",
          "[sort][payloads]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    for (uint32_t vb : {16u, 52u}) {
      const uint64_t tile = tile_of(dev, vb, a);
      SortRig rig(dev, desc_of(a, DataType::u32, tile + 5, vb));
      for (uint64_t n = tile - 5; n <= tile + 5; ++n) CHECK(rig.check(few_distinct_keys(n, rng)));
    }
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("radix sort of signed, float and 64-bit keys with 16- and 40-byte values, both orders, matches "
          "std::stable_sort",
          "[sort][payloads][types]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 2 * tile_of(dev, 16) + 19;
  struct Case {
    DataType key;
    uint32_t value_size;
    SortOrder order;
  };
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    for (const Case& c : {Case{DataType::f32, 16, SortOrder::descending}, Case{DataType::i32, 40, SortOrder::ascending},
                          Case{DataType::u64, 16, SortOrder::ascending}, Case{DataType::f64, 40, SortOrder::descending}}) {
      if (!key_type_supported(dev.context(), c.key)) continue;
      SortRig rig(dev, desc_of(a, c.key, n, c.value_size, c.order));
      Keys k = keys_for(c.key, n, rng);
      for (uint64_t i = 0; i < n; i += 3) k[i] = k[(i * 7) % n];  // equal keys within and across tiles
      CHECK(rig.check(k));
    }
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("radix sort with wide values on bit ranges of odd pass counts copies keys and values back",
          "[sort][payloads][bits]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = tile_of(dev, 24) + 77;
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    for (uint32_t vb : {24u, 32u}) {
      SortDesc d = desc_of(a, DataType::u32, n, vb);
      d.begin_bit = 3;
      d.end_bit = 20;  // three passes
      SortRig rig(dev, d);
      REQUIRE(rig.plan().digit_passes() == 3u);
      CHECK(rig.check(random_keys(n, DataType::u32, rng)));
    }
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("onesweep with wide values and tiles that never publish falls back and matches std::stable_sort",
          "[sort][payloads][fallback]") {
  Device& dev = test::device(test::forced_fallback(3));
  if (!available(dev, SortAlgorithm::onesweep)) return;
  VKPRIM_TEST_RNG(rng);
  for (uint32_t vb : {16u, 64u}) {
    const uint64_t tile = tile_of(dev, vb, SortAlgorithm::onesweep);
    SortRig rig(dev, desc_of(SortAlgorithm::onesweep, DataType::u32, 10 * tile + 3, vb));
    CHECK(rig.check(random_keys(10 * tile + 3, DataType::u32, rng)));
    const auto stats = test::download<uint32_t>(dev, rig.scratch(), 4, rig.plan().statistics_offset());
    INFO("value_size " << vb);
    CHECK(stats[1] > 0u);  // fallbacks taken
    CHECK(rig.check(random_keys(3 * tile, DataType::u32, rng)));
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("direct scatter and partitioned ranking (where the device has it) move wide values like the staged "
          "scatter",
          "[sort][payloads][scatter][partitioned]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const bool partitioned = dev.context().capabilities().has(feature_subgroup_partitioned);
  if (!VKPRIM_HAS_SORT_OPTION_KERNELS) {
    test::skip("the direct scatter and partitioned ranking are not built (VKPRIM_SORT_OPTION_KERNELS off)");
    return;
  }
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    for (uint32_t vb : {16u, 28u}) {
      const uint64_t n = 3 * tile_of(dev, vb, a) + 77;
      SortDesc d = desc_of(a, DataType::u32, n, vb);
      d.scatter = SortScatter::direct;
      SortRig direct(dev, d);
      CHECK(direct.plan().scatter() == SortScatter::direct);
      CHECK(direct.check(random_keys(n, DataType::u32, rng)));
      if (partitioned) {
        SortDesc p = desc_of(a, DataType::u32, n, vb);
        p.ranking = SortRanking::partitioned;
        SortRig rig(dev, p);
        CHECK(rig.check(random_keys(n, DataType::u32, rng)));
      }
    }
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("radix sort with wide values at element offsets and with the count read on the GPU matches "
          "std::stable_sort and leaves the neighbours untouched",
          "[sort][payloads][offsets][indirect]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    for (uint32_t vb : {12u, 48u}) {
      const uint64_t n = tile_of(dev, vb, a) + 100;
      SortRig rig(dev, desc_of(a, DataType::u32, n, vb));
      for (uint64_t shift : {1u, 3u}) CHECK(rig.check(random_keys(n, DataType::u32, rng), shift));
      CHECK(rig.check(random_keys(n - 9, DataType::u32, rng), 0, true));
      CHECK(rig.check(random_keys(1, DataType::u32, rng), 0, true));
    }
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("onesweep with wide values in tiles staged in two rounds (256 x 24) matches std::stable_sort across tile "
          "boundaries",
          "[sort][payloads][tuning]") {
  Device& dev = test::device();
  if (!available(dev, SortAlgorithm::onesweep)) return;
  VKPRIM_TEST_RNG(rng);
  const uint64_t tile = 256 * 24;
  SortDesc d = desc_of(SortAlgorithm::onesweep, DataType::u32, 2 * tile + 1, 32);
  d.tuning.workgroup_size = 256;
  d.tuning.items_per_thread = 24;
  SortRig rig(dev, d);
  REQUIRE(rig.plan().keys_per_tile() == tile);
  CHECK(rig.plan().staging_rounds() == 2u);
  for (uint64_t n : {tile - 1, tile + 1, 2 * tile + 1}) CHECK(rig.check(random_keys(n, DataType::u32, rng)));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

// u8 and u16 keys: held as u32 inside the kernels, narrow only in the buffers (8- and 16-bit storage).
TEST_CASE("radix sort of u16 and u8 keys, keys only and with 4- and 16-byte values, in both orders, matches "
          "std::stable_sort around the tile",
          "[sort][narrow_keys][subgroup_sizes]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  struct Case {
    DataType key;
    uint32_t value_size;
    SortOrder order;
  };
  const SortOrder up = SortOrder::ascending, down = SortOrder::descending;
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    for (const Case& c : {Case{DataType::u16, 0, up}, Case{DataType::u16, 4, down}, Case{DataType::u16, 16, up},
                          Case{DataType::u8, 0, down}, Case{DataType::u8, 4, up}}) {
      if (!key_type_supported(dev.context(), c.key)) {
        WARN(to_string(c.key) << " keys skipped: the device lacks " << (c.key == DataType::u8 ? "8" : "16")
                              << "-bit storage");
        continue;
      }
      const uint64_t tile = tile_of(dev, c.value_size, a);
      SortRig rig(dev, desc_of(a, c.key, 3 * tile + 7, c.value_size, c.order));
      CHECK(rig.plan().digit_passes() == (c.key == DataType::u8 ? 1u : 2u));
      for (uint64_t n : {uint64_t(1), uint64_t(2), tile - 1, tile + 1, 3 * tile + 7})
        CHECK(rig.check(random_keys(n, c.key, rng)));
    }
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("radix sort of u16 keys on a bit range, at odd element offsets, with the count read on the GPU, and u16 "
          "keys equal to the padding key match std::stable_sort",
          "[sort][narrow_keys][offsets][indirect][padding]") {
  Device& dev = test::device();
  if (!key_type_supported(dev.context(), DataType::u16)) return;
  VKPRIM_TEST_RNG(rng);
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    const uint64_t n = 2 * tile_of(dev, 4, a) + 33;
    SortDesc d = desc_of(a, DataType::u16, n, 4);
    d.begin_bit = 4;
    d.end_bit = 12;  // one pass, copied back
    SortRig ranged(dev, d);
    REQUIRE(ranged.plan().digit_passes() == 1u);
    CHECK(ranged.check(random_keys(n, DataType::u16, rng)));
    SortRig rig(dev, desc_of(a, DataType::u16, n, 4));
    for (uint64_t shift : {1u, 3u}) CHECK(rig.check(random_keys(n, DataType::u16, rng), shift));
    CHECK(rig.check(random_keys(n - 5, DataType::u16, rng), 0, true));
    Keys ones = random_keys(n, DataType::u16, rng);
    for (uint64_t i = 0; i < n; i += 2) ones[i] = 0xFFFF;  // every bit set: the padding's digits
    CHECK(rig.check(ones));
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("on the no-subgroup path with forced onesweep fallback, wide values and u16 / u8 keys sort like "
          "std::stable_sort",
          "[sort][payloads][narrow_keys][fallback][no_subgroups][no_subgroup_ops]") {
  test::DeviceSetup o = test::forced_fallback(3);
  o.options.force_no_subgroups = true;
  Device& dev = test::device(o);
  VKPRIM_TEST_RNG(rng);
  struct Case {
    DataType key;
    uint32_t value_size;
  };
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    for (const Case& c : {Case{DataType::u32, 20}, Case{DataType::u32, 32}, Case{DataType::u16, 4},
                          Case{DataType::u8, 4}}) {
      if (!key_type_supported(dev.context(), c.key)) continue;
      const uint64_t n = 5 * tile_of(dev, c.value_size, a) + 13;
      SortRig rig(dev, desc_of(a, c.key, n, c.value_size, SortOrder::descending));
      CHECK(rig.check(random_keys(n, c.key, rng)));
    }
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("u8 and u16 keys are refused with unsupported where 8- or 16-bit storage is hidden, and with partitioned "
          "ranking or the direct scatter",
          "[sort][narrow_keys][errors]") {
  Device& masked = test::device_without(feature_storage_8bit | feature_storage_16bit);
  for (DataType t : {DataType::u8, DataType::u16}) {
    SortDesc d = desc_of(SortAlgorithm::reduce_then_scan, t, 1000);
    auto made = RadixSort::create(masked.context(), d);
    REQUIRE_FALSE(made.ok());
    CHECK(made.status() == Status::unsupported);
    CHECK(made.error().message.find(t == DataType::u8 ? "8BitAccess" : "16BitAccess") != std::string::npos);
  }
  Device& dev = test::device();
  for (DataType t : {DataType::u8, DataType::u16}) {
    if (!key_type_supported(dev.context(), t)) continue;
    for (int knob = 0; knob < 2; ++knob) {
      SortDesc d = desc_of(SortAlgorithm::reduce_then_scan, t, 1000);
      if (knob == 0) d.ranking = SortRanking::partitioned;
      else d.scatter = SortScatter::direct;
      auto made = RadixSort::create(dev.context(), d);
      REQUIRE_FALSE(made.ok());
      CHECK(made.status() == Status::unsupported);
      CHECK(made.error().message.find("32- and 64-bit keys") != std::string::npos);
    }
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}
