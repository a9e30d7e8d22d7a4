// RadixSort (onesweep, reduce_then_scan): every result is compared with std::stable_sort of the indices by
// the transformed key bits [begin_bit, end_bit) (the documented order), keys and values (the original
// index, so stability is checked too). Scratch is poisoned before every run and guard elements around
// the keys/values must keep their values. Sizes around the tile, every size across one tile boundary,
// 2^20+17, every key type and order, data patterns, keys equal to the partial tile's padding key, bit
// ranges (odd pass counts end with a copy back), the smaller tiles of small counts, forced onesweep fallback
// with its statistics, the no-subgroup path, push descriptors off, y-spilled grids, element offsets, record_indirect and reuse.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "host_sort.hpp"
#include "sort_rig.hpp"
#include "test_support.hpp"
#include "vkprim/sort.hpp"
#include "vkprim/version.hpp"

using namespace vkprim;
using namespace vkprim::test;

TEST_CASE("radix sort of u32 keys matches std::stable_sort at sizes 0, 1, 2 and around one and two tiles",
          "[sort]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    const uint64_t tile = tile_of(dev, 0, a);
    SortRig rig(dev, desc_of(a, DataType::u32, 2 * tile + 64));
    for (uint64_t n : {uint64_t(0), uint64_t(1), uint64_t(2), uint64_t(3), tile - 1, tile, tile + 1, 2 * tile - 1,
                       2 * tile, 2 * tile + 63})
      rig.check(random_keys(n, DataType::u32, rng));
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("radix sort of u32 pairs matches std::stable_sort at every size across one tile boundary", "[sort]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    const uint64_t tile = tile_of(dev, 4, a);
    SortRig rig(dev, desc_of(a, DataType::u32, tile + 8, 4));
    for (uint64_t n = tile - 8; n <= tile + 8; ++n) rig.check(few_distinct_keys(n, rng));
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("radix sort with 384 x 12 and 384 x 5 tiles (workgroups that are not a power of two) matches "
          "std::stable_sort across tile boundaries, keys and pairs",
          "[sort][tuning]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (uint32_t items : {12u, 5u}) {
    for_each_algorithm(dev, [&](SortAlgorithm a) {
      for (uint32_t vs : {0u, 4u}) {
        SortDesc d = desc_of(a, DataType::u32, 3 * 384 * items + 1, vs);
        d.tuning.workgroup_size = 384;
        d.tuning.items_per_thread = items;
        SortRig rig(dev, d);
        INFO(to_string(a) << " 384 x " << items << ", value bytes " << vs);
        REQUIRE(rig.plan().keys_per_tile() == 384u * items);
        for (uint64_t n : {uint64_t(384) * items - 1, uint64_t(384) * items + 1, 3 * uint64_t(384) * items + 1})
          CHECK(rig.check(random_keys(n, DataType::u32, rng)));
      }
    });
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("onesweep tiles staged in two rounds (256 x 24 u32, 256 x 16 u64: over 24 KiB at once) match "
          "std::stable_sort across tile boundaries, keys and pairs",
          "[sort][tuning]") {
  Device& dev = test::device();
  if (!test::has_features(dev, feature_memory_model, "onesweep (the Vulkan memory model)")) return;
  VKPRIM_TEST_RNG(rng);
  struct Shape {
    DataType key;
    uint32_t items, value_bytes;
  };
  for (const Shape& s : {Shape{DataType::u32, 24, 0}, Shape{DataType::u32, 24, 4}, Shape{DataType::u64, 16, 0},
                         Shape{DataType::u64, 16, 8}}) {
    if (is_64bit(s.key) && !dev.context().capabilities().has(feature_int64)) continue;
    const uint64_t tile = 256u * s.items;
    SortDesc d = desc_of(SortAlgorithm::onesweep, s.key, 3 * tile + 1, s.value_bytes);
    d.tuning.workgroup_size = 256;
    d.tuning.items_per_thread = s.items;
    SortRig rig(dev, d);
    INFO(to_string(s.key) << " 256 x " << s.items << ", value bytes " << s.value_bytes);
    REQUIRE(rig.plan().keys_per_tile() == tile);
    CHECK(rig.plan().staging_rounds() == 2u);
    for (uint64_t n : {tile - 1, tile, tile + 1, 2 * tile + tile / 2, 3 * tile + 1})
      CHECK(rig.check(random_keys(n, s.key, rng)));
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("automatic onesweep plans sort small counts in smaller tiles: keys_per_tile(count) steps up to the "
          "plan's tile, and counts at and next to each step match std::stable_sort, keys and pairs, direct and "
          "record_indirect, with max_count at the step and one past it",
          "[sort][small_tiles]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t limit = uint64_t(1) << 22;
  for (uint32_t vs : {0u, 4u}) {
    const RadixSort probe = make_sort(dev.context(), desc_of(SortAlgorithm::automatic, DataType::u32, limit, vs));
    if (probe.algorithm() != SortAlgorithm::onesweep || probe.one_workgroup_keys() == 0) continue;
    // The largest count of each smaller tile (keys_per_tile never falls as the count grows).
    std::vector<uint64_t> steps;
    for (uint64_t lo = probe.one_workgroup_keys() + 1; probe.keys_per_tile(lo) < probe.keys_per_tile();) {
      uint64_t a = lo, b = limit;  // keys_per_tile(a) is lo's tile, keys_per_tile(b) is larger
      while (b - a > 1) {
        const uint64_t m = a + (b - a) / 2;
        (probe.keys_per_tile(m) == probe.keys_per_tile(lo) ? a : b) = m;
      }
      CHECK(probe.keys_per_tile(b) > probe.keys_per_tile(a));
      steps.push_back(a);
      lo = b;
    }
    INFO("value_size " << vs << ", plan tile " << probe.keys_per_tile());
    REQUIRE_FALSE(steps.empty());
    for (uint64_t step : steps) {
      INFO("smaller tile " << probe.keys_per_tile(step) << " up to " << step << " keys");
      SortRig at(dev, desc_of(SortAlgorithm::automatic, DataType::u32, step, vs));
      CHECK(at.check(random_keys(step, DataType::u32, rng)));
      CHECK(at.check(random_keys(step - 1, DataType::u32, rng)));
      CHECK(at.check(few_distinct_keys(step, rng), 0, true));
      // Scratch words that read as written or inclusive tile states: the upfront pass must clear the state of
      // every smaller tile, not only of the plan's tiles.
      for (uint32_t word : {0u, 0x7FFFFFFFu, 0x80000000u, 0xC0000001u, 0x3FFFFFFFu}) {
        INFO("scratch word 0x" << std::hex << word);
        at.set_scratch_word(word);
        CHECK(at.check(random_keys(step, DataType::u32, rng)));
      }
      at.set_scratch_word(test::kPoison);
      SortRig past(dev, desc_of(SortAlgorithm::automatic, DataType::u32, step + 1, vs));
      CHECK(past.plan().keys_per_tile(step + 1) > past.plan().keys_per_tile(step));
      CHECK(past.check(random_keys(step + 1, DataType::u32, rng)));
      CHECK(past.check(random_keys(step, DataType::u32, rng)));
      CHECK(past.check(random_keys(step + 1, DataType::u32, rng), 0, true));
      CHECK(past.check(random_keys(step, DataType::u32, rng), 0, true));
    }
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("onesweep and reduce_then_scan sorts of 2^20+17 u32 keys match std::stable_sort", "[sort][large][host]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = (uint64_t(1) << 20) + 17;
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    SortRig rig(dev, desc_of(a, DataType::u32, n));
    rig.check(random_keys(n, DataType::u32, rng));
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("onesweep sort of 2^18+3 f32 keys with u32 values descending matches std::stable_sort", "[sort][large][host]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = (uint64_t(1) << 18) + 3;
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    SortRig rig(dev, desc_of(a, DataType::f32, n, 4, SortOrder::descending));
    rig.check(float_keys(n, DataType::f32, rng));
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

namespace {

// Sorts n keys of type t (some repeated, so that equal keys meet within and across tiles) with payloads of
// each of `value_sizes` bytes, in each of `orders`, with every algorithm the device runs.
void check_key_types(Device& dev, std::initializer_list<DataType> types, std::initializer_list<uint32_t> value_sizes,
                     std::initializer_list<SortOrder> orders) {
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 3 * tile_of(dev, 0) + 7;
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    for (DataType t : types) {
      if (!key_type_supported(dev.context(), t)) {
        WARN(to_string(t) << " keys skipped: no shaderInt64");
        continue;
      }
      for (uint32_t vs : value_sizes)
        for (SortOrder o : orders) {
          INFO(to_string(t) << " keys, " << vs << "-byte values, " << to_string(o));
          SortRig rig(dev, desc_of(a, t, n, vs, o));
          Keys k = keys_for(t, n, rng);
          for (uint64_t i = 0; i < n; i += 3) k[i] = k[(i * 7) % n];
          rig.check(k);
        }
    }
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

}  // namespace

TEST_CASE("radix sort of every key type, keys only, both orders, matches std::stable_sort", "[sort][types]") {
  check_key_types(test::device(), {DataType::u32, DataType::i32, DataType::f32, DataType::u64, DataType::i64,
                                   DataType::f64},
                  {0u}, {SortOrder::ascending, SortOrder::descending});
}

TEST_CASE("radix sort of 32- and 64-bit keys with 4- and 8-byte values matches std::stable_sort", "[sort][key_widths]") {
  check_key_types(test::device(), {DataType::u32, DataType::u64}, {4u, 8u}, {SortOrder::ascending});
}

// Every key type with payloads, both orders (two cases, each a test of its own on an empty shader cache): the key
// transform (sign, float, order: a specialization constant)
// is applied as keys load and undone as they store, outside the ranking and the scatter, which see only the
// transformed bits; so the whole-binary variants (subgroup sizes, lavapipe threads) leave this case out
// ([payload_types]) and run the key widths with payloads above and every transform keys-only.
TEST_CASE("radix sort of every key type with 4-byte values, both orders, matches std::stable_sort",
          "[sort][types][payload_types]") {
  check_key_types(test::device(), {DataType::u32, DataType::i32, DataType::f32, DataType::u64, DataType::i64,
                                   DataType::f64},
                  {4u}, {SortOrder::ascending, SortOrder::descending});
}

TEST_CASE("radix sort of every key type with 8-byte values, both orders, matches std::stable_sort",
          "[sort][types][payload_types]") {
  check_key_types(test::device(), {DataType::u32, DataType::i32, DataType::f32, DataType::u64, DataType::i64,
                                   DataType::f64},
                  {8u}, {SortOrder::ascending, SortOrder::descending});
}

TEST_CASE("sort plans of every 32-bit key type and both orders, alive together in one context and run in turns, "
          "each sort by their own key transform",
          "[sort][types]") {
  // The key transform is a specialization constant: each plan's pipelines must be its own, also while other
  // plans' pipelines of the same kernel and tile are cached beside them.
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 2 * tile_of(dev, 0) + 5;
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    std::vector<std::unique_ptr<SortRig>> rigs;
    for (DataType t : {DataType::u32, DataType::i32, DataType::f32})
      for (SortOrder o : {SortOrder::ascending, SortOrder::descending})
        rigs.push_back(std::make_unique<SortRig>(dev, desc_of(a, t, n, 4, o)));
    for (int round = 0; round < 2; ++round)
      for (auto& rig : rigs) CHECK(rig->check(keys_for(rig->plan().desc().key_type, n, rng)));
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("radix sort of all-equal, sorted, reversed and few-distinct-digit keys keeps pairs stable", "[sort][patterns]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 5 * tile_of(dev, 0) + 11;
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    for (SortOrder o : {SortOrder::ascending, SortOrder::descending}) {
      SortRig rig(dev, desc_of(a, DataType::u32, n, 4, o));
      Keys equal(n, 0x12345678u);
      Keys sorted = random_keys(n, DataType::u32, rng);
      std::sort(sorted.begin(), sorted.end());
      Keys reversed(sorted.rbegin(), sorted.rend());
      const Keys few = few_distinct_keys(n, rng);
      INFO("all equal");
      rig.check(equal);
      INFO("sorted");
      rig.check(sorted);
      INFO("reversed");
      rig.check(reversed);
      INFO("few distinct digits");
      rig.check(few);
    }
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("radix sort of keys equal to the padding key, all of them or mixed in, in a partial last tile keeps "
          "pairs stable",
          "[sort][padding]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    const uint64_t n = 3 * tile_of(dev, 4, a) + 7;
    for (DataType t : {DataType::u32, DataType::i32, DataType::f32, DataType::u64}) {
      if (!key_type_supported(dev.context(), t)) continue;
      for (SortOrder o : {SortOrder::ascending, SortOrder::descending}) {
        INFO(to_string(a) << " " << to_string(t) << " " << to_string(o));
        SortRig rig(dev, desc_of(a, t, n, 4, o));
        const uint64_t twin = padding_twin(t, o);
        Keys all(n, twin);
        rig.check(all);
        Keys mixed = keys_for(t, n, rng);
        for (uint64_t i = 0; i < n; i += 2) mixed[i] = twin;
        for (uint64_t i = n - 7; i < n; ++i) mixed[i] = twin;  // the partial tile ends with them
        rig.check(mixed);
      }
    }
    // On a bit range the padding's digit is the range's largest: keys with every range bit set share it.
    SortDesc d = desc_of(a, DataType::u32, n, 4);
    d.begin_bit = 4;
    d.end_bit = 15;  // one full digit and a 3-bit one
    SortRig rig(dev, d);
    Keys ranged = random_keys(n, DataType::u32, rng);
    for (uint64_t i = 0; i < n; i += 2) ranged[i] |= 0x7FF0u;
    INFO(to_string(a) << " u32 bits [4, 15)");
    rig.check(ranged);
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("radix sort on bit ranges sorts only those bits, stably, with odd pass counts copied back", "[sort][bits]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 2 * tile_of(dev, 0) + 5;
  struct Range {
    DataType type;
    uint32_t begin, end, passes;
  };
  const Range ranges[] = {{DataType::u32, 8, 16, 1},  {DataType::u32, 3, 27, 3},  {DataType::u32, 4, 20, 2},
                          {DataType::i32, 0, 12, 2},  {DataType::f32, 31, 32, 1}, {DataType::u64, 20, 44, 3},
                          {DataType::i64, 28, 36, 1}, {DataType::u64, 0, 64, 8}};
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    for (const Range& r : ranges) {
      if (!key_type_supported(dev.context(), r.type)) continue;
      SortDesc d = desc_of(a, r.type, n, 4);
      d.begin_bit = r.begin;
      d.end_bit = r.end;
      SortRig rig(dev, d);
      CHECK(rig.plan().digit_passes() == r.passes);
      rig.check(keys_for(r.type, n, rng));
    }
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("radix sort of keys at element offsets within their buffers leaves the neighbours untouched",
          "[sort][offsets]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = tile_of(dev, 0) + 100;
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    SortRig rig(dev, desc_of(a, DataType::u32, n, 8));
    for (uint64_t shift : {1u, 3u, 5u}) rig.check(random_keys(n, DataType::u32, rng), shift);
    SortRig rig64(dev, desc_of(a, DataType::u64, n, 4));
    if (key_type_supported(dev.context(), DataType::u64)) rig64.check(random_keys(n, DataType::u64, rng), 1);
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("onesweep with spin limit 0 and every 3rd tile (or every tile, tile 0 included) skipping its "
          "publication falls back, terminates and matches std::stable_sort",
          "[sort][fallback]") {
  // Period 1 makes a successor publish tile 0's counts too, with the histogram offsets tile 0 adds.
  for (uint32_t period : {3u, 1u}) {
    test::DeviceSetup o = test::forced_fallback(period);
    o.options.collect_statistics = true;  // the tile count below
    Device& dev = test::device(o);
    if (!available(dev, SortAlgorithm::onesweep)) return;
    VKPRIM_TEST_RNG(rng);
    const uint64_t tile = tile_of(dev, 0);
    const uint64_t max_tiles = period == 1 ? 6 : 20;  // period 1 looks back over every tile: quadratic work
    for (uint32_t vs : {0u, 4u}) {
      SortRig rig(dev, desc_of(SortAlgorithm::onesweep, DataType::u32, max_tiles * tile + 3, vs));
      for (uint64_t n : {max_tiles * tile + 3, 4 * tile, tile + 1}) {
        REQUIRE(rig.check(random_keys(n, DataType::u32, rng)));
        const auto stats = test::download<uint32_t>(dev, rig.scratch(), 4, rig.plan().statistics_offset());
        const uint64_t real_tiles = stats[0] / rig.plan().digit_passes();
        INFO("period " << period << ", plan tile " << rig.plan().keys_per_tile() << ", n " << n);
        CHECK(stats[0] % rig.plan().digit_passes() == 0);
        CHECK(real_tiles == (n + rig.plan().keys_per_tile() - 1) / rig.plan().keys_per_tile());
        // Tiles t < tiles - 1 with t % period == period - 1 publish nothing and have a successor that must
        // count them (each fallback publishes one tile).
        uint64_t skipped = 0;
        for (uint64_t t = 0; t + 1 < real_tiles; ++t) skipped += t % period == period - 1;
        INFO("tiles per pass " << real_tiles << ", fallbacks " << stats[1] << ", skipped tiles per pass " << skipped);
        CHECK(stats[1] >= skipped * rig.plan().digit_passes());
      }
    }
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
}

// llvmpipe ends every loop after 65535 iterations and falls through with its state undefined. A spin
// limit at or past that, with tiles that never publish, would leave the look-back to that cut (seen: a
// wrong count); the context keeps lavapipe's limit below it (ContextImpl::spin_limit), so the tiles fall
// back instead.
TEST_CASE("onesweep asked for a spin limit past lavapipe's loop cut (65535 iterations), with tiles that "
          "never publish, falls back and matches std::stable_sort",
          "[sort][fallback][loop_limit]") {
  Device& dev = test::device(test::forced_fallback(3, 0xFFFFFFFFu));
  if (!available(dev, SortAlgorithm::onesweep)) return;
  if (dev.context().capabilities().driver_id != VK_DRIVER_ID_MESA_LLVMPIPE) {
    test::skip("only lavapipe cuts loops short; elsewhere this would wait for ever");
    return;
  }
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 7 * tile_of(dev, 0) + 5;
  SortRig rig(dev, desc_of(SortAlgorithm::onesweep, DataType::u32, n, 4));
  REQUIRE(rig.check(random_keys(n, DataType::u32, rng)));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

// Onesweep's tile state is never cleared between passes (a pass tells its own words from the previous
// pass's by their encoding); only the upfront histogram's fill makes whatever scratch held unwritten.
TEST_CASE("onesweep matches std::stable_sort whatever its scratch held before (all zeros, all ones, words that "
          "read as written or inclusive states), also with forced fallback",
          "[sort][fallback][scratch]") {
  for (uint32_t period : {0u, 3u}) {
    Device& dev = test::device(test::forced_fallback(period, period == 0 ? 64 : 0));
    if (!available(dev, SortAlgorithm::onesweep)) return;
    VKPRIM_TEST_RNG(rng);
    const uint64_t tile = tile_of(dev, 0);
    for (uint32_t vs : {0u, 4u}) {
      SortRig rig(dev, desc_of(SortAlgorithm::onesweep, DataType::u32, 7 * tile + 5, vs));
      for (uint32_t word : {0u, 0xFFFFFFFFu, 0x7FFFFFFFu, 0x80000000u, 0xC0000001u, 0x3FFFFFFFu}) {
        INFO("skip period " << period << ", scratch word 0x" << std::hex << word);
        rig.set_scratch_word(word);
        REQUIRE(rig.check(random_keys(7 * tile + 5, DataType::u32, rng)));
      }
    }
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
}

TEST_CASE("onesweep with tiles taken in launch order (workgroup index, no ticket) matches std::stable_sort, also with "
          "forced fallback",
          "[sort][fallback][tile_order]") {
  for (uint32_t period : {0u, 3u}) {
    Device& dev = test::device(test::launch_order(period));
    if (!available(dev, SortAlgorithm::onesweep)) return;
    VKPRIM_TEST_RNG(rng);
    const uint64_t tile = tile_of(dev, 0);
    INFO("skip period " << period);
    for (uint32_t vs : {0u, 4u}) {
      SortRig rig(dev, desc_of(SortAlgorithm::onesweep, DataType::u32, 12 * tile + 3, vs));
      for (uint64_t n : {12 * tile + 3, 3 * tile}) REQUIRE(rig.check(random_keys(n, DataType::u32, rng)));
    }
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
}

TEST_CASE("radix sort on the no-subgroup path matches std::stable_sort (both algorithms, forced onesweep fallback)",
          "[sort][no_subgroups][no_subgroup_ops]") {
  test::DeviceSetup o = test::forced_fallback(4);
  o.options.force_no_subgroups = true;
  Device& dev = test::device(o);
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 6 * tile_of(dev, 0) + 13;
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    SortRig rig(dev, desc_of(a, DataType::u32, n, 4));
    rig.check(random_keys(n, DataType::u32, rng));
    if (key_type_supported(dev.context(), DataType::f64)) {
      SortRig rig64(dev, desc_of(a, DataType::f64, n, 8, SortOrder::descending));
      rig64.check(float_keys(n, DataType::f64, rng));
    }
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("onesweep sorts keys and pairs like std::stable_sort with feature_pipeline_robustness masked (the "
          "driver's bounds checks kept) and on the default device (checks dropped where it has the feature)",
          "[sort][robustness]") {
  Device& masked = test::device_without(feature_pipeline_robustness);
  VKPRIM_TEST_RNG(rng);
  for (Device* dev : {&masked, &test::device()}) {
    INFO("pipeline robustness " << (dev->context().capabilities().has(feature_pipeline_robustness) ? "on" : "off"));
    if (!available(*dev, SortAlgorithm::onesweep)) continue;
    const uint64_t n = 5 * tile_of(*dev, 0) + 3;
    for (uint32_t vs : {0u, 4u}) {
      SortRig rig(*dev, desc_of(SortAlgorithm::onesweep, DataType::u32, n, vs));
      CHECK(rig.check(random_keys(n, DataType::u32, rng)));
      CHECK(rig.check(random_keys(n - 7, DataType::u32, rng), 0, true));  // record_indirect
    }
    REQUIRE_NO_VALIDATION_MESSAGES(*dev);
  }
}

TEST_CASE("radix sort with push descriptors off and a grid spilled into y matches std::stable_sort",
          "[sort][descriptors][spill][host]") {
  test::DeviceSetup o;
  o.options.disable_push_descriptors = true;
  o.testing.max_workgroups_per_dimension = 7;  // 343 groups: the 256-group digit-table scan still fits
  Device& dev = test::device(o);
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 11 * tile_of(dev, 0) + 1;
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    SortRig rig(dev, desc_of(a, DataType::i32, n, 4));
    rig.check(random_keys(n, DataType::i32, rng));
    rig.check(random_keys(n / 3, DataType::i32, rng));
    rig.plan().release_descriptor_sets();
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("radix sort record_indirect takes the count from the GPU and matches std::stable_sort", "[sort][indirect]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t tile = tile_of(dev, 0);
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    SortDesc d = desc_of(a, DataType::u32, 3 * tile + 9, 4);
    d.end_bit = 24;  // three passes: the copy back runs indirectly too
    SortRig rig(dev, d);
    for (uint64_t n : {uint64_t(0), uint64_t(1), tile - 1, 3 * tile + 9}) rig.check(random_keys(n, DataType::u32, rng), 0, true);
    SortRig rig64(dev, desc_of(a, DataType::f64, 2 * tile, 8));
    if (key_type_supported(dev.context(), DataType::f64)) rig64.check(float_keys(2 * tile - 5, DataType::f64, rng), 2, true);
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("automatic sort resolves to onesweep with the memory model and to reduce_then_scan without it",
          "[sort][automatic][host]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const bool mm = dev.context().capabilities().has(feature_memory_model);
  SortRig rig(dev, desc_of(SortAlgorithm::automatic, DataType::u32, 5000, 4));
  CHECK(rig.plan().algorithm() == (mm ? SortAlgorithm::onesweep : SortAlgorithm::reduce_then_scan));
  rig.check(random_keys(5000, DataType::u32, rng));
  SortRig keys(dev, desc_of(SortAlgorithm::automatic, DataType::u32, 5000));
  CHECK(keys.plan().algorithm() == (mm ? SortAlgorithm::onesweep : SortAlgorithm::reduce_then_scan));
  keys.check(random_keys(5000, DataType::u32, rng));
  auto large = RadixSort::create(dev.context(), desc_of(SortAlgorithm::automatic, DataType::u32, (1u << 23) + 1));
  REQUIRE(large.ok());
  CHECK(large.value().algorithm() == (mm ? SortAlgorithm::onesweep : SortAlgorithm::reduce_then_scan));
  // GPUs: onesweep with 32-bit keys takes 384 x 18 tiles staged in two rounds (within 24 KiB of shared
  // memory), with 4-byte values 384 x 22, with 8-byte ones 384 x 14; reduce_then_scan 512 x 8.
  if (dev.context().capabilities().device_type != VK_PHYSICAL_DEVICE_TYPE_CPU && mm) {
    CHECK(large.value().keys_per_tile() == 384u * 18u);
    CHECK(large.value().staging_rounds() == 2u);
    CHECK(tile_of(dev, 4, SortAlgorithm::onesweep) == 384u * 22u);
    CHECK(tile_of(dev, 4, SortAlgorithm::reduce_then_scan) == 512u * 8u);
    CHECK(tile_of(dev, 8, SortAlgorithm::onesweep) == 384u * 14u);
  }

  test::DeviceSetup o;
  o.testing.mask_features = feature_memory_model;
  Device& plain = test::device(o);
  SortRig rts(plain, desc_of(SortAlgorithm::automatic, DataType::u32, 5000));
  CHECK(rts.plan().algorithm() == SortAlgorithm::reduce_then_scan);
  rts.check(random_keys(5000, DataType::u32, rng));
  auto refused = RadixSort::create(plain.context(), desc_of(SortAlgorithm::onesweep, DataType::u32, 100));
  CHECK(refused.status() == Status::unsupported);
  if (!refused.ok()) CHECK(refused.error().message.find("vulkanMemoryModel") != std::string::npos);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
  REQUIRE_NO_VALIDATION_MESSAGES(plain);
}

// A ranking or scatter variant against std::stable_sort under both algorithms: u32 keys (random and few
// distinct) with each payload width, and descending f32 keys with a payload of float_value_size bytes.
static void check_variant(Device& dev, std::mt19937_64& rng, uint64_t n, std::initializer_list<uint32_t> value_sizes,
                          uint32_t float_value_size, const std::function<void(SortDesc&)>& variant) {
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    for (uint32_t vb : value_sizes) {
      SortDesc d = desc_of(a, DataType::u32, n, vb);
      variant(d);
      SortRig rig(dev, d);
      rig.check(random_keys(n, DataType::u32, rng));
      rig.check(few_distinct_keys(n, rng));
    }
    SortDesc f = desc_of(a, DataType::f32, 70001, float_value_size, SortOrder::descending);
    variant(f);
    SortRig floats(dev, f);
    floats.check(float_keys(70001, DataType::f32, rng));
  });
}

// VK_NV_shader_subgroup_partitioned (NVIDIA): the same results with one match per key instead of eight
// ballots. Elsewhere (lavapipe) asking for it is refused with unsupported and the cases are skipped.
TEST_CASE("partitioned ranking sorts keys and pairs like std::stable_sort where the device has subgroupPartitionNV, "
          "and is refused elsewhere",
          "[sort][partitioned]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const bool has = dev.context().capabilities().has(feature_subgroup_partitioned);
  SortDesc probe = desc_of(SortAlgorithm::reduce_then_scan, DataType::u32, 1000);
  probe.ranking = SortRanking::partitioned;
  auto made = RadixSort::create(dev.context(), probe);
  if (has && !VKPRIM_HAS_SORT_OPTION_KERNELS) {
    CHECK(made.status() == Status::unsupported);
    if (!made.ok()) CHECK(made.error().message.find("VKPRIM_SORT_OPTION_KERNELS") != std::string::npos);
    test::skip("partitioned ranking is not built (VKPRIM_SORT_OPTION_KERNELS off)");
    return;
  }
  if (!has) {
    CHECK(made.status() == Status::unsupported);
    if (!made.ok()) CHECK(made.error().message.find("VK_NV_shader_subgroup_partitioned") != std::string::npos);
    WARN("no VK_NV_shader_subgroup_partitioned: partitioned ranking not run");
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
    return;
  }
  REQUIRE(made.ok());
  CHECK(made->ranking() == SortRanking::partitioned);
  check_variant(dev, rng, (uint64_t(1) << 20) + 17, {0u, 4u}, 8,
                [](SortDesc& d) { d.ranking = SortRanking::partitioned; });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

// Direct scatter writes each key (and value) from registers to its position, without the shared-memory
// staging: same results, for every key width and payload width, with tiles that end mid-tile.
TEST_CASE("direct scatter sorts keys and pairs like std::stable_sort for 32- and 64-bit keys and payloads",
          "[sort][scatter]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  SortDesc probe = desc_of(SortAlgorithm::reduce_then_scan, DataType::u32, 1000);
  probe.scatter = SortScatter::direct;
  if (!VKPRIM_HAS_SORT_OPTION_KERNELS) {
    auto refused = RadixSort::create(dev.context(), probe);
    CHECK(refused.status() == Status::unsupported);
    if (!refused.ok()) CHECK(refused.error().message.find("VKPRIM_SORT_OPTION_KERNELS") != std::string::npos);
    test::skip("the direct scatter is not built (VKPRIM_SORT_OPTION_KERNELS off)");
    return;
  }
  RadixSort made = make_sort(dev.context(), probe);
  CHECK(made.scatter() == SortScatter::direct);
  CHECK(make_sort(dev.context(), desc_of(SortAlgorithm::reduce_then_scan, DataType::u32, 1000)).scatter() ==
        SortScatter::staged);
  const auto direct = [](SortDesc& d) { d.scatter = SortScatter::direct; };
  const uint64_t n = 3 * tile_of(dev, 0) + 77;
  check_variant(dev, rng, n, {0u, 4u, 8u}, 4, direct);
  if (dev.context().capabilities().has(feature_int64))
    for_each_algorithm(dev, [&](SortAlgorithm a) {
      SortDesc w = desc_of(a, DataType::i64, n, 8);
      direct(w);
      SortRig wide(dev, w);
      wide.check(random_keys(n, DataType::i64, rng));
    });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("a sort plan records twice into one command buffer and both sorts are right", "[sort][reuse]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 4 * tile_of(dev, 0) + 1;
  for_each_algorithm(dev, [&](SortAlgorithm a) {
    RadixSort plan = make_sort(dev.context(), desc_of(a, DataType::u32, n));
    Buffer first = test::make_buffer(dev, n * 4), second = test::make_buffer(dev, n * 4);
    Buffer scratch = test::make_buffer(dev, plan.scratch_requirements().size);
    std::vector<uint32_t> a_keys(n), b_keys(n);
    for (auto& x : a_keys) x = uint32_t(rng());
    for (auto& x : b_keys) x = uint32_t(rng()) & 0xFF00FF;
    test::upload(dev, first, a_keys);
    test::upload(dev, second, b_keys);
    test::poison(dev, scratch);
    const auto barrier = test::pipeline_barrier(dev);
    Result<void> r1, r2;
    auto submitted = test::submit_compute(dev, [&](VkCommandBuffer cmd) {
      r1 = plan.record(cmd, first.range(), {}, n, scratch.range());
      test::between_records(barrier, cmd);  // the caller's barrier before scratch is reused
      r2 = plan.record(cmd, second.range(), {}, n, scratch.range());
    });
    REQUIRE(r1.ok());
    REQUIRE(r2.ok());
    REQUIRE(submitted.ok());
    std::sort(a_keys.begin(), a_keys.end());
    std::sort(b_keys.begin(), b_keys.end());
    CHECK(test::download<uint32_t>(dev, first, n) == a_keys);
    CHECK(test::download<uint32_t>(dev, second, n) == b_keys);
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}
