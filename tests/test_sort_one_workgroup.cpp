// RadixSort's one-workgroup path (shaders/sort/single.comp): automatic plans sort counts up to
// one_workgroup_keys() in one dispatch, every digit pass in shared memory. Results against std::stable_sort
// of the transformed key bits (sort_rig.hpp: keys, values = original index, guards around both, poisoned
// scratch), at sizes 0, 1, 2, 3, random, every power of two below W and one either side (where the next tile
// of the ladder takes over), W - 1 and W (W = one_workgroup_keys()), and W + 1, which takes the digit passes;
// every key type with no payload and 4- and 8-byte ones, both orders, bit ranges with odd pass counts,
// padding-twin keys, element offsets, record_indirect and the no-subgroup path. The plain record
// leaves scratch untouched: the path reads and writes the caller's buffers only, and a plan it covers
// entirely asks for no more scratch than record_indirect's region.
#include <cstdint>
#include <vector>

#include "sort_rig.hpp"
#include "test_support.hpp"
#include "vkprim/sort.hpp"

using namespace vkprim;
using namespace vkprim::test;

namespace {

uint64_t one_workgroup_keys(Device& dev, DataType key, uint32_t value_size) {
  return make_sort(dev.context(), desc_of(SortAlgorithm::automatic, key, 1, value_size)).one_workgroup_keys();
}

// Every third key equal to the padding key (padding_twin: every bit set once ordered), where the key type has
// one (narrow keys order below the padding).
Keys with_padding_twins(Keys keys, DataType t, SortOrder o) {
  if (size_of(t) < 4) return keys;
  const uint64_t twin = padding_twin(t, o);
  for (size_t i = 0; i < keys.size(); i += 3) keys[i] = twin;
  return keys;
}

}  // namespace

TEST_CASE("automatic sorts up to one_workgroup_keys() take one dispatch, leave scratch untouched and match "
          "std::stable_sort, and one key more takes the digit passes",
          "[sort_one_workgroup]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (uint32_t vs : {0u, 4u, 8u}) {
    const uint64_t w = one_workgroup_keys(dev, DataType::u32, vs);
    INFO("value_size " << vs << ", one workgroup up to " << w << " keys");
    REQUIRE(w >= 256);
    SortRig rig(dev, desc_of(SortAlgorithm::automatic, DataType::u32, w + 1, vs));
    CHECK(rig.plan().dispatch_count(0) == 0);
    CHECK(rig.plan().dispatch_count(1) == 0);
    CHECK(rig.plan().dispatch_count(2) == 1);
    CHECK(rig.plan().dispatch_count(w) == 1);
    CHECK(rig.plan().dispatch_count(w + 1) > 1);
    // Every power of two below w, and one key either side: where a larger tile of the ladder takes over.
    std::vector<uint64_t> sizes = {0, 1, 2, 3, 31, w - 1, w};
    for (uint64_t p = 256; p < w; p *= 2) sizes.insert(sizes.end(), {p - 1, p, p + 1});
    sizes.push_back(2 + rng() % (w - 2));
    for (uint64_t n : sizes) {
      CHECK(rig.check(random_keys(n, DataType::u32, rng)));
      INFO("n = " << n << ": the one-workgroup sort must not touch scratch");
      CHECK(test::still_poisoned(dev, rig.scratch()));
      CHECK(rig.check(few_distinct_keys(n, rng)));
    }
    CHECK(rig.check(random_keys(w + 1, DataType::u32, rng)));
    INFO("w + 1 keys take the digit passes, which use scratch");
    CHECK_FALSE(test::still_poisoned(dev, rig.scratch()));
    // A plan that one workgroup covers asks only for the record_indirect region: no copy of the keys.
    const VkDeviceSize covered =
        make_sort(dev.context(), desc_of(SortAlgorithm::automatic, DataType::u32, w, vs)).scratch_requirements().size;
    CHECK(covered ==
          make_sort(dev.context(), desc_of(SortAlgorithm::automatic, DataType::u32, 2, vs)).scratch_requirements().size);
    CHECK(covered < w * 4);
    CHECK(covered < rig.plan().scratch_requirements().size);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("the one-workgroup sort of every key type, keys only and with 4- and 8-byte values, both orders, with "
          "padding-twin keys, matches std::stable_sort",
          "[sort_one_workgroup][subgroup_sizes]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (DataType t : {DataType::u32, DataType::i32, DataType::f32, DataType::u64, DataType::i64, DataType::f64,
                     DataType::u16, DataType::u8}) {
    if (!key_type_supported(dev.context(), t)) continue;
    for (uint32_t vs : {0u, 4u, 8u})
      for (SortOrder o : {SortOrder::ascending, SortOrder::descending}) {
        const uint64_t w = one_workgroup_keys(dev, t, vs);
        INFO(to_string(t) << " value_size " << vs << " " << to_string(o) << ", one workgroup up to " << w);
        REQUIRE(w >= 256);
        SortRig rig(dev, desc_of(SortAlgorithm::automatic, t, w, vs, o));
        for (uint64_t n : {uint64_t(37), w / 2 + 1, w - 3, w}) {
          const Keys keys = keys_for(t, n, rng);
          CHECK(rig.check(keys));
          CHECK(rig.check(with_padding_twins(keys, t, o)));
        }
      }
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("the one-workgroup sort on bit ranges (odd pass counts, a narrow last digit) sorts only those bits, "
          "stably, in place",
          "[sort_one_workgroup][bits]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  struct Range {
    DataType type;
    uint32_t begin, end;
  };
  for (const Range& r : {Range{DataType::u32, 0, 8}, Range{DataType::u32, 4, 15}, Range{DataType::u32, 3, 27},
                         Range{DataType::i32, 8, 32}, Range{DataType::u64, 20, 44}}) {
    if (!key_type_supported(dev.context(), r.type)) continue;
    const uint64_t w = one_workgroup_keys(dev, r.type, 4);
    SortDesc d = desc_of(SortAlgorithm::automatic, r.type, w, 4);
    d.begin_bit = r.begin;
    d.end_bit = r.end;
    SortRig rig(dev, d);
    INFO(to_string(r.type) << " bits [" << r.begin << ", " << r.end << ")");
    CHECK(rig.plan().one_workgroup_keys() == w);
    for (uint64_t n : {uint64_t(2), uint64_t(1000), w}) CHECK(rig.check(random_keys(n, r.type, rng)));
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("the one-workgroup sort of keys at element offsets leaves the neighbours untouched, and record_indirect "
          "of a plan it covers takes the count from the GPU",
          "[sort_one_workgroup][indirect]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (uint32_t vs : {0u, 4u, 8u}) {
    const uint64_t w = one_workgroup_keys(dev, DataType::i32, vs);
    SortRig rig(dev, desc_of(SortAlgorithm::automatic, DataType::i32, w, vs));
    INFO("value_size " << vs);
    for (uint64_t shift : {uint64_t(1), uint64_t(3), uint64_t(8)})
      CHECK(rig.check(random_keys(w - shift, DataType::i32, rng), shift));
    for (uint64_t n : {uint64_t(0), uint64_t(1), uint64_t(2), w / 3, w - 1, w})
      CHECK(rig.check(random_keys(n, DataType::i32, rng), 2, true));
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("explicit algorithms, tile overrides, explicit ranking and wide values take the digit passes at every "
          "count (at the plan's own tile), and the no-subgroup path sorts one workgroup too",
          "[sort_one_workgroup][no_subgroups]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (SortAlgorithm a : {SortAlgorithm::onesweep, SortAlgorithm::reduce_then_scan}) {
    if (!available(dev, a)) continue;
    INFO(to_string(a));
    SortRig rig(dev, desc_of(a, DataType::u32, 1000));
    CHECK(rig.plan().one_workgroup_keys() == 0);
    CHECK(rig.plan().dispatch_count(1000) > 1);
    // Nor does an explicit algorithm take onesweep's smaller tiles of small counts.
    const RadixSort big = make_sort(dev.context(), desc_of(a, DataType::u32, uint64_t(1) << 20));
    for (uint64_t n : {uint64_t(1000), uint64_t(1) << 14, uint64_t(1) << 20})
      CHECK(big.keys_per_tile(n) == big.keys_per_tile());
  }
  SortDesc tiled = desc_of(SortAlgorithm::automatic, DataType::u32, uint64_t(1) << 20);
  tiled.tuning.workgroup_size = 256;
  const RadixSort tiled_plan = make_sort(dev.context(), tiled);
  CHECK(tiled_plan.one_workgroup_keys() == 0);
  CHECK(tiled_plan.keys_per_tile(1000) == tiled_plan.keys_per_tile());
  SortDesc ballots = desc_of(SortAlgorithm::automatic, DataType::u32, 1000);
  ballots.ranking = SortRanking::ballots;
  CHECK(make_sort(dev.context(), ballots).one_workgroup_keys() == 0);
  CHECK(one_workgroup_keys(dev, DataType::u32, 16) == 0);
  SortRig wide(dev, desc_of(SortAlgorithm::automatic, DataType::u32, 100, 16));
  CHECK(wide.check(random_keys(100, DataType::u32, rng)));

  Device& emulated = test::device(test::no_subgroups());
  for (uint32_t vs : {0u, 8u}) {
    const uint64_t w = one_workgroup_keys(emulated, DataType::u32, vs);
    INFO("no subgroups, value_size " << vs << ", one workgroup up to " << w);
    REQUIRE(w >= 256);
    SortRig rig(emulated, desc_of(SortAlgorithm::automatic, DataType::u32, w, vs));
    for (uint64_t n : {uint64_t(3), w - 1, w}) CHECK(rig.check(few_distinct_keys(n, rng)));
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
  REQUIRE_NO_VALIDATION_MESSAGES(emulated);
}
